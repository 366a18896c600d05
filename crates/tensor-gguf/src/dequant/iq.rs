//! The lattice ("IQ") quantizations: groups of 4 or 8 elements stored as an index into a
//! fixed table of points (ggml's grids, in `grids.bin`, made by
//! `scripts/reference/gguf_grids.py`), with signs and sub-block scales.

use super::fields::{f16_at, u16_at, u32_at};

/// Every grid, one byte per value, in the order the script writes them.
static GRIDS: &[u8; 33792] = include_bytes!("grids.bin");

/// A grid: `rows` points of `width` values, at `start` in [`GRIDS`].
#[derive(Clone, Copy)]
struct Grid {
    start: usize,
    width: usize,
}

impl Grid {
    #[inline]
    fn value(self, row: usize, j: usize) -> f32 {
        f32::from(GRIDS[self.start + row * self.width + j] as i8)
    }
}

const IQ2_XXS: Grid = Grid { start: 0, width: 8 };
const IQ2_XS: Grid = Grid {
    start: 2048,
    width: 8,
};
const IQ2_S: Grid = Grid {
    start: 6144,
    width: 8,
};
const IQ3_XXS: Grid = Grid {
    start: 14336,
    width: 4,
};
const IQ3_S: Grid = Grid {
    start: 15360,
    width: 4,
};
const IQ1_S: Grid = Grid {
    start: 17408,
    width: 8,
};

/// IQ1's offset added to every grid value (its sign chosen per group).
const IQ1_DELTA: f32 = 0.125;

/// The sign of element `j` (0–7) of a group whose 7 stored sign bits are `s`: the 8th makes
/// the count of minus signs even.
#[inline]
fn sign(s: u32, j: usize) -> f32 {
    let s = s & 0x7F;
    let full = s | ((s.count_ones() & 1) << 7);
    if (full >> j) & 1 == 0 { 1.0 } else { -1.0 }
}

/// A plain sign bit: element `k`'s bit of a sign byte array.
#[inline]
fn sign_bit(signs: &[u8], k: usize) -> f32 {
    if (signs[k / 8] >> (k % 8)) & 1 == 0 {
        1.0
    } else {
        -1.0
    }
}

pub(super) fn iq2_xxs(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    for (i, o) in out.chunks_exact_mut(32).enumerate() {
        let at = 2 + 8 * i;
        let aux1 = u32_at(b, at + 4);
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for l in 0..4 {
            let row = usize::from(b[at + l]);
            let s = aux1 >> (7 * l);
            for j in 0..8 {
                o[l * 8 + j] = db * IQ2_XXS.value(row, j) * sign(s, j);
            }
        }
    }
}

pub(super) fn iq2_xs(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let scales = &b[66..74];
    for (g, o) in out.chunks_exact_mut(16).enumerate() {
        let s = (scales[g / 2] >> (4 * (g % 2))) & 0x0F;
        let db = d * (0.5 + f32::from(s)) * 0.25;
        for p in 0..2 {
            let q = u16_at(b, 2 + 2 * (g * 2 + p));
            let row = usize::from(q & 511);
            for j in 0..8 {
                o[p * 8 + j] = db * IQ2_XS.value(row, j) * sign(u32::from(q >> 9), j);
            }
        }
    }
}

pub(super) fn iq2_s(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..34];
    let signs = &b[34..66];
    let qh = &b[66..74];
    let scales = &b[74..82];
    for (g, o) in out.chunks_exact_mut(16).enumerate() {
        let s = (scales[g / 2] >> (4 * (g % 2))) & 0x0F;
        let db = d * (0.5 + f32::from(s)) * 0.25;
        for p in 0..2 {
            let k = g * 2 + p;
            let high = (qh[k / 4] >> (2 * (k % 4))) & 3;
            let row = usize::from(qs[k]) | (usize::from(high) << 8);
            for j in 0..8 {
                let e = k * 8 + j;
                o[p * 8 + j] = db * IQ2_S.value(row, j) * sign_bit(signs, e);
            }
        }
    }
}

pub(super) fn iq3_xxs(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..66];
    for (i, o) in out.chunks_exact_mut(32).enumerate() {
        let aux = u32_at(b, 66 + 4 * i);
        let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
        for (e, v) in o.iter_mut().enumerate() {
            let row = usize::from(qs[i * 8 + e / 4]);
            *v = db * IQ3_XXS.value(row, e % 4) * sign(aux >> (7 * (e / 8)), e % 8);
        }
    }
}

pub(super) fn iq3_s(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..66];
    let qh = &b[66..74];
    let signs = &b[74..106];
    let scales = &b[106..110];
    for (g, o) in out.chunks_exact_mut(32).enumerate() {
        let s = (scales[g / 2] >> (4 * (g % 2))) & 0x0F;
        let db = d * f32::from(1 + 2 * s);
        for (e, v) in o.iter_mut().enumerate() {
            let k = g * 8 + e / 4;
            let high = (qh[k / 8] >> (k % 8)) & 1;
            let row = usize::from(qs[k]) | (usize::from(high) << 8);
            *v = db * IQ3_S.value(row, e % 4) * sign_bit(signs, g * 32 + e);
        }
    }
}

pub(super) fn iq1_s(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..34];
    for (i, o) in out.chunks_exact_mut(32).enumerate() {
        let qh = u16_at(b, 34 + 2 * i);
        let dl = d * f32::from(2 * ((qh >> 12) & 7) + 1);
        let delta = if qh & 0x8000 == 0 {
            IQ1_DELTA
        } else {
            -IQ1_DELTA
        };
        for l in 0..4 {
            let row = usize::from(qs[i * 4 + l]) | (usize::from((qh >> (3 * l)) & 7) << 8);
            for j in 0..8 {
                o[l * 8 + j] = dl * (IQ1_S.value(row, j) + delta);
            }
        }
    }
}

pub(super) fn iq1_m(b: &[u8], out: &mut [f32]) {
    let qs = &b[0..32];
    let qh = &b[32..48];
    let scales = [u16_at(b, 48), u16_at(b, 50), u16_at(b, 52), u16_at(b, 54)];
    // The block's float16 scale is spread over the top nibbles of the four scale words.
    let d_bits = ((scales[0] & 0xF000) >> 12)
        | ((scales[1] & 0xF000) >> 8)
        | ((scales[2] & 0xF000) >> 4)
        | (scales[3] & 0xF000);
    let d = half::f16::from_bits(d_bits).to_f32();
    for (k, o) in out.chunks_exact_mut(8).enumerate() {
        let sub = k / 2; // 16 elements a scale
        let s = (scales[sub / 4] >> (3 * (sub % 4))) & 7;
        let dl = d * f32::from(2 * s + 1);
        let h = qh[k / 2] >> (4 * (k % 2));
        let row = usize::from(qs[k]) | (usize::from(h & 7) << 8);
        let delta = if h & 0x08 == 0 { IQ1_DELTA } else { -IQ1_DELTA };
        for (j, v) in o.iter_mut().enumerate() {
            *v = dl * (IQ1_S.value(row, j) + delta);
        }
    }
}
