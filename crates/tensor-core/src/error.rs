//! The error taxonomy shared by every tensorkit crate.

use std::fmt;

/// The category of an error, shared by every crate's error enum through [`Kinded`].
///
/// The categories answer "what should the caller do about it": a truncated or malformed file
/// is the file's fault, an unsupported feature is ours, a limit is the caller's policy, and a
/// checksum mismatch means the bytes changed after they were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system refused a read or write.
    Io,
    /// The input ends before a structure it declares.
    Truncated,
    /// The input is structurally invalid (bad magic, bad field, inconsistent sizes).
    Malformed,
    /// The input is valid but uses a feature, version, dtype or codec we do not implement.
    Unsupported,
    /// The input asks for more than the configured [`Limits`](crate::Limits) allow.
    LimitExceeded,
    /// A checksum or hash stored with the data does not match the data.
    ChecksumMismatch,
    /// The caller passed arguments that cannot work together (e.g. a shape and a buffer of
    /// different sizes).
    InvalidArgument,
    /// A check of stored checksums or hashes was asked for, but the data carries none:
    /// nothing was verified.
    MissingHash,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Io,
        ErrorKind::Truncated,
        ErrorKind::Malformed,
        ErrorKind::Unsupported,
        ErrorKind::LimitExceeded,
        ErrorKind::ChecksumMismatch,
        ErrorKind::InvalidArgument,
        ErrorKind::MissingHash,
    ];

    /// The stable lowercase name used in messages and JSON (`"truncated"`, ...).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::ChecksumMismatch => "checksum_mismatch",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::MissingHash => "missing_hash",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error that belongs to one [`ErrorKind`]. Every tensorkit error enum implements it.
pub trait Kinded: std::error::Error {
    /// The category of this error.
    fn kind(&self) -> ErrorKind;
}

/// The leaf errors every decoder needs. Format crates wrap this in their own enum.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation failed.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What was being done, e.g. "reading /data/x.tgm".
        context: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A read of `needed` bytes at `offset` ran past the end of the input.
    #[error(
        "{what} is truncated: {needed} bytes needed at offset {offset}, but the input is {available} bytes long"
    )]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where the read started.
        offset: u64,
        /// How many bytes the read needed.
        needed: u64,
        /// The total length of the input.
        available: u64,
    },
    /// A size computation overflowed 64 bits.
    #[error("{what} overflows 64-bit arithmetic")]
    Overflow {
        /// The quantity being computed, e.g. "element count".
        what: &'static str,
    },
    /// A value went past a configured limit.
    #[error("{what} of {requested} exceeds the limit of {limit}")]
    LimitExceeded {
        /// The limited quantity, e.g. "header bytes".
        what: &'static str,
        /// The value the input asked for.
        requested: u64,
        /// The configured maximum.
        limit: u64,
    },
    /// Structurally invalid input at a known offset (used by shared decoders such as CBOR).
    #[error("malformed {what} at offset {offset}: {reason}")]
    Malformed {
        /// The structure being decoded, e.g. "CBOR".
        what: &'static str,
        /// Where decoding stopped, relative to the decoded buffer.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// The caller passed inconsistent arguments.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The allocator (or the process's address-space limit) refused a buffer.
    #[error(
        "cannot allocate {bytes} bytes for {what}: the system refused the memory (raise the process's memory limit, or read less at once)"
    )]
    OutOfMemory {
        /// What the buffer was for, e.g. "decoded tensor".
        what: &'static str,
        /// The size asked for.
        bytes: u64,
    },
}

impl Error {
    /// An [`Error::Io`] with a description of what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { .. } => ErrorKind::Io,
            Error::Truncated { .. } => ErrorKind::Truncated,
            Error::Overflow { .. } | Error::Malformed { .. } => ErrorKind::Malformed,
            Error::LimitExceeded { .. } | Error::OutOfMemory { .. } => ErrorKind::LimitExceeded,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_unique_and_lowercase() {
        let names: std::collections::BTreeSet<_> =
            ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        for n in names {
            assert_eq!(n, n.to_lowercase());
        }
    }

    #[test]
    fn messages_say_where() {
        let e = Error::Truncated {
            what: "header",
            offset: 8,
            needed: 100,
            available: 20,
        };
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(
            e.to_string(),
            "header is truncated: 100 bytes needed at offset 8, but the input is 20 bytes long"
        );
    }
}
