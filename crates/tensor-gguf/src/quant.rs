//! Quantization: float32 values to ggml blocks, byte for byte as gguf-py's
//! `gguf.quants.quantize` makes them (the same float32 operations in the same order), for
//! every type gguf-py quantizes: `Q4_0`, `Q4_1`, `Q5_0`, `Q5_1`, `Q8_0`. `Q4_K` and `Q6_K`,
//! which gguf-py does not make, follow ggml's reference quantizers
//! (`quantize_row_q4_K_ref`, `quantize_row_q6_K_ref`: what `llama-quantize` runs without an
//! importance matrix) in their float32 operations, evaluated one by one — as a build without
//! fused multiply-adds computes them.
//!
//! The block functions name things as ggml does (`d` the scale, `qs` the quants, `x` the
//! block's values, `sum_l`/`sum_l2`/`sum_xl` its sums), so they read against the reference.
#![allow(clippy::many_single_char_names, clippy::similar_names)]

use crate::ggml::GgmlType;
use half::f16;

type BlockFn = fn(&[f32], &mut [u8]);

/// Whether `t` can be made here.
#[must_use]
pub fn can_quantize(t: GgmlType) -> bool {
    block_fn(t).is_some()
}

fn block_fn(t: GgmlType) -> Option<BlockFn> {
    Some(match t {
        GgmlType::Q4_0 => q4_0,
        GgmlType::Q4_1 => q4_1,
        GgmlType::Q5_0 => q5_0,
        GgmlType::Q5_1 => q5_1,
        GgmlType::Q8_0 => q8_0,
        GgmlType::Q4_K => q4_k,
        GgmlType::Q6_K => q6_k,
        _ => return None,
    })
}

/// Quantizes `values` (whole blocks of `t`) into `out`, exactly their size in blocks.
pub fn quantize(t: GgmlType, values: &[f32], out: &mut [u8]) -> Result<(), String> {
    let Some(f) = block_fn(t) else {
        return Err(format!(
            "tensorkit does not quantize to {t} (it makes Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 as gguf-py does, Q4_K and Q6_K as ggml does)"
        ));
    };
    if t.bytes_for(values.len() as u64) != Some(out.len() as u64) {
        return Err(format!(
            "{} values are not whole {t} blocks of {} in {} bytes",
            values.len(),
            t.block_elements(),
            out.len()
        ));
    }
    let (n, size) = (t.block_elements() as usize, t.block_bytes() as usize);
    let run = |x: &[f32], o: &mut [u8]| {
        for (b, q) in x.chunks_exact(n).zip(o.chunks_exact_mut(size)) {
            f(b, q);
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        const BLOCKS: usize = 2048;
        if values.len() > n * BLOCKS {
            values
                .par_chunks(n * BLOCKS)
                .zip(out.par_chunks_mut(size * BLOCKS))
                .for_each(|(x, o)| run(x, o));
            return Ok(());
        }
    }
    run(values, out);
    Ok(())
}

/// numpy's `np.where(d == 0, 0, 1 / d)`.
fn inverse(d: f32) -> f32 {
    if d == 0.0 { 0.0 } else { 1.0 / d }
}

/// The value of largest magnitude, the first of them (numpy's `argmax` of `abs`).
fn signed_max(x: &[f32]) -> f32 {
    let mut best = x[0];
    for &v in &x[1..] {
        if v.abs() > best.abs() {
            best = v;
        }
    }
    best
}

fn min_max(x: &[f32]) -> (f32, f32) {
    // numpy's min and max: NaN wins; otherwise the extremes.
    x.iter().fold((x[0], x[0]), |(lo, hi), &v| {
        (
            if v < lo || v.is_nan() { v } else { lo },
            if v > hi || v.is_nan() { v } else { hi },
        )
    })
}

/// float32 to uint8 as numpy's `astype(np.uint8)` of a value already in range.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn to_u8(v: f32) -> u8 {
    v as u8
}

/// numpy's `np.trunc(v).astype(uint8).clip(0, max)`.
fn level(v: f32, max: u8) -> u8 {
    to_u8(v.trunc()).min(max)
}

fn put_f16(out: &mut [u8], at: usize, v: f32) {
    out[at..at + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes());
}

/// The 32 levels packed two to a byte: elements 0–15 in the low nibbles, 16–31 high.
fn pack_nibbles(q: &[u8; 32], out: &mut [u8]) {
    for j in 0..16 {
        out[j] = (q[j] & 0x0F) | (q[j + 16] << 4);
    }
}

/// The 5th bits of 32 levels, bit `j` for element `j`.
fn high_bits(q: &[u8; 32]) -> [u8; 4] {
    let mut h = 0u32;
    for (j, &v) in q.iter().enumerate() {
        h |= u32::from((v >> 4) & 1) << j;
    }
    h.to_le_bytes()
}

fn q4_0(x: &[f32], out: &mut [u8]) {
    let d = signed_max(x) / -8.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (v, &e) in q.iter_mut().zip(x) {
        *v = level(e * id + 8.5, 15);
    }
    put_f16(out, 0, d);
    pack_nibbles(&q, &mut out[2..18]);
}

fn q4_1(x: &[f32], out: &mut [u8]) {
    let (min, max) = min_max(x);
    let d = (max - min) / 15.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (v, &e) in q.iter_mut().zip(x) {
        *v = level((e - min) * id + 0.5, 15);
    }
    put_f16(out, 0, d);
    put_f16(out, 2, min);
    pack_nibbles(&q, &mut out[4..20]);
}

fn q5_0(x: &[f32], out: &mut [u8]) {
    let d = signed_max(x) / -16.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (v, &e) in q.iter_mut().zip(x) {
        *v = level(e * id + 16.5, 31);
    }
    put_f16(out, 0, d);
    out[2..6].copy_from_slice(&high_bits(&q));
    pack_nibbles(&q, &mut out[6..22]);
}

fn q5_1(x: &[f32], out: &mut [u8]) {
    let (min, max) = min_max(x);
    let d = (max - min) / 31.0;
    let id = inverse(d);
    let mut q = [0u8; 32];
    for (v, &e) in q.iter_mut().zip(x) {
        *v = level((e - min) * id + 0.5, 31);
    }
    put_f16(out, 0, d);
    put_f16(out, 2, min);
    out[4..8].copy_from_slice(&high_bits(&q));
    pack_nibbles(&q, &mut out[8..24]);
}

/// gguf-py's `np_roundf`: half away from zero, as `floor(|n|) + floor(2 * frac)`.
fn round_away(n: f32) -> f32 {
    let a = n.abs();
    let floored = a.floor();
    let b = floored + (2.0 * (a - floored)).floor();
    if n > 0.0 {
        b
    } else if n < 0.0 {
        -b
    } else {
        0.0 * b
    }
}

#[allow(clippy::cast_possible_truncation)]
fn q8_0(x: &[f32], out: &mut [u8]) {
    let amax = x.iter().fold(0f32, |m, v| {
        let a = v.abs();
        if a > m || a.is_nan() { a } else { m }
    });
    let d = amax / 127.0;
    let id = inverse(d);
    put_f16(out, 0, d);
    for (o, &e) in out[2..34].iter_mut().zip(x) {
        *o = (round_away(e * id) as i8) as u8;
    }
}

/// ggml's `nearest_int`: round to nearest, ties to even, through the float adder (valid for
/// magnitudes below 2^22, as every caller's are).
#[allow(clippy::cast_possible_wrap)]
fn nearest_int(v: f32) -> i32 {
    let biased = v + 12_582_912.0;
    (biased.to_bits() & 0x007F_FFFF) as i32 - 0x0040_0000
}

/// ggml's `make_qkx2_quants`: levels `0..=nmax` for `x` with a scale and a minimum, the
/// scale searched over `nstep + 1` steps for the least weighted squared error. Returns the
/// scale and the minimum (as a value to subtract), the levels in `levels`.
#[allow(
    clippy::too_many_arguments,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn scale_and_min(
    x: &[f32],
    weights: &[f32],
    nmax: i32,
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    levels: &mut [u8],
) -> (f32, f32) {
    let mut min = x[0];
    let mut max = x[0];
    let mut sum_w = weights[0];
    let mut sum_x = sum_w * x[0];
    for (&v, &w) in x.iter().zip(weights).skip(1) {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
        sum_w += w;
        sum_x += w * v;
    }
    if min > 0.0 {
        min = 0.0;
    }
    if max == min {
        levels.fill(0);
        return (0.0, -min);
    }
    let nmax_f = nmax as f32;
    // `min` moves with the best trial: later trials scale from it, as ggml's do.
    let level = |iscale: f32, v: f32, min: f32| nearest_int(iscale * (v - min)).clamp(0, nmax);
    let mut iscale = nmax_f / (max - min);
    let mut scale = 1.0 / iscale;
    let mut best_error = 0f32;
    for ((l, &v), &w) in levels.iter_mut().zip(x).zip(weights) {
        *l = level(iscale, v, min) as u8;
        let diff = scale * f32::from(*l) + min - v;
        best_error += w * (diff * diff);
    }
    let mut trial = [0u8; 32];
    let trial = &mut trial[..x.len()];
    for step in 0..=nstep {
        iscale = (rmin + rdelta * step as f32 + nmax_f) / (max - min);
        let (mut sum_l, mut sum_l2, mut sum_xl) = (0f32, 0f32, 0f32);
        for ((t, &v), &w) in trial.iter_mut().zip(x).zip(weights) {
            let l = level(iscale, v, min);
            *t = l as u8;
            let l = l as f32;
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * v;
        }
        let det = sum_w * sum_l2 - sum_l * sum_l;
        if det > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut error = 0f32;
            for ((&t, &v), &w) in trial.iter().zip(x).zip(weights) {
                let diff = this_scale * f32::from(t) + this_min - v;
                error += w * (diff * diff);
            }
            if error < best_error {
                levels.copy_from_slice(trial);
                best_error = error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// `Q4_K`'s and `Q5_K`'s eight 6-bit scales and minimums, packed in 12 bytes.
fn pack_scales_and_mins(ls: [u8; 8], lm: [u8; 8]) -> [u8; 12] {
    let mut s = [0u8; 12];
    for j in 0..8 {
        if j < 4 {
            s[j] = ls[j];
            s[j + 4] = lm[j];
        } else {
            s[j + 4] = (ls[j] & 0x0F) | ((lm[j] & 0x0F) << 4);
            s[j - 4] |= (ls[j] >> 4) << 6;
            s[j] |= (lm[j] >> 4) << 6;
        }
    }
    s
}

/// float16 round trip: what a scale stored as float16 reads back as.
fn through_f16(v: f32) -> (f32, [u8; 2]) {
    let h = f16::from_f32(v);
    (h.to_f32(), h.to_le_bytes())
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn q4_k(x: &[f32], out: &mut [u8]) {
    let mut levels = [0u8; 256];
    let mut weights = [0f32; 32];
    let mut scales = [0f32; 8];
    let mut mins = [0f32; 8];
    let (mut max_scale, mut max_min) = (0f32, 0f32);
    for j in 0..8 {
        let xs = &x[32 * j..32 * j + 32];
        let mut sum_x2 = 0f32;
        for &v in xs {
            sum_x2 += v * v;
        }
        let av_x = (sum_x2 / 32.0).sqrt();
        for (w, &v) in weights.iter_mut().zip(xs) {
            *w = av_x + v.abs();
        }
        let (scale, min) = scale_and_min(
            xs,
            &weights,
            15,
            -1.0,
            0.1,
            20,
            &mut levels[32 * j..32 * j + 32],
        );
        scales[j] = scale;
        mins[j] = min;
        if scale > max_scale {
            max_scale = scale;
        }
        if min > max_min {
            max_min = min;
        }
    }
    let inv_scale = if max_scale > 0.0 {
        63.0 / max_scale
    } else {
        0.0
    };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    let mut ls = [0u8; 8];
    let mut lm = [0u8; 8];
    for j in 0..8 {
        // As ggml: the nearest integer kept as a byte, then capped.
        ls[j] = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        lm[j] = (nearest_int(inv_min * mins[j]) as u8).min(63);
    }
    let (d, d_bytes) = through_f16(max_scale / 63.0);
    let (dmin, dmin_bytes) = through_f16(max_min / 63.0);
    out[0..2].copy_from_slice(&d_bytes);
    out[2..4].copy_from_slice(&dmin_bytes);
    out[4..16].copy_from_slice(&pack_scales_and_mins(ls, lm));
    for j in 0..8 {
        let dj = d * f32::from(ls[j]);
        if dj == 0.0 {
            continue;
        }
        let mj = dmin * f32::from(lm[j]);
        for (l, &v) in levels[32 * j..32 * j + 32]
            .iter_mut()
            .zip(&x[32 * j..32 * j + 32])
        {
            *l = nearest_int((v + mj) / dj).clamp(0, 15) as u8;
        }
    }
    for (c, q) in out[16..144].chunks_exact_mut(32).enumerate() {
        for (l, b) in q.iter_mut().enumerate() {
            *b = levels[64 * c + l] | (levels[64 * c + l + 32] << 4);
        }
    }
}

/// ggml's `make_qx_quants` with `rmse_type` 1 and no weights: signed levels
/// `-nmax..nmax` for `x` (stored plus `nmax`), the scale searched over 19 trials for the
/// least error weighted by `x²`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn signed_scale(x: &[f32], nmax: i32, levels: &mut [u8]) -> f32 {
    let mut max = 0f32;
    let mut amax = 0f32;
    for &v in x {
        let a = v.abs();
        if a > amax {
            amax = a;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        levels.fill(0);
        return 0.0;
    }
    let nmax_f = nmax as f32;
    let level = |iscale: f32, v: f32| nearest_int(iscale * v).clamp(-nmax, nmax - 1);
    let mut iscale = -nmax_f / max;
    let (mut sumlx, mut suml2) = (0f32, 0f32);
    for (l, &v) in levels.iter_mut().zip(x) {
        let q = level(iscale, v);
        *l = (q + nmax) as u8;
        let w = v * v;
        let q = q as f32;
        sumlx += w * v * q;
        suml2 += w * q * q;
    }
    let mut scale = if suml2 == 0.0 { 0.0 } else { sumlx / suml2 };
    let mut best = scale * sumlx;
    for step in -9..=9 {
        if step == 0 {
            continue;
        }
        iscale = -(nmax_f + 0.1 * step as f32) / max;
        sumlx = 0.0;
        suml2 = 0.0;
        for &v in x {
            let q = level(iscale, v) as f32;
            let w = v * v;
            sumlx += w * v * q;
            suml2 += w * q * q;
        }
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for (l, &v) in levels.iter_mut().zip(x) {
                *l = (level(iscale, v) + nmax) as u8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// ggml's threshold below which a group is all zeros.
const GROUP_MAX_EPS: f32 = 1e-15;

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn q6_k(x: &[f32], out: &mut [u8]) {
    let mut levels = [0u8; 256];
    let mut scales = [0f32; 16];
    let (mut max_scale, mut max_abs_scale) = (0f32, 0f32);
    for (ib, s) in scales.iter_mut().enumerate() {
        *s = signed_scale(
            &x[16 * ib..16 * ib + 16],
            32,
            &mut levels[16 * ib..16 * ib + 16],
        );
        let a = s.abs();
        if a > max_abs_scale {
            max_abs_scale = a;
            max_scale = *s;
        }
    }
    out.fill(0);
    if max_abs_scale < GROUP_MAX_EPS {
        return;
    }
    let iscale = -128.0 / max_scale;
    let (d, d_bytes) = through_f16(1.0 / iscale);
    out[208..210].copy_from_slice(&d_bytes);
    let mut sc = [0i8; 16];
    for (c, &s) in sc.iter_mut().zip(&scales) {
        // As ggml: capped at 127, then kept as a signed byte.
        *c = nearest_int(iscale * s).min(127) as i8;
    }
    for (o, &c) in out[192..208].iter_mut().zip(&sc) {
        *o = c as u8;
    }
    for (j, &c) in sc.iter().enumerate() {
        let dj = d * f32::from(c);
        if dj == 0.0 {
            continue;
        }
        for (l, &v) in levels[16 * j..16 * j + 16]
            .iter_mut()
            .zip(&x[16 * j..16 * j + 16])
        {
            *l = (nearest_int(v / dj).clamp(-32, 31) + 32) as u8;
        }
    }
    for half in 0..2 {
        let lv = &levels[128 * half..128 * half + 128];
        let (ql, rest) = out.split_at_mut(128);
        let ql = &mut ql[64 * half..64 * half + 64];
        let qh = &mut rest[32 * half..32 * half + 32];
        for l in 0..32 {
            let (q1, q2, q3, q4) = (lv[l], lv[l + 32], lv[l + 64], lv[l + 96]);
            ql[l] = (q1 & 0x0F) | ((q3 & 0x0F) << 4);
            ql[l + 32] = (q2 & 0x0F) | ((q4 & 0x0F) << 4);
            qh[l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_blocks_dequantize_close_to_their_values() {
        let x: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin()).collect();
        for t in [
            GgmlType::Q4_0,
            GgmlType::Q4_1,
            GgmlType::Q5_0,
            GgmlType::Q5_1,
            GgmlType::Q8_0,
        ] {
            let mut blocks = vec![0u8; t.bytes_for(64).unwrap() as usize];
            quantize(t, &x, &mut blocks).unwrap();
            let mut back = vec![0f32; 64];
            crate::dequant::to_f32(t, &blocks, tensor_core::ByteOrder::Little, &mut back).unwrap();
            let worst = x
                .iter()
                .zip(&back)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(worst < 0.15, "{t}: {worst}");
        }
        assert!(quantize(GgmlType::Q2_K, &x, &mut [0; 84]).is_err());
    }
}
