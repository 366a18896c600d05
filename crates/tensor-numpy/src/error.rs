//! The error type of tensor-numpy.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading or writing a `.npy` or `.npz` file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (truncation, overflow, limits, memory).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The `.npz` archive around the arrays.
    #[error(transparent)]
    Zip(#[from] tensor_zip::Error),
    /// The header does not parse, or says something no `.npy` file says.
    #[error("malformed .npy header{at}: {reason}")]
    Header {
        /// Where: "" for a lone `.npy`, " of entry \"w.npy\"" in an archive.
        at: String,
        /// What was wrong.
        reason: String,
    },
    /// An array of a type no tensor holds: object arrays (their elements are pickles),
    /// structured arrays, strings.
    #[error("{0}")]
    Unsupported(String),
    /// What was asked of the writer cannot be written.
    #[error("cannot write NumPy: {0}")]
    CannotWrite(String),
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Zip(e) => e.kind(),
            Error::Header { .. } => ErrorKind::Malformed,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::CannotWrite(_) => ErrorKind::InvalidArgument,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
