//! [`Held`]: the parts of a file a reader has so far — all of it for a local file, a few
//! ranges for a remote object being opened — through which a format finds the byte ranges
//! its header, index or footer occupies.

use std::ops::Range;

/// Some of a file's bytes, by offset.
pub trait Held {
    /// The file's length.
    fn len(&self) -> u64;

    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes at `r`, when they are held (all of them).
    fn slice(&self, r: Range<u64>) -> Option<&[u8]>;

    /// The part of `r` (clipped to the file) not held yet, as one range; `None` when all
    /// of it is held.
    fn missing(&self, r: Range<u64>) -> Option<Range<u64>>;

    /// The little-endian `u64` at `at`, when held.
    fn u64_le(&self, at: u64) -> Option<u64> {
        let b = self.slice(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    /// The big-endian `u64` at `at`, when held.
    fn u64_be(&self, at: u64) -> Option<u64> {
        let b = self.slice(at..at.checked_add(8)?)?;
        Some(u64::from_be_bytes(b.try_into().ok()?))
    }

    /// [`missing`](Held::missing) as a list of ranges to read: empty, or the one range.
    fn want(&self, r: Range<u64>) -> Vec<Range<u64>> {
        self.missing(r).into_iter().collect()
    }
}

/// The ranges still needed of a file that starts with its header's length, a little-endian
/// `u64`, followed by the header (safetensors, BinTensors): the length first, then the
/// header, checked against `limits`.
pub fn after_length_prefix(
    held: &dyn Held,
    limits: &crate::Limits,
) -> crate::Result<Vec<Range<u64>>> {
    match held.u64_le(0) {
        None => Ok(held.want(0..8)),
        Some(n) => {
            limits.check_header_bytes(n)?;
            Ok(held.want(0..n.saturating_add(8)))
        }
    }
}

/// The largest header a length prefix is believed to announce when a format is recognised by
/// the prefix alone (BinTensors: a length, then a 0 or 1): the references refuse headers over
/// 100 MB, so a prefix past 4 GiB is another format's bytes (a zip archive's `PK\x03\x04`
/// reads as 80 GB), not a header over the limits.
pub const PLAUSIBLE_HEADER_BYTES: u64 = 1 << 32;

/// Whether `head` starts with a little-endian `u64` header length that a file of a
/// length-prefixed format could hold: at least 2 (a header's smallest) and at most
/// [`PLAUSIBLE_HEADER_BYTES`]. Recognition only: reading still checks the length against
/// `Limits` and the file.
#[must_use]
pub fn plausible_length_prefix(head: &[u8]) -> bool {
    head.first_chunk::<8>()
        .map(|b| u64::from_le_bytes(*b))
        .is_some_and(|n| (2..=PLAUSIBLE_HEADER_BYTES).contains(&n))
}

/// The bytes held from the start of the file, up to the first one missing: what a format
/// whose header has no length of its own (GGUF, NetCDF-3) parses as far as it goes.
#[must_use]
pub fn held_prefix(held: &dyn Held) -> &[u8] {
    let len = held.len();
    let end = held.missing(0..len).map_or(len, |r| r.start);
    held.slice(0..end).unwrap_or(&[])
}

/// How many times what is held the next read of a growing header asks for.
const GROWTH: u64 = 4;

/// The next range to read of a header parsed from the start, after a parse of the
/// `prefix_end` bytes held (of a `len`-byte file) stopped short needing the bytes up to
/// `needed_end`: at least those, and at least four times what is held (never less than
/// `min_read`), so that a header of megabytes takes few requests — within the file and the
/// header limit.
#[must_use]
pub fn grown_prefix(
    prefix_end: u64,
    len: u64,
    needed_end: u64,
    min_read: u64,
    limits: &crate::Limits,
) -> Range<u64> {
    let guess = prefix_end.saturating_add(prefix_end.saturating_mul(GROWTH).max(min_read));
    let end = needed_end
        .max(guess)
        .min(len)
        .min(limits.max_header_bytes.max(needed_end));
    prefix_end..end
}

/// What a parse of a header from the start, over the `prefix_end` bytes held of a `len`-byte
/// file, stopping with `e`, asks for next: the [`grown_prefix`] when the bytes held ran out
/// before the file did (`e` is [`Truncated`](crate::Error::Truncated)), else `e` itself.
pub fn grown_after(
    e: crate::Error,
    prefix_end: u64,
    len: u64,
    min_read: u64,
    limits: &crate::Limits,
) -> Result<Range<u64>, crate::Error> {
    match e {
        crate::Error::Truncated { offset, needed, .. } if prefix_end < len => Ok(grown_prefix(
            prefix_end,
            len,
            offset.saturating_add(needed),
            min_read,
            limits,
        )),
        other => Err(other),
    }
}

/// A whole file in memory, which holds every byte.
#[derive(Clone, Copy, Debug)]
pub struct Whole<'a>(pub &'a [u8]);

impl Held for Whole<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
        let start = usize::try_from(r.start).ok()?;
        let end = usize::try_from(r.end).ok()?;
        self.0.get(start..end)
    }

    fn missing(&self, _: Range<u64>) -> Option<Range<u64>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Held, Whole};

    #[test]
    fn only_a_parse_that_ran_out_of_bytes_before_the_file_did_grows_the_prefix() {
        let limits = crate::Limits::default();
        let short = || crate::Error::Truncated {
            what: "header",
            offset: 90,
            needed: 30,
            available: 10,
        };
        assert_eq!(
            super::grown_after(short(), 100, 1 << 30, 1 << 20, &limits).unwrap(),
            super::grown_prefix(100, 1 << 30, 120, 1 << 20, &limits)
        );
        // The whole file held: the truncation is the file's own.
        assert!(super::grown_after(short(), 100, 100, 1 << 20, &limits).is_err());
        let bad = crate::Error::InvalidArgument("bad".into());
        assert!(super::grown_after(bad, 100, 1 << 30, 1 << 20, &limits).is_err());
    }

    #[test]
    fn a_growing_header_reads_four_times_what_is_held_within_the_file_and_limit() {
        let limits = crate::Limits::default();
        assert_eq!(
            super::grown_prefix(100, 1 << 30, 120, 1 << 20, &limits),
            100..(100 + (1 << 20))
        );
        assert_eq!(
            super::grown_prefix(4 << 20, 1 << 30, 5 << 20, 1, &limits),
            (4 << 20)..(20 << 20)
        );
        assert_eq!(
            super::grown_prefix(100, 500, 120, 1 << 20, &limits),
            100..500
        );
        let tight = crate::Limits::default().with_max_header_bytes(1000);
        assert_eq!(
            super::grown_prefix(100, 1 << 30, 2000, 1 << 20, &tight),
            100..2000
        );
        assert_eq!(
            super::grown_prefix(100, 1 << 30, 200, 1 << 20, &tight),
            100..1000
        );
        let part = super::Whole(b"abcdef");
        assert_eq!(super::held_prefix(&part), b"abcdef");
    }

    #[test]
    fn a_whole_buffer_holds_every_byte_it_has() {
        let b = Whole(&[1, 0, 0, 0, 0, 0, 0, 0, 9]);
        assert_eq!(b.u64_le(0), Some(1));
        assert_eq!(b.u64_le(2), None);
        assert_eq!(b.u64_le(u64::MAX - 3), None);
        assert!(b.want(0..100).is_empty());
    }
}
