//! Byte shuffle (HDF5 style): byte `b` of element `i` moves to position `b·n + i`, grouping
//! the k-th bytes of all elements together, which makes float data far more compressible.

use crate::error::{Error, Result};

#[cfg(target_arch = "x86_64")]
mod sse2;
#[cfg(target_arch = "x86_64")]
use sse2 as kernel;
#[cfg(any(not(target_arch = "x86_64"), test))]
mod swar;
#[cfg(not(target_arch = "x86_64"))]
use swar as kernel;

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
    let done = match element_size {
        1 => {
            dst.copy_from_slice(src);
            n
        }
        2 => kernel::shuffle::<2>(src, dst, n),
        4 => kernel::shuffle::<4>(src, dst, n),
        8 => kernel::shuffle::<8>(src, dst, n),
        _ => 0,
    };
    shuffle_range(src, dst, n, element_size, done);
    Ok(())
}

/// Undoes [`shuffle_into`].
pub fn unshuffle_into(src: &[u8], dst: &mut [u8], element_size: usize) -> Result<()> {
    let n = check(src.len(), dst.len(), element_size)?;
    let done = match element_size {
        1 => {
            dst.copy_from_slice(src);
            n
        }
        2 => kernel::unshuffle::<2>(src, dst, n),
        4 => kernel::unshuffle::<4>(src, dst, n),
        8 => kernel::unshuffle::<8>(src, dst, n),
        _ => 0,
    };
    unshuffle_range(src, dst, n, element_size, done);
    Ok(())
}

/// Any width, elements `from..n`, in cache-sized blocks.
fn shuffle_range(src: &[u8], dst: &mut [u8], n: usize, width: usize, from: usize) {
    for start in (from..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        for (b, lane) in dst.chunks_exact_mut(n).enumerate() {
            for (i, out) in lane[start..end].iter_mut().enumerate() {
                *out = src[(start + i) * width + b];
            }
        }
    }
}

fn unshuffle_range(src: &[u8], dst: &mut [u8], n: usize, width: usize, from: usize) {
    for start in (from..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        for (b, lane) in src.chunks_exact(n).enumerate() {
            for (i, &v) in lane[start..end].iter().enumerate() {
                dst[(start + i) * width + b] = v;
            }
        }
    }
}

/// Shuffles into a new buffer.
pub fn shuffle(src: &[u8], element_size: usize) -> Result<Vec<u8>> {
    let mut out = tensor_core::buffer::try_filled(src.len(), 0u8, "a shuffled stream")?;
    shuffle_into(src, &mut out, element_size)?;
    Ok(out)
}

/// Unshuffles into a new buffer.
pub fn unshuffle(src: &[u8], element_size: usize) -> Result<Vec<u8>> {
    let mut out = tensor_core::buffer::try_filled(src.len(), 0u8, "an unshuffled stream")?;
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

    type Kernel = fn(&[u8], &mut [u8], usize) -> usize;

    /// The portable kernel and the one this target uses (the same on targets without SSE2's),
    /// each as shuffle and unshuffle of one width.
    fn kernels(width: usize) -> [(&'static str, [Kernel; 2]); 2] {
        match width {
            2 => [
                ("portable", [swar::shuffle::<2>, swar::unshuffle::<2>]),
                ("target's", [kernel::shuffle::<2>, kernel::unshuffle::<2>]),
            ],
            4 => [
                ("portable", [swar::shuffle::<4>, swar::unshuffle::<4>]),
                ("target's", [kernel::shuffle::<4>, kernel::unshuffle::<4>]),
            ],
            _ => [
                ("portable", [swar::shuffle::<8>, swar::unshuffle::<8>]),
                ("target's", [kernel::shuffle::<8>, kernel::unshuffle::<8>]),
            ],
        }
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..20_000), size in 1usize..17) {
            let len = data.len() / size * size;
            let s = shuffle(&data[..len], size).unwrap();
            prop_assert_eq!(unshuffle(&s, size).unwrap(), &data[..len]);
        }

        #[test]
        fn every_kernel_matches_the_definition(data in proptest::collection::vec(any::<u8>(), 0..2_000), size in proptest::sample::select(vec![2usize, 4, 8])) {
            let n = data.len() / size;
            let data = &data[..n * size];
            let expected = shuffle(data, size).unwrap();
            for (name, [forward, back]) in kernels(size) {
                let mut out = vec![0u8; data.len()];
                let done = forward(data, &mut out, n);
                shuffle_range(data, &mut out, n, size, done);
                prop_assert_eq!(&out, &expected, "{} shuffle", name);
                let done = back(&expected, &mut out, n);
                unshuffle_range(&expected, &mut out, n, size, done);
                prop_assert_eq!(&out, data, "{} unshuffle", name);
            }
        }

        #[test]
        fn matches_the_definition(data in proptest::collection::vec(any::<u8>(), 0..2_000), size in proptest::sample::select(vec![2usize, 3, 4, 8])) {
            let n = data.len() / size;
            let data = &data[..n * size];
            let mut expected = vec![0u8; data.len()];
            for i in 0..n {
                for b in 0..size {
                    expected[b * n + i] = data[i * size + b];
                }
            }
            prop_assert_eq!(shuffle(data, size).unwrap(), expected);
        }
    }
}
