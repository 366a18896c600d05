//! szip: the CCSDS 121.0-B-3 adaptive entropy coder ("AEC"), in pure Rust, compatible with
//! libaec both ways and making libaec's coding choices, so encoded bytes match libaec's.
//!
//! The stream is raw AEC: no header; every parameter lives outside it. Samples of
//! `bits_per_sample` bits sit in byte containers (1, 2, 3 or 4 bytes, little- or big-endian);
//! blocks of `block_size` samples; `rsi` blocks per reference sample interval (RSI). With
//! preprocessing, each RSI starts with a raw reference sample and the rest are unit-delay
//! prediction residuals mapped to non-negative integers. Each block is coded with the
//! cheapest option: a run of zero blocks, the second extension, Rice splitting with `k` low
//! bits, or raw samples.
//!
//! ```
//! use tensor_pipeline::szip::{self, Params, PREPROCESS};
//!
//! let p = Params { bits_per_sample: 16, block_size: 32, rsi: 128, flags: PREPROCESS };
//! let data: Vec<u8> = (0..10_000u16).flat_map(|i| (i / 3).to_le_bytes()).collect();
//! let (stream, rsi_offsets) = szip::encode(&p, &data)?;
//! assert!(stream.len() < data.len() / 4);
//! let mut back = vec![0u8; data.len()];
//! szip::decode_into(&p, &stream, &mut back)?;
//! assert_eq!(back, data);
//! // Samples 5000..5010 alone, reading only the RSI that holds them.
//! let mut part = vec![0u8; 20];
//! szip::decode_range(&p, &stream, &rsi_offsets, 5000, &mut part)?;
//! assert_eq!(part, data[10_000..10_020]);
//! # Ok::<(), tensor_pipeline::Error>(())
//! ```

// Short names follow the standard's notation: n bits per sample, J (`j`) samples per block,
// k split bits, d mapped residuals, x samples.
#![allow(clippy::many_single_char_names)]

use crate::dense_bits::{Packer, Unpacker};
mod decode;
mod encode;
mod params;

pub use decode::{decode_each, decode_each_at, decode_into, decode_range, rsi_offsets};
pub use encode::encode;
pub use params::{
    ALLOW_K13, MSB, NOT_ENFORCE, PAD_RSI, PREPROCESS, Params, RESTRICTED, SIGNED, THREE_BYTE,
};

use crate::error::Result;
use params::bad;
use tensor_core::checked;

/// Re-lays `count` values of a dense, most-significant-bit-first stream of
/// `bits_per_sample`-bit values (simple packing's layout) as byte containers, most
/// significant byte first: the layout szip reads for widths that are not whole bytes.
pub fn to_containers(p: &Params, packed: &[u8], count: usize) -> Result<Vec<u8>> {
    let n = p.bits_per_sample;
    let need = checked::mul(count as u64, u64::from(n), "packed bits")?.div_ceil(8);
    if (packed.len() as u64) < need {
        return Err(bad(format!(
            "{count} values of {n} bits need {need} packed bytes, not {}",
            packed.len()
        )));
    }
    let sb = p.sample_bytes();
    let mut out = vec![0u8; count * sb];
    let mut values = Unpacker::new(packed, n);
    for c in out.chunks_exact_mut(sb) {
        c.copy_from_slice(&(values.next_value() as u32).to_be_bytes()[4 - sb..]);
    }
    Ok(out)
}

/// The inverse of [`to_containers`]: writes the containers' values densely into `packed`.
pub fn from_containers(p: &Params, containers: &[u8], packed: &mut [u8]) -> Result<()> {
    let (n, sb) = (p.bits_per_sample, p.sample_bytes());
    let count = containers.len() / sb;
    let need = (count as u64 * u64::from(n)).div_ceil(8);
    if packed.len() as u64 != need {
        return Err(bad(format!(
            "{count} values of {n} bits fill {need} packed bytes, not {}",
            packed.len()
        )));
    }
    let mask = u64::from(u32::MAX >> (32 - n));
    let mut dense = Packer::new(packed, n);
    for c in containers.chunks_exact(sb) {
        let mut be = [0u8; 4];
        be[4 - sb..].copy_from_slice(c);
        dense.push(u64::from(u32::from_be_bytes(be)) & mask);
    }
    dense.finish();
    Ok(())
}

#[cfg(test)]
mod tests;
