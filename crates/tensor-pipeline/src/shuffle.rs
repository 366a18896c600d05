//! Byte shuffle (HDF5 style): byte `b` of element `i` moves to position `b·n + i`, grouping
//! the k-th bytes of all elements together, which makes float data far more compressible.

use crate::error::{Error, Result};

/// Elements per block: both the input and the output lanes of a block stay in cache.
const BLOCK: usize = 4096;

fn check(len: usize, other: usize, element_size: usize) -> Result<usize> {
    if element_size == 0 || !len.is_multiple_of(element_size) || len != other {
        return Err(Error::Corrupt {
            codec: "shuffle",
            reason: format!(
                "{len} bytes are not whole {element_size}-byte elements (output {other} bytes)"
            ),
        });
    }
    Ok(len / element_size)
}

/// Shuffles `src` into `dst` (same length, a multiple of `element_size`).
pub fn shuffle_into(src: &[u8], dst: &mut [u8], element_size: usize) -> Result<()> {
    let n = check(src.len(), dst.len(), element_size)?;
    if element_size == 1 {
        dst.copy_from_slice(src);
        return Ok(());
    }
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        for (b, lane) in dst.chunks_exact_mut(n).enumerate() {
            for (i, out) in lane[start..end].iter_mut().enumerate() {
                *out = src[(start + i) * element_size + b];
            }
        }
    }
    Ok(())
}

/// Undoes [`shuffle_into`].
pub fn unshuffle_into(src: &[u8], dst: &mut [u8], element_size: usize) -> Result<()> {
    let n = check(src.len(), dst.len(), element_size)?;
    if element_size == 1 {
        dst.copy_from_slice(src);
        return Ok(());
    }
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        for (b, lane) in src.chunks_exact(n).enumerate() {
            for (i, &v) in lane[start..end].iter().enumerate() {
                dst[(start + i) * element_size + b] = v;
            }
        }
    }
    Ok(())
}

/// Shuffles into a new buffer.
pub fn shuffle(src: &[u8], element_size: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; src.len()];
    shuffle_into(src, &mut out, element_size)?;
    Ok(out)
}

/// Unshuffles into a new buffer.
pub fn unshuffle(src: &[u8], element_size: usize) -> Result<Vec<u8>> {
    let mut out = vec![0u8; src.len()];
    unshuffle_into(src, &mut out, element_size)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_a_transpose() {
        let src = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(shuffle(&src, 4).unwrap(), [1, 5, 2, 6, 3, 7, 4, 8]);
        assert_eq!(shuffle(&src, 2).unwrap(), [1, 3, 5, 7, 2, 4, 6, 8]);
        assert!(shuffle(&src, 3).is_err());
        assert!(shuffle(&src, 0).is_err());
        assert!(shuffle(&[], 4).unwrap().is_empty());
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..20_000), size in 1usize..17) {
            let len = data.len() / size * size;
            let s = shuffle(&data[..len], size).unwrap();
            prop_assert_eq!(unshuffle(&s, size).unwrap(), &data[..len]);
        }
    }
}
