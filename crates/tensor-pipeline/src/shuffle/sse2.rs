//! The fixed widths on x86-64 in SSE2 registers, which every x86-64 CPU has: tiles of 16
//! elements, `W` registers each. One round splits the tile's bytes, read as one sequence,
//! into the even ones followed by the odd ones; log2(`W`) rounds leave byte `b` of every
//! element in register `b`. Unshuffling merges them back in as many rounds. Each function
//! returns how many elements it did; the caller finishes the rest.

use safe_arch::{
    bitand_m128i, load_unaligned_m128i, m128i, pack_i16_to_u8_m128i, set_splat_i16_m128i,
    shr_imm_u16_m128i, store_unaligned_m128i, unpack_high_i8_m128i, unpack_low_i8_m128i,
};

/// Elements per tile: one register's bytes per lane.
const TILE: usize = 16;

fn load(bytes: &[u8]) -> m128i {
    load_unaligned_m128i(bytes[..TILE].try_into().unwrap_or(&[0; TILE]))
}

fn store(v: m128i, out: &mut [u8]) {
    if let Ok(out) = (&mut out[..TILE]).try_into() {
        store_unaligned_m128i(out, v);
    }
}

/// Even bytes of the pairs of registers first, then their odd bytes. Each 16-bit unit
/// holds a value below 256 after the mask or the shift, so the saturating pack is exact.
#[inline]
fn split<const W: usize>(v: [m128i; W]) -> [m128i; W] {
    let low = set_splat_i16_m128i(0x00FF);
    std::array::from_fn(|k| {
        let pair = k % (W / 2);
        let (a, b) = (v[2 * pair], v[2 * pair + 1]);
        if k < W / 2 {
            pack_i16_to_u8_m128i(bitand_m128i(a, low), bitand_m128i(b, low))
        } else {
            pack_i16_to_u8_m128i(shr_imm_u16_m128i::<8>(a), shr_imm_u16_m128i::<8>(b))
        }
    })
}

/// The inverse of [`split`]: register `k` of the first half interleaved with register `k`
/// of the second.
#[inline]
fn merge<const W: usize>(v: [m128i; W]) -> [m128i; W] {
    std::array::from_fn(|j| {
        let (a, b) = (v[j / 2], v[j / 2 + W / 2]);
        if j % 2 == 0 {
            unpack_low_i8_m128i(a, b)
        } else {
            unpack_high_i8_m128i(a, b)
        }
    })
}

pub(super) fn shuffle<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) -> usize {
    let tiles = n / TILE;
    for (t, tile) in src.chunks_exact(TILE * W).take(tiles).enumerate() {
        let mut v: [m128i; W] = std::array::from_fn(|k| load(&tile[k * TILE..]));
        for _ in 0..W.trailing_zeros() {
            v = split(v);
        }
        for (lane, v) in v.into_iter().enumerate() {
            store(v, &mut dst[lane * n + t * TILE..]);
        }
    }
    tiles * TILE
}

pub(super) fn unshuffle<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) -> usize {
    let tiles = n / TILE;
    for (t, tile) in dst.chunks_exact_mut(TILE * W).take(tiles).enumerate() {
        let mut v: [m128i; W] = std::array::from_fn(|lane| load(&src[lane * n + t * TILE..]));
        for _ in 0..W.trailing_zeros() {
            v = merge(v);
        }
        for (k, v) in v.into_iter().enumerate() {
            store(v, &mut tile[k * TILE..]);
        }
    }
    tiles * TILE
}
