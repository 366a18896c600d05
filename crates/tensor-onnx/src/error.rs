//! The error type of tensor-onnx.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading an ONNX model's initializers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (truncation, overflow, limits, memory, I/O).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The protobuf does not parse, or says something no model says.
    #[error("malformed ONNX {what} at byte {offset}: {reason}")]
    Malformed {
        /// What was being read: `ModelProto`, `TensorProto "w"`.
        what: String,
        /// Where, from the start of the file.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// An initializer of a type no tensor holds, or stored in a way not read.
    #[error("ONNX initializer {name:?}: {what} is not read")]
    Unsupported {
        /// The initializer.
        name: String,
        /// What it uses.
        what: String,
    },
    /// External data that lies outside the model's folder, or past its file.
    #[error("ONNX initializer {name:?}: external data {reason}")]
    External {
        /// The initializer.
        name: String,
        /// What is wrong with its location or range.
        reason: String,
    },
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Malformed { .. } | Error::External { .. } => ErrorKind::Malformed,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
