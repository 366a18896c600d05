//! The native half of tensorkit's Python package (`tensorkit._tensorkit`).
//!
//! It stands on the library's front door alone ([`tensorkit::open`], [`tensorkit::save`]):
//! files open, tensors come out as buffers numpy wraps without copying, arrays go in as
//! buffers, and errors become the exceptions of `tensorkit._errors`. The Python modules
//! around it (`python/tensorkit/`) build the user-facing API: see `docs/python.md`.
//!
//! The GIL is released around opening, decoding, writing and checking.
//!
//! Build and try it with `pip install ./crates/tensorkit-py`:
//!
//! ```text
//! >>> import tensorkit
//! >>> f = tensorkit.open("model.safetensors")
//! >>> f["encoder.w"].shape
//! (16, 16)
//! ```
#![deny(unsafe_code)]
// Functions Python calls take their arguments as pyo3 extracts them (owned, all keywords
// in one signature), and protocol methods have the receiver Python's slots expect.
#![allow(
    clippy::needless_pass_by_value,
    clippy::too_many_arguments,
    clippy::unused_self,
    reason = "signatures are Python's, through pyo3"
)]

mod buffer;
mod cbor;
mod cube;
mod dlpack;
mod dtypes;
mod errors;
mod file;
mod handle;
mod results;
mod stdlib;
mod tensogram;
mod threads;
mod write;

use file::File;
use pyo3::prelude::*;

/// The extension's own allocations through mimalloc (decision 0020): listing a file builds
/// many small attribute values, which glibc's allocator, fragmented by the interpreter
/// around it, serves several times slower.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::PathBuf;

/// Opens one file (any format, or a `*.index.json` shard set) or several as one.
#[pyfunction]
#[pyo3(signature = (paths, *, verify=true, strict=false, max_memory=None, max_ratio=None, storage_options=None, grib_index=true, timeout=None))]
#[allow(clippy::too_many_arguments)] // Python's keywords, one each.
fn open(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    verify: bool,
    strict: bool,
    max_memory: Option<u64>,
    max_ratio: Option<u64>,
    storage_options: Option<Vec<(String, String)>>,
    grib_index: bool,
    timeout: Option<f64>,
) -> PyResult<File> {
    let deadline = timeout
        .map(|s| {
            std::time::Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    errors::invalid(format!("timeout={s}: not a positive number of seconds"))
                })
        })
        .transpose()?;
    let mut limits = tensorkit::Limits::default();
    if let Some(bytes) = max_memory {
        limits = limits.with_max_total_bytes(bytes);
    }
    if let Some(ratio) = max_ratio {
        limits = limits
            .with_max_decompression_ratio(ratio)
            .with_expansion_allowance(0);
    }
    let options = tensorkit::ReadOptions {
        limits,
        strict,
        verify: tensorkit::Verify::from_bool(verify),
    };
    let file = py
        .detach(|| match paths.as_slice() {
            [one] => match one.to_str().filter(|s| tensorkit::is_url(s)) {
                Some(url) => tensorkit::open_url_with(
                    url,
                    &options,
                    &tensorkit::remote::RemoteOptions {
                        config: storage_options.unwrap_or_default(),
                        grib_index,
                        deadline: deadline
                            .unwrap_or(tensorkit::remote::RemoteOptions::default().deadline),
                        ..tensorkit::remote::RemoteOptions::default()
                    },
                ),
                None => tensorkit::open_with(one, &options),
            },
            many => tensorkit::open_many(many, &options),
        })
        .map_err(errors::to_py)?;
    Ok(File::new(file))
}

/// Whether `s` is a URL tensorkit reads remotely (`file://` included).
#[pyfunction]
fn is_url(s: &str) -> bool {
    tensorkit::is_url(s)
}

/// Opens a whole file held in memory (copied).
#[pyfunction]
fn open_bytes(py: Python<'_>, data: &[u8]) -> PyResult<File> {
    let file = py
        .detach(|| tensorkit::open_bytes(data))
        .map_err(errors::to_py)?;
    Ok(File::new(file))
}

/// Every dtype safetensors names, as `(tensorkit's name, safetensors' name)` pairs: the one
/// table `safe_open(...).get_slice(...).get_dtype()` answers from.
#[pyfunction]
fn safetensors_dtypes() -> Vec<(&'static str, String)> {
    tensorkit::Dtype::ALL
        .into_iter()
        .filter_map(|d| Some((d.name(), tensorkit::safetensors::dtype::reference_name(d)?)))
        .collect()
}

/// Every format tensorkit reads, as the format registry lists them: a dict per format with
/// `id`, `name`, `extensions` (without the dot, the one writers use first), `writes` and
/// `any_tensor` (whether it holds any tensor with no keys of its own: not GRIB).
#[pyfunction]
fn formats(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    tensorkit::Format::all()
        .into_iter()
        .map(|f| {
            let info = f.info();
            let d = pyo3::types::PyDict::new(py);
            d.set_item("id", info.id)?;
            d.set_item("name", info.name)?;
            d.set_item("extensions", info.extensions.to_vec())?;
            d.set_item("writes", info.writes)?;
            d.set_item("any_tensor", info.any_tensor)?;
            Ok(d)
        })
        .collect()
}

/// A byte count written as people write sizes (`"8GiB"`, `"5GB"`): the syntax the command
/// line takes.
#[pyfunction]
fn parse_size(text: &str) -> PyResult<u64> {
    tensorkit::bytes::size::parse(text).map_err(errors::to_py)
}

/// The module.
#[pymodule(gil_used = false)]
fn _tensorkit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<File>()?;
    m.add_class::<file::TensorInfo>()?;
    m.add_class::<buffer::Buffer>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(open_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add_function(wrap_pyfunction!(write::save, m)?)?;
    m.add_function(wrap_pyfunction!(write::serialize, m)?)?;
    m.add_function(wrap_pyfunction!(write::convert, m)?)?;
    m.add_function(wrap_pyfunction!(write::repack_grib, m)?)?;
    m.add_function(wrap_pyfunction!(write::validate, m)?)?;
    m.add_function(wrap_pyfunction!(write::migrate, m)?)?;
    m.add_function(wrap_pyfunction!(write::edit, m)?)?;
    m.add_function(wrap_pyfunction!(safetensors_dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(dtypes::dtypes, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_capsule, m)?)?;
    m.add_function(wrap_pyfunction!(cube::grib_cubes, m)?)?;
    m.add_function(wrap_pyfunction!(cube::holds_grib_fields, m)?)?;
    m.add_function(wrap_pyfunction!(cube::tgm_frame_cubes, m)?)?;
    tensogram::register(m)?;
    results::register(m)?;
    stdlib::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
