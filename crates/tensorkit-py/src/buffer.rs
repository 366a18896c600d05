//! Bytes handed to Python through the buffer protocol without copying: a tensor's bytes in
//! an open file's memory map (read-only; the map lives as long as any buffer of it), or
//! decoded bytes the buffer owns (writable). `numpy.frombuffer` turns either into an array
//! whose `base` keeps the buffer, and so the file, alive.
//!
//! One of the crate's two `unsafe` modules (with `dlpack`): the buffer protocol is a C interface.
#![allow(unsafe_code)]

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

/// What keeps a buffer's bytes alive (held, never read).
#[allow(dead_code, reason = "the fields are held only to keep the bytes alive")]
enum Owner {
    /// The open file that holds them (in its memory map, or decoded on open).
    File(Arc<tensorkit::File>),
    /// Decoded bytes the buffer owns (huge pages when large).
    Owned(tensor_core::buffer::LargeBuffer),
    /// A private copy-on-write mapping of a file: writable, nothing written reaches it.
    Private(tensor_core::PrivateMap),
}

/// Bytes Python reads (and, when owned, writes) through the buffer protocol. Rust never
/// reads or writes them after construction: the pointer is only handed to Python.
#[pyclass(module = "tensorkit._tensorkit", frozen)]
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    owner: Owner,
}

// SAFETY: the pointer addresses either memory of an immutable memory map kept alive by the
// `Arc<File>` (which is `Send + Sync`), or an allocation or private mapping this buffer
// alone owns; Rust never
// touches the bytes after construction, so sharing the handle between threads adds no
// access of its own.
unsafe impl Send for Buffer {}
// SAFETY: as for `Send`: `&Buffer` gives no access to the bytes from Rust.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A read-only buffer over `bytes`, which must be memory `file` holds (its memory map,
    /// or a tensor it decoded when it was opened).
    pub(crate) fn in_file(file: Arc<tensorkit::File>, bytes: &[u8]) -> Buffer {
        Buffer {
            ptr: NonNull::from(bytes).cast(),
            len: bytes.len(),
            owner: Owner::File(file),
        }
    }

    /// A writable buffer owning `bytes`.
    pub(crate) fn owned(mut bytes: tensor_core::buffer::LargeBuffer) -> Buffer {
        let slice: &mut [u8] = &mut bytes;
        Buffer {
            ptr: NonNull::from(&mut *slice).cast(),
            len: slice.len(),
            // Moving the buffer moves its handle, not the heap or mapped bytes the pointer
            // addresses.
            owner: Owner::Owned(bytes),
        }
    }

    /// A writable buffer over a whole private mapping of a file.
    pub(crate) fn private(mut map: tensor_core::PrivateMap) -> Buffer {
        let slice = map.bytes_mut();
        Buffer {
            ptr: NonNull::from(&mut *slice).cast(),
            len: slice.len(),
            // Moving the map moves its handle, not the mapped pages.
            owner: Owner::Private(map),
        }
    }

    fn readonly(&self) -> bool {
        matches!(self.owner, Owner::File(_))
    }
}

#[pymethods]
impl Buffer {
    fn __len__(&self) -> usize {
        self.len
    }

    /// Fills `view` for the buffer protocol: one dimension of unsigned bytes.
    ///
    /// # Safety
    /// Called by Python with a valid `Py_buffer` to fill (or null).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no Py_buffer to fill"));
        }
        let this = slf.get();
        let readonly = this.readonly();
        if readonly && (flags & ffi::PyBUF_WRITABLE) == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err(
                "a tensor mapped from a file is read-only",
            ));
        }
        // SAFETY: `view` is non-null and Python's to fill. `obj` takes a new reference to
        // this buffer, released by Python when the view is released, so the bytes outlive
        // every consumer. `shape` and `strides` point into the view itself, as the protocol
        // allows; `format` is a static C string.
        unsafe {
            (*view).obj = slf.clone().into_any().into_ptr();
            (*view).buf = this.ptr.as_ptr().cast::<c_void>();
            (*view).len = this.len as ffi::Py_ssize_t;
            (*view).readonly = c_int::from(readonly);
            (*view).itemsize = 1;
            (*view).format = if (flags & ffi::PyBUF_FORMAT) == ffi::PyBUF_FORMAT {
                c"B".as_ptr().cast_mut()
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if (flags & ffi::PyBUF_ND) == ffi::PyBUF_ND {
                &raw mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if (flags & ffi::PyBUF_STRIDES) == ffi::PyBUF_STRIDES {
                &raw mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
        }
        Ok(())
    }

    /// Nothing to release: the view's reference to this buffer keeps the bytes alive.
    ///
    /// # Safety
    /// Called by Python for a view this buffer filled.
    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

/// The bytes of a Python object that exports a C-contiguous byte buffer (a `bytes`, a
/// `memoryview(array).cast("B")`...), borrowed for as long as this value lives.
pub(crate) struct Borrowed {
    buf: pyo3::buffer::PyBuffer<u8>,
}

impl Borrowed {
    /// Borrows `obj`'s buffer; `writable` refuses a read-only one.
    pub(crate) fn get(obj: &Bound<'_, PyAny>, writable: bool, what: &str) -> PyResult<Self> {
        let buf = pyo3::buffer::PyBuffer::<u8>::get(obj)?;
        if !buf.is_c_contiguous() {
            return Err(crate::errors::invalid(format!(
                "{what} must be C-contiguous"
            )));
        }
        if writable && buf.readonly() {
            return Err(crate::errors::invalid(format!("{what} is read-only")));
        }
        Ok(Borrowed { buf })
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        let len = self.buf.len_bytes();
        if len == 0 {
            return &[];
        }
        // SAFETY: the exported view stays valid while `self.buf` lives, and it is
        // C-contiguous (checked in `get`): `len_bytes` bytes from `buf_ptr`. As with numpy's
        // own functions that release the GIL, a Python thread writing to the same object
        // during the call races with it; that is the caller's to avoid.
        unsafe { std::slice::from_raw_parts(self.buf.buf_ptr().cast::<u8>(), len) }
    }

    /// The bytes, to write (the view is writable: checked in `get`).
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.buf.len_bytes();
        if len == 0 || self.buf.readonly() {
            return &mut [];
        }
        // SAFETY: as in `bytes`, and the view is writable; `&mut self` makes this the only
        // slice made from it.
        unsafe { std::slice::from_raw_parts_mut(self.buf.buf_ptr().cast::<u8>(), len) }
    }
}
