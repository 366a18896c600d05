//! Writing from Python: numpy arrays (handed over as dtype name, shape and a byte buffer)
//! saved to a file or to bytes, files converted, files checked.

use crate::buffer::Borrowed;
use crate::errors::{invalid, to_py};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;
use tensor_dtype::{Dtype, TensorView};
use tensorkit::pipeline_spec::PipelineSpec;
use tensorkit::{ByteOrder, Format, WriteOptions};

/// One tensor from Python: name, dtype name, shape, and an object exporting its bytes
/// (C order, native byte order; for 4- and 6-bit floats and bool-typed bitmasks either one
/// byte per element, packed here, or already packed, as torch holds float4 in pairs: told
/// apart by the length).
pub(crate) type Entry<'py> = (String, String, Vec<u64>, Bound<'py, PyAny>);

/// An entry's bytes: borrowed from Python, or packed here.
enum Bytes {
    Borrowed(Borrowed),
    Packed(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b.bytes(),
            Bytes::Packed(v) => v,
        }
    }
}

/// The entries' bytes, ready to be viewed.
struct Entries {
    items: Vec<(String, Dtype, Vec<u64>, Bytes)>,
}

impl Entries {
    fn new(entries: &[Entry<'_>]) -> PyResult<Entries> {
        let mut items = Vec::with_capacity(entries.len());
        for (name, dtype, shape, data) in entries {
            let dtype: Dtype = dtype
                .parse()
                .map_err(|e: tensor_dtype::Error| invalid(format!("tensor {name:?}: {e}")))?;
            let borrowed = Borrowed::get(data, false, &format!("tensor {name:?}"))?;
            let packed_len = tensor_dtype::shape::byte_len(dtype, shape)
                .map_err(|e| invalid(format!("tensor {name:?}: {e}")))?;
            let already_packed = borrowed.bytes().len() as u64 == packed_len;
            let bytes = if dtype.is_packed() && !already_packed {
                let codes = borrowed.bytes();
                Bytes::Packed(
                    tensor_dtype::minifloat::pack_codes(dtype, codes).ok_or_else(|| {
                        invalid(format!("tensor {name:?}: {dtype} is not a packed dtype"))
                    })?,
                )
            } else {
                Bytes::Borrowed(borrowed)
            };
            items.push((name.clone(), dtype, shape.clone(), bytes));
        }
        Ok(Entries { items })
    }

    fn views(&self) -> PyResult<Vec<(&str, TensorView<'_>)>> {
        self.items
            .iter()
            .map(|(name, dtype, shape, bytes)| {
                TensorView::new(bytes.as_slice(), *dtype, shape, ByteOrder::NATIVE)
                    .map(|v| (name.as_str(), v))
                    .map_err(|e| invalid(format!("tensor {name:?}: {e}")))
            })
            .collect()
    }
}

/// The write options of `save`, `serialize` and `convert`: one dict with every key, made by
/// `tensorkit._file._options` from the keywords of the Python functions.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
#[allow(clippy::struct_excessive_bools)] // One field per keyword of the Python functions.
pub(crate) struct Options {
    attributes: Option<Py<PyAny>>,
    format: Option<String>,
    metadata: Option<Py<PyAny>>,
    pipeline: Option<String>,
    allow_extensions: bool,
    canonical_nan: bool,
    alignment: Option<u64>,
    header_reserve: Option<u64>,
    max_shard_size: Option<u64>,
    fsync: bool,
    quantize: Option<String>,
    dequantize: Option<String>,
    rename_duplicates: bool,
    unpack: bool,
    split_by: String,
}

impl Options {
    /// The library's options these describe, for a file written to `path` (whose extension
    /// names the format when the options do not).
    fn resolve(&self, path: Option<&std::path::Path>) -> PyResult<WriteOptions> {
        let format = self
            .format
            .as_deref()
            .map(|id| {
                Format::from_id(id).ok_or_else(|| {
                    let ids: Vec<&str> = Format::writable().iter().map(|f| f.id()).collect();
                    invalid(format!("unknown format {id:?}; one of {}", ids.join(", ")))
                })
            })
            .transpose()?
            .or_else(|| path.and_then(Format::from_extension));
        let metadata = self
            .metadata
            .as_ref()
            .map(|m| {
                Python::attach(|py| match crate::cbor::to_json(m.bind(py), "metadata")? {
                    serde_json::Value::Object(m) => Ok(m),
                    _ => Err(invalid("metadata must be a dict")),
                })
            })
            .transpose()?;
        let attributes = self
            .attributes
            .as_ref()
            .map(|a| {
                Python::attach(|py| match crate::cbor::to_json(a.bind(py), "attributes")? {
                    serde_json::Value::Object(m) => Ok(m),
                    _ => Err(invalid("attributes must be a dict of dicts")),
                })
            })
            .transpose()?;
        // GRIB names its packing, NetCDF its format and filters, with `pipeline`; Tensogram's
        // stages mean nothing there.
        let packed =
            format.is_some_and(|f| f.offers(tensorkit::dtype::WriteChoice::Packing).is_ok());
        let packing = packed.then(|| self.pipeline.clone()).flatten();
        let pipeline = self
            .pipeline
            .as_deref()
            .filter(|_| !packed)
            .map(PipelineSpec::parse)
            .transpose()
            .map_err(to_py)?
            .unwrap_or_default()
            .with_extensions(self.allow_extensions)
            .with_canonical_nan(self.canonical_nan);
        let quantize = self
            .quantize
            .as_deref()
            .map(|name| {
                tensorkit::gguf::GgmlType::from_name(name).ok_or_else(|| {
                    invalid(format!(
                        "quantize={name:?}: not a ggml type (Q8_0, Q4_0, ...)"
                    ))
                })
            })
            .transpose()?;
        let dequantize = self
            .dequantize
            .as_deref()
            .map(|name| {
                tensorkit::Dequantize::from_name(name).ok_or_else(|| {
                    invalid(format!(
                        "dequantize={name:?}: one of float32, float16, bfloat16, raw"
                    ))
                })
            })
            .transpose()?;
        Ok(WriteOptions {
            format,
            metadata,
            pipeline,
            max_shard_size: self.max_shard_size,
            alignment: self.alignment,
            header_reserve: self.header_reserve,
            durability: tensorkit::Durability::synced_if(self.fsync),
            quantize,
            dequantize,
            rename_duplicates: self.rename_duplicates,
            unpack: self.unpack,
            split_by: self.split_by.parse().map_err(to_py)?,
            packing,
            attributes,
            ..WriteOptions::default()
        })
    }
}

/// Saves tensors to `path` atomically; returns what the format left out.
#[pyfunction]
pub(crate) fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: Vec<Entry<'_>>,
    options: Options,
) -> PyResult<Vec<String>> {
    let options = options.resolve(Some(&path))?;
    let entries = Entries::new(&tensors)?;
    let views = entries.views()?;
    py.detach(|| tensorkit::save_tensors(&path, views, &options))
        .map_err(to_py)
}

/// The bytes of a file holding the tensors, in the options' format.
#[pyfunction]
pub(crate) fn serialize<'py>(
    py: Python<'py>,
    tensors: Vec<Entry<'py>>,
    options: Options,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = options.resolve(None)?;
    let entries = Entries::new(&tensors)?;
    let views = entries.views()?;
    let bytes = py
        .detach(|| tensorkit::serialize_tensors(views, &options))
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Converts the file at `src` (any format, or a shard index) to `dst`.
#[pyfunction]
pub(crate) fn convert(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    options: Options,
) -> PyResult<Vec<String>> {
    let options = options.resolve(Some(&dst))?;
    py.detach(|| {
        let file = tensorkit::open(&src)?;
        tensorkit::save(&dst, &file, &options)
    })
    .map_err(to_py)
}

/// GRIB into GRIB: every field of `src` packed again as `packing` says (`simple`,
/// `simple:BITS`, `ccsds`, `ccsds:BITS`, `complex[:BITS]`, `ieee`, `ieee64`), every other section kept byte for
/// byte; `dst` written whole and renamed into place. Returns the number of fields.
#[pyfunction]
#[pyo3(signature = (src, dst, packing, *, fsync=false))]
pub(crate) fn repack_grib(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    packing: &str,
    fsync: bool,
) -> PyResult<usize> {
    let durability = tensorkit::Durability::synced_if(fsync);
    py.detach(|| {
        tensorkit::repack_grib(
            &src,
            &dst,
            packing,
            &tensorkit::Limits::default(),
            durability,
        )
    })
    .map(|(fields, _)| fields)
    .map_err(to_py)
}

/// Checks the file at `path` (`level`: quick, default, checksum or full); the report as a
/// dict, the one `tensorkit validate --json` prints.
#[pyfunction]
#[pyo3(signature = (path, *, level="full", canonical=false))]
pub(crate) fn validate<'py>(
    py: Python<'py>,
    path: PathBuf,
    level: &str,
    canonical: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use tensorkit::Level;
    let level = Level::from_name(level).ok_or_else(|| {
        let names: Vec<_> = Level::ALL.into_iter().map(Level::name).collect();
        invalid(format!(
            "unknown level {level:?}; one of {}",
            names.join(", ")
        ))
    })?;
    let options = tensorkit::ValidateOptions { level, canonical };
    let report = py
        .detach(|| tensorkit::validate(&path, options, &tensorkit::Limits::default()))
        .map_err(to_py)?;
    crate::cbor::json_to_py(py, &report.to_json())
}

/// Edits the file at `path` (see `tensorkit::edit`): `edits` is a dict of the form
/// `Edits::from_json` reads; returns the report as a dict (`tensorkit edit --json`).
#[pyfunction]
#[pyo3(signature = (path, edits, *, dry_run=false, fsync=false))]
pub(crate) fn edit<'py>(
    py: Python<'py>,
    path: PathBuf,
    edits: &Bound<'py, PyAny>,
    dry_run: bool,
    fsync: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let json = crate::cbor::to_json(edits, "edits")?;
    let edits = tensorkit::Edits::from_json(&json, "edits").map_err(to_py)?;
    let options = tensorkit::EditOptions {
        dry_run,
        durability: tensorkit::Durability::synced_if(fsync),
        ..tensorkit::EditOptions::default()
    };
    let report = py
        .detach(|| tensorkit::edit(&path, &edits, &options))
        .map_err(to_py)?;
    crate::cbor::json_to_py(py, &report.to_json())
}

/// Rewrites a Tensogram file of wire version 2 as version 3 at `dst` (see
/// `tensorkit::migrate`); returns what was done as a dict: `v2_messages`, `v3_messages`,
/// `objects`, `hashes_verified`, `bytes`.
#[pyfunction]
#[pyo3(signature = (src, dst, *, fsync=false))]
pub(crate) fn migrate(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    fsync: bool,
) -> PyResult<Bound<'_, PyDict>> {
    let m = py
        .detach(|| {
            tensorkit::migrate(
                &src,
                &dst,
                &tensorkit::Limits::default(),
                tensorkit::Durability::synced_if(fsync),
            )
        })
        .map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("v2_messages", m.v2_messages)?;
    d.set_item("v3_messages", m.v3_messages)?;
    d.set_item("objects", m.objects)?;
    d.set_item("hashes_verified", m.hashes_verified)?;
    d.set_item("bytes", m.bytes)?;
    Ok(d)
}
