//! A file's definition in CDL, as `ncdump -h` prints it: dimensions (the unlimited one with
//! its current length), variables with their types, dimension names and typed attributes,
//! and the global attributes. Numbers carry CDL's type suffixes (`-32767s`, `1.5f`,
//! `255UB`), doubles end in `.` when whole, text is quoted.

use crate::attribute::Values;
use crate::model::Definition;
use std::fmt::Write as _;

/// A double as `ncdump` writes it: shortest round-trip digits, `.` after a whole number,
/// an exponent for the very large and very small.
fn double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let e = format!("{x:e}");
        // `1.5e-7` -> `1.5e-07`, `1e20` -> `1e+20`, as C's %g spells them.
        return match e.split_once('e') {
            Some((m, exp)) => {
                let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
                format!("{m}e{sign}{digits:0>2}")
            }
            None => e,
        };
    }
    let s = format!("{x}");
    if s.contains('.') { s } else { format!("{s}.") }
}

/// Text as a CDL string: quoted, with `\"`, `\\`, `\n` and other controls escaped, and
/// the NULs that end it (netCDF-C writes one for an empty text) left out, as `ncdump`
/// leaves them.
fn quoted(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    for ch in String::from_utf8_lossy(&bytes[..end]).chars() {
        match ch {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\0' => s.push_str("\\000"),
            c if c.is_control() => {
                let _ = write!(s, "\\{:03o}", u32::from(c));
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// An attribute's values as CDL writes them.
#[must_use]
pub fn values(v: &Values) -> String {
    fn list<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
        v.iter().map(f).collect::<Vec<_>>().join(", ")
    }
    match v {
        Values::Char(t) => quoted(t),
        Values::String(s) => list(s, |s| quoted(s.as_bytes())),
        Values::Byte(x) => list(x, |i| format!("{i}b")),
        Values::Short(x) => list(x, |i| format!("{i}s")),
        Values::Int(x) => list(x, ToString::to_string),
        Values::Int64(x) => list(x, |i| format!("{i}LL")),
        Values::Ubyte(x) => list(x, |i| format!("{i}UB")),
        Values::Ushort(x) => list(x, |i| format!("{i}US")),
        Values::Uint(x) => list(x, |i| format!("{i}U")),
        Values::Uint64(x) => list(x, |i| format!("{i}ULL")),
        Values::Float(x) => list(x, |f| format!("{}f", double(f64::from(*f)))),
        Values::Double(x) => list(x, |f| double(*f)),
    }
}

/// `def` in CDL, named `name`, without data: what `ncdump -h` prints.
#[must_use]
pub fn header(def: &Definition, name: &str) -> String {
    let mut s = format!("netcdf {name} {{\n");
    if !def.dimensions.is_empty() {
        s.push_str("dimensions:\n");
        for d in &def.dimensions {
            let _ = if d.unlimited {
                writeln!(s, "\t{} = UNLIMITED ; // ({} currently)", d.name, d.len)
            } else {
                writeln!(s, "\t{} = {} ;", d.name, d.len)
            };
        }
    }
    if !def.variables.is_empty() {
        s.push_str("variables:\n");
        for v in &def.variables {
            let dims: Vec<&str> = v
                .dims
                .iter()
                .map(|&d| def.dimensions[d].name.as_str())
                .collect();
            let _ = if dims.is_empty() {
                writeln!(s, "\t{} {} ;", v.nc_type, v.name)
            } else {
                writeln!(s, "\t{} {}({}) ;", v.nc_type, v.name, dims.join(", "))
            };
            for a in &v.attributes {
                let _ = writeln!(s, "\t\t{}:{} = {} ;", v.name, a.name, values(&a.values));
            }
        }
    }
    if !def.attributes.is_empty() {
        s.push_str("\n// global attributes:\n");
        for a in &def.attributes {
            let _ = writeln!(s, "\t\t:{} = {} ;", a.name, values(&a.values));
        }
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::{double, values};
    use crate::attribute::Values;

    #[test]
    fn numbers_and_text_are_spelt_as_ncdump_spells_them() {
        assert_eq!(double(270.0), "270.");
        assert_eq!(double(0.0015), "0.0015");
        assert_eq!(double(1.5e-7), "1.5e-07");
        assert_eq!(double(1e20), "1e+20");
        assert_eq!(values(&Values::Short(vec![-32767])), "-32767s");
        assert_eq!(values(&Values::Float(vec![1.5, f32::NAN])), "1.5f, NaNf");
        assert_eq!(values(&Values::Ubyte(vec![255, 0])), "255UB, 0UB");
        assert_eq!(
            values(&Values::Char(b"a \"b\"\n".to_vec())),
            "\"a \\\"b\\\"\\n\""
        );
    }
}
