//! Where a parser is: the message, for errors that say where.

use crate::error::Error;

/// The message being read: its index and byte offset in the file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct At {
    pub(crate) message: usize,
    pub(crate) offset: u64,
}

impl At {
    pub(crate) fn malformed(self, what: impl Into<String>) -> Error {
        Error::Malformed {
            message: self.message,
            offset: self.offset,
            what: what.into(),
        }
    }

    pub(crate) fn unsupported(self, what: impl Into<String>) -> Error {
        Error::Unsupported {
            message: self.message,
            offset: self.offset,
            what: what.into(),
        }
    }

    pub(crate) fn truncated(self, what: impl Into<String>, detail: impl Into<String>) -> Error {
        Error::Truncated {
            message: self.message,
            offset: self.offset,
            what: what.into(),
            detail: detail.into(),
        }
    }

    pub(crate) fn data(self, packing: &'static str, source: tensor_pipeline::Error) -> Error {
        Error::Data {
            message: self.message,
            offset: self.offset,
            packing,
            source,
        }
    }

    /// `len` bytes from `start` of `bytes` (a section), or a truncation error naming `what`.
    pub(crate) fn slice<'a>(
        self,
        bytes: &'a [u8],
        start: usize,
        len: usize,
        what: &str,
    ) -> Result<&'a [u8], Error> {
        start
            .checked_add(len)
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(|| {
                self.truncated(
                    what,
                    format!(
                        "needs {len} bytes at {start}, the section has {}",
                        bytes.len()
                    ),
                )
            })
    }
}
