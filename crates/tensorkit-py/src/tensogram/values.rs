//! Tensogram metadata and descriptors as Python values, and back.

use crate::cbor;
use crate::errors::invalid;
use crate::results::TgmMetadata;
use pyo3::prelude::*;
use pyo3::types::PyList;
use tensor_core::cbor::{Value, to_canonical};
use tensorkit::frame::GlobalMetadata;
use tensorkit::frame::descriptor::DataObjectDescriptor;

pub(super) fn meta_to_py(
    py: Python<'_>,
    version: u16,
    m: &GlobalMetadata,
) -> PyResult<Py<TgmMetadata>> {
    let base = PyList::empty(py);
    for entry in &m.base {
        base.append(cbor::map_to_py(py, entry)?)?;
    }
    Py::new(
        py,
        TgmMetadata {
            version,
            base: base.unbind(),
            extra: cbor::map_to_py(py, &m.extra)?.unbind(),
            reserved: cbor::map_to_py(py, &m.reserved)?.unbind(),
        },
    )
}

pub(super) fn descriptor_to_py<'py>(
    py: Python<'py>,
    d: &DataObjectDescriptor,
) -> PyResult<Bound<'py, PyAny>> {
    cbor::to_py(py, &tensor_core::ciborium::Value::from(&d.to_value()))
}

/// A Python value as the canonical CBOR of it.
pub(super) fn canonical(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    Ok(to_canonical(&Value::from(&cbor::from_py(obj, what)?)))
}

/// The global metadata a dict describes (`base`, `_extra_`, any other key as extra).
pub(super) fn global_metadata(meta: &Bound<'_, PyAny>) -> PyResult<GlobalMetadata> {
    if meta.is_none() {
        return Ok(GlobalMetadata::default());
    }
    let bytes = canonical(meta, "the metadata")?;
    GlobalMetadata::decode(&bytes)
        .map(|(m, _)| m)
        .map_err(|e| invalid(e.to_string()))
}

/// The descriptor a dict describes, with tensogram's defaults for what it leaves out
/// (`DataObjectDescriptor::with_defaults`: type, ndim, strides, encoding, filter,
/// compression).
pub(super) fn descriptor(d: &Bound<'_, PyAny>, i: usize) -> PyResult<DataObjectDescriptor> {
    let what = format!("descriptor {i}");
    DataObjectDescriptor::with_defaults(Value::from(&cbor::from_py(d, &what)?))
        .map_err(|e| invalid(format!("{what}: {e}")))
}
