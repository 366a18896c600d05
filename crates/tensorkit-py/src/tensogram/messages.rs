//! Messages as bytes: metadata and descriptors read alone, messages found in a buffer,
//! hashed, appended to a file, and a file's layout for a virtual store.

use super::errors::tgm_err;
use super::values::{descriptor_to_py, meta_to_py};
use crate::buffer::Borrowed;
use crate::errors::invalid;
use crate::results::TgmDescribed;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use tensor_core::source::MmapSource;
use tensorkit::Limits;
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{self, Message};

/// Metadata and descriptors of the message at the start of `bytes`, nothing decoded.
pub(super) fn describe_message(
    py: Python<'_>,
    bytes: &[u8],
    limits: &Limits,
) -> PyResult<TgmDescribed> {
    let read = || -> frame::Result<_> {
        let msg = Message::open_with(bytes, &limits.into())?;
        let meta = msg.metadata()?.clone();
        let descs: Vec<DataObjectDescriptor> = (0..msg.len())
            .map(|i| msg.object(i).map(|o| o.descriptor().clone()))
            .collect::<frame::Result<_>>()?;
        Ok((msg.preamble().version, meta, descs))
    };
    let described = py.detach(read).map_err(tgm_err)?;
    described_to_py(py, described)
}

/// The version and metadata of the message at the start of `bytes` (its header frames, or
/// footer frames, alone), handed to Python.
pub(super) fn metadata_to_py(
    py: Python<'_>,
    bytes: &[u8],
    limits: &Limits,
) -> PyResult<Py<crate::results::TgmMetadata>> {
    let read = || -> frame::Result<_> {
        let msg = Message::open_with(bytes, &limits.into())?;
        Ok((msg.preamble().version, msg.metadata()?.clone()))
    };
    let (version, meta) = py.detach(read).map_err(tgm_err)?;
    meta_to_py(py, version, &meta)
}

/// A message's version, metadata and descriptors, handed to Python.
pub(super) fn described_to_py(
    py: Python<'_>,
    (version, meta, descs): (u16, frame::GlobalMetadata, Vec<DataObjectDescriptor>),
) -> PyResult<TgmDescribed> {
    let descriptors = PyList::empty(py);
    for d in &descs {
        descriptors.append(descriptor_to_py(py, d)?)?;
    }
    Ok(TgmDescribed {
        metadata: meta_to_py(py, version, &meta)?,
        descriptors: descriptors.unbind(),
    })
}

/// The metadata and descriptors of a message, without decoding any payload.
#[pyfunction]
pub(crate) fn tgm_describe<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<TgmDescribed> {
    let buf = Borrowed::get(buf, false, "the message")?;
    describe_message(py, buf.bytes(), &Limits::default())
}

/// Where the messages in `buf` are: `(offset, length)` pairs.
#[pyfunction]
pub(crate) fn tgm_scan(py: Python<'_>, buf: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, usize)>> {
    let buf = Borrowed::get(buf, false, "the buffer")?;
    let bytes = buf.bytes();
    Ok(py.detach(|| {
        frame::scan(bytes)
            .into_iter()
            .map(|r| (r.start, r.len()))
            .collect()
    }))
}

/// XXH3-64 of `data`, the hash Tensogram stores.
#[pyfunction]
pub(crate) fn tgm_hash(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<u64> {
    let data = Borrowed::get(data, false, "the data")?;
    let bytes = data.bytes();
    Ok(py.detach(|| frame::xxh3(bytes)))
}

/// The simple-packing parameters Tensogram's encoder derives for `values` (float64, their
/// bytes in the machine's order) at `bits_per_value` bits and decimal scale
/// `decimal_scale_factor`: `(reference_value, binary_scale_factor)`. A NaN or infinite value
/// is an error naming it.
#[pyfunction]
pub(crate) fn tgm_packing_params(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    bits_per_value: u32,
    decimal_scale_factor: i32,
) -> PyResult<(f64, i32)> {
    let values = Borrowed::get(values, false, "the values")?;
    let bytes = values.bytes();
    if bytes.len() % 8 != 0 {
        return Err(invalid(format!(
            "the values are {} bytes, not whole float64s",
            bytes.len()
        )));
    }
    let params = py
        .detach(|| {
            tensorkit::frame::pipeline::simple_packing::SimplePacking::compute(
                bytes
                    .chunks_exact(8)
                    .map(|b| f64::from_ne_bytes(b.try_into().expect("8 bytes"))),
                bits_per_value,
                decimal_scale_factor,
            )
        })
        .map_err(|e| invalid(e.to_string()))?;
    Ok((params.reference_value, params.binary_scale_factor))
}

/// Appends one encoded message to the file at `path` (created if missing), synced to disk
/// when `fsync` is asked for.
#[pyfunction]
#[pyo3(signature = (path, message, *, fsync=false))]
pub(crate) fn tgm_append(
    py: Python<'_>,
    path: PathBuf,
    message: &Bound<'_, PyAny>,
    fsync: bool,
) -> PyResult<()> {
    let message = Borrowed::get(message, false, "the message")?;
    let bytes = message.bytes();
    py.detach(|| frame::append(&path, bytes, tensorkit::Durability::synced_if(fsync)))
        .map_err(tgm_err)
}

/// Writes to `path` one message of objects taken from messages of other files (`parts`:
/// `(file, message index, object index)` each), under `metadata` (`base` one entry per
/// object): each object framed as it is, after its stored hash is checked
/// (`tensor_frame::regroup_to`). The file is written whole, then renamed into place (synced
/// with `fsync`); its payloads are copied from the mapped inputs, never gathered in memory.
#[pyfunction]
#[pyo3(signature = (path, parts, metadata, *, fsync=false))]
pub(crate) fn tgm_regroup(
    py: Python<'_>,
    path: PathBuf,
    parts: Vec<(PathBuf, usize, usize)>,
    metadata: &Bound<'_, PyAny>,
    fsync: bool,
) -> PyResult<()> {
    let meta = super::values::global_metadata(metadata)?;
    let write =
        || -> tensorkit::Result<()> {
            let mut files: Vec<(PathBuf, MmapSource)> = Vec::new();
            for (file, _, _) in &parts {
                if !files.iter().any(|(f, _)| f == file) {
                    files.push((file.clone(), MmapSource::open(file)?));
                }
            }
            let opened: Vec<frame::Messages<'_>> = files
                .iter()
                .map(|(f, map)| {
                    frame::Messages::open_with(map, &tensorkit::ReadOptions::default())
                        .map_err(|e| tensorkit::Error::format(f, "tensogram", e))
                })
                .collect::<tensorkit::Result<_>>()?;
            let mut objects = Vec::with_capacity(parts.len());
            for (file, m, o) in &parts {
                let at = files
                    .iter()
                    .position(|(f, _)| f == file)
                    .unwrap_or_default();
                let message = opened[at].messages().get(*m).ok_or_else(|| {
                    tensorkit::Error::UnknownTarget {
                        what: format!("{}: no message {m}", file.display()),
                    }
                })?;
                objects.push((message, *o));
            }
            let durability = tensorkit::Durability::synced_if(fsync);
            let mut out = tensor_core::atomic::AtomicFile::create_with(&path, durability)?;
            frame::regroup_to(&objects, &meta, &mut out)
                .map_err(|e| tensorkit::Error::format(&path, "tensogram", e))?;
            out.commit()?;
            Ok(())
        };
    py.detach(write).map_err(crate::errors::to_py)
}

/// Registers the functions and the class.
/// Where the parts of a local Tensogram file a virtual Zarr store references lie, message by
/// message: a list of dicts, one per message, with `metadata` (the offset and length in the
/// file of the frame its metadata is read from), `preceders` (whether preceder frames add to
/// it) and `objects`, one dict per data object: `frame` (its data frame's offset and length),
/// `payload` (its payload's), `descriptor`, `masked` (whether NaN or ±Inf are kept in masks,
/// outside the payload). Only the frames' headers and descriptors are read.
#[pyfunction]
pub(crate) fn tgm_layout<'py>(py: Python<'py>, path: &str) -> PyResult<Bound<'py, PyList>> {
    use tensor_core::ByteSource;
    struct Object {
        frame: (u64, u64),
        payload: (u64, u64),
        descriptor: DataObjectDescriptor,
        masked: bool,
    }
    struct Msg {
        metadata: (u64, u64),
        preceders: bool,
        objects: Vec<Object>,
    }
    let source = MmapSource::open(path).map_err(tgm_err)?;
    let bytes = source
        .as_slice()
        .ok_or_else(|| invalid(format!("{path}: not a mapped file")))?;
    let limits = Limits::default();
    let read = || -> frame::Result<Vec<Msg>> {
        let mut out = Vec::new();
        for range in frame::scan(bytes) {
            let start = range.start as u64;
            let msg = Message::open_with(&bytes[range], &(&limits).into())?;
            let (mo, ml) = msg.metadata_span();
            let mut objects = Vec::with_capacity(msg.len());
            for i in 0..msg.len() {
                let o = msg.object(i)?;
                let payload = o.payload();
                let at = tensor_core::source::offset_within(bytes, payload).unwrap_or_default();
                let (fo, fl) = msg.object_span(i);
                objects.push(Object {
                    frame: (start + fo, fl),
                    payload: (at as u64, payload.len() as u64),
                    descriptor: o.descriptor().clone(),
                    masked: !o.masks(&limits)?.is_empty(),
                });
            }
            out.push(Msg {
                metadata: (start + mo, ml),
                preceders: msg.has_preceders(),
                objects,
            });
        }
        Ok(out)
    };
    let found = py.detach(read).map_err(tgm_err)?;
    let out = PyList::empty(py);
    for m in found {
        let objects = PyList::empty(py);
        for o in m.objects {
            let d = PyDict::new(py);
            d.set_item("frame", o.frame)?;
            d.set_item("payload", o.payload)?;
            d.set_item("descriptor", descriptor_to_py(py, &o.descriptor)?)?;
            d.set_item("masked", o.masked)?;
            objects.append(d)?;
        }
        let d = PyDict::new(py);
        d.set_item("metadata", m.metadata)?;
        d.set_item("preceders", m.preceders)?;
        d.set_item("objects", objects)?;
        out.append(d)?;
    }
    Ok(out)
}
