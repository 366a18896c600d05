//! Reading bincode 2 "standard" encoding (little-endian varints) from the header window,
//! borrowing strings, and reproducing the reference decoder's failures exactly: the same
//! failure classes, and the same decode budget of claimed in-memory bytes.
//!
//! Unlike a plain bincode decode, every count is also checked against the bytes left in the
//! window before anything is allocated for it.

use crate::error::{DecodeFailure, Error, Result};

/// A position in the header window.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// File offset of `buf[0]`, for error messages.
    base: u64,
    /// Claimed in-memory bytes left before `LimitExceeded`.
    budget: u64,
    /// Whether every varint so far was in its shortest form.
    canonical: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], base: u64, budget: u64) -> Self {
        Cursor {
            buf,
            pos: 0,
            base,
            budget,
            canonical: true,
        }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn all_canonical(&self) -> bool {
        self.canonical
    }

    pub(crate) fn fail(&self, failure: DecodeFailure, detail: impl Into<String>) -> Error {
        Error::Decode {
            failure,
            offset: self.base + self.pos as u64,
            detail: detail.into(),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.fail(
                DecodeFailure::UnexpectedEnd,
                format!(
                    "{what} needs {n} bytes, {} remain in the header",
                    self.remaining()
                ),
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// One raw byte (Option tags are raw bytes in bincode, not varints).
    pub(crate) fn byte(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// Claims `bytes` of the decode budget, as bincode does before it allocates.
    pub(crate) fn claim(&mut self, bytes: u64, what: &str) -> Result<()> {
        if bytes > self.budget {
            return Err(self.fail(
                DecodeFailure::LimitExceeded,
                format!("{what} would need {bytes} bytes of memory, over the remaining decode budget of {}", self.budget),
            ));
        }
        self.budget -= bytes;
        Ok(())
    }

    /// A varint of at most 64 bits.
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64> {
        let start = self.pos;
        let marker = self.byte(what)?;
        let (value, min) = match marker {
            0..=250 => return Ok(u64::from(marker)),
            251 => (u64::from(u16::from_le_bytes(self.array(what)?)), 251),
            252 => (u64::from(u32::from_le_bytes(self.array(what)?)), 1 << 16),
            253 => (u64::from_le_bytes(self.array(what)?), 1 << 32),
            _ => {
                self.pos = start;
                return Err(self.fail(
                    DecodeFailure::InvalidIntegerType,
                    format!("{what}: varint marker {marker} does not encode a 64-bit integer"),
                ));
            }
        };
        if value < min {
            self.canonical = false;
        }
        Ok(value)
    }

    /// A varint of at most 32 bits (enum discriminants).
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        let start = self.pos;
        let marker = self.byte(what)?;
        if marker >= 253 {
            self.pos = start;
            return Err(self.fail(
                DecodeFailure::InvalidIntegerType,
                format!("{what}: varint marker {marker} does not encode a 32-bit integer"),
            ));
        }
        self.pos = start;
        Ok(self.u64(what)? as u32)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    /// A sequence length, claiming `item_size` budget bytes per item, and refused when even
    /// `min_wire_size` bytes per item cannot fit in what is left of the window.
    pub(crate) fn count(
        &mut self,
        what: &str,
        item_size: u64,
        min_wire_size: u64,
    ) -> Result<usize> {
        let n = self.u64(what)?;
        self.claim(n.saturating_mul(item_size), what)?;
        if n.saturating_mul(min_wire_size) > self.remaining() as u64 {
            return Err(self.fail(
                DecodeFailure::UnexpectedEnd,
                format!(
                    "{what} is {n}, but only {} header bytes remain",
                    self.remaining()
                ),
            ));
        }
        Ok(n as usize)
    }

    /// A length-prefixed UTF-8 string, borrowed from the window.
    pub(crate) fn str(&mut self, what: &str) -> Result<&'a str> {
        let len = self.u64(what)?;
        self.claim(len, what)?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let start = self.pos;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|e| Error::Decode {
            failure: DecodeFailure::Utf8,
            offset: self.base + (start + e.valid_up_to()) as u64,
            detail: format!("{what} is not valid UTF-8"),
        })
    }

    /// An `Option` tag: 0 absent, 1 present.
    pub(crate) fn option(&mut self, what: &str) -> Result<bool> {
        match self.byte(what)? {
            0 => Ok(false),
            1 => Ok(true),
            t => {
                self.pos -= 1;
                Err(self.fail(
                    DecodeFailure::UnexpectedVariant,
                    format!("{what}: Option tag {t} (must be 0 or 1)"),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(e: Error) -> DecodeFailure {
        match e {
            Error::Decode { failure, .. } => failure,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn varints_decode_every_form() {
        let bytes = [
            7u8, 251, 0xB8, 0x0B, 252, 0, 0, 1, 0, 253, 1, 0, 0, 0, 0, 0, 0, 0,
        ];
        let mut c = Cursor::new(&bytes, 0, u64::MAX);
        assert_eq!(c.u64("a").unwrap(), 7);
        assert_eq!(c.u64("b").unwrap(), 3000);
        assert_eq!(c.u64("c").unwrap(), 65536);
        assert!(c.all_canonical());
        assert_eq!(c.u64("d").unwrap(), 1);
        assert!(!c.all_canonical());
        assert_eq!(c.remaining(), 0);
        assert_eq!(
            failure(c.u64("e").unwrap_err()),
            DecodeFailure::UnexpectedEnd
        );
    }

    #[test]
    fn bad_markers_tags_and_strings_fail_like_bincode() {
        assert_eq!(
            failure(Cursor::new(&[254], 0, 99).u64("x").unwrap_err()),
            DecodeFailure::InvalidIntegerType
        );
        assert_eq!(
            failure(Cursor::new(&[255], 0, 99).u64("x").unwrap_err()),
            DecodeFailure::InvalidIntegerType
        );
        assert_eq!(
            failure(
                Cursor::new(&[253, 0, 0, 0, 0, 0, 0, 0, 0], 0, 99)
                    .u32("x")
                    .unwrap_err()
            ),
            DecodeFailure::InvalidIntegerType
        );
        assert_eq!(
            failure(Cursor::new(&[2], 0, 99).option("x").unwrap_err()),
            DecodeFailure::UnexpectedVariant
        );
        assert_eq!(
            failure(Cursor::new(&[2, 0xFF, 0xFE], 0, 99).str("x").unwrap_err()),
            DecodeFailure::Utf8
        );
        assert_eq!(
            failure(Cursor::new(&[5, b'a'], 0, 99).str("x").unwrap_err()),
            DecodeFailure::UnexpectedEnd
        );
        assert_eq!(
            failure(Cursor::new(&[5, b'a'], 0, 3).str("x").unwrap_err()),
            DecodeFailure::LimitExceeded
        );
        assert_eq!(Cursor::new(&[2, b'h', b'i'], 0, 99).str("x").unwrap(), "hi");
    }

    #[test]
    fn counts_are_refused_before_allocation() {
        // 200 items of at least 5 bytes cannot fit in 10 bytes.
        let mut c = Cursor::new(&[200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0, u64::MAX);
        assert_eq!(
            failure(c.count("tensors", 72, 5).unwrap_err()),
            DecodeFailure::UnexpectedEnd
        );
        // A count past the budget is LimitExceeded first, as in the reference.
        let mut c = Cursor::new(&[253, 0, 0, 0, 0, 0, 0, 0, 1], 0, 100_000_000);
        assert_eq!(
            failure(c.count("tensors", 72, 5).unwrap_err()),
            DecodeFailure::LimitExceeded
        );
    }
}
