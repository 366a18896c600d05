//! tensorkit's errors as Python exceptions: one class per error kind, all subclasses of
//! `tensorkit.TensorkitError` (defined in `tensorkit/_errors.py`), each carrying the kind's
//! name in `.kind` — the name the command line prints in `error[kind]` — and the same
//! message.

use pyo3::prelude::*;
use tensorkit::{ErrorKind, Kinded};

/// The exception class for `kind`, by its name in `tensorkit._errors`.
fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Io => "IoError",
        ErrorKind::Truncated => "TruncatedError",
        ErrorKind::Malformed => "MalformedError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::LimitExceeded => "LimitExceededError",
        ErrorKind::ChecksumMismatch => "ChecksumMismatchError",
        ErrorKind::InvalidArgument => "InvalidArgumentError",
        ErrorKind::MissingHash => "MissingHashError",
        _ => "TensorkitError",
    }
}

/// The Python exception for an error of kind `kind` saying `message`.
pub(crate) fn exception(py: Python<'_>, kind: ErrorKind, message: &str) -> PyErr {
    let class = py
        .import("tensorkit._errors")
        .and_then(|m| m.getattr(class_name(kind)));
    match class.and_then(|c| c.call1((message,))) {
        Ok(instance) => PyErr::from_value(instance),
        // Only when the Python half of the package is missing (the crate's own unit tests
        // run without it): the kind and the message still reach the caller.
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}

/// A tensorkit error as its Python exception.
pub(crate) fn to_py<E: Kinded + std::fmt::Display>(err: E) -> PyErr {
    Python::attach(|py| exception(py, err.kind(), &err.to_string()))
}

/// An invalid argument from the Python side (a bad dtype name, a wrong buffer).
pub(crate) fn invalid(message: impl AsRef<str>) -> PyErr {
    Python::attach(|py| exception(py, ErrorKind::InvalidArgument, message.as_ref()))
}
