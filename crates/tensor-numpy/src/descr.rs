//! NumPy's type strings (`'<f4'`, `'|b1'`) and the `ml_dtypes` names NumPy arrays of the
//! machine-learning floats carry (`'bfloat16'`), both ways.

use crate::error::{Error, Result};
use tensor_core::ByteOrder;
use tensor_dtype::Dtype;

/// NumPy's type string for `dtype`, little-endian (an `ml_dtypes` name for the floats NumPy
/// lacks), or `None` for the bitmask.
#[must_use]
pub fn descr(dtype: Dtype) -> Option<&'static str> {
    Some(match dtype {
        Dtype::Bool => "|b1",
        Dtype::Int8 => "|i1",
        Dtype::Uint8 => "|u1",
        Dtype::Int16 => "<i2",
        Dtype::Uint16 => "<u2",
        Dtype::Int32 => "<i4",
        Dtype::Uint32 => "<u4",
        Dtype::Int64 => "<i8",
        Dtype::Uint64 => "<u8",
        Dtype::Float16 => "<f2",
        Dtype::Float32 => "<f4",
        Dtype::Float64 => "<f8",
        Dtype::Complex64 => "<c8",
        Dtype::Complex128 => "<c16",
        Dtype::Bfloat16 => "bfloat16",
        Dtype::Float8E4m3 => "float8_e4m3fn",
        Dtype::Float8E5m2 => "float8_e5m2",
        Dtype::Float8E4m3Fnuz => "float8_e4m3fnuz",
        Dtype::Float8E5m2Fnuz => "float8_e5m2fnuz",
        Dtype::Float8E8m0 => "float8_e8m0fnu",
        Dtype::Float6E2m3 => "float6_e2m3fn",
        Dtype::Float6E3m2 => "float6_e3m2fn",
        Dtype::Float4E2m1 => "float4_e2m1fn",
        _ => return None,
    })
}

/// The dtype and byte order a type string names. `ml_dtypes`' 4- and 6-bit floats
/// (`float4_e2m1fn`, …) are one per byte in NumPy, where tensorkit's dtypes of those widths
/// are packed: [`crate::Npy`] packs them.
pub fn parse(text: &str) -> Result<(Dtype, ByteOrder)> {
    let named = match text {
        "float6_e2m3fn" => Some(Dtype::Float6E2m3),
        "float6_e3m2fn" => Some(Dtype::Float6E3m2),
        "float4_e2m1fn" => Some(Dtype::Float4E2m1),
        "bfloat16" => Some(Dtype::Bfloat16),
        "float8_e4m3fn" => Some(Dtype::Float8E4m3),
        "float8_e5m2" => Some(Dtype::Float8E5m2),
        "float8_e4m3fnuz" => Some(Dtype::Float8E4m3Fnuz),
        "float8_e5m2fnuz" => Some(Dtype::Float8E5m2Fnuz),
        "float8_e8m0fnu" => Some(Dtype::Float8E8m0),
        _ => None,
    };
    if let Some(d) = named {
        return Ok((d, ByteOrder::Little));
    }
    let unsupported = |why: &str| Err(Error::Unsupported(format!("NumPy type {text:?}: {why}")));
    let mut chars = text.chars();
    let order = match chars.next() {
        // `|`: not applicable (one byte); `=`: the writer's own, little on every machine
        // numpy runs on that tensorkit does.
        Some('<' | '|' | '=') => ByteOrder::Little,
        Some('>') => ByteOrder::Big,
        _ => return unsupported("not a type string tensorkit knows"),
    };
    let kind = chars.next();
    let size: Option<u32> = chars.as_str().parse().ok();
    let chars = chars;
    let dtype = match (kind, size) {
        (Some('b'), Some(1)) => Dtype::Bool,
        (Some('i'), Some(1)) => Dtype::Int8,
        (Some('i'), Some(2)) => Dtype::Int16,
        (Some('i'), Some(4)) => Dtype::Int32,
        (Some('i'), Some(8)) => Dtype::Int64,
        (Some('u'), Some(1)) => Dtype::Uint8,
        (Some('u'), Some(2)) => Dtype::Uint16,
        (Some('u'), Some(4)) => Dtype::Uint32,
        (Some('u'), Some(8)) => Dtype::Uint64,
        (Some('f'), Some(2)) => Dtype::Float16,
        (Some('f'), Some(4)) => Dtype::Float32,
        (Some('f'), Some(8)) => Dtype::Float64,
        (Some('c'), Some(8)) => Dtype::Complex64,
        (Some('c'), Some(16)) => Dtype::Complex128,
        (Some('O'), _) => {
            return unsupported(
                "an object array, whose elements are pickles; tensorkit never runs pickles",
            );
        }
        (Some('U' | 'S' | 'a'), _) => return unsupported("strings are not tensors"),
        // Dates and time spans are 64-bit integers counting their unit (`M8[s]`, `m8[ms]`):
        // read as such, the unit kept by the reader ([`time_type`]).
        (Some('M' | 'm'), _) if chars.as_str().starts_with('8') => Dtype::Int64,
        (Some('M' | 'm'), _) => {
            return unsupported("dates and time spans of other widths are not read");
        }
        (Some('V'), _) => {
            return unsupported(
                "raw void elements (an ml_dtypes array saved without its type's name?)",
            );
        }
        (Some('f' | 'c'), _) => return unsupported("extended precision floats are not read"),
        _ => return unsupported("not a type string tensorkit knows"),
    };
    // One-byte types carry no byte order.
    let order = if dtype.byte_width() == 1 {
        ByteOrder::Little
    } else {
        order
    };
    Ok((dtype, order))
}

/// NumPy's name of a date or time-span type string (`<M8[s]` is `datetime64[s]`,
/// `<m8[ms]` `timedelta64[ms]`); `None` for any other.
#[must_use]
pub fn time_type(text: &str) -> Option<String> {
    let rest = text.get(1..)?;
    let (kind, unit) = if let Some(u) = rest.strip_prefix("M8") {
        ("datetime64", u)
    } else if let Some(u) = rest.strip_prefix("m8") {
        ("timedelta64", u)
    } else {
        return None;
    };
    Some(format!("{kind}{unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_descr_parses_back() {
        for d in Dtype::ALL {
            if let Some(text) = descr(d) {
                assert_eq!(parse(text).unwrap(), (d, ByteOrder::Little), "{text}");
            }
        }
        assert_eq!(parse(">f8").unwrap(), (Dtype::Float64, ByteOrder::Big));
        assert_eq!(parse("|u1").unwrap(), (Dtype::Uint8, ByteOrder::Little));
        assert_eq!(parse("<M8[ns]").unwrap(), (Dtype::Int64, ByteOrder::Little));
        assert_eq!(time_type("<m8[ms]").as_deref(), Some("timedelta64[ms]"));
        assert_eq!(time_type("<i8"), None);
        for refused in ["|O", "<U5", "|S3", "|V2", "<f16", "xyz", ""] {
            assert!(parse(refused).is_err(), "{refused}");
        }
    }
}
