//! Dequantization: every quantized ggml type to float32, bit for bit as gguf-py's
//! `gguf.quants.dequantize` computes it (the same float32 operations in the same order),
//! block by block, blocks shared out over rayon's pool with feature `parallel`.
//!
//! The block functions name things as ggml does (`d` the scale, `qs` the quants, `b` the
//! block), which keeps them checkable against the reference line by line.
#![allow(clippy::many_single_char_names)]

mod fields;
mod iq;
mod k;
mod legacy;
mod small;

use crate::ggml::GgmlType;
use tensor_core::ByteOrder;

/// Turns one block's bytes into its elements.
type BlockFn = fn(&[u8], &mut [f32]);

/// Blocks per unit of work handed to a thread: enough that scheduling costs nothing.
#[cfg(feature = "parallel")]
const BLOCKS_PER_TASK: usize = 2048;

/// The block function of a quantized type; `None` for a dense type or one with no
/// dequantizer (`Q8_1`, an intermediate type of ggml's whose block gguf-py and ggml size
/// differently, and which gguf-py does not dequantize either).
fn block_fn(t: GgmlType) -> Option<BlockFn> {
    Some(match t {
        GgmlType::Q4_0 => legacy::q4_0,
        GgmlType::Q4_1 => legacy::q4_1,
        GgmlType::Q5_0 => legacy::q5_0,
        GgmlType::Q5_1 => legacy::q5_1,
        GgmlType::Q8_0 => legacy::q8_0,
        GgmlType::Q2_K => k::q2_k,
        GgmlType::Q3_K => k::q3_k,
        GgmlType::Q4_K => k::q4_k,
        GgmlType::Q5_K => k::q5_k,
        GgmlType::Q6_K => k::q6_k,
        GgmlType::TQ1_0 => small::tq1_0,
        GgmlType::TQ2_0 => small::tq2_0,
        GgmlType::MXFP4 => small::mxfp4,
        GgmlType::NVFP4 => small::nvfp4,
        GgmlType::IQ4_NL => small::iq4_nl,
        GgmlType::IQ4_XS => small::iq4_xs,
        GgmlType::IQ2_XXS => iq::iq2_xxs,
        GgmlType::IQ2_XS => iq::iq2_xs,
        GgmlType::IQ2_S => iq::iq2_s,
        GgmlType::IQ3_XXS => iq::iq3_xxs,
        GgmlType::IQ3_S => iq::iq3_s,
        GgmlType::IQ1_S => iq::iq1_s,
        GgmlType::IQ1_M => iq::iq1_m,
        GgmlType::Q1_0 => small::q1_0,
        GgmlType::Q8_K => legacy::q8_k,
        _ => return None,
    })
}

/// Whether values of type `t` can be read as float32 here.
#[must_use]
pub fn can_dequantize(t: GgmlType) -> bool {
    t.dense_dtype().is_some() || block_fn(t).is_some()
}

/// Decodes `stored`, the bytes of `dst.len()` elements of type `t` — dense elements in
/// `order`, or whole blocks (any run of a tensor's blocks: each decodes on its own) — into
/// `dst`, one float32 per element. Dense types convert as numpy's `astype` does (float64
/// rounds to nearest, integers to the nearest float32). An error says what could not be
/// done.
pub fn to_f32(t: GgmlType, stored: &[u8], order: ByteOrder, dst: &mut [f32]) -> Result<(), String> {
    let elements = dst.len() as u64;
    if t.bytes_for(elements) != Some(stored.len() as u64) {
        return Err(format!(
            "{} bytes of {t} do not hold {elements} elements",
            stored.len()
        ));
    }
    if let Some(dtype) = t.dense_dtype() {
        let w = dtype.byte_width();
        let mut e = [0u8; 8];
        for (d, s) in dst.iter_mut().zip(stored.chunks_exact(w)) {
            e[..w].copy_from_slice(s);
            if order == ByteOrder::Big {
                e[..w].reverse();
            }
            *d = match t {
                GgmlType::F32 => f32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                GgmlType::F16 => half::f16::from_le_bytes([e[0], e[1]]).to_f32(),
                GgmlType::BF16 => half::bf16::from_le_bytes([e[0], e[1]]).to_f32(),
                GgmlType::F64 => f64::from_le_bytes(e) as f32,
                GgmlType::I8 => f32::from(e[0] as i8),
                GgmlType::I16 => f32::from(i16::from_le_bytes([e[0], e[1]])),
                GgmlType::I32 => i32::from_le_bytes([e[0], e[1], e[2], e[3]]) as f32,
                _ => i64::from_le_bytes(e) as f32,
            };
        }
        return Ok(());
    }
    let Some(f) = block_fn(t) else {
        return Err(format!(
            "no dequantizer for ggml type {t} (an intermediate type of ggml's, which gguf-py does not dequantize either)"
        ));
    };
    let block_bytes = t.block_bytes() as usize;
    let block_elements = t.block_elements() as usize;
    let run = |src: &[u8], out: &mut [f32]| {
        for (b, o) in src
            .chunks_exact(block_bytes)
            .zip(out.chunks_exact_mut(block_elements))
        {
            f(b, o);
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        if stored.len() > block_bytes * BLOCKS_PER_TASK {
            stored
                .par_chunks(block_bytes * BLOCKS_PER_TASK)
                .zip(dst.par_chunks_mut(block_elements * BLOCKS_PER_TASK))
                .for_each(|(s, d)| run(s, d));
            return Ok(());
        }
    }
    run(stored, dst);
    Ok(())
}

/// [`to_f32`] into `dst`, a byte buffer of 4 bytes per element (float32 in the machine's
/// order): straight into it when it is aligned for float32, else through a buffer of a few
/// thousand blocks at a time.
pub fn to_f32_bytes(
    t: GgmlType,
    stored: &[u8],
    order: ByteOrder,
    dst: &mut [u8],
) -> Result<(), String> {
    if let Ok(values) = bytemuck::try_cast_slice_mut::<u8, f32>(dst) {
        return to_f32(t, stored, order, values);
    }
    if !dst.len().is_multiple_of(4)
        || t.bytes_for(dst.len() as u64 / 4) != Some(stored.len() as u64)
    {
        return Err(format!(
            "{} bytes of {t} do not hold {} bytes of float32",
            stored.len(),
            dst.len()
        ));
    }
    let (block_elements, block_bytes) = (t.block_elements() as usize, t.block_bytes() as usize);
    let blocks = 4096;
    let mut run = vec![0f32; (blocks * block_elements).min(dst.len() / 4)];
    for (s, d) in stored
        .chunks(blocks * block_bytes)
        .zip(dst.chunks_mut(blocks * block_elements * 4))
    {
        let values = &mut run[..d.len() / 4];
        to_f32(t, s, order, values)?;
        d.copy_from_slice(bytemuck::cast_slice(values));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unaligned_byte_buffer_gets_the_same_values() {
        // Two Q8_0 blocks of 32: a scale of 0.5, then levels -16..16.
        let mut blocks = Vec::new();
        for _ in 0..2 {
            blocks.extend_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
            blocks.extend((0u8..32).map(|i| (i as i8 - 16) as u8));
        }
        let mut want = vec![0f32; 64];
        to_f32(GgmlType::Q8_0, &blocks, ByteOrder::Little, &mut want).unwrap();
        let mut bytes = vec![0u8; 64 * 4 + 1];
        let unaligned = &mut bytes[1..];
        to_f32_bytes(GgmlType::Q8_0, &blocks, ByteOrder::Little, unaligned).unwrap();
        let got: Vec<f32> = unaligned
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, want);
        assert!(
            to_f32_bytes(GgmlType::Q8_0, &blocks, ByteOrder::Little, &mut bytes[1..9]).is_err()
        );
    }

    #[test]
    fn q1_0_reads_each_bit_as_plus_or_minus_the_scale() {
        let mut block = vec![0u8; 18];
        block[..2].copy_from_slice(&half::f16::from_f32(0.5).to_le_bytes());
        block[2] = 0b0000_0101;
        block[17] = 0b1000_0000;
        let mut out = vec![0f32; 128];
        to_f32(GgmlType::Q1_0, &block, ByteOrder::Little, &mut out).unwrap();
        assert_eq!(&out[..4], &[0.5, -0.5, 0.5, -0.5]);
        assert_eq!(out[127], 0.5);
        assert_eq!(out[126], -0.5);
        assert!(to_f32(GgmlType::Q8_1, &[0; 40], ByteOrder::Little, &mut [0.0; 32]).is_err());
        let mut q8k = vec![0u8; 292];
        q8k[..4].copy_from_slice(&0.25f32.to_le_bytes());
        q8k[4] = 8;
        q8k[5] = 0xFE; // -2
        let mut out = vec![0f32; 256];
        to_f32(GgmlType::Q8_K, &q8k, ByteOrder::Little, &mut out).unwrap();
        assert_eq!(&out[..3], &[2.0, -0.5, 0.0]);
    }
}
