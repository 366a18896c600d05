//! What zfp and SZ3 share: the reference hands both codecs the payload as one-dimensional
//! float64 values in the machine's byte order, whatever the dtype, and writes the decoded
//! values back in the descriptor's byte order.

use crate::error::{Error, Result};

/// The float64 values of `data`, read in the machine's byte order.
pub(crate) fn values(codec: &'static str, data: &[u8]) -> Result<Vec<f64>> {
    count(codec, data.len())?;
    Ok(data
        .as_chunks::<8>()
        .0
        .iter()
        .map(|c| f64::from_ne_bytes(*c))
        .collect())
}

/// How many float64 values `len` bytes hold (an error when they are not whole values).
pub(crate) fn count(codec: &'static str, len: usize) -> Result<usize> {
    if len.is_multiple_of(8) {
        Ok(len / 8)
    } else {
        Err(Error::Corrupt {
            codec,
            reason: format!(
                "{len} bytes are not whole float64 values ({codec} codes float64 payloads only)"
            ),
        })
    }
}

/// Writes `values` into `dst` (exactly their size), each big-endian or in the machine's
/// order.
pub(crate) fn write(values: &[f64], dst: &mut [u8], big_endian: bool) {
    for (out, v) in dst.chunks_exact_mut(8).zip(values) {
        out.copy_from_slice(&if big_endian {
            v.to_be_bytes()
        } else {
            v.to_ne_bytes()
        });
    }
}

/// The check before decoding `src` into `n` values: nothing to do (`Ok(false)`) for an
/// empty object and an empty stream, an error when only one of them is empty.
pub(crate) fn has_values(codec: &'static str, src: &[u8], n: usize) -> Result<bool> {
    match (n, src.is_empty()) {
        (0, true) => Ok(false),
        (0, false) | (_, true) => Err(Error::SizeMismatch {
            codec,
            expected: (n * 8) as u64,
            actual: if n == 0 {
                format!("more ({} stream bytes)", src.len())
            } else {
                "0".into()
            },
        }),
        _ => Ok(true),
    }
}
