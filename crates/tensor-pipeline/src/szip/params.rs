//! szip's parameters: the option flags, a stream's `Params` and the checks on them, shared by
//! the decoder and the encoder.

use crate::error::{Error, Result};

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

pub(super) const CODEC: &str = "szip";
/// "Remainder of segment": the encoder's marker for a zero-block run that reaches the end
/// of its 64-block segment or RSI (coded as FS 4).
pub(super) const ROS: u32 = u32::MAX;
/// The FS value that codes "remainder of segment" in a zero-block run.
pub(super) const ROS_FS: u64 = 4;

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

pub(super) fn bad(reason: impl Into<String>) -> Error {
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
    pub(super) fn check_samples(&self, len: usize) -> Result<usize> {
        self.check()?;
        let sb = self.sample_bytes();
        if !len.is_multiple_of(sb) {
            return Err(bad(format!("{len} bytes are not whole {sb}-byte samples")));
        }
        Ok(sb)
    }

    pub(super) fn id_len(&self) -> u32 {
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

    pub(super) fn range(&self) -> (i64, i64) {
        let n = self.bits_per_sample;
        if self.flags & SIGNED != 0 {
            (-(1i64 << (n - 1)), (1i64 << (n - 1)) - 1)
        } else {
            (0, (1i64 << n) - 1)
        }
    }

    /// Reads sample containers, keeping the low `bits_per_sample` bits of each.
    pub(super) fn read_samples(&self, src: &[u8], dst: &mut [u32]) {
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
    pub(super) fn write_samples(&self, samples: &[u32], dst: &mut [u8]) {
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

/// `v`, an `n`-bit two's complement value, as a signed integer.
pub(super) fn sign_extend(v: u32, n: u32) -> i64 {
    let m = 1i64 << (n - 1);
    (i64::from(v) ^ m) - m
}

/// Each chunk of `chunks`, read by `read` and masked, into `dst`.
fn read_with(
    chunks: std::slice::ChunksExact<'_, u8>,
    dst: &mut [u32],
    mask: u32,
    read: impl Fn(&[u8]) -> u32,
) {
    for (d, c) in dst.iter_mut().zip(chunks) {
        *d = read(c) & mask;
    }
}
