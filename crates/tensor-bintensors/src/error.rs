//! The error type of tensor-bintensors.

use tensor_core::{ErrorKind, Kinded};

/// How the bincode-encoded header failed to decode (the reference's `DecoderError` cases).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeFailure {
    /// The structure runs past the end of the header window.
    UnexpectedEnd,
    /// An Option tag that is not 0/1, or a dtype id above 14.
    UnexpectedVariant,
    /// A varint marker (254 or 255) that cannot encode a 64-bit value.
    InvalidIntegerType,
    /// A name, metadata key or metadata value that is not UTF-8.
    Utf8,
    /// Counts whose in-memory size would pass the decode budget.
    LimitExceeded,
}

impl DecodeFailure {
    /// The reference's name for the case.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            DecodeFailure::UnexpectedEnd => "UnexpectedEnd",
            DecodeFailure::UnexpectedVariant => "UnexpectedVariant",
            DecodeFailure::InvalidIntegerType => "InvalidIntegerType",
            DecodeFailure::Utf8 => "Utf8",
            DecodeFailure::LimitExceeded => "LimitExceeded",
        }
    }
}

/// Everything that can go wrong reading or writing a BinTensors file.
///
/// The variants follow the reference reader's checks, in the order it makes them;
/// [`Error::class`] gives the reference's name for each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, overflow, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The file is shorter than the 8-byte header length.
    #[error("the file is {len} bytes long, shorter than the 8-byte header length")]
    HeaderTooSmall {
        /// The file length.
        len: u64,
    },
    /// The header length passes the limit (100,000,000 bytes by default, as in the reference).
    #[error("the header length at offset 0 is {header_len} bytes, over the limit of {limit}")]
    HeaderTooLarge {
        /// The stored header length.
        header_len: u64,
        /// The configured limit.
        limit: u64,
    },
    /// The header runs past the end of the file.
    #[error(
        "the header length at offset 0 says {header_len} bytes follow, but only {available} remain"
    )]
    InvalidHeaderLength {
        /// The stored header length.
        header_len: u64,
        /// Bytes after the 8-byte prefix.
        available: u64,
    },
    /// The header window does not decode.
    #[error("the header does not decode ({}) at file offset {offset}: {detail}", failure.name())]
    Decode {
        /// Which decode failure.
        failure: DecodeFailure,
        /// The file offset where decoding stopped.
        offset: u64,
        /// What was being read.
        detail: String,
    },
    /// Two tensors share a name.
    #[error("tensor name {name:?} appears more than once")]
    ValidationMismatch {
        /// The duplicated name.
        name: String,
    },
    /// A tensor's data offsets do not continue where the previous tensor ended.
    #[error("tensor {name:?} has data offsets [{begin}, {end}); it must begin at {expected}")]
    InvalidOffset {
        /// The tensor.
        name: String,
        /// Its begin offset.
        begin: u64,
        /// Its end offset.
        end: u64,
        /// Where the previous tensor ended.
        expected: u64,
    },
    /// A tensor's size overflows 64 bits.
    #[error("tensor {name:?}: shape {shape:?} overflows 64-bit arithmetic")]
    ValidationOverflow {
        /// The tensor.
        name: String,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// A tensor's byte span does not match its shape and dtype.
    #[error("tensor {name:?} spans {actual} bytes, but its shape and dtype need {expected}")]
    TensorInvalidInfo {
        /// The tensor.
        name: String,
        /// Bytes its offsets span.
        actual: u64,
        /// Bytes its shape and dtype need.
        expected: u64,
    },
    /// The tensors do not cover the data section exactly.
    #[error(
        "the tensors end at byte {end} of the data section, which is {data_len} bytes long (data starts at file offset {data_start})"
    )]
    MetadataIncompleteBuffer {
        /// Where the last tensor ends.
        end: u64,
        /// The data section's length.
        data_len: u64,
        /// The data section's file offset.
        data_start: u64,
    },
    /// Something the reference accepts but a strict reader refuses.
    #[error("not canonical: {0}")]
    NotCanonical(String),
    /// A dtype BinTensors cannot store.
    #[error("BinTensors cannot store dtype {dtype} (tensor {name:?})")]
    UnsupportedDtype {
        /// The tensor.
        name: String,
        /// Its dtype.
        dtype: tensor_dtype::Dtype,
    },
    /// The `paranoid` feature's check: a written file does not read back as what was given.
    #[error("self-check of the written file failed: {0}")]
    SelfCheck(String),
}

impl Error {
    /// The reference's error class (`"HeaderTooSmall"`, `"DecodeUtf8"`, ...); `"NotCanonical"`
    /// and the wrapped leaf errors have names of their own.
    #[must_use]
    pub fn class(&self) -> &'static str {
        match self {
            Error::HeaderTooSmall { .. } => "HeaderTooSmall",
            Error::HeaderTooLarge { .. } => "HeaderTooLarge",
            Error::InvalidHeaderLength { .. } => "InvalidHeaderLength",
            Error::Decode { failure, .. } => match failure {
                DecodeFailure::UnexpectedEnd => "DecodeUnexpectedEnd",
                DecodeFailure::UnexpectedVariant => "DecodeUnexpectedVariant",
                DecodeFailure::InvalidIntegerType => "DecodeInvalidIntegerType",
                DecodeFailure::Utf8 => "DecodeUtf8",
                DecodeFailure::LimitExceeded => "DecodeLimitExceeded",
            },
            Error::ValidationMismatch { .. } => "ValidationMismatch",
            Error::InvalidOffset { .. } => "InvalidOffset",
            Error::ValidationOverflow { .. } => "ValidationOverflow",
            Error::TensorInvalidInfo { .. } => "TensorInvalidInfo",
            Error::MetadataIncompleteBuffer { .. } => "MetadataIncompleteBuffer",
            Error::NotCanonical(_) => "NotCanonical",
            Error::UnsupportedDtype { .. } => "UnsupportedDtype",
            Error::SelfCheck(_) => "SelfCheck",
            Error::Core(_) => "Core",
            Error::Dtype(_) => "Dtype",
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::SelfCheck(_) => ErrorKind::ChecksumMismatch,
            Error::HeaderTooSmall { .. } | Error::InvalidHeaderLength { .. } => {
                ErrorKind::Truncated
            }
            Error::Decode {
                failure: DecodeFailure::UnexpectedEnd,
                ..
            } => ErrorKind::Truncated,
            Error::HeaderTooLarge { .. }
            | Error::Decode {
                failure: DecodeFailure::LimitExceeded,
                ..
            } => ErrorKind::LimitExceeded,
            Error::MetadataIncompleteBuffer { end, data_len, .. } if end > data_len => {
                ErrorKind::Truncated
            }
            Error::Decode { .. }
            | Error::ValidationMismatch { .. }
            | Error::InvalidOffset { .. }
            | Error::ValidationOverflow { .. }
            | Error::TensorInvalidInfo { .. }
            | Error::MetadataIncompleteBuffer { .. }
            | Error::NotCanonical(_) => ErrorKind::Malformed,
            Error::UnsupportedDtype { .. } => ErrorKind::Unsupported,
        }
    }
}

/// `Result` with tensor-bintensors' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
