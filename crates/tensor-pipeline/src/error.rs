//! The error type of tensor-pipeline.

use tensor_core::{ErrorKind, Kinded};

/// Everything an encoding stage can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (limits, overflow).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or size error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// Compressed input that does not decode.
    #[error("{codec}: {reason}")]
    Corrupt {
        /// The codec.
        codec: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// Input that decodes to a different size than expected.
    #[error("{codec}: the data decodes to {actual} bytes, {expected} were expected")]
    SizeMismatch {
        /// The codec.
        codec: &'static str,
        /// Bytes expected.
        expected: u64,
        /// Bytes produced (a lower bound when decoding stopped early at the cap).
        actual: String,
    },
    /// A codec this build leaves out (its cargo feature is off).
    #[error(
        "{codec}: this build of tensor-pipeline leaves the codec out (cargo feature `{feature}`)"
    )]
    NotBuilt {
        /// The codec.
        codec: &'static str,
        /// The cargo feature that builds it.
        feature: &'static str,
    },
}

impl Error {
    /// For a codec's empty payload, which holds nothing (writers store an empty tensor's
    /// blob with zero bytes): `Ok` when `dst` expects nothing, [`Error::SizeMismatch`]
    /// otherwise.
    pub(crate) fn empty_payload(codec: &'static str, dst: &[u8]) -> Result<()> {
        if dst.is_empty() {
            Ok(())
        } else {
            Err(Error::SizeMismatch {
                codec,
                expected: dst.len() as u64,
                actual: "0".into(),
            })
        }
    }

    /// [`Error::NotBuilt`] for a codec named like the cargo feature that builds it.
    pub(crate) fn not_built(feature: &'static str) -> Error {
        Error::NotBuilt {
            codec: feature,
            feature,
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::Corrupt { .. } | Error::SizeMismatch { .. } => ErrorKind::Malformed,
            Error::NotBuilt { .. } => ErrorKind::Unsupported,
        }
    }
}

/// `Result` with tensor-pipeline's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
