//! The error type of tensor-pytorch.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading a PyTorch checkpoint. Each error names where it was
/// met: the pickle's byte offset, the tensor, the storage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (truncation, overflow, limits, memory).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The zip archive around the checkpoint.
    #[error(transparent)]
    Zip(#[from] tensor_zip::Error),
    /// The pickle does not parse, or does something no checkpoint's pickle does.
    #[error("malformed pickle at byte {offset}: {reason}")]
    Pickle {
        /// Where in the pickle.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// The pickle asks for something this reader never does: a global outside what state
    /// dicts use, a call of anything else, an opcode that builds arbitrary objects. Nothing
    /// was run.
    #[error(
        "pickle at byte {offset}: {what}; tensorkit never runs pickles, and reads only what state dicts of tensors hold"
    )]
    Refused {
        /// Where in the pickle.
        offset: u64,
        /// What it asked for: "global os.system", "opcode INST".
        what: String,
    },
    /// The checkpoint's layout: a missing pickle or storage, a storage shorter than its
    /// tensors need.
    #[error("PyTorch checkpoint: {0}")]
    Layout(String),
    /// Something a checkpoint may hold that this reader does not read (quantized or sparse
    /// tensors, a dtype no tensor of ours holds), named.
    #[error("PyTorch checkpoint: {0} is not read")]
    Unsupported(String),
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Zip(e) => e.kind(),
            Error::Pickle { .. } | Error::Layout(_) => ErrorKind::Malformed,
            Error::Refused { .. } | Error::Unsupported(_) => ErrorKind::Unsupported,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
