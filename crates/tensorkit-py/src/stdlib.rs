//! stdlib-js ndarray meta data for Python: the binary record `@stdlib/ndarray` writes
//! beside a data buffer, written from and read into its JSON fields, and checked against a
//! data buffer before numpy is handed a strided view of it. `tensorkit/stdlib_meta.py`
//! builds the API.

use crate::buffer::Borrowed;
use crate::errors::to_py;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tensorkit::stdlib_meta::{MetaDataRef, StridedArray, json};

/// The record a dict of fields describes (the keys of `tensor_stdlib_meta::json`).
#[pyfunction]
pub(crate) fn stdlib_serialize<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let spec = crate::cbor::to_json(spec, "meta data")?;
    let meta = json::from_json(&spec).map_err(to_py)?;
    let bytes = meta.serialize().map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// A record's fields as a dict; the record must fill `buf` exactly.
#[pyfunction]
pub(crate) fn stdlib_deserialize<'py>(buf: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = buf.py();
    let buf = Borrowed::get(buf, false, "the meta data")?;
    let meta = MetaDataRef::open(buf.bytes()).map_err(to_py)?.to_owned();
    crate::cbor::json_to_py(py, &json::to_json(&meta))
}

/// A record checked against its data buffer (`stdlib_check`): `dtype`, the tensorkit name
/// of the elements, and `fields`, the record's fields as a dict (those `stdlib_deserialize`
/// gives).
#[pyclass(
    module = "tensorkit._tensorkit",
    name = "StdlibChecked",
    frozen,
    get_all
)]
pub(crate) struct Checked {
    dtype: &'static str,
    fields: Py<PyAny>,
}

/// Checks that every element the record `meta` describes lies inside `data`, and that
/// numpy can view it.
#[pyfunction]
pub(crate) fn stdlib_check<'py>(
    meta: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Checked> {
    let py = meta.py();
    let meta = Borrowed::get(meta, false, "the meta data")?;
    let data = Borrowed::get(data, false, "the data buffer")?;
    let meta = MetaDataRef::open(meta.bytes()).map_err(to_py)?.to_owned();
    let array = StridedArray::new(&meta, data.bytes()).map_err(to_py)?;
    Ok(Checked {
        dtype: array.view().dtype().name(),
        fields: crate::cbor::json_to_py(py, &json::to_json(&meta))?.unbind(),
    })
}

/// Registers the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Checked>()?;
    m.add_function(wrap_pyfunction!(stdlib_serialize, m)?)?;
    m.add_function(wrap_pyfunction!(stdlib_deserialize, m)?)?;
    m.add_function(wrap_pyfunction!(stdlib_check, m)?)?;
    Ok(())
}
