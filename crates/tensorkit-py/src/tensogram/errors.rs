//! Errors as tensogram's Python API raises them: the message starts with tensogram's class
//! name (`FramingError: …`, `ObjectError: …`, `HashMismatch: …`), and the integrity errors
//! carry `object_index` (and, for a mismatch, `expected` and `actual`, as hex) — the same
//! exception classes tensorkit raises everywhere, so `except tensorkit.TensorkitError`
//! still catches them.

use crate::errors::exception;
use pyo3::prelude::*;
use std::any::Any;
use tensorkit::Kinded;
use tensorkit::frame;

/// `err` as tensogram raises it, when it is tensor-frame's (or a tensor-core error met on
/// the way); any other error as tensorkit raises it.
pub(super) fn tgm_err<E: Kinded + std::fmt::Display + 'static>(err: E) -> PyErr {
    let any: Box<dyn Any> = Box::new(err);
    let e = match any.downcast::<frame::Error>() {
        Ok(e) => *e,
        Err(any) => match any.downcast::<tensorkit::bytes::Error>() {
            Ok(core) => frame::Error::Core(*core),
            Err(any) => match any.downcast::<E>() {
                Ok(other) => return crate::errors::to_py(*other),
                Err(_) => unreachable!("the box holds an E"),
            },
        },
    };
    let e = &e;
    Python::attach(|py| {
        let message = format!("{}: {e}", e.class().name());
        let raised = exception(py, e.kind(), &message);
        let value = raised.value(py);
        let attached = match e {
            frame::Error::MissingHash { object } => value.setattr("object_index", *object),
            frame::Error::HashMismatch {
                object,
                expected,
                actual,
                ..
            } => value
                .setattr("object_index", *object)
                .and_then(|()| value.setattr("expected", format!("{expected:016x}")))
                .and_then(|()| value.setattr("actual", format!("{actual:016x}"))),
            _ => Ok(()),
        };
        // The message says it all when an attribute cannot be set.
        drop(attached);
        raised
    })
}
