//! Quantization: float32 values to ggml blocks, byte for byte as gguf-py's
//! `gguf.quants.quantize` makes them (the same float32 operations in the same order), for
//! every type gguf-py quantizes: `Q4_0`, `Q4_1`, `Q5_0`, `Q5_1`, `Q8_0`.
//!
//! The block functions name things as ggml does (`d` the scale, `qs` the quants, `x` the
//! block's values).
#![allow(clippy::many_single_char_names)]

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
        _ => return None,
    })
}

/// Quantizes `values` (whole blocks of `t`) into `out`, exactly their size in blocks.
pub fn quantize(t: GgmlType, values: &[f32], out: &mut [u8]) -> Result<(), String> {
    let Some(f) = block_fn(t) else {
        return Err(format!(
            "tensorkit does not quantize to {t} (it makes Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0, as gguf-py does)"
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
        assert!(quantize(GgmlType::Q4_K, &x[..256.min(x.len())], &mut []).is_err());
    }
}
