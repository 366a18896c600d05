//! What native calls hand the Python shell: classes with named, read-only fields, never
//! positional tuples. The shell (`python/tensorkit/`) turns them into numpy arrays and the
//! public API's own types.

use crate::buffer::Buffer;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A tensor's values as bytes numpy can view: `data` (a buffer: a view of the file, or
/// memory of its own), `dtype` (tensorkit's name), `shape`, and `byte_order` (`little` or
/// `big`: the bytes' order). Bitmasks hold one byte (0 or 1) per element.
#[pyclass(module = "tensorkit._tensorkit", name = "Array", frozen, get_all)]
pub(crate) struct Array {
    data: Py<Buffer>,
    dtype: &'static str,
    shape: Vec<u64>,
    byte_order: &'static str,
}

impl Array {
    pub(crate) fn new(
        py: Python<'_>,
        data: Buffer,
        dtype: &'static str,
        shape: Vec<u64>,
        byte_order: tensor_core::ByteOrder,
    ) -> PyResult<Self> {
        Ok(Array {
            data: Py::new(py, data)?,
            dtype,
            shape,
            byte_order: byte_order.as_str(),
        })
    }
}

/// A GGUF tensor's quantized blocks as stored: `data` (a read-only view of the file),
/// `ggml_type` (`Q4_K`...), `shape` (of the bytes: rows, then bytes per row).
#[pyclass(module = "tensorkit._tensorkit", name = "Blocks", frozen, get_all)]
pub(crate) struct Blocks {
    pub(crate) data: Py<Buffer>,
    pub(crate) ggml_type: &'static str,
    pub(crate) shape: Vec<u64>,
}

/// Where a tensor is stored (`File.layout`): `name`, `dtype`, `shape`, `nbytes` (its
/// decoded size), and `file` and `offset` — the mapped file's number and the offset of its
/// raw bytes there — when they can be read from there as the machine holds them, else
/// `None`.
#[pyclass(module = "tensorkit._tensorkit", name = "Placement", frozen, get_all)]
pub(crate) struct Placement {
    pub(crate) name: String,
    pub(crate) dtype: &'static str,
    pub(crate) shape: Vec<u64>,
    pub(crate) nbytes: u64,
    pub(crate) file: Option<usize>,
    pub(crate) offset: Option<u64>,
}

/// A Tensogram message's metadata: `version` (of the wire format), `base` (one dict per
/// object), `extra` (`_extra_`) and `reserved` (`_reserved_`).
#[pyclass(module = "tensorkit._tensorkit", name = "TgmMetadata", frozen, get_all)]
pub(crate) struct TgmMetadata {
    pub(crate) version: u16,
    pub(crate) base: Py<PyList>,
    pub(crate) extra: Py<PyDict>,
    pub(crate) reserved: Py<PyDict>,
}

/// One decoded data object: its `descriptor` (a dict, as tensogram describes objects) and
/// its values (`array`).
#[pyclass(module = "tensorkit._tensorkit", name = "TgmObject", frozen, get_all)]
pub(crate) struct TgmObject {
    pub(crate) descriptor: Py<PyAny>,
    pub(crate) array: Py<Array>,
}

/// A decoded message: `metadata` and `objects` (a list of `TgmObject`).
#[pyclass(module = "tensorkit._tensorkit", name = "TgmMessage", frozen, get_all)]
pub(crate) struct TgmMessage {
    pub(crate) metadata: Py<TgmMetadata>,
    pub(crate) objects: Py<PyList>,
}

/// A message described without decoding: `metadata` and `descriptors` (a list of dicts).
#[pyclass(
    module = "tensorkit._tensorkit",
    name = "TgmDescribed",
    frozen,
    get_all
)]
pub(crate) struct TgmDescribed {
    pub(crate) metadata: Py<TgmMetadata>,
    pub(crate) descriptors: Py<PyList>,
}

/// Registers the classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Array>()?;
    m.add_class::<Blocks>()?;
    m.add_class::<Placement>()?;
    m.add_class::<TgmMetadata>()?;
    m.add_class::<TgmObject>()?;
    m.add_class::<TgmMessage>()?;
    m.add_class::<TgmDescribed>()?;
    Ok(())
}
