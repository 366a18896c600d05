//! The error type of the tensorkit facade.

use std::path::{Path, PathBuf};
use tensor_core::{ErrorKind, Kinded};

/// Everything the facade can report; each error has a kind ([`Kinded`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core.
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A dtype, shape or view error.
    #[error(transparent)]
    Dtype(#[from] tensor_dtype::Error),
    /// A file whose format could not be recognised.
    #[error("{path}: not a format tensorkit reads ({reason})")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What the first bytes looked like.
        reason: String,
        /// Truncated when the file is too short to hold any format's header.
        too_short: bool,
    },
    /// A file its format's reader refused, or a set its format's writer could not write.
    #[error("{path}: {}{source}", at.as_deref().map(|a| format!("{a}: ")).unwrap_or_default())]
    Format {
        /// The file.
        path: PathBuf,
        /// The format's id.
        format: &'static str,
        /// Where in the file, where the format tells (`message 2 (at byte 4096)`, `tensor "t2m"`).
        at: Option<String>,
        /// The category.
        kind: ErrorKind,
        /// What was wrong, as the format's crate says it.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// stdlib-js meta data that could not be read or written.
    #[cfg(feature = "stdlib-meta")]
    #[error("{path}: {source}")]
    StdlibMeta {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        #[source]
        source: tensor_stdlib_meta::Error,
    },
    /// A JSON specification (stdlib-js meta data, edits) that cannot be used.
    #[error("{path}: {message}")]
    Spec {
        /// The specification file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// An edit that cannot be made as asked: a key or tensor that is not there, a name
    /// already taken, a value the format cannot hold.
    #[error("{path}: {what}")]
    Edit {
        /// The file being edited.
        path: PathBuf,
        /// What cannot be done.
        what: String,
    },
    /// An output format that cannot be determined or is not supported.
    #[error("{what}")]
    UnknownTarget {
        /// What was asked for.
        what: String,
    },
    /// A tensor a target format cannot hold.
    #[error("{format} cannot store {what}")]
    CannotRepresent {
        /// The target format.
        format: &'static str,
        /// What it cannot store (e.g. "dtype complex128 (tensor \"x\")").
        what: String,
    },
    /// Two tensors share a name, and the target format (or a shard index) keys tensors by
    /// name ([`WriteOptions::rename_duplicates`](crate::WriteOptions::rename_duplicates)
    /// keeps repeats apart).
    #[error(
        "{format} cannot store two tensors named {name:?} (#{first} and #{second}); rename them, \
         or have repeats renamed to keep them apart"
    )]
    RepeatedName {
        /// The target format.
        format: &'static str,
        /// The name.
        name: String,
        /// The first tensor's index.
        first: usize,
        /// The repeat's index.
        second: usize,
    },
    /// `verify` found a stored checksum or hash that does not match, or damage that keeps
    /// it from checking them.
    #[error("{path}: {detail}")]
    VerifyFailed {
        /// The file.
        path: PathBuf,
        /// What kind of problem: a mismatch, or the damage found.
        kind: ErrorKind,
        /// What did not match, and where.
        detail: String,
    },
    /// `verify` found nothing to verify: the file carries no checksum or hash.
    #[error("{path}: nothing was verified: {reason}")]
    NothingVerified {
        /// The file.
        path: PathBuf,
        /// Why (e.g. "the format stores no checksums").
        reason: String,
    },
    /// A tensor name a file does not hold.
    #[error("{file}: no tensor {name:?} (it holds {names})")]
    NoSuchTensor {
        /// The file.
        file: String,
        /// The name asked for.
        name: String,
        /// Some of the names it does hold.
        names: String,
    },
    /// A zero-copy view asked of a tensor whose stored bytes are not its elements.
    #[error(
        "tensor {tensor:?} has no zero-copy view: it is stored {why}; decode it with to_tensor() or read_into()"
    )]
    NotAView {
        /// The tensor.
        tensor: String,
        /// How it is stored.
        why: String,
    },
    /// A remote object could not be read as asked (not found, refused, changed, timed out,
    /// or answered with other bytes than were asked for).
    #[error("{url}: {what}")]
    Remote {
        /// The object's URL.
        url: String,
        /// What went wrong, and with which bytes.
        what: String,
    },
    /// A check of written data against what was read back failed.
    #[error("round trip through {format} changed tensor {tensor:?}")]
    RoundTripMismatch {
        /// The format.
        format: &'static str,
        /// The tensor that differs.
        tensor: String,
    },
}

impl Error {
    /// The error `source` of the format `format` (its id) with the file it concerns.
    pub fn format<E>(path: &Path, format: &'static str, source: E) -> Self
    where
        E: Kinded + std::error::Error + Send + Sync + 'static,
    {
        Error::Format {
            path: path.to_path_buf(),
            format,
            at: None,
            kind: source.kind(),
            source: Box::new(source),
        }
    }

    /// [`Error::format`] at a place in the file (`message 2 (at byte 4096)`).
    pub fn format_at<E>(path: &Path, format: &'static str, at: String, source: E) -> Self
    where
        E: Kinded + std::error::Error + Send + Sync + 'static,
    {
        Error::Format {
            path: path.to_path_buf(),
            format,
            at: Some(at),
            kind: source.kind(),
            source: Box::new(source),
        }
    }
}

/// A `--pipeline` that cannot be used: a target that cannot be written as asked.
#[cfg(feature = "frame")]
impl From<tensor_frame::pipeline_spec::Error> for Error {
    fn from(e: tensor_frame::pipeline_spec::Error) -> Self {
        Error::UnknownTarget {
            what: e.to_string(),
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Dtype(e) => e.kind(),
            Error::UnknownFormat { too_short, .. } => {
                if *too_short {
                    ErrorKind::Truncated
                } else {
                    ErrorKind::Unsupported
                }
            }
            Error::Format { kind, .. } | Error::VerifyFailed { kind, .. } => *kind,
            #[cfg(feature = "stdlib-meta")]
            Error::StdlibMeta { source, .. } => source.kind(),
            Error::Spec { .. }
            | Error::Edit { .. }
            | Error::UnknownTarget { .. }
            | Error::NoSuchTensor { .. } => ErrorKind::InvalidArgument,
            Error::CannotRepresent { .. } | Error::RepeatedName { .. } | Error::NotAView { .. } => {
                ErrorKind::Unsupported
            }
            Error::RoundTripMismatch { .. } => ErrorKind::ChecksumMismatch,
            Error::NothingVerified { .. } => ErrorKind::MissingHash,
            Error::Remote { .. } => ErrorKind::Io,
        }
    }
}

/// `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
