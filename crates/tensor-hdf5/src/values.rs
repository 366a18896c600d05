//! Attribute values and string elements as plain values: numbers of every integer and float
//! type, fixed-length strings cut at their size and trimmed as their padding says,
//! variable-length strings read from the global heap within the limits.

use crate::error::{Error, Result};
use crate::file::Hdf5;
use crate::message::Attribute;
use crate::message::datatype::{Datatype, Padding};
use tensor_core::{ByteOrder, Limits};

/// An attribute's values, in C order of its dataspace.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Signed integers.
    Ints(Vec<i64>),
    /// Unsigned integers.
    Uints(Vec<u64>),
    /// Floats.
    Floats(Vec<f64>),
    /// Strings, fixed-length or variable-length (UTF-8, lossily).
    Texts(Vec<String>),
}

/// Fixed-length strings of `size` bytes each, trimmed as `padding` says.
#[must_use]
pub fn fixed_texts(data: &[u8], size: u32, padding: Padding) -> Vec<String> {
    data.chunks((size as usize).max(1))
        .map(|e| {
            let end = match padding {
                Padding::NullTerminated | Padding::NullPadded => {
                    e.iter().position(|&b| b == 0).unwrap_or(e.len())
                }
                Padding::SpacePadded => e.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1),
            };
            String::from_utf8_lossy(&e[..end]).into_owned()
        })
        .collect()
}

impl Hdf5<'_> {
    /// Variable-length strings: each `width`-byte element of `elements` refers to its bytes
    /// in the global heap (or to none: empty), read as text (UTF-8, lossily). The strings,
    /// with the `spent` bytes already decoded for them, stay within `limits` (many elements
    /// may refer to one large heap object).
    pub fn vlen_texts(
        &self,
        elements: &[u8],
        width: u32,
        limits: &Limits,
        spent: u64,
    ) -> Result<Vec<String>> {
        let mut total = spent;
        elements
            .chunks_exact((width as usize).max(1))
            .map(|e| {
                let s = self.vlen(e)?.unwrap_or_default();
                total = total.saturating_add(s.len() as u64);
                limits.check_total_bytes(total)?;
                Ok(String::from_utf8_lossy(s).into_owned())
            })
            .collect()
    }

    /// The values of attribute `a`, within `limits`. Classes that hold no plain values
    /// (compound, enum, references, ...) are refused by name.
    pub fn attribute_values(&self, a: &Attribute<'_>, limits: &Limits) -> Result<Values> {
        let t = &a.datatype;
        match *t {
            Datatype::String { size, padding, .. } => {
                Ok(Values::Texts(fixed_texts(a.data, size, padding)))
            }
            Datatype::VlenString { .. } => Ok(Values::Texts(self.vlen_texts(
                a.data,
                t.size(),
                limits,
                0,
            )?)),
            Datatype::Integer {
                size,
                signed,
                order,
            } if matches!(size, 1 | 2 | 4 | 8) => {
                let n = size as usize;
                let words = a.data.chunks_exact(n).map(|e| {
                    let mut w = [0u8; 8];
                    if order == ByteOrder::Little {
                        w[..n].copy_from_slice(e);
                    } else {
                        for (i, b) in e.iter().rev().enumerate() {
                            w[i] = *b;
                        }
                    }
                    if signed && w[n - 1] & 0x80 != 0 {
                        w[n..].fill(0xff);
                    }
                    u64::from_le_bytes(w)
                });
                Ok(if signed {
                    Values::Ints(words.map(|w| w as i64).collect())
                } else {
                    Values::Uints(words.collect())
                })
            }
            Datatype::Float { size, order } if matches!(size, 2 | 4 | 8) => {
                let n = size as usize;
                let floats = a.data.chunks_exact(n).map(|e| {
                    let mut w = [0u8; 8];
                    w[..n].copy_from_slice(e);
                    if order == ByteOrder::Big {
                        w[..n].reverse();
                    }
                    match n {
                        2 => f64::from(half::f16::from_le_bytes([w[0], w[1]])),
                        4 => f64::from(f32::from_le_bytes([w[0], w[1], w[2], w[3]])),
                        _ => f64::from_le_bytes(w),
                    }
                });
                Ok(Values::Floats(floats.collect()))
            }
            _ => Err(Error::Unsupported(format!(
                "attribute {:?} of HDF5 class {} ({} bytes)",
                a.name,
                t.class_name(),
                t.size()
            ))),
        }
    }
}
