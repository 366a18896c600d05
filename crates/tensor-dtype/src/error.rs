//! The error type of tensor-dtype.

use crate::Dtype;
use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong describing or viewing a tensor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (overflow, truncation, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype name that is not one of the canonical names.
    #[error("unknown dtype {0:?}")]
    UnknownDtype(String),
    /// A buffer whose length does not match the dtype and shape.
    #[error(
        "a {dtype} tensor of shape {shape:?} needs {expected} bytes, but the buffer holds {actual}"
    )]
    SizeMismatch {
        /// The tensor's dtype.
        dtype: Dtype,
        /// The tensor's shape.
        shape: Vec<u64>,
        /// Bytes the dtype and shape need.
        expected: u64,
        /// Bytes available.
        actual: u64,
    },
    /// Strides that do not fit the shape or reach outside the buffer.
    #[error("invalid strides {strides:?} for shape {shape:?}: {reason}")]
    InvalidStrides {
        /// The shape.
        shape: Vec<u64>,
        /// The strides, in bytes.
        strides: Vec<i64>,
        /// What is wrong with them.
        reason: String,
    },
    /// An operation that needs one dtype was given another.
    #[error("expected a {expected} tensor, found {found}")]
    DtypeMismatch {
        /// What the operation needs.
        expected: String,
        /// What the tensor holds.
        found: Dtype,
    },
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::UnknownDtype(_) => ErrorKind::Unsupported,
            Error::SizeMismatch { .. }
            | Error::InvalidStrides { .. }
            | Error::DtypeMismatch { .. } => ErrorKind::InvalidArgument,
        }
    }
}

/// `Result` with tensor-dtype's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
