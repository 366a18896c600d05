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

pub use decode::{decode_each, decode_each_at, decode_into, decode_range, rsi_offsets};
pub use encode::encode;

use crate::error::{Error, Result};
use tensor_core::checked;

/// Samples are signed (two's complement in `bits_per_sample` bits).
pub const SIGNED: u32 = 1;
/// 17–24-bit samples sit in 3-byte containers (4 otherwise).
pub const THREE_BYTE: u32 = 2;
/// Containers are big-endian (little-endian otherwise).
pub const MSB: u32 = 4;
/// Unit-delay prediction and mapping before coding.
pub const PREPROCESS: u32 = 8;
/// Accepted for compatibility; k = 13 is always available for 16-bit samples.
pub const ALLOW_K13: u32 = 16;
/// Pad each RSI to a byte boundary.
pub const PAD_RSI: u32 = 32;
/// Allow block sizes other than 8, 16, 32, 64 (any even size).
pub const NOT_ENFORCE: u32 = 64;
/// The restricted code option set (samples of at most 4 bits).
pub const RESTRICTED: u32 = 128;

const CODEC: &str = "szip";
/// "Remainder of segment": the encoder's marker for a zero-block run that reaches the end
/// of its 64-block segment or RSI (coded as FS 4).
const ROS: u32 = u32::MAX;
/// The FS value that codes "remainder of segment" in a zero-block run.
const ROS_FS: u64 = 4;

/// Coding parameters (libaec's `aec_stream` settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Bits per sample, 1 to 32.
    pub bits_per_sample: u32,
    /// Samples per block: 8, 16, 32 or 64 (any even number with [`NOT_ENFORCE`]).
    pub block_size: u32,
    /// Blocks per reference sample interval, 1 to 4096.
    pub rsi: u32,
    /// Flags ([`SIGNED`], [`THREE_BYTE`], [`MSB`], [`PREPROCESS`], ...).
    pub flags: u32,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: reason.into(),
    }
}

impl Params {
    /// Checks the parameters as libaec does.
    pub fn check(&self) -> Result<()> {
        let (n, j) = (self.bits_per_sample, self.block_size);
        if !(1..=32).contains(&n) {
            return Err(bad(format!("bits per sample must be 1 to 32, not {n}")));
        }
        let j_ok = if self.flags & NOT_ENFORCE != 0 {
            j >= 2 && j % 2 == 0
        } else {
            matches!(j, 8 | 16 | 32 | 64)
        };
        if !j_ok {
            return Err(bad(format!("block size {j} is not allowed")));
        }
        if !(1..=4096).contains(&self.rsi) {
            return Err(bad(format!("rsi must be 1 to 4096, not {}", self.rsi)));
        }
        // The restricted option set only exists for 1 to 4 bits; wider samples ignore the
        // flag, as tensogram's szip does (it encodes and decodes them unrestricted).
        Ok(())
    }

    /// Bytes per sample container.
    #[must_use]
    pub fn sample_bytes(&self) -> usize {
        match self.bits_per_sample {
            0..=8 => 1,
            9..=16 => 2,
            17..=24 if self.flags & THREE_BYTE != 0 => 3,
            _ => 4,
        }
    }

    /// Checks the parameters and that `len` bytes are whole sample containers; returns
    /// the container size.
    fn check_samples(&self, len: usize) -> Result<usize> {
        self.check()?;
        let sb = self.sample_bytes();
        if !len.is_multiple_of(sb) {
            return Err(bad(format!("{len} bytes are not whole {sb}-byte samples")));
        }
        Ok(sb)
    }

    fn id_len(&self) -> u32 {
        match self.bits_per_sample {
            n if n > 16 => 5,
            n if n > 8 => 4,
            n if n <= 4 && self.flags & RESTRICTED != 0 => {
                if n <= 2 {
                    1
                } else {
                    2
                }
            }
            _ => 3,
        }
    }

    fn range(&self) -> (i64, i64) {
        let n = self.bits_per_sample;
        if self.flags & SIGNED != 0 {
            (-(1i64 << (n - 1)), (1i64 << (n - 1)) - 1)
        } else {
            (0, (1i64 << n) - 1)
        }
    }

    /// Reads sample containers, keeping the low `bits_per_sample` bits of each.
    fn read_samples(&self, src: &[u8], dst: &mut [u32]) {
        let mask = u32::MAX >> (32 - self.bits_per_sample);
        let msb = self.flags & MSB != 0;
        let sb = self.sample_bytes();
        let chunks = src.chunks_exact(sb);
        match (sb, msb) {
            (1, _) => dst
                .iter_mut()
                .zip(src)
                .for_each(|(d, &c)| *d = u32::from(c) & mask),
            (2, true) => read_with(chunks, dst, mask, |c| {
                u32::from(u16::from_be_bytes([c[0], c[1]]))
            }),
            (2, false) => read_with(chunks, dst, mask, |c| {
                u32::from(u16::from_le_bytes([c[0], c[1]]))
            }),
            (3, true) => read_with(chunks, dst, mask, |c| {
                u32::from_be_bytes([0, c[0], c[1], c[2]])
            }),
            (3, false) => read_with(chunks, dst, mask, |c| {
                u32::from_le_bytes([c[0], c[1], c[2], 0])
            }),
            (_, true) => read_with(chunks, dst, mask, |c| {
                u32::from_be_bytes([c[0], c[1], c[2], c[3]])
            }),
            (_, false) => read_with(chunks, dst, mask, |c| {
                u32::from_le_bytes([c[0], c[1], c[2], c[3]])
            }),
        }
    }

    /// Writes decoded samples into their containers; signed samples are sign-extended to
    /// the container, as libaec writes them.
    fn write_samples(&self, samples: &[u32], dst: &mut [u8]) {
        let n = self.bits_per_sample;
        let sign = if self.flags & SIGNED != 0 && n < 32 {
            1u32 << (n - 1)
        } else {
            0
        };
        // (v ^ sign) - sign sign-extends an n-bit value; with sign 0 it is the identity.
        let extend = |v: u32| (v ^ sign).wrapping_sub(sign);
        let msb = self.flags & MSB != 0;
        match (self.sample_bytes(), msb) {
            (1, _) => {
                for (c, &v) in dst.iter_mut().zip(samples) {
                    *c = extend(v) as u8;
                }
            }
            (2, true) => {
                for (c, &v) in dst.chunks_exact_mut(2).zip(samples) {
                    c.copy_from_slice(&(extend(v) as u16).to_be_bytes());
                }
            }
            (2, false) => {
                for (c, &v) in dst.chunks_exact_mut(2).zip(samples) {
                    c.copy_from_slice(&(extend(v) as u16).to_le_bytes());
                }
            }
            (3, true) => {
                for (c, &v) in dst.chunks_exact_mut(3).zip(samples) {
                    c.copy_from_slice(&extend(v).to_be_bytes()[1..]);
                }
            }
            (3, false) => {
                for (c, &v) in dst.chunks_exact_mut(3).zip(samples) {
                    c.copy_from_slice(&extend(v).to_le_bytes()[..3]);
                }
            }
            (_, true) => {
                for (c, &v) in dst.chunks_exact_mut(4).zip(samples) {
                    c.copy_from_slice(&extend(v).to_be_bytes());
                }
            }
            (_, false) => {
                for (c, &v) in dst.chunks_exact_mut(4).zip(samples) {
                    c.copy_from_slice(&extend(v).to_le_bytes());
                }
            }
        }
    }
}

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

pub(super) fn read_with(
    chunks: std::slice::ChunksExact<'_, u8>,
    dst: &mut [u32],
    mask: u32,
    read: impl Fn(&[u8]) -> u32,
) {
    for (d, c) in dst.iter_mut().zip(chunks) {
        *d = read(c) & mask;
    }
}

pub(super) fn sign_extend(v: u32, n: u32) -> i64 {
    let m = 1i64 << (n - 1);
    (i64::from(v) ^ m) - m
}

#[cfg(test)]
mod tests;
