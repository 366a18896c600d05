//! A cursor over an HDF5 file's bytes: little-endian fields, addresses and lengths of the
//! sizes the superblock sets, every read checked against the bytes there are.

use crate::error::{Error, Result};

/// The address every bit of which is set: "undefined" in HDF5.
pub(crate) const UNDEFINED: u64 = u64::MAX;

/// Reads fields from `bytes` (the whole file), starting at `at`.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
    /// Bytes of an address (2, 4 or 8).
    pub(crate) offsets: u8,
    /// Bytes of a length (2, 4 or 8).
    pub(crate) lengths: u8,
    /// What is being read, for errors.
    pub(crate) what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at `at`, which must lie in `bytes`.
    pub(crate) fn at(
        bytes: &'a [u8],
        at: u64,
        offsets: u8,
        lengths: u8,
        what: &'static str,
    ) -> Result<Self> {
        let at = usize::try_from(at)
            .ok()
            .filter(|&a| a <= bytes.len())
            .ok_or_else(|| {
                Error::malformed(
                    what,
                    at,
                    format!("it lies past the end of the file ({} bytes)", bytes.len()),
                )
            })?;
        Ok(Cursor {
            bytes,
            at,
            offsets,
            lengths,
            what,
        })
    }

    pub(crate) fn offset(&self) -> u64 {
        self.at as u64
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: u64) -> Result<&'a [u8]> {
        let available = (self.bytes.len() - self.at) as u64;
        if n > available {
            return Err(tensor_core::Error::Truncated {
                what: self.what,
                offset: self.at as u64,
                needed: n,
                available,
            }
            .into());
        }
        // n fits: it is at most what is left of a slice.
        let s = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(s)
    }

    pub(crate) fn skip(&mut self, n: u64) -> Result<()> {
        self.take(n).map(drop)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// An unsigned little-endian integer of `n` bytes (at most 8).
    pub(crate) fn uint(&mut self, n: u8) -> Result<u64> {
        let b = self.take(u64::from(n))?;
        Ok(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        // Two bytes: always fits.
        Ok(self.uint(2)? as u16)
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        // Four bytes: always fits.
        Ok(self.uint(4)? as u32)
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        self.uint(8)
    }

    /// An address: `None` when undefined (every bit set).
    pub(crate) fn address(&mut self) -> Result<Option<u64>> {
        let n = self.offsets;
        let v = self.uint(n)?;
        let undefined = if n == 8 {
            UNDEFINED
        } else {
            (1u64 << (8 * u32::from(n))) - 1
        };
        Ok((v != undefined).then_some(v))
    }

    /// A field of the size of an address that is an offset into a heap, not an address.
    pub(crate) fn length_or_offset(&mut self) -> Result<u64> {
        self.uint(self.offsets)
    }

    /// A length.
    pub(crate) fn length(&mut self) -> Result<u64> {
        self.uint(self.lengths)
    }

    /// Checks that `count` items of at least `min` bytes each can follow, before anything
    /// is allocated for them.
    pub(crate) fn check_count(&self, count: u64, min: u64) -> Result<()> {
        let left = (self.bytes.len() - self.at) as u64;
        if count.saturating_mul(min) > left {
            return Err(Error::malformed(
                self.what,
                self.offset(),
                format!("{count} items of at least {min} bytes where {left} are left"),
            ));
        }
        Ok(())
    }
}

/// The sizes and base address addresses are read with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    pub(crate) offsets: u8,
    pub(crate) lengths: u8,
    pub(crate) base: u64,
}

impl Sizes {
    pub(crate) fn cursor<'a>(
        &self,
        bytes: &'a [u8],
        address: u64,
        what: &'static str,
    ) -> Result<Cursor<'a>> {
        let at = self
            .base
            .checked_add(address)
            .ok_or(tensor_core::Error::Overflow {
                what: "HDF5 address",
            })?;
        Cursor::at(bytes, at, self.offsets, self.lengths, what)
    }
}
