//! [`Attribute`]: a named NetCDF attribute, its values kept in their own type so that a file
//! written again holds the same types.

use crate::error::{Error, Result};
use crate::types::NcType;

/// An attribute's values, in their NetCDF type. Every attribute is a list; a scalar is a
/// list of one.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Values {
    /// `byte`.
    Byte(Vec<i8>),
    /// `char`: text, as stored (usually UTF-8; no terminator is added or removed).
    Char(Vec<u8>),
    /// `short`.
    Short(Vec<i16>),
    /// `int`.
    Int(Vec<i32>),
    /// `float`.
    Float(Vec<f32>),
    /// `double`.
    Double(Vec<f64>),
    /// `ubyte`.
    Ubyte(Vec<u8>),
    /// `ushort`.
    Ushort(Vec<u16>),
    /// `uint`.
    Uint(Vec<u32>),
    /// `int64`.
    Int64(Vec<i64>),
    /// `uint64`.
    Uint64(Vec<u64>),
    /// `string` (NetCDF-4).
    String(Vec<String>),
}

/// A named attribute of a file or a variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its values.
    pub values: Values,
}

impl Attribute {
    /// An attribute of text (`char`).
    #[must_use]
    pub fn text(name: impl Into<String>, text: &str) -> Self {
        Attribute {
            name: name.into(),
            values: Values::Char(text.as_bytes().to_vec()),
        }
    }
}

/// Decodes `count` big-endian elements of `$t` from `bytes` into a `Values::$variant`.
macro_rules! decode_be {
    ($variant:ident, $t:ty, $bytes:expr) => {
        Values::$variant(
            $bytes
                .chunks_exact(std::mem::size_of::<$t>())
                .map(|c| <$t>::from_be_bytes(c.try_into().unwrap_or_default()))
                .collect(),
        )
    };
}

/// Appends every element of `v` big-endian to `out`.
macro_rules! encode_be {
    ($v:expr, $out:expr) => {
        for x in $v {
            $out.extend_from_slice(&x.to_be_bytes());
        }
    };
}

impl Values {
    /// The type.
    #[must_use]
    pub fn nc_type(&self) -> NcType {
        match self {
            Values::Byte(_) => NcType::Byte,
            Values::Char(_) => NcType::Char,
            Values::Short(_) => NcType::Short,
            Values::Int(_) => NcType::Int,
            Values::Float(_) => NcType::Float,
            Values::Double(_) => NcType::Double,
            Values::Ubyte(_) => NcType::Ubyte,
            Values::Ushort(_) => NcType::Ushort,
            Values::Uint(_) => NcType::Uint,
            Values::Int64(_) => NcType::Int64,
            Values::Uint64(_) => NcType::Uint64,
            Values::String(_) => NcType::String,
        }
    }

    /// How many values (characters, for `char`).
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Values::Byte(v) => v.len(),
            Values::Char(v) | Values::Ubyte(v) => v.len(),
            Values::Short(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Double(v) => v.len(),
            Values::Ushort(v) => v.len(),
            Values::Uint(v) => v.len(),
            Values::Int64(v) => v.len(),
            Values::Uint64(v) => v.len(),
            Values::String(v) => v.len(),
        }
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of `nc_type` stored big-endian in `bytes` (whose length is a multiple of
    /// the type's size).
    pub fn from_be(nc_type: NcType, bytes: &[u8]) -> Result<Self> {
        Ok(match nc_type {
            NcType::Byte => Values::Byte(bytes.iter().map(|&b| b as i8).collect()),
            NcType::Char => Values::Char(bytes.to_vec()),
            NcType::Ubyte => Values::Ubyte(bytes.to_vec()),
            NcType::Short => decode_be!(Short, i16, bytes),
            NcType::Int => decode_be!(Int, i32, bytes),
            NcType::Float => decode_be!(Float, f32, bytes),
            NcType::Double => decode_be!(Double, f64, bytes),
            NcType::Ushort => decode_be!(Ushort, u16, bytes),
            NcType::Uint => decode_be!(Uint, u32, bytes),
            NcType::Int64 => decode_be!(Int64, i64, bytes),
            NcType::Uint64 => decode_be!(Uint64, u64, bytes),
            NcType::String => {
                return Err(Error::Unsupported(
                    "a string attribute cannot be in a classic file".into(),
                ));
            }
        })
    }

    /// The values big-endian, as a classic file stores them (strings have no such form).
    pub fn to_be_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len() * 8);
        match self {
            Values::Byte(v) => out.extend(v.iter().map(|&b| b as u8)),
            Values::Char(v) | Values::Ubyte(v) => out.extend_from_slice(v),
            Values::Short(v) => encode_be!(v, out),
            Values::Int(v) => encode_be!(v, out),
            Values::Float(v) => encode_be!(v, out),
            Values::Double(v) => encode_be!(v, out),
            Values::Ushort(v) => encode_be!(v, out),
            Values::Uint(v) => encode_be!(v, out),
            Values::Int64(v) => encode_be!(v, out),
            Values::Uint64(v) => encode_be!(v, out),
            Values::String(_) => {
                return Err(Error::CannotWrite(
                    "a string attribute in a NetCDF-3 file (classic files hold char text)".into(),
                ));
            }
        }
        Ok(out)
    }

    /// The first value as a double, for the numeric types (CF's `scale_factor`,
    /// `_FillValue`); `None` for text or no values.
    #[must_use]
    pub fn first_f64(&self) -> Option<f64> {
        #[allow(
            clippy::cast_precision_loss,
            reason = "CF's numbers, read as doubles as every CF reader reads them"
        )]
        Some(match self {
            Values::Byte(v) => f64::from(*v.first()?),
            Values::Short(v) => f64::from(*v.first()?),
            Values::Int(v) => f64::from(*v.first()?),
            Values::Float(v) => f64::from(*v.first()?),
            Values::Double(v) => *v.first()?,
            Values::Ubyte(v) => f64::from(*v.first()?),
            Values::Ushort(v) => f64::from(*v.first()?),
            Values::Uint(v) => f64::from(*v.first()?),
            Values::Int64(v) => *v.first()? as f64,
            Values::Uint64(v) => *v.first()? as f64,
            Values::Char(_) | Values::String(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Values;
    use crate::types::ALL;

    #[test]
    fn big_endian_round_trips_for_every_classic_type() {
        for t in ALL.iter().filter(|t| t.in_classic(5)) {
            let bytes: Vec<u8> = (0..t.size() as u8 * 3)
                .map(|b| b.wrapping_mul(37))
                .collect();
            let v = Values::from_be(*t, &bytes).unwrap();
            assert_eq!(v.nc_type(), *t);
            assert_eq!(v.len() as u64, 3, "{t}");
            assert_eq!(v.to_be_bytes().unwrap(), bytes, "{t}");
        }
        assert!(Values::String(vec!["a".into()]).to_be_bytes().is_err());
        assert_eq!(Values::Short(vec![-3]).first_f64(), Some(-3.0));
        assert_eq!(Values::Char(b"x".to_vec()).first_f64(), None);
    }
}
