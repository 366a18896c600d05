//! What can fail with a dtype: sizing a payload (an overflow) and parsing a name (an unknown
//! dtype). Apart from [`Dtype`](crate::Dtype) itself, which the error type names.

use crate::Dtype;
use crate::error::{Error, Result};
use std::str::FromStr;
use tensor_core::checked;

impl Dtype {
    /// Bytes needed to store `elements` elements: `ceil(n * bits / 8)` for the packed types,
    /// `n * byte_width()` otherwise, with overflow reported.
    pub fn payload_bytes(self, elements: u64) -> Result<u64> {
        Ok(match self {
            Dtype::Bitmask => elements.div_ceil(8),
            other if other.is_packed() => {
                let bits = u128::from(elements) * other.bit_width() as u128;
                u64::try_from(bits.div_ceil(8)).map_err(|_| tensor_core::Error::Overflow {
                    what: "tensor byte size",
                })?
            }
            other => checked::mul(elements, other.byte_width() as u64, "tensor byte size")?,
        })
    }
}

impl FromStr for Dtype {
    type Err = Error;

    /// Parses a canonical name. Format-specific spellings (`F32`, `<f4`, ...) are mapped by
    /// the format crates, not here.
    fn from_str(s: &str) -> Result<Self> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| Error::UnknownDtype(s.to_owned()))
    }
}
