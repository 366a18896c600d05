//! The error type of tensor-frame.

use tensor_core::{ErrorKind, Kinded};

/// The reference implementation's error classes, which the conformance fixtures name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Magic numbers, version, lengths, `ENDF`, frame types and order, `cbor_offset`.
    Framing,
    /// CBOR structure, `base` count, `ndim`/`strides`, shape overflow, reserved keys.
    Metadata,
    /// Unknown encoding, filter or codec; dtype restrictions; sizes that do not match.
    Encoding,
    /// A codec that fails on its input.
    Compression,
    /// An object index out of range.
    Object,
    /// The operating system refused a read or write.
    Io,
    /// A stored hash does not match the bytes.
    HashMismatch,
    /// Hash verification was asked for, but the frame carries no hash.
    MissingHash,
}

impl Class {
    /// The class name the fixtures use (`"FramingError"`, `"HashMismatch"`, ...).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Class::Framing => "FramingError",
            Class::Metadata => "MetadataError",
            Class::Encoding => "EncodingError",
            Class::Compression => "CompressionError",
            Class::Object => "ObjectError",
            Class::Io => "IoError",
            Class::HashMismatch => "HashMismatch",
            Class::MissingHash => "MissingHash",
        }
    }
}

/// Everything that can go wrong reading or writing Tensogram messages.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A leaf error from tensor-core (I/O, truncation, limits, malformed CBOR).
    #[error(transparent)]
    Core(#[from] tensor_core::Error),
    /// A descriptor that does not decode or describes an impossible tensor.
    #[error("object {object}: {source}")]
    Descriptor {
        /// The object's index in its message.
        object: usize,
        /// What was wrong.
        #[source]
        source: tensor_descriptor::Error,
    },
    /// An encoding stage failed on an object's bytes.
    #[error("object {object}: {source}")]
    Pipeline {
        /// The object's index in its message.
        object: usize,
        /// What the stage reported.
        #[source]
        source: tensor_pipeline::Error,
    },
    /// An error in one message of a file.
    #[error("message {index} (at byte {offset}): {source}")]
    InMessage {
        /// The message's index in the file.
        index: usize,
        /// Where the message starts in the file.
        offset: u64,
        /// What was wrong there.
        #[source]
        source: Box<Error>,
    },
    /// The message's framing is broken.
    #[error("framing error at offset {offset}: {reason}")]
    Framing {
        /// Offset from the start of the message.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// Global metadata, an index or a hash frame is not what the format defines.
    #[error("metadata error: {0}")]
    Metadata(String),
    /// An object's pipeline or data cannot be encoded or decoded as described.
    #[error("encoding error{}: {reason}", object.map(|o| format!(" in object {o}")).unwrap_or_default())]
    Encoding {
        /// The object, when the error belongs to one.
        object: Option<usize>,
        /// What was wrong.
        reason: String,
    },
    /// A codec or stage this build does not implement.
    #[error("object {object}: {what} `{name}` is not supported by this build")]
    Unsupported {
        /// The object.
        object: usize,
        /// `encoding`, `filter` or `compression`.
        what: &'static str,
        /// The name the descriptor gives.
        name: String,
    },
    /// An object index past the end of the message.
    #[error("object {index} is out of range: the message holds {count} objects")]
    ObjectIndex {
        /// The index asked for.
        index: usize,
        /// How many objects there are.
        count: usize,
    },
    /// A frame's stored hash differs from the hash of its bytes.
    #[error(
        "hash mismatch in {frame} frame at offset {offset}{}: stored {expected:016x}, computed {actual:016x}",
        object.map(|o| format!(" (object {o})")).unwrap_or_default()
    )]
    HashMismatch {
        /// The frame type's name.
        frame: &'static str,
        /// The frame's offset from the start of the message.
        offset: u64,
        /// The object, for data frames.
        object: Option<usize>,
        /// The hash stored in the frame.
        expected: u64,
        /// The hash of the bytes.
        actual: u64,
    },
    /// Verification was asked for, but the object's frame carries no hash.
    #[error("object {object} carries no hash to verify (its frame has HASH_PRESENT clear)")]
    MissingHash {
        /// The object.
        object: usize,
    },
    /// The `paranoid` feature's check: what a writer produced does not decode to what it was
    /// given.
    #[error("self-check failed{}: {what}", object.map(|o| format!(" for object {o}")).unwrap_or_default())]
    SelfCheck {
        /// The object, when the failure belongs to one.
        object: Option<usize>,
        /// What differed.
        what: String,
    },
    /// The caller passed arguments that cannot work together.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

impl Error {
    pub(crate) fn framing(offset: u64, reason: impl Into<String>) -> Self {
        Error::Framing {
            offset,
            reason: reason.into(),
        }
    }

    /// The same error with its framing offset moved by `by`: for a frame parsed on its own,
    /// whose offsets count from the frame rather than the message.
    pub(crate) fn shifted(self, by: u64) -> Self {
        match self {
            Error::Framing { offset, reason } => Error::Framing {
                offset: offset.saturating_add(by),
                reason,
            },
            other => other,
        }
    }

    pub(crate) fn encoding(object: Option<usize>, reason: impl Into<String>) -> Self {
        Error::Encoding {
            object,
            reason: reason.into(),
        }
    }

    /// The object (index in its message) the error concerns, when it concerns one.
    #[must_use]
    pub fn object(&self) -> Option<usize> {
        match self {
            Error::Descriptor { object, .. }
            | Error::Pipeline { object, .. }
            | Error::Unsupported { object, .. }
            | Error::MissingHash { object } => Some(*object),
            Error::Encoding { object, .. }
            | Error::HashMismatch { object, .. }
            | Error::SelfCheck { object, .. } => *object,
            _ => None,
        }
    }

    /// The reference's error class for this error.
    #[must_use]
    pub fn class(&self) -> Class {
        match self {
            Error::Core(e) => match e.kind() {
                ErrorKind::Io => Class::Io,
                ErrorKind::Truncated => Class::Framing,
                ErrorKind::InvalidArgument => Class::Encoding,
                _ => Class::Metadata,
            },
            // A descriptor that does not decode (an unknown dtype name included) is a
            // metadata error in the reference: its descriptor never deserialises.
            Error::Descriptor { .. } | Error::Metadata(_) => Class::Metadata,
            Error::Pipeline { source, .. } => match source {
                tensor_pipeline::Error::Corrupt { codec, .. }
                    if ["zstd", "lz4", "szip", "bitmask", "rle", "roaring"].contains(codec) =>
                {
                    Class::Compression
                }
                _ => Class::Encoding,
            },
            Error::InMessage { source, .. } => source.class(),
            Error::Framing { .. } => Class::Framing,
            Error::Encoding { .. }
            | Error::Unsupported { .. }
            | Error::InvalidArgument(_)
            | Error::SelfCheck { .. } => Class::Encoding,
            Error::ObjectIndex { .. } => Class::Object,
            Error::HashMismatch { .. } => Class::HashMismatch,
            Error::MissingHash { .. } => Class::MissingHash,
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Core(e) => e.kind(),
            Error::Descriptor { source, .. } => source.kind(),
            Error::Pipeline { source, .. } => source.kind(),
            Error::InMessage { source, .. } => source.kind(),
            Error::Framing { .. } | Error::Metadata(_) | Error::Encoding { .. } => {
                ErrorKind::Malformed
            }
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::ObjectIndex { .. } | Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::HashMismatch { .. } | Error::SelfCheck { .. } => ErrorKind::ChecksumMismatch,
            Error::MissingHash { .. } => ErrorKind::MissingHash,
        }
    }
}

/// `Result` with tensor-frame's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
