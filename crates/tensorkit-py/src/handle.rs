//! An open file that Python can close while other references to it remain: the Python
//! classes of open files (`File`, `TgmFile`) hold one, and arrays made from the file keep
//! their own `Arc` to it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{Arc, RwLock};

/// A shared `T` until [`close`](Handle::close).
pub(crate) struct Handle<T> {
    inner: RwLock<Option<Arc<T>>>,
}

impl<T> Handle<T> {
    pub(crate) fn new(value: T) -> Self {
        Handle {
            inner: RwLock::new(Some(Arc::new(value))),
        }
    }

    /// The open value, or Python's error for an operation on a closed file.
    pub(crate) fn get(&self) -> PyResult<Arc<T>> {
        self.inner
            .read()
            .map_err(|_| PyValueError::new_err("the file's lock is poisoned"))?
            .clone()
            .ok_or_else(|| PyValueError::new_err("I/O operation on a closed file"))
    }

    /// Lets go of the value; it is dropped once no other reference remains.
    pub(crate) fn close(&self) -> PyResult<()> {
        self.inner
            .write()
            .map_err(|_| PyValueError::new_err("the file's lock is poisoned"))?
            .take();
        Ok(())
    }

    /// Whether `close` was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.read().map_or(true, |f| f.is_none())
    }
}
