//! The error type of tensor-stdlib-meta.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading, writing or indexing stdlib meta data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (limits, overflow).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The buffer ends before a field it declares.
    #[error(
        "meta data truncated: {field} needs bytes {needed_end} and beyond, but the buffer is {len} bytes long"
    )]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// The buffer length the field needs.
        needed_end: u64,
        /// The buffer length.
        len: u64,
    },
    /// Byte 0 is neither 0 (big-endian) nor 1 (little-endian).
    #[error("endianness byte at offset 0 is {0}; it must be 0 (big-endian) or 1 (little-endian)")]
    InvalidEndianness(u8),
    /// The dtype at offset 1 is not an assigned value.
    #[error("dtype enum {0} at offset 1 is not an assigned stdlib data type")]
    UnknownDtype(i16),
    /// The dimension count at offset 3 is negative or above stdlib's maximum (32767).
    #[error("ndims {0} at offset 3 is invalid (0 to 32767)")]
    InvalidNdims(i64),
    /// A dimension is negative.
    #[error("shape[{axis}] at offset {offset} is {value}; dimensions cannot be negative")]
    InvalidShape {
        /// The axis.
        axis: usize,
        /// Its byte offset.
        offset: u64,
        /// The stored value.
        value: i64,
    },
    /// The index offset is negative.
    #[error("index offset {value} at byte {offset} is negative")]
    InvalidOffset {
        /// Its byte offset in the buffer.
        offset: u64,
        /// The stored value.
        value: i64,
    },
    /// The order byte is neither 101 nor 102.
    #[error("order {value} at offset {offset} is unknown (101 row-major, 102 column-major)")]
    UnknownOrder {
        /// Its byte offset.
        offset: u64,
        /// The stored value.
        value: i8,
    },
    /// An index mode or submode outside 1..=4.
    #[error(
        "{field} {value} at offset {offset} is not an index mode (1 throw, 2 clamp, 3 wrap, 4 normalize)"
    )]
    UnknownIndexMode {
        /// `"mode"` or `"submode"`.
        field: &'static str,
        /// Its byte offset.
        offset: u64,
        /// The stored value.
        value: i8,
    },
    /// The submode count is negative or cannot fit in the buffer.
    #[error("nsubmodes {0} is invalid")]
    InvalidNsubmodes(i64),
    /// Bytes follow the flags word.
    #[error("{extra} bytes follow the meta data, which ends at byte {end}")]
    TrailingBytes {
        /// Where the meta data ends.
        end: u64,
        /// How many bytes follow.
        extra: u64,
    },
    /// A data type with no byte layout tensorkit can view.
    #[error("stdlib dtype {0} has no element layout that tensorkit can view")]
    UnviewableDtype(&'static str),
    /// A tensor whose dtype stdlib has no enum for.
    #[error("stdlib has no data type for {0}")]
    NoStdlibDtype(tensor_dtype::Dtype),
    /// A subscript that the index modes cannot resolve.
    #[error("index {index} is out of range for axis {axis} of extent {extent} (mode {mode})")]
    IndexOutOfRange {
        /// The axis (or `usize::MAX` for a linear index).
        axis: usize,
        /// The index given.
        index: i64,
        /// The axis extent.
        extent: u64,
        /// The mode applied.
        mode: &'static str,
    },
    /// Subscripts given for the wrong number of dimensions, or no submodes to resolve them.
    #[error("{0}")]
    InvalidSubscripts(String),
    /// A JSON specification of meta data that does not describe any (feature `json`).
    #[error("{0}")]
    InvalidSpec(String),
    /// The `paranoid` feature's check: a written buffer does not read back as what was given.
    #[error("self-check of the written buffer failed: {0}")]
    SelfCheck(String),
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::SelfCheck(_) => ErrorKind::ChecksumMismatch,
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::UnknownDtype(_) | Error::UnviewableDtype(_) | Error::NoStdlibDtype(_) => {
                ErrorKind::Unsupported
            }
            Error::InvalidEndianness(_)
            | Error::InvalidNdims(_)
            | Error::InvalidShape { .. }
            | Error::InvalidOffset { .. }
            | Error::UnknownOrder { .. }
            | Error::UnknownIndexMode { .. }
            | Error::InvalidNsubmodes(_)
            | Error::TrailingBytes { .. } => ErrorKind::Malformed,
            Error::IndexOutOfRange { .. } | Error::InvalidSubscripts(_) | Error::InvalidSpec(_) => {
                ErrorKind::InvalidArgument
            }
        }
    }
}

/// `Result` with tensor-stdlib-meta's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
