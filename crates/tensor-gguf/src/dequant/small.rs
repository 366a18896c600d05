//! One-bit (`Q1_0`), ternary (`TQ1_0`, `TQ2_0`), 4-bit float (`MXFP4`, `NVFP4`) and 4-bit non-linear
//! (`IQ4_NL`, `IQ4_XS`) quantizations.

use super::fields::{f16_at, u16_at};

/// `IQ4_NL`'s sixteen levels.
const IQ4_LEVELS: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

/// float4 (e2m1) values, doubled (the scales of `MXFP4` and `NVFP4` are halved to match).
const E2M1_DOUBLED: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

pub(super) fn tq1_0(b: &[u8], out: &mut [f32]) {
    const POW3: [u8; 5] = [1, 3, 9, 27, 81];
    let qs = &b[0..48];
    let qh = &b[48..52];
    let d = f16_at(b, 52);
    // Each byte holds up to five base-3 digits as a fixed-point fraction: multiplying by
    // 3^p (mod 256) brings digit p to the top, which ×3 >> 8 reads.
    let digit = |byte: u8, p: usize| -> f32 {
        let v = byte.wrapping_mul(POW3[p]);
        f32::from(((u16::from(v) * 3) >> 8) as i8 - 1)
    };
    let mut k = 0;
    for p in 0..5 {
        for &q in &qs[..32] {
            out[k] = d * digit(q, p);
            k += 1;
        }
    }
    for p in 0..5 {
        for &q in &qs[32..48] {
            out[k] = d * digit(q, p);
            k += 1;
        }
    }
    for p in 0..4 {
        for &q in qh {
            out[k] = d * digit(q, p);
            k += 1;
        }
    }
}

/// `Q1_0`, which gguf-py does not dequantize: ggml's, one bit a value, `+d` or `-d`.
pub(super) fn q1_0(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    for (k, o) in out.iter_mut().enumerate() {
        *o = if (b[2 + k / 8] >> (k % 8)) & 1 == 1 {
            d
        } else {
            -d
        };
    }
}

pub(super) fn tq2_0(b: &[u8], out: &mut [f32]) {
    let qs = &b[0..64];
    let d = f16_at(b, 64);
    for (k, o) in out.iter_mut().enumerate() {
        let (half, s, l) = (k / 128, (k / 32) % 4, k % 32);
        let q = ((qs[half * 32 + l] >> (2 * s)) & 3) as i8 - 1;
        *o = d * f32::from(q);
    }
}

/// An e8m0 scale, halved: `2^(e - 128)`, with the two smallest as subnormals.
fn e8m0_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        u32::from(e - 1) << 23
    };
    f32::from_bits(bits)
}

pub(super) fn mxfp4(b: &[u8], out: &mut [f32]) {
    let d = e8m0_half(b[0]);
    let qs = &b[1..17];
    for (k, o) in out.iter_mut().enumerate() {
        let q = (qs[k % 16] >> (4 * (k / 16))) & 0x0F;
        *o = d * f32::from(E2M1_DOUBLED[q as usize]);
    }
}

/// An unsigned e4m3 scale (bias 7), halved; 0 and 0x7F read as zero.
fn ue4m3_half(x: u8) -> f32 {
    if x == 0 || x == 0x7F {
        return 0.0;
    }
    let exp = i32::from((x >> 3) & 0x0F);
    let man = f32::from(x & 7);
    let raw = if exp == 0 {
        man * 2f32.powi(-9)
    } else {
        (1.0 + man / 8.0) * 2f32.powi(exp - 7)
    };
    raw * 0.5
}

pub(super) fn nvfp4(b: &[u8], out: &mut [f32]) {
    let qs = &b[4..36];
    for (sub, o) in out.chunks_exact_mut(16).enumerate() {
        let d = ue4m3_half(b[sub]);
        for (j, v) in o.iter_mut().enumerate() {
            let byte = qs[sub * 8 + j % 8];
            let q = if j < 8 { byte & 0x0F } else { byte >> 4 };
            *v = d * f32::from(E2M1_DOUBLED[q as usize]);
        }
    }
}

pub(super) fn iq4_nl(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..18];
    for (k, o) in out.iter_mut().enumerate() {
        let q = (qs[k % 16] >> (4 * (k / 16))) & 0x0F;
        *o = d * f32::from(IQ4_LEVELS[q as usize]);
    }
}

pub(super) fn iq4_xs(b: &[u8], out: &mut [f32]) {
    let d = f16_at(b, 0);
    let scales_h = u16_at(b, 2);
    let scales_l = &b[4..8];
    let qs = &b[8..136];
    for (g, o) in out.chunks_exact_mut(32).enumerate() {
        let low = (scales_l[g / 2] >> (4 * (g % 2))) & 0x0F;
        let high = ((scales_h >> (2 * g)) as u8) & 3;
        let dl = d * f32::from((low | (high << 4)) as i8 - 32);
        for (e, v) in o.iter_mut().enumerate() {
            let q = (qs[g * 16 + e % 16] >> (4 * (e / 16))) & 0x0F;
            *v = dl * f32::from(IQ4_LEVELS[q as usize]);
        }
    }
}
