//! A cursor over a GGUF header: fixed-width values in the file's byte order, strings, and
//! the bounds every read is checked against.

use crate::error::{Error, Result};
use tensor_core::ByteOrder;

/// Reads a GGUF header from `bytes`, the part of a file held (all of it, or a prefix of a
/// remote one), of a file `file_len` long. A read past `bytes` is a truncation; past
/// `window` (the header limit) a limit error.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pub(crate) at: usize,
    pub(crate) order: ByteOrder,
    file_len: u64,
    window: u64,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], file_len: u64, max_header_bytes: u64) -> Self {
        Cursor {
            bytes,
            at: 0,
            order: ByteOrder::Little,
            file_len,
            window: max_header_bytes,
        }
    }

    pub(crate) fn offset(&self) -> u64 {
        self.at as u64
    }

    /// The bytes from the file still after the cursor (whether held or not).
    pub(crate) fn remaining_in_file(&self) -> u64 {
        self.file_len.saturating_sub(self.at as u64)
    }

    /// Checks that `count` items of at least `min_bytes` each can follow in the file and in
    /// the header window, before anything is allocated for them.
    pub(crate) fn check_count(&self, count: u64, min_bytes: u64, what: &'static str) -> Result<()> {
        let needed = count.saturating_mul(min_bytes);
        let at = self.at as u64;
        if at.saturating_add(needed) > self.window && self.window < self.file_len {
            return Err(tensor_core::Error::LimitExceeded {
                what: "GGUF header bytes",
                requested: at.saturating_add(needed),
                limit: self.window,
            }
            .into());
        }
        if needed > self.remaining_in_file() {
            return Err(tensor_core::Error::Truncated {
                what,
                offset: at,
                needed,
                available: self.file_len,
            }
            .into());
        }
        Ok(())
    }

    pub(crate) fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        self.check_count(n, 1, what)?;
        let end = (self.at as u64).saturating_add(n);
        let held = self.bytes.len() as u64;
        if end > held {
            return Err(tensor_core::Error::Truncated {
                what,
                offset: self.at as u64,
                needed: n,
                available: if held < self.file_len {
                    held
                } else {
                    self.file_len
                },
            }
            .into());
        }
        // `end` is within `bytes`, so it fits a usize.
        let end = end as usize;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let b = self.take(N as u64, what)?;
        let mut a = [0; N];
        a.copy_from_slice(b);
        if self.order == ByteOrder::Big {
            a.reverse();
        }
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A GGUF string: a `u64` length, then that many bytes of UTF-8.
    pub(crate) fn string(
        &mut self,
        what: &'static str,
        context: impl Fn() -> String,
    ) -> Result<&'a str> {
        let start = self.offset();
        let len = self.u64(what)?;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|e| {
            Error::malformed(
                context(),
                start + 8 + e.valid_up_to() as u64,
                format!("{what} is not UTF-8"),
            )
        })
    }
}
