//! The error type of tensor-hdf5.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading an HDF5 file. Each error names what was being read
/// and where.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (truncation, overflow, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// No HDF5 signature where one must be.
    #[error("not an HDF5 file: no signature at offset 0, 512, 1024, 2048 ... ({found:02x?} at 0)")]
    BadSignature {
        /// The first bytes.
        found: Vec<u8>,
    },
    /// A structure does not parse, or says something no HDF5 file says.
    #[error("malformed HDF5 {what} at offset {offset}: {reason}")]
    Malformed {
        /// What was being read: "object header", "link message", "dataspace".
        what: &'static str,
        /// Where, from the start of the file.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// A checksum does not match.
    #[error(
        "HDF5 {what} at offset {offset}: checksum {stored:#010x} where its bytes give {computed:#010x}"
    )]
    Checksum {
        /// What it covers.
        what: &'static str,
        /// Where.
        offset: u64,
        /// The stored value.
        stored: u32,
        /// What the bytes hash to.
        computed: u32,
    },
    /// A feature of HDF5 this reader does not read, named.
    #[error("HDF5: {0} is not read by this version")]
    Unsupported(String),
    /// What was asked of the writer cannot be written, and why.
    #[error("cannot write HDF5: {0}")]
    CannotWrite(String),
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
            Error::BadSignature { .. } | Error::Malformed { .. } => ErrorKind::Malformed,
            Error::Checksum { .. } => ErrorKind::ChecksumMismatch,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::CannotWrite(_) => ErrorKind::InvalidArgument,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
