//! `doctor()` as tensogram's Python API shapes it: `build`, `features` (its compression
//! codecs, threads, remote reads and converters, each `on` with its backend and linkage or
//! `off`) and `self_test` — tensorkit's own report ([`tensorkit::doctor`]) underneath.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// One `features` row: `on` with what implements it and how, or `off` with nothing more.
fn feature<'py>(
    py: Python<'py>,
    name: &str,
    kind: &str,
    on: Option<(&str, bool)>,
) -> PyResult<Bound<'py, PyDict>> {
    let row = PyDict::new(py);
    row.set_item("name", name)?;
    row.set_item("kind", kind)?;
    row.set_item("state", if on.is_some() { "on" } else { "off" })?;
    if let Some((backend, ffi)) = on {
        row.set_item("backend", backend)?;
        row.set_item("linkage", if ffi { "ffi" } else { "pure-rust" })?;
    }
    Ok(row)
}

/// What this build is and can do, with its self-test run (without the GIL).
#[pyfunction]
pub(crate) fn tgm_doctor(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = py.detach(tensorkit::doctor::doctor);
    let build = PyDict::new(py);
    build.set_item("version", d.version)?;
    build.set_item("wire_version", d.wire_version)?;
    build.set_item("target", &d.target)?;
    build.set_item("profile", d.profile)?;
    let features = PyList::empty(py);
    for c in d.codecs.iter().filter(|c| c.kind == "compression") {
        features.append(feature(
            py,
            c.name,
            "compression",
            c.built.then_some((c.backend, c.ffi)),
        )?)?;
    }
    features.append(feature(
        py,
        "threads",
        "threading",
        d.parallel.then_some(("rayon", false)),
    )?)?;
    features.append(feature(
        py,
        "remote",
        "io",
        d.remote.then_some(("object_store", false)),
    )?)?;
    let grib = d.formats.iter().any(|f| f.id() == "grib");
    features.append(feature(
        py,
        "grib",
        "converter",
        grib.then_some(("tensor-grib", false)),
    )?)?;
    let self_test = PyList::empty(py);
    for t in &d.self_test {
        let row = PyDict::new(py);
        row.set_item("label", &t.label)?;
        row.set_item("outcome", t.outcome)?;
        if let Some(detail) = &t.detail {
            row.set_item("detail", detail)?;
        }
        self_test.append(row)?;
    }
    let out = PyDict::new(py);
    out.set_item("build", build)?;
    out.set_item("features", features)?;
    out.set_item("self_test", self_test)?;
    Ok(out)
}
