//! The error type of tensor-gguf.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading or writing a GGUF file. Each error names where it
/// was met: the key, the tensor, or the byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, truncation, overflow, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The file does not start with `GGUF`.
    #[error("not a GGUF file: it starts with {found:02x?}, not the magic \"GGUF\"")]
    BadMagic {
        /// The first bytes.
        found: Vec<u8>,
    },
    /// A version this reader does not read (it reads 2 and 3).
    #[error("GGUF version {version} is not supported (versions 2 and 3 are)")]
    UnsupportedVersion {
        /// The stored version.
        version: u32,
    },
    /// The header, a metadata entry or a tensor info does not parse.
    #[error("malformed GGUF {what} at offset {offset}: {reason}")]
    Malformed {
        /// What was being read: "metadata key \"general.name\"", "tensor info \"w\"".
        what: String,
        /// Where, from the start of the file.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// A tensor with a ggml type this build does not know, or one removed from ggml.
    #[error("tensor {name:?}: ggml type {type_id} is {reason}")]
    UnsupportedType {
        /// The tensor.
        name: String,
        /// The stored type id.
        type_id: u32,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A tensor whose type cannot be decoded here (no dequantizer for it).
    #[error("tensor {name:?}: {what}")]
    CannotDecode {
        /// The tensor.
        name: String,
        /// What is missing.
        what: String,
    },
    /// A tensor's data lies (partly) outside the file.
    #[error(
        "tensor {name:?}: its {len} bytes at data offset {offset} (file offset {file_offset}) run past the end of the file ({file_len} bytes)"
    )]
    DataPastEnd {
        /// The tensor.
        name: String,
        /// Its offset in the data section.
        offset: u64,
        /// The same, from the start of the file.
        file_offset: u64,
        /// Its byte length.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A shard set that does not hold together (missing, extra or mismatched shards).
    #[error("split GGUF set: {0}")]
    Split(String),
    /// What the caller asked for cannot be written as GGUF.
    #[error("cannot write GGUF: {0}")]
    CannotWrite(String),
}

impl Error {
    /// A [`Error::Malformed`].
    pub(crate) fn malformed(
        what: impl Into<String>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        Error::Malformed {
            what: what.into(),
            offset,
            reason: reason.into(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::BadMagic { .. } | Error::Malformed { .. } | Error::Split(_) => {
                ErrorKind::Malformed
            }
            Error::UnsupportedVersion { .. }
            | Error::UnsupportedType { .. }
            | Error::CannotDecode { .. } => ErrorKind::Unsupported,
            Error::DataPastEnd { .. } => ErrorKind::Truncated,
            Error::CannotWrite(_) => ErrorKind::InvalidArgument,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
