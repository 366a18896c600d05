//! The error type of tensor-grib.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading a GRIB file. Each error names the message (its
/// index and byte offset) and, where there is one, the section and field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (limits, overflow, memory).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A structure runs past the end of its message or of the file.
    #[error("GRIB message #{message} at offset {offset}: {what} runs past the end ({detail})")]
    Truncated {
        /// The message's index in the file.
        message: usize,
        /// The message's byte offset in the file.
        offset: u64,
        /// What was being read.
        what: String,
        /// Lengths involved.
        detail: String,
    },
    /// A field or section that breaks the GRIB rules.
    #[error("GRIB message #{message} at offset {offset}: {what}")]
    Malformed {
        /// The message's index in the file.
        message: usize,
        /// The message's byte offset in the file.
        offset: u64,
        /// What is wrong, naming the section and field.
        what: String,
    },
    /// A valid GRIB feature this reader does not decode (a packing, a grid, an edition).
    #[error("GRIB message #{message} at offset {offset}: {what} is not supported")]
    Unsupported {
        /// The message's index in the file.
        message: usize,
        /// The message's byte offset in the file.
        offset: u64,
        /// The feature.
        what: String,
    },
    /// The packed data does not decode (a CCSDS stream, complex packing groups).
    #[error(
        "GRIB message #{message} at offset {offset}: the {packing} data does not decode: {source}"
    )]
    Data {
        /// The message's index in the file.
        message: usize,
        /// The message's byte offset in the file.
        offset: u64,
        /// The packing.
        packing: &'static str,
        /// The codec's error.
        source: tensor_pipeline::Error,
    },
    /// Values or keys a GRIB message cannot be written with.
    #[error("writing GRIB: {what}")]
    Write {
        /// What cannot be written, and why.
        what: String,
    },
    /// The output buffer has the wrong length.
    #[error("the output holds {actual} values; field #{field} has {expected}")]
    OutputLength {
        /// The field's index.
        field: usize,
        /// Values the field has.
        expected: u64,
        /// Values the buffer holds.
        actual: usize,
    },
}

/// `Result` with this crate's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Malformed { .. } => ErrorKind::Malformed,
            Error::Unsupported { .. } | Error::Write { .. } => ErrorKind::Unsupported,
            Error::Data { source, .. } => source.kind(),
            Error::OutputLength { .. } => ErrorKind::InvalidArgument,
        }
    }
}
