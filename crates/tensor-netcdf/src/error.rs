//! The error type of tensor-netcdf.

use tensor_core::{ErrorKind, Kinded};

/// Everything that can go wrong reading or writing a NetCDF file. Each error names where it
/// was met: the variable, the attribute, or the byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, truncation, overflow, limits).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// The HDF5 under a NetCDF-4 file.
    #[error(transparent)]
    Hdf5(#[from] tensor_hdf5::Error),
    /// The file does not start like a NetCDF file.
    #[error(
        "not a NetCDF file: it starts with {found:02x?}, not \"CDF\" and a version (1, 2 or 5) nor HDF5's signature"
    )]
    BadMagic {
        /// The first bytes.
        found: Vec<u8>,
    },
    /// The header does not parse, or says something no NetCDF file says.
    #[error("malformed NetCDF {what} at offset {offset}: {reason}")]
    Malformed {
        /// What was being read: "dimension 2", "attribute \"units\" of variable \"t\"".
        what: String,
        /// Where, from the start of the file.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// Something this reader does not read, named.
    #[error("NetCDF: {0}")]
    Unsupported(String),
    /// A variable's data lies (partly) outside the file.
    #[error(
        "variable {name:?}: its data at offset {offset} ({len} bytes) runs past the end of the file ({file_len} bytes)"
    )]
    DataPastEnd {
        /// The variable.
        name: String,
        /// Where its data starts.
        offset: u64,
        /// How many bytes it needs from there.
        len: u64,
        /// The file's length.
        file_len: u64,
    },
    /// What the caller asked for cannot be written as NetCDF.
    #[error("cannot write NetCDF: {0}")]
    CannotWrite(String),
}

impl Error {
    /// A [`Error::Malformed`].
    pub(crate) fn malformed(
        what: impl Into<String>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        Error::Malformed {
            what: what.into(),
            offset,
            reason: reason.into(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Hdf5(e) => e.kind(),
            Error::BadMagic { .. } | Error::Malformed { .. } => ErrorKind::Malformed,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::DataPastEnd { .. } => ErrorKind::Truncated,
            Error::CannotWrite(_) => ErrorKind::InvalidArgument,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
