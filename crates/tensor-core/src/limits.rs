//! Resource limits taken by every decoder.

use crate::error::{Error, Result};

/// Bounds on what a decoder may be asked to read or allocate by untrusted input.
///
/// Every decoder in tensorkit takes a `Limits`. The defaults suit reading model weights and
/// weather archives on the machine they run on (decoded totals are tied to its physical
/// memory); servers handling uploads should start from [`Limits::strict`]. A file that
/// legitimately needs more is read after the caller raises the limit explicitly.
///
/// ```
/// use tensor_core::Limits;
/// let limits = Limits::default().with_max_header_bytes(1 << 20);
/// assert!(limits.check_header_bytes(2 << 20).is_err());
/// assert!(limits.check_header_bytes(4096).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest header, index or manifest a decoder will read (bytes).
    pub max_header_bytes: u64,
    /// Largest number of tensors (or objects) one file or message may declare.
    pub max_tensor_count: u64,
    /// Largest number of bytes one decode may produce in total.
    pub max_total_bytes: u64,
    /// Largest ratio of decoded to encoded bytes a decompressor may produce.
    pub max_decompression_ratio: u64,
    /// Bytes any one decode may produce whatever the size of its input, above which the
    /// ratio applies: a constant field stores no values at all, and must still decode.
    pub expansion_allowance: u64,
}

/// The default decompression-ratio cap: zstd's own ceiling (a 128 KiB block stored as a
/// 4-byte run), which no real field needs to pass — an all-zero field compresses to about
/// 1 : 31 900.
pub const DEFAULT_MAX_DECOMPRESSION_RATIO: u64 = 1 << 15;

/// The default [`Limits::expansion_allowance`]: 64 MiB, a global 0.1° field of float64 (6.5
/// million points, 52 MB). Constant fields packed with 0 bits per value store no values;
/// up to this size they decode whatever their input's size, beyond it only as the ratio
/// allows of the bytes that declare them (so a 200-byte message cannot claim gigabytes).
pub const DEFAULT_EXPANSION_ALLOWANCE: u64 = 64 << 20;

impl Default for Limits {
    /// 100 MB of header (the cap safetensors and bintensors use), a million tensors, half
    /// of this machine's physical memory decoded in one call ([`physical_memory`]), a
    /// decompression ratio of at most [`DEFAULT_MAX_DECOMPRESSION_RATIO`] beyond
    /// [`DEFAULT_EXPANSION_ALLOWANCE`].
    fn default() -> Self {
        Limits {
            max_header_bytes: 100_000_000,
            max_tensor_count: 1_000_000,
            max_total_bytes: (physical_memory() / 2).max(1 << 30),
            max_decompression_ratio: DEFAULT_MAX_DECOMPRESSION_RATIO,
            expansion_allowance: DEFAULT_EXPANSION_ALLOWANCE,
        }
    }
}

/// This machine's physical memory in bytes (Linux: `MemTotal` of `/proc/meminfo`), or
/// 16 GiB where it cannot be read. Read once per process.
#[must_use]
pub fn physical_memory() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| read_meminfo().unwrap_or(16 << 30))
}

fn read_meminfo() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

impl Limits {
    /// Tight limits for untrusted uploads: 1 MiB headers, 10 000 tensors, 1 GiB decoded,
    /// ratio 1024 beyond 1 MiB.
    #[must_use]
    pub const fn strict() -> Self {
        Limits {
            max_header_bytes: 1 << 20,
            max_tensor_count: 10_000,
            max_total_bytes: 1 << 30,
            max_decompression_ratio: 1024,
            expansion_allowance: 1 << 20,
        }
    }

    /// No limits at all: only for input you wrote yourself.
    #[must_use]
    pub const fn unlimited() -> Self {
        Limits {
            max_header_bytes: u64::MAX,
            max_tensor_count: u64::MAX,
            max_total_bytes: u64::MAX,
            max_decompression_ratio: u64::MAX,
            expansion_allowance: u64::MAX,
        }
    }

    /// These limits with another header cap.
    #[must_use]
    pub const fn with_max_header_bytes(mut self, bytes: u64) -> Self {
        self.max_header_bytes = bytes;
        self
    }

    /// These limits with another tensor-count cap.
    #[must_use]
    pub const fn with_max_tensor_count(mut self, count: u64) -> Self {
        self.max_tensor_count = count;
        self
    }

    /// These limits with another cap on decoded bytes.
    #[must_use]
    pub const fn with_max_total_bytes(mut self, bytes: u64) -> Self {
        self.max_total_bytes = bytes;
        self
    }

    /// These limits with another decompression-ratio cap.
    #[must_use]
    pub const fn with_max_decompression_ratio(mut self, ratio: u64) -> Self {
        self.max_decompression_ratio = ratio;
        self
    }

    /// Fails when a header of `bytes` is larger than allowed.
    pub fn check_header_bytes(&self, bytes: u64) -> Result<()> {
        check("header bytes", bytes, self.max_header_bytes)
    }

    /// Fails when `count` tensors are more than allowed.
    pub fn check_tensor_count(&self, count: u64) -> Result<()> {
        check("tensor count", count, self.max_tensor_count)
    }

    /// Fails when `bytes` of decoded output are more than allowed.
    pub fn check_total_bytes(&self, bytes: u64) -> Result<()> {
        check("decoded bytes", bytes, self.max_total_bytes)
    }

    /// These limits with another allowance below which the ratio does not apply.
    #[must_use]
    pub const fn with_expansion_allowance(mut self, bytes: u64) -> Self {
        self.expansion_allowance = bytes;
        self
    }

    /// Fails when decoding `encoded` bytes into `decoded` bytes would pass either the total
    /// cap or the decompression-ratio cap (which applies beyond the expansion allowance).
    /// Call it before allocating the output, and before any work proportional to it.
    pub fn check_expansion(&self, encoded: u64, decoded: u64) -> Result<()> {
        self.check_total_bytes(decoded)?;
        let allowed = encoded
            .max(1)
            .saturating_mul(self.max_decompression_ratio)
            .max(self.expansion_allowance);
        check("decompressed bytes", decoded, allowed)
    }
}

fn check(what: &'static str, requested: u64, limit: u64) -> Result<()> {
    if requested > limit {
        Err(Error::LimitExceeded {
            what,
            requested,
            limit,
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Kinded};

    #[test]
    fn defaults_accept_ordinary_files_and_refuse_absurd_ones() {
        let l = Limits::default();
        assert!(l.check_header_bytes(100_000_000).is_ok());
        let e = l.check_header_bytes(100_000_001).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LimitExceeded);
        assert!(e.to_string().contains("header bytes of 100000001"));
        assert!(l.check_tensor_count(2000).is_ok());
        assert!(l.check_tensor_count(u64::MAX).is_err());
        assert!(l.check_total_bytes(1 << 30).is_ok());
        assert!(l.check_total_bytes(1 << 60).is_err());
        // Tied to this machine: never more than its memory.
        assert!(l.max_total_bytes <= physical_memory().max(2 << 30));
        // An all-zero zstd field (about 1 : 31 900) passes; a bomb past zstd's ceiling does not.
        assert!(l.check_expansion(33_700, 1 << 30).is_ok());
        assert!(l.check_expansion(1_000, 1 << 30).is_err());
    }

    #[test]
    fn expansion_is_bounded_by_ratio_and_total() {
        let l = Limits::default()
            .with_max_decompression_ratio(10)
            .with_expansion_allowance(0);
        assert!(l.check_expansion(100, 1000).is_ok());
        assert!(l.check_expansion(100, 1001).is_err());
        // An empty input may still expand to `ratio` bytes.
        assert!(l.check_expansion(0, 10).is_ok());
        assert!(l.check_expansion(0, 11).is_err());
        // Up to the allowance, any input may expand (a constant field stores no values);
        // beyond it, only as the ratio allows.
        let l = l.with_expansion_allowance(1 << 20);
        assert!(l.check_expansion(0, 1 << 20).is_ok());
        assert!(l.check_expansion(0, (1 << 20) + 1).is_err());
        assert!(l.check_expansion(200_000, 2_000_000).is_ok());
        // By default a 680-byte message cannot claim 16 GiB of a constant field, nor a
        // 179-byte one 1 GiB.
        let d = Limits::default().with_max_total_bytes(u64::MAX);
        assert!(d.check_expansion(680, 16 << 30).is_err());
        assert!(d.check_expansion(179, 1 << 30).is_err());
        assert!(d.check_expansion(179, 52_000_000).is_ok());
        // Saturating: a huge input does not wrap the allowed size.
        let l = Limits::unlimited().with_max_total_bytes(1 << 40);
        assert!(l.check_expansion(u64::MAX, 1 << 40).is_ok());
        assert!(l.check_expansion(u64::MAX, (1 << 40) + 1).is_err());
    }

    #[test]
    fn strict_is_tighter_than_default_and_unlimited_accepts_everything() {
        let s = Limits::strict();
        let d = Limits::default();
        assert!(s.max_header_bytes < d.max_header_bytes);
        assert!(s.max_tensor_count < d.max_tensor_count);
        assert!(s.max_total_bytes < d.max_total_bytes);
        assert!(s.max_decompression_ratio < d.max_decompression_ratio);
        let u = Limits::unlimited();
        assert!(u.check_header_bytes(u64::MAX).is_ok());
        assert!(u.check_expansion(1, u64::MAX).is_ok());
    }

    #[test]
    fn builders_set_one_field_each() {
        let l = Limits::strict()
            .with_max_header_bytes(1)
            .with_max_tensor_count(2)
            .with_max_total_bytes(3)
            .with_max_decompression_ratio(4)
            .with_expansion_allowance(5);
        assert_eq!(
            (
                l.max_header_bytes,
                l.max_tensor_count,
                l.max_total_bytes,
                l.max_decompression_ratio,
                l.expansion_allowance
            ),
            (1, 2, 3, 4, 5)
        );
    }
}
