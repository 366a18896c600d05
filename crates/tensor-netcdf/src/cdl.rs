//! A file's definition in CDL, as `ncdump -h` prints it: dimensions (the unlimited one with
//! its current length), variables with their types, dimension names and typed attributes,
//! and the global attributes. Numbers carry CDL's type suffixes (`-32767s`, `1.5f`,
//! `255UB`), doubles end in `.` when whole, text is quoted.

use crate::attribute::Values;
use crate::model::{Definition, split};
use std::fmt::Write as _;

/// A number as `ncdump` writes it: C's `%#.{digits}g` (15 significant digits for a double,
/// 7 for a float), then the zeros trailing its fraction trimmed, the point kept (`270.`,
/// `1.e+20`, `0.333333333333333`).
fn number(x: f64, digits: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // The exponent %g decides by: the one of the number rounded to `digits` digits.
    let e = format!("{x:.*e}", digits - 1);
    let exp: i64 = e
        .split_once('e')
        .and_then(|(_, x)| x.parse().ok())
        .unwrap_or(0);
    let (mantissa, exponent) = if exp < -4 || exp >= digits as i64 {
        let (m, _) = e.split_once('e').unwrap_or((&e, ""));
        let sign = if exp < 0 { '-' } else { '+' };
        (m.to_owned(), format!("e{sign}{:02}", exp.unsigned_abs()))
    } else {
        let decimals = usize::try_from(digits as i64 - 1 - exp).unwrap_or(0);
        (format!("{x:.decimals$}"), String::new())
    };
    let mut m = if mantissa.contains('.') {
        mantissa
    } else {
        format!("{mantissa}.")
    };
    while m.ends_with('0') {
        m.pop();
    }
    m + &exponent
}

/// A double as `ncdump` writes it.
fn double(x: f64) -> String {
    number(x, 15)
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
        Values::Float(x) => list(x, |f| format!("{}f", number(f64::from(*f), 7))),
        Values::Double(x) => list(x, |f| double(*f)),
    }
}

/// What `ncdump` puts before an attribute whose type its values do not spell: `string `.
fn typed(v: &Values) -> &'static str {
    if matches!(v, Values::String(_)) {
        "string "
    } else {
        ""
    }
}

/// `def` in CDL, named `name`, without data: what `ncdump -h` prints.
#[must_use]
pub fn header(def: &Definition, name: &str) -> String {
    let mut s = format!("netcdf {name} {{\n");
    group(def, &mut s, "");
    s.push_str("}\n");
    s
}

/// Whether group `outer` is group `inner` or holds it.
fn encloses(outer: &str, inner: &str) -> bool {
    outer.is_empty()
        || inner == outer
        || inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// How a variable of group `at` names dimension `dim`, as ncdump does: by its own name
/// where that finds it from `at` (in `at` or a group holding it, no nearer one of that
/// name), by its whole path otherwise.
fn dimension_name<'d>(def: &'d Definition, at: &str, dim: &'d str) -> std::borrow::Cow<'d, str> {
    let (home, own) = split(dim);
    let shadowed = def.dimensions.iter().any(|d| {
        let (g, n) = split(&d.name);
        n == own && d.name != dim && encloses(g, at) && encloses(home, g)
    });
    if encloses(home, at) && !shadowed {
        std::borrow::Cow::Borrowed(own)
    } else {
        std::borrow::Cow::Owned(format!("/{dim}"))
    }
}

/// Group `path`'s dimensions, variables and attributes, then its subgroups, each line
/// indented two spaces a level as ncdump indents them.
fn group(def: &Definition, s: &mut String, path: &str) {
    let depth = if path.is_empty() {
        0
    } else {
        path.matches('/').count() + 1
    };
    let indent = "  ".repeat(depth);
    let here = |name: &str| split(name).0 == path;
    let dims: Vec<_> = def.dimensions.iter().filter(|d| here(&d.name)).collect();
    if !dims.is_empty() {
        let _ = writeln!(s, "{indent}dimensions:");
        for d in dims {
            let own = split(&d.name).1;
            let _ = if d.unlimited {
                writeln!(s, "{indent}\t{own} = UNLIMITED ; // ({} currently)", d.len)
            } else {
                writeln!(s, "{indent}\t{own} = {} ;", d.len)
            };
        }
    }
    let vars: Vec<_> = def.variables.iter().filter(|v| here(&v.name)).collect();
    if !vars.is_empty() {
        let _ = writeln!(s, "{indent}variables:");
        for v in vars {
            let own = split(&v.name).1;
            let dims: Vec<_> = v
                .dims
                .iter()
                .map(|&d| dimension_name(def, path, &def.dimensions[d].name))
                .collect();
            let _ = if dims.is_empty() {
                writeln!(s, "{indent}\t{} {own} ;", v.nc_type)
            } else {
                writeln!(s, "{indent}\t{} {own}({}) ;", v.nc_type, dims.join(", "))
            };
            for a in &v.attributes {
                let _ = writeln!(
                    s,
                    "{indent}\t\t{}{own}:{} = {} ;",
                    typed(&a.values),
                    a.name,
                    values(&a.values)
                );
            }
        }
    }
    let attributes: Vec<_> = def.attributes.iter().filter(|a| here(&a.name)).collect();
    if !attributes.is_empty() {
        let whose = if path.is_empty() { "global" } else { "group" };
        let _ = writeln!(s, "\n{indent}// {whose} attributes:");
        for a in attributes {
            let _ = writeln!(
                s,
                "{indent}\t\t{}:{} = {} ;",
                typed(&a.values),
                split(&a.name).1,
                values(&a.values)
            );
        }
    }
    // The subgroups, in the order their contents first appear.
    let mut children: Vec<&str> = Vec::new();
    let names = def
        .variables
        .iter()
        .map(|v| v.name.as_str())
        .chain(def.dimensions.iter().map(|d| d.name.as_str()))
        .chain(def.attributes.iter().map(|a| a.name.as_str()));
    for name in names {
        let (g, _) = split(name);
        if g.is_empty() || !encloses(path, g) || g == path {
            continue;
        }
        let rest = if path.is_empty() {
            g
        } else {
            &g[path.len() + 1..]
        };
        let child = rest.split('/').next().unwrap_or(rest);
        if !children.contains(&child) {
            children.push(child);
        }
    }
    for child in children {
        let full = if path.is_empty() {
            child.to_owned()
        } else {
            format!("{path}/{child}")
        };
        let _ = writeln!(s, "\n{indent}group: {child} {{");
        group(def, s, &full);
        let _ = writeln!(s, "{indent}  }} // group {child}");
    }
}

#[cfg(test)]
mod tests {
    use super::{dimension_name, double, values};
    use crate::attribute::Values;
    use crate::model::{Definition, Dimension};

    #[test]
    fn dimensions_are_named_by_their_own_name_where_it_finds_them() {
        let dim = |name: &str| Dimension {
            name: name.into(),
            len: 1,
            unlimited: false,
        };
        let def = Definition {
            dimensions: vec![dim("x"), dim("a/x"), dim("b/y"), dim("a/c/z")],
            attributes: Vec::new(),
            variables: Vec::new(),
            format: None,
        };
        // The root's `x` from `a`, where `a/x` is nearer: by its path.
        assert_eq!(dimension_name(&def, "a", "x"), "/x");
        assert_eq!(dimension_name(&def, "a/c", "a/x"), "x");
        assert_eq!(dimension_name(&def, "", "x"), "x");
        assert_eq!(dimension_name(&def, "b", "x"), "x");
        // A sibling's, or a subgroup's: by its path.
        assert_eq!(dimension_name(&def, "a", "b/y"), "/b/y");
        assert_eq!(dimension_name(&def, "a", "a/c/z"), "/a/c/z");
        assert_eq!(dimension_name(&def, "ab", "a/x"), "/a/x");
    }

    #[test]
    fn numbers_and_text_are_spelt_as_ncdump_spells_them() {
        assert_eq!(double(270.0), "270.");
        assert_eq!(double(0.0015), "0.0015");
        assert_eq!(double(1.5e-7), "1.5e-07");
        assert_eq!(double(1e20), "1.e+20");
        assert_eq!(double(1e15), "1.e+15");
        assert_eq!(double(1.0 / 3.0), "0.333333333333333");
        assert_eq!(double(-0.0), "-0.");
        assert_eq!(double(5e-324), "4.94065645841247e-324");
        assert_eq!(double(f64::MAX), "1.79769313486232e+308");
        assert_eq!(
            values(&Values::Float(vec![f32::MAX, 0.1, 1e6, 123_456_789.0])),
            "3.402823e+38f, 0.1f, 1000000.f, 1.234568e+08f"
        );
        assert_eq!(values(&Values::Short(vec![-32767])), "-32767s");
        assert_eq!(values(&Values::Float(vec![1.5, f32::NAN])), "1.5f, NaNf");
        assert_eq!(values(&Values::Ubyte(vec![255, 0])), "255UB, 0UB");
        assert_eq!(
            values(&Values::Char(b"a \"b\"\n".to_vec())),
            "\"a \\\"b\\\"\\n\""
        );
    }
}
