//! The crate's one error type.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading or writing safetensors files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, limits, overflow).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A shape or view that does not fit its dtype.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The file is not what the format defines, with where and what.
    #[error("{message}")]
    Format {
        /// The error class.
        kind: ErrorKind,
        /// What is wrong, and where.
        message: String,
    },
    /// Something safetensors cannot store (a dtype, a shape, a header too large).
    #[error("safetensors cannot store {0}")]
    Unwritable(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn format(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error::Format {
            kind,
            message: message.into(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Format { kind, .. } => *kind,
            Error::Unwritable(_) => ErrorKind::Unsupported,
        }
    }
}
