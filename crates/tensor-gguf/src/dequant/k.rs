//! The "K" quantizations: super-blocks of 256 elements in sub-blocks of 16 or 32, each
//! sub-block with its own scale (and minimum) quantized against the block's float16 ones.

use super::fields::f16_at;

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

pub(super) fn q4_k(b: &[u8], out: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (sc, mn) = scales_and_mins(&b[4..16]);
    // Four runs of 64: the low nibbles of 32 bytes, then their high nibbles.
    for (c, (q, o)) in b[16..144]
        .chunks_exact(32)
        .zip(out.chunks_exact_mut(64))
        .enumerate()
    {
        let (lo, hi) = o.split_at_mut(32);
        let (d1, m1) = (d * f32::from(sc[2 * c]), dmin * f32::from(mn[2 * c]));
        let (d2, m2) = (
            d * f32::from(sc[2 * c + 1]),
            dmin * f32::from(mn[2 * c + 1]),
        );
        for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(q) {
            *l = d1 * f32::from(x & 0x0F) - m1;
            *h = d2 * f32::from(x >> 4) - m2;
        }
    }
}

pub(super) fn q5_k(b: &[u8], out: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (sc, mn) = scales_and_mins(&b[4..16]);
    let qh: &[u8; 32] = b[16..48]
        .try_into()
        .expect("a block holds 32 high-bit bytes");
    // As Q4_K, the 5th bit of sub-block j in bit j of the 32 high-bit bytes.
    for (c, (q, o)) in b[48..176]
        .chunks_exact(32)
        .zip(out.chunks_exact_mut(64))
        .enumerate()
    {
        let (lo, hi) = o.split_at_mut(32);
        let (j1, j2) = (2 * c, 2 * c + 1);
        let (d1, m1) = (d * f32::from(sc[j1]), dmin * f32::from(mn[j1]));
        let (d2, m2) = (d * f32::from(sc[j2]), dmin * f32::from(mn[j2]));
        for (((l, h), &x), &hb) in lo.iter_mut().zip(hi.iter_mut()).zip(q).zip(qh) {
            *l = d1 * f32::from((x & 0x0F) | (((hb >> j1) & 1) << 4)) - m1;
            *h = d2 * f32::from((x >> 4) | (((hb >> j2) & 1) << 4)) - m2;
        }
    }
}

pub(super) fn q6_k(b: &[u8], out: &mut [f32]) {
    let scales = &b[192..208];
    let d = f16_at(b, 208);
    let mut dl = [0f32; 16];
    for (v, &s) in dl.iter_mut().zip(scales) {
        *v = d * f32::from(s as i8);
    }
    // Two halves of 128: 64 low-bit bytes and 32 high-bit bytes each, four runs of 32.
    for half in 0..2 {
        let ql = &b[half * 64..half * 64 + 64];
        let qh = &b[128 + half * 32..128 + half * 32 + 32];
        let o = &mut out[half * 128..half * 128 + 128];
        let g = half * 8;
        for l in 0..32 {
            let q =
                |low: u8, shift: u8| f32::from((low | (((qh[l] >> shift) & 3) << 4)) as i8 - 32);
            let s = l / 16;
            o[l] = dl[g + s] * q(ql[l] & 0x0F, 0);
            o[32 + l] = dl[g + 2 + s] * q(ql[32 + l] & 0x0F, 2);
            o[64 + l] = dl[g + 4 + s] * q(ql[l] >> 4, 4);
            o[96 + l] = dl[g + 6 + s] * q(ql[32 + l] >> 4, 6);
        }
    }
}
