//! The error type of tensor-descriptor.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can be wrong with a descriptor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (malformed CBOR, overflow).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A required key is missing.
    #[error("descriptor: required key `{0}` is missing")]
    Missing(&'static str),
    /// A key holds the wrong CBOR type or an invalid value.
    #[error("descriptor: `{key}` {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A key appears twice.
    #[error("descriptor: key `{0}` appears more than once")]
    DuplicateKey(String),
    /// A dtype name that is not one of Tensogram's.
    #[error("descriptor: unknown dtype {0:?} (not one of Tensogram's)")]
    UnknownDtype(String),
}

impl Error {
    pub(crate) fn invalid(key: &str, reason: impl Into<String>) -> Self {
        Error::Invalid {
            key: key.to_owned(),
            reason: reason.into(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::UnknownDtype(_) => ErrorKind::Unsupported,
            Error::Missing(_) | Error::Invalid { .. } | Error::DuplicateKey(_) => {
                ErrorKind::Malformed
            }
        }
    }
}

/// `Result` with tensor-descriptor's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
