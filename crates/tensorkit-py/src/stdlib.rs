//! stdlib-js ndarray meta data for Python: the binary record `@stdlib/ndarray` writes
//! beside a data buffer, written from and read into its JSON fields, and checked against a
//! data buffer before numpy is handed a strided view of it. `tensorkit/stdlib_meta.py`
//! builds the API.

use crate::buffer::Borrowed;
use crate::errors::{invalid, to_py};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tensorkit::stdlib_meta::{MetaDataRef, StridedArray, json};

/// The record a JSON specification describes (the keys of `tensor_stdlib_meta::json`).
#[pyfunction]
pub(crate) fn stdlib_serialize<'py>(
    py: Python<'py>,
    spec_json: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let spec: serde_json::Value =
        serde_json::from_str(spec_json).map_err(|e| invalid(format!("meta data: {e}")))?;
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

/// Checks that every element the record `meta` describes lies inside `data`, and that
/// numpy can view it; the tensorkit dtype name of the elements and the record's fields as a
/// dict (those `stdlib_deserialize` gives).
#[pyfunction]
pub(crate) fn stdlib_check<'py>(
    meta: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    let py = meta.py();
    let meta = Borrowed::get(meta, false, "the meta data")?;
    let data = Borrowed::get(data, false, "the data buffer")?;
    let meta = MetaDataRef::open(meta.bytes()).map_err(to_py)?.to_owned();
    let array = StridedArray::new(&meta, data.bytes()).map_err(to_py)?;
    Ok((
        array.view().dtype().name(),
        crate::cbor::json_to_py(py, &json::to_json(&meta))?,
    ))
}

/// Registers the functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(stdlib_serialize, m)?)?;
    m.add_function(wrap_pyfunction!(stdlib_deserialize, m)?)?;
    m.add_function(wrap_pyfunction!(stdlib_check, m)?)?;
    Ok(())
}
