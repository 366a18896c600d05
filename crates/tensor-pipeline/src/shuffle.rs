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
    match element_size {
        1 => dst.copy_from_slice(src),
        2 => shuffle_fixed::<2>(src, dst, n),
        4 => shuffle_fixed::<4>(src, dst, n),
        8 => shuffle_fixed::<8>(src, dst, n),
        _ => shuffle_range(src, dst, n, element_size, 0),
    }
    Ok(())
}

/// Undoes [`shuffle_into`].
pub fn unshuffle_into(src: &[u8], dst: &mut [u8], element_size: usize) -> Result<()> {
    let n = check(src.len(), dst.len(), element_size)?;
    match element_size {
        1 => dst.copy_from_slice(src),
        2 => unshuffle_fixed::<2>(src, dst, n),
        4 => unshuffle_fixed::<4>(src, dst, n),
        8 => unshuffle_fixed::<8>(src, dst, n),
        _ => unshuffle_range(src, dst, n, element_size, 0),
    }
    Ok(())
}

/// The even-indexed bytes of a little-endian word, packed into its low half.
#[inline]
fn even_bytes(x: u64) -> u64 {
    let t = x & 0x00FF_00FF_00FF_00FF;
    let t = (t | (t >> 8)) & 0x0000_FFFF_0000_FFFF;
    (t | (t >> 16)) & 0x0000_0000_FFFF_FFFF
}

/// Splits a byte stream (as little-endian words) into its even and odd bytes.
#[inline]
fn deinterleave<const N: usize, const H: usize>(w: [u64; N]) -> ([u64; H], [u64; H]) {
    let even = std::array::from_fn(|k| even_bytes(w[2 * k]) | even_bytes(w[2 * k + 1]) << 32);
    let odd =
        std::array::from_fn(|k| even_bytes(w[2 * k] >> 8) | even_bytes(w[2 * k + 1] >> 8) << 32);
    (even, odd)
}

/// Transposes an 8×8 byte matrix held as eight little-endian words (word `r`, byte `b`
/// becomes word `b`, byte `r`) by swapping 4-, 2- and 1-byte blocks. Its own inverse.
#[inline]
fn transpose8(mut w: [u64; 8]) -> [u64; 8] {
    for (step, mask) in [
        (4usize, 0x0000_0000_FFFF_FFFF_u64),
        (2, 0x0000_FFFF_0000_FFFF),
        (1, 0x00FF_00FF_00FF_00FF),
    ] {
        let shift = 8 * step as u32;
        for r in (0..8).filter(|r| r & step == 0) {
            let t = ((w[r] >> shift) ^ w[r + step]) & mask;
            w[r + step] ^= t;
            w[r] ^= t << shift;
        }
    }
    w
}

/// Fixed element width, in tiles of 8 elements, in registers: widths 2 and 4 take one or
/// two rounds of splitting even from odd bytes, width 8 an 8×8 byte transpose; each lane
/// gets one word per tile.
fn shuffle_fixed<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    let tiles = n / 8;
    let words = |t: usize, k: usize| {
        let at = t * 8 * W + k * 8;
        u64::from_le_bytes(src[at..at + 8].try_into().unwrap_or_default())
    };
    let mut put = |lane: usize, t: usize, w: u64| {
        dst[lane * n + t * 8..lane * n + t * 8 + 8].copy_from_slice(&w.to_le_bytes());
    };
    for t in 0..tiles {
        match W {
            2 => {
                let ([e], [o]) = deinterleave::<2, 1>([words(t, 0), words(t, 1)]);
                put(0, t, e);
                put(1, t, o);
            }
            4 => {
                let (e, o) = deinterleave::<4, 2>(std::array::from_fn(|k| words(t, k)));
                let ([l0], [l2]) = deinterleave::<2, 1>(e);
                let ([l1], [l3]) = deinterleave::<2, 1>(o);
                for (lane, w) in [l0, l1, l2, l3].into_iter().enumerate() {
                    put(lane, t, w);
                }
            }
            _ => {
                let lanes = transpose8(std::array::from_fn(|k| words(t, k)));
                for (lane, w) in lanes.into_iter().enumerate() {
                    put(lane, t, w);
                }
            }
        }
    }
    shuffle_range(src, dst, n, W, tiles * 8);
}

/// The low half's bytes of a word spread to its even byte positions.
#[inline]
fn spread_bytes(x: u64) -> u64 {
    let t = x & 0x0000_0000_FFFF_FFFF;
    let t = (t | (t << 16)) & 0x0000_FFFF_0000_FFFF;
    (t | (t << 8)) & 0x00FF_00FF_00FF_00FF
}

/// Merges even and odd byte streams: the inverse of [`deinterleave`].
#[inline]
fn interleave<const H: usize, const N: usize>(even: [u64; H], odd: [u64; H]) -> [u64; N] {
    std::array::from_fn(|i| {
        let shift = if i % 2 == 0 { 0 } else { 32 };
        spread_bytes(even[i / 2] >> shift) | spread_bytes(odd[i / 2] >> shift) << 8
    })
}

/// The inverse of [`shuffle_fixed`], merging lanes back in the same rounds.
fn unshuffle_fixed<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    let tiles = n / 8;
    let lane = |l: usize, t: usize| {
        let at = l * n + t * 8;
        u64::from_le_bytes(src[at..at + 8].try_into().unwrap_or_default())
    };
    for t in 0..tiles {
        let out = &mut dst[t * 8 * W..(t + 1) * 8 * W];
        let mut write = |words: &[u64]| {
            for (c, w) in out.chunks_exact_mut(8).zip(words) {
                c.copy_from_slice(&w.to_le_bytes());
            }
        };
        match W {
            2 => write(&interleave::<1, 2>([lane(0, t)], [lane(1, t)])),
            4 => {
                let e = interleave::<1, 2>([lane(0, t)], [lane(2, t)]);
                let o = interleave::<1, 2>([lane(1, t)], [lane(3, t)]);
                write(&interleave::<2, 4>(e, o));
            }
            _ => write(&transpose8(std::array::from_fn(|l| lane(l, t)))),
        }
    }
    unshuffle_range(src, dst, n, W, tiles * 8);
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

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..20_000), size in 1usize..17) {
            let len = data.len() / size * size;
            let s = shuffle(&data[..len], size).unwrap();
            prop_assert_eq!(unshuffle(&s, size).unwrap(), &data[..len]);
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
