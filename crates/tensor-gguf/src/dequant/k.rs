//! The "K" quantizations: super-blocks of 256 elements in sub-blocks of 16 or 32, each
//! sub-block with its own scale (and minimum) quantized against the block's float16 ones.

use super::f16_at;

/// `Q4_K`'s and `Q5_K`'s eight 6-bit scales and minimums, packed in 12 bytes.
fn scales_and_mins(s: &[u8]) -> ([u8; 8], [u8; 8]) {
    let mut sc = [0; 8];
    let mut mn = [0; 8];
    for j in 0..4 {
        sc[j] = s[j] & 0x3F;
        mn[j] = s[4 + j] & 0x3F;
        sc[4 + j] = (s[8 + j] & 0x0F) | ((s[j] >> 2) & 0x30);
        mn[4 + j] = (s[8 + j] >> 4) | ((s[4 + j] >> 2) & 0x30);
    }
    (sc, mn)
}

/// Element `k`'s 2 bits of a 64-byte plane: two halves of 128 elements, each four runs of
/// 32 taking bits 0–1, 2–3, 4–5 and 6–7 of the half's 32 bytes.
#[inline]
fn crumb(qs: &[u8], k: usize) -> u8 {
    let (half, s, l) = (k / 128, (k / 32) % 4, k % 32);
    (qs[half * 32 + l] >> (2 * s)) & 3
}

pub(super) fn q2_k(b: &[u8], out: &mut [f32]) {
    let scales = &b[0..16];
    let qs = &b[16..80];
    let (d, dmin) = (f16_at(b, 80), f16_at(b, 82));
    let mut dl = [0f32; 16];
    let mut ml = [0f32; 16];
    for i in 0..16 {
        dl[i] = d * f32::from(scales[i] & 0x0F);
        ml[i] = dmin * f32::from(scales[i] >> 4);
    }
    for (k, o) in out.iter_mut().enumerate() {
        *o = dl[k / 16] * f32::from(crumb(qs, k)) - ml[k / 16];
    }
}

pub(super) fn q3_k(b: &[u8], out: &mut [f32]) {
    let hmask = &b[0..32];
    let qs = &b[32..96];
    let s = &b[96..108];
    let d = f16_at(b, 108);
    let mut dl = [0f32; 16];
    for (i, v) in dl.iter_mut().enumerate() {
        let low = if i < 8 { s[i] & 0x0F } else { s[i - 8] >> 4 };
        let high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        *v = d * f32::from((low | (high << 4)) as i8 - 32);
    }
    for (k, o) in out.iter_mut().enumerate() {
        let low = crumb(qs, k) as i8;
        // The offset of 4 applies where the mask bit is clear.
        let high = ((hmask[k % 32] >> (k / 32)) & 1) ^ 1;
        *o = dl[k / 16] * f32::from(low - ((high << 2) as i8));
    }
}

/// Element `k`'s nibble of `Q4_K`/`Q5_K`: four runs of 64, each the low then the high
/// nibbles of 32 bytes.
#[inline]
fn k_nibble(qs: &[u8], k: usize) -> u8 {
    let (chunk, high, l) = (k / 64, (k / 32) % 2, k % 32);
    (qs[chunk * 32 + l] >> (4 * high)) & 0x0F
}

pub(super) fn q4_k(b: &[u8], out: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (sc, mn) = scales_and_mins(&b[4..16]);
    let qs = &b[16..144];
    for j in 0..8 {
        let dj = d * f32::from(sc[j]);
        let mj = dmin * f32::from(mn[j]);
        for (l, o) in out[j * 32..j * 32 + 32].iter_mut().enumerate() {
            *o = dj * f32::from(k_nibble(qs, j * 32 + l)) - mj;
        }
    }
}

pub(super) fn q5_k(b: &[u8], out: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (sc, mn) = scales_and_mins(&b[4..16]);
    let qh = &b[16..48];
    let qs = &b[48..176];
    for j in 0..8 {
        let dj = d * f32::from(sc[j]);
        let mj = dmin * f32::from(mn[j]);
        for (l, o) in out[j * 32..j * 32 + 32].iter_mut().enumerate() {
            let q = k_nibble(qs, j * 32 + l) | (((qh[l] >> j) & 1) << 4);
            *o = dj * f32::from(q) - mj;
        }
    }
}

pub(super) fn q6_k(b: &[u8], out: &mut [f32]) {
    let ql = &b[0..128];
    let qh = &b[128..192];
    let scales = &b[192..208];
    let d = f16_at(b, 208);
    let mut dl = [0f32; 16];
    for (v, &s) in dl.iter_mut().zip(scales) {
        *v = d * f32::from(s as i8);
    }
    for (k, o) in out.iter_mut().enumerate() {
        let (half, nib, m) = (k / 128, (k / 64) % 2, k % 64);
        let low = (ql[half * 64 + m] >> (4 * nib)) & 0x0F;
        let high = crumb(qh, k);
        *o = dl[k / 16] * f32::from((low | (high << 4)) as i8 - 32);
    }
}
