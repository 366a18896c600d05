//! The first quantizations: 32 elements a block, one float16 scale (and for the `_1`
//! types a float16 minimum), 4, 5 or 8 bits a value.

use super::fields::{f16_at, u32_at};

/// Element `j`'s nibble: the low nibbles of 16 bytes hold elements 0–15, the high 16–31.
#[inline]
fn nibble(qs: &[u8], j: usize) -> u8 {
    if j < 16 {
        qs[j] & 0x0F
    } else {
        qs[j - 16] >> 4
    }
}

pub(super) fn q4_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..18];
    for (j, o) in out.iter_mut().enumerate() {
        *o = d * f32::from(nibble(qs, j) as i8 - 8);
    }
}

pub(super) fn q4_1(b: &[u8], out: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let qs = &b[4..20];
    for (j, o) in out.iter_mut().enumerate() {
        *o = d * f32::from(nibble(qs, j)) + m;
    }
}

pub(super) fn q5_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qh = u32_at(b, 2);
    let qs = &b[6..22];
    for (j, o) in out.iter_mut().enumerate() {
        let q = nibble(qs, j) | ((((qh >> j) & 1) as u8) << 4);
        *o = d * f32::from(q as i8 - 16);
    }
}

pub(super) fn q5_1(b: &[u8], out: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let qh = u32_at(b, 4);
    let qs = &b[8..24];
    for (j, o) in out.iter_mut().enumerate() {
        let q = nibble(qs, j) | ((((qh >> j) & 1) as u8) << 4);
        *o = d * f32::from(q) + m;
    }
}

pub(super) fn q8_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    for (o, &q) in out.iter_mut().zip(&b[2..34]) {
        *o = f32::from(q as i8) * d;
    }
}

/// `Q8_K`, which gguf-py does not dequantize: ggml's, a float32 scale times 256 signed bytes
/// (the sums of 16 that follow serve dot products only).
pub(super) fn q8_k(b: &[u8], out: &mut [f32]) {
    let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for (o, &q) in out.iter_mut().zip(&b[4..260]) {
        *o = d * f32::from(q as i8);
    }
}
