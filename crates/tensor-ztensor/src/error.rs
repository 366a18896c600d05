//! The error type of tensor-ztensor.

use tensor_core::{ErrorKind, Kinded};

/// What went wrong, by the conformance fixtures' error classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// The first bytes are not a zTensor magic number.
    BadMagic,
    /// The file ends before a structure it declares.
    Truncated,
    /// The index (or manifest) lies outside the file.
    IndexOutOfBounds,
    /// The index is not the CBOR structure the format defines.
    IndexMalformed,
    /// A blob offset is not aligned.
    MisalignedOffset,
    /// A blob lies outside the data region.
    BlobOutOfBounds,
    /// Two blobs overlap.
    OverlappingBlobs,
    /// A blob's size does not match its tensor's shape and dtype.
    SizeMismatch,
    /// A shape's element or byte count overflows 64 bits.
    ShapeOverflow,
    /// A stored checksum does not match the data.
    ChecksumMismatch,
    /// A checksum string that cannot be parsed.
    ChecksumFormat,
    /// A dtype the format does not define.
    UnknownDtype,
    /// An encoding the format does not define.
    UnknownEncoding,
    /// A layout the reader does not support.
    UnknownLayout,
    /// Compressed data that does not decode.
    DecompressionError,
    /// Two tensors share a name.
    DuplicateName,
    /// The manifest does not match the hash the footer records (zTensor 2).
    ManifestHashMismatch,
}

impl Class {
    /// The class name the fixtures use (`"bad_magic"`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Class::BadMagic => "bad_magic",
            Class::Truncated => "truncated",
            Class::IndexOutOfBounds => "index_out_of_bounds",
            Class::IndexMalformed => "index_malformed",
            Class::MisalignedOffset => "misaligned_offset",
            Class::BlobOutOfBounds => "blob_out_of_bounds",
            Class::OverlappingBlobs => "overlapping_blobs",
            Class::SizeMismatch => "size_mismatch",
            Class::ShapeOverflow => "shape_overflow",
            Class::ChecksumMismatch => "checksum_mismatch",
            Class::ChecksumFormat => "checksum_format",
            Class::UnknownDtype => "unknown_dtype",
            Class::UnknownEncoding => "unknown_encoding",
            Class::UnknownLayout => "unknown_layout",
            Class::DecompressionError => "decompression_error",
            Class::DuplicateName => "duplicate_name",
            Class::ManifestHashMismatch => "manifest_hash_mismatch",
        }
    }
}

/// Everything that can go wrong reading or writing a zTensor file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// A file that breaks the format, with its class and where.
    #[error("{message}")]
    Format {
        /// The class of problem.
        class: Class,
        /// What was wrong, naming the tensor or offset.
        message: String,
    },
    /// A tensor the writer cannot store.
    #[error("zTensor cannot store {0}")]
    Unwritable(String),
    /// The `paranoid` feature's check: a written file does not read back as what was given.
    #[error("self-check of the written file failed: {0}")]
    SelfCheck(String),
}

impl Error {
    pub(crate) fn format(class: Class, message: impl Into<String>) -> Self {
        Error::Format {
            class,
            message: message.into(),
        }
    }

    /// The problem's class, for format errors.
    #[must_use]
    pub fn class(&self) -> Option<Class> {
        match self {
            Error::Format { class, .. } => Some(*class),
            _ => None,
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::SelfCheck(_) => ErrorKind::ChecksumMismatch,
            Error::Format { class, .. } => match class {
                Class::Truncated => ErrorKind::Truncated,
                Class::ChecksumMismatch | Class::ManifestHashMismatch => {
                    ErrorKind::ChecksumMismatch
                }
                Class::UnknownDtype | Class::UnknownEncoding | Class::UnknownLayout => {
                    ErrorKind::Unsupported
                }
                _ => ErrorKind::Malformed,
            },
            Error::Unwritable(_) => ErrorKind::Unsupported,
        }
    }
}

/// `Result` with tensor-ztensor's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
