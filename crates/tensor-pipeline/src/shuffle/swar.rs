//! The fixed widths in plain 64-bit words (SWAR), for targets without the SSE2 kernel:
//! tiles of 8 elements, each lane getting one word per tile. Each returns how many
//! elements it did; the caller finishes the rest.

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
pub(super) fn shuffle<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) -> usize {
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
    tiles * 8
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

/// The inverse of [`shuffle`], merging lanes back in the same rounds.
pub(super) fn unshuffle<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) -> usize {
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
    tiles * 8
}
