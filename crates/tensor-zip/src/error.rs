//! The error type of tensor-zip.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading or writing a zip archive. Each error names where it
/// was met: the entry, or the byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (truncation, overflow, limits, memory).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A record does not parse, or says something no sound archive says.
    #[error("malformed zip {what} at offset {offset}: {reason}")]
    Malformed {
        /// What was being read: "end of central directory", "central directory entry".
        what: &'static str,
        /// Where, from the start of the archive.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// An entry whose stored bytes do not match its CRC-32.
    #[error("zip entry {name:?}: CRC-32 {stored:#010x} where its bytes give {computed:#010x}")]
    Checksum {
        /// The entry.
        name: String,
        /// The CRC-32 the central directory records.
        stored: u32,
        /// What the bytes give.
        computed: u32,
    },
    /// A feature of zip this reader does not read (encryption, a compression method other
    /// than stored and deflate, archives over several disks).
    #[error("zip entry {name:?}: {what} is not read")]
    Unsupported {
        /// The entry, or "" for the archive.
        name: String,
        /// What it uses.
        what: String,
    },
}

impl Error {
    /// A [`Error::Malformed`].
    pub(crate) fn malformed(what: &'static str, offset: u64, reason: impl Into<String>) -> Self {
        Error::Malformed {
            what,
            offset,
            reason: reason.into(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Malformed { .. } => ErrorKind::Malformed,
            Error::Checksum { .. } => ErrorKind::ChecksumMismatch,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
