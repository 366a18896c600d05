//! What the checks report: [`Validation`] (every problem a file has) and [`Verification`]
//! (every checksum and hash it carries), in the words every format shares.

use crate::error::Error;
use crate::format::Format;
use serde_json::{Value, json};
use tensor_core::{ErrorKind, Kinded};
pub use tensor_dtype::{Checks, Severity};

/// Where in a file a problem is; every part that is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The message's index in the file (Tensogram).
    pub message: Option<usize>,
    /// The object's index in its message (Tensogram).
    pub object: Option<usize>,
    /// The byte offset in the file.
    pub offset: Option<u64>,
}

impl std::fmt::Display for Location {
    /// `message 0 object 1 byte 512`, with the parts that are known; empty when none is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut sep = "";
        for (k, v) in [
            ("message", self.message.map(|m| m as u64)),
            ("object", self.object.map(|o| o as u64)),
            ("byte", self.offset),
        ] {
            if let Some(v) = v {
                write!(f, "{sep}{k} {v}")?;
                sep = " ";
            }
        }
        Ok(())
    }
}

/// One problem validation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// An error (the file is broken) or a warning (legal but questionable).
    pub severity: Severity,
    /// What kind of error it is, as every tensorkit error says it.
    pub kind: ErrorKind,
    /// A stable code: the error kind, or Tensogram's own (`hash_mismatch`,
    /// `non_zero_padding`, `wire_version_2`…).
    pub code: String,
    /// Where it is.
    pub location: Location,
    /// What is wrong, in words.
    pub message: String,
}

impl Problem {
    /// An error, as `e` says it, at no particular place.
    pub(crate) fn error(e: &Error) -> Self {
        Problem {
            severity: Severity::Error,
            kind: e.kind(),
            code: e.kind().as_str().to_owned(),
            location: Location::default(),
            message: e.to_string(),
        }
    }

    /// A warning with `code`, at no particular place.
    pub(crate) fn warning(code: &str, message: String) -> Self {
        Problem {
            severity: Severity::Warning,
            kind: ErrorKind::Malformed,
            code: code.to_owned(),
            location: Location::default(),
            message,
        }
    }

    /// Whether it is an error.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `error` or `warning`.
    #[must_use]
    pub fn severity_name(&self) -> &'static str {
        if self.is_error() { "error" } else { "warning" }
    }
}

impl std::fmt::Display for Problem {
    /// `code at WHERE: message`, or `code: message` where nothing says where.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.location.to_string();
        if at.is_empty() {
            write!(f, "{}: {}", self.code, self.message)
        } else {
            write!(f, "{} at {at}: {}", self.code, self.message)
        }
    }
}

/// What validation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validation {
    /// The format, when it was recognised.
    pub format: Option<Format>,
    /// Tensors (objects) checked.
    pub tensors: usize,
    /// Hashes or checksums verified (Tensogram).
    pub hashes_verified: usize,
    /// Every problem found, in file order.
    pub problems: Vec<Problem>,
}

impl Validation {
    /// Whether any problem is an error.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }

    /// The report as data: what `tensorkit validate --json` prints and Python's
    /// `tensorkit.validate` returns, one shape for both.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "format": self.format.map(Format::id),
            "valid": !self.failed(),
            "tensors": self.tensors,
            "hashes_verified": self.hashes_verified,
            "problems": self.problems.iter().map(|p| json!({
                "severity": p.severity_name(),
                "kind": p.kind.as_str(),
                "code": p.code,
                "where": p.location.to_string(),
                "detail": p.message,
            })).collect::<Vec<_>>(),
        })
    }
}

/// What `verify` found.
#[derive(Debug)]
pub struct Verification {
    /// The file's format.
    pub format: Format,
    /// What the format carries to check.
    pub checks: Checks,
    /// How many of them were verified (0 for [`Checks::None`]).
    pub verified: usize,
    /// Tensors decoded whole; `None` when a mismatch stopped the check before decoding.
    pub tensors_read: Option<usize>,
    /// What the check found on its way: every problem Tensogram's checksum-level validation
    /// reports (warnings included), the checksum mismatch of a zTensor file.
    pub problems: Vec<Problem>,
    /// Why the check did not pass: a mismatch ([`Error::VerifyFailed`]) or nothing to
    /// verify ([`Error::NothingVerified`]); `None` when every checksum matched.
    pub problem: Option<Error>,
}
