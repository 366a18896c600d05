//! Tensogram messages for Python: encode arrays under descriptors, decode whole messages or
//! single objects, read metadata and descriptors alone, find messages in a buffer, validate,
//! and `.tgm` files mapped from disk. `tensorkit/tensogram.py` builds tensogram's own Python
//! API (names, arguments, result shapes) on these.
//!
//! Metadata and descriptors cross as Python values (see [`crate::cbor`]); decoded objects
//! cross as owned buffers numpy wraps without copying. The GIL is released while encoding,
//! decoding and validating; the objects of a message decode in parallel.

use crate::buffer::{Borrowed, Buffer};
use crate::cbor;
use crate::errors::{invalid, to_py};
use crate::handle::Handle;
use crate::results::{Array, TgmDescribed, TgmMessage, TgmMetadata, TgmObject};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::path::PathBuf;
use std::sync::Arc;
use tensor_core::buffer::LargeBuffer;
use tensor_core::cbor::{Value, to_canonical};
use tensor_core::source::MmapSource;
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::validate::{Level, Report, Severity, ValidateOptions};
use tensorkit::frame::{
    self, DecodeOptions, EncodeOptions, GlobalMetadata, MaskMethod, Message, ObjectFrame,
};
use tensorkit::{ByteOrder, Limits};

fn meta_to_py(py: Python<'_>, version: u16, m: &GlobalMetadata) -> PyResult<Py<TgmMetadata>> {
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

fn descriptor_to_py<'py>(py: Python<'py>, d: &DataObjectDescriptor) -> PyResult<Bound<'py, PyAny>> {
    cbor::to_py(py, &tensor_core::ciborium::Value::from(&d.to_value()))
}

/// A Python value as the canonical CBOR of it.
fn canonical(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    Ok(to_canonical(&Value::from(&cbor::from_py(obj, what)?)))
}

/// The global metadata a dict describes (`base`, `_extra_`, any other key as extra).
fn global_metadata(meta: &Bound<'_, PyAny>) -> PyResult<GlobalMetadata> {
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
fn descriptor(d: &Bound<'_, PyAny>, i: usize) -> PyResult<DataObjectDescriptor> {
    let what = format!("descriptor {i}");
    DataObjectDescriptor::with_defaults(Value::from(&cbor::from_py(d, &what)?))
        .map_err(|e| invalid(format!("{what}: {e}")))
}

/// One object to encode: descriptor dict, an object exporting the bytes, and whether the
/// bytes of a bitmask are one per element (a bool array) rather than packed.
type Input<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, bool);

/// Encodes one message; its bytes.
#[pyfunction]
#[pyo3(signature = (metadata, objects, *, hash=true, allow_nan=false, allow_inf=false, mask_method=None, small_mask_threshold=None))]
pub(crate) fn tgm_encode<'py>(
    py: Python<'py>,
    metadata: &Bound<'py, PyAny>,
    objects: Vec<Input<'py>>,
    hash: bool,
    allow_nan: bool,
    allow_inf: bool,
    mask_method: Option<&str>,
    small_mask_threshold: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let meta = global_metadata(metadata)?;
    let mut descs = Vec::with_capacity(objects.len());
    let mut borrowed = Vec::with_capacity(objects.len());
    let mut packed = Vec::with_capacity(objects.len());
    for (i, (d, data, one_per_element)) in objects.iter().enumerate() {
        let desc = descriptor(d, i)?;
        let b = Borrowed::get(data, false, &format!("object {i}'s data"))?;
        packed.push(if *one_per_element && desc.dtype.is_packed() {
            Some(
                tensor_dtype::minifloat::pack_codes(desc.dtype, b.bytes())
                    .ok_or_else(|| invalid(format!("object {i}: cannot pack {}", desc.dtype)))?,
            )
        } else {
            None
        });
        descs.push(desc);
        borrowed.push(b);
    }
    let mut opts = EncodeOptions {
        hashing: hash,
        allow_nan,
        allow_inf,
        ..EncodeOptions::default()
    };
    if let Some(name) = mask_method {
        opts.mask_method = MaskMethod::from_name(name).ok_or_else(|| {
            invalid(format!(
                "unknown mask method {name:?}; one of none, rle, roaring, lz4, zstd"
            ))
        })?;
    }
    if let Some(t) = small_mask_threshold {
        opts.small_mask_threshold = t;
    }
    let data: Vec<&[u8]> = borrowed
        .iter()
        .zip(&packed)
        .map(|(b, p)| p.as_deref().unwrap_or_else(|| b.bytes()))
        .collect();
    let bytes = py
        .detach(|| frame::serialize(&meta, &descs, &data, &opts))
        .map_err(to_py)?;
    Ok(PyBytes::new(py, &bytes))
}

/// What to decode, and how.
#[derive(Clone, Copy)]
struct Decode {
    /// One object, or all of them.
    index: Option<usize>,
    opts: DecodeOptions,
    /// 0: every core; 1: this thread; n: n threads.
    threads: usize,
}

impl Decode {
    /// What Python's keywords ask for.
    fn new(
        index: Option<usize>,
        verify_hash: bool,
        native_byte_order: bool,
        restore_non_finite: bool,
        threads: usize,
    ) -> Self {
        Decode {
            index,
            opts: DecodeOptions {
                verify_hash,
                native_byte_order,
                restore_non_finite,
            },
            threads,
        }
    }
}

/// One decoded object, not yet handed to Python.
struct Decoded {
    descriptor: DataObjectDescriptor,
    bytes: LargeBuffer,
    order: ByteOrder,
}

/// Bytes numpy needs for object `o`: its decoded size, or one per element for a bitmask.
fn array_len(o: &ObjectFrame<'_>) -> frame::Result<u64> {
    let d = o.descriptor();
    if d.dtype.is_packed() {
        Ok(d.element_count())
    } else {
        o.decoded_len()
    }
}

/// A bitmask's elements one byte each (0 or 1), as numpy's bool arrays hold them.
fn one_per_element(d: &DataObjectDescriptor, packed: &[u8]) -> tensor_core::Result<LargeBuffer> {
    let n = tensor_core::checked::to_usize(d.element_count(), "a bitmask")?;
    let mut out = LargeBuffer::zeroed(n)?;
    crate::file::unpack(d.dtype, packed, &mut out);
    Ok(out)
}

fn decode_one(o: &ObjectFrame<'_>, opts: DecodeOptions, limits: &Limits) -> frame::Result<Decoded> {
    let len = tensor_core::checked::to_usize(o.decoded_len()?, "a decoded object")?;
    let mut bytes = LargeBuffer::zeroed(len)?;
    let order = o.decode_into(&mut bytes, opts, limits)?;
    let d = o.descriptor();
    if d.dtype.is_packed() {
        bytes = one_per_element(d, &bytes)?;
    }
    Ok(Decoded {
        descriptor: d.clone(),
        bytes,
        order,
    })
}

/// Decodes object `how.index` (or all of them, after checking the whole message) of `msg`;
/// with hash verification, the hashes of its metadata, index and hash frames are checked too.
fn decode_objects(msg: &Message<'_>, how: Decode) -> frame::Result<Vec<Decoded>> {
    if how.opts.verify_hash {
        // Walks and checks every frame, as `frames` does; the objects' own hashes are
        // checked as they decode.
        msg.verify_metadata_hashes()?;
    } else if how.index.is_none() {
        msg.frames()?;
    }
    let objects: Vec<ObjectFrame<'_>> = if let Some(i) = how.index {
        vec![msg.object(i)?]
    } else {
        (0..msg.len())
            .map(|i| msg.object(i))
            .collect::<frame::Result<_>>()?
    };
    let mut total = 0u64;
    for o in &objects {
        total = tensor_core::checked::add(total, array_len(o)?, "decoded message size")?;
    }
    let limits = *msg.limits();
    limits.check_total_bytes(total)?;
    crate::threads::map_each(&objects, how.threads, |o| decode_one(o, how.opts, &limits))
}

/// Decodes the message at the start of `bytes`: its version, metadata and objects.
fn decode_message(
    bytes: &[u8],
    limits: &Limits,
    how: Decode,
) -> frame::Result<(u16, GlobalMetadata, Vec<Decoded>)> {
    let msg = Message::open_with(bytes, &limits.into())?;
    let meta = msg.metadata()?.clone();
    let objects = decode_objects(&msg, how)?;
    Ok((msg.preamble().version, meta, objects))
}

fn decoded_to_py(
    py: Python<'_>,
    (version, meta, objects): (u16, GlobalMetadata, Vec<Decoded>),
) -> PyResult<TgmMessage> {
    let out = PyList::empty(py);
    for o in objects {
        let d = &o.descriptor;
        let array = Array::new(
            py,
            Buffer::owned(o.bytes),
            d.dtype.name(),
            d.shape.clone(),
            o.order,
        )?;
        let object = TgmObject {
            descriptor: descriptor_to_py(py, d)?.unbind(),
            array: Py::new(py, array)?,
        };
        out.append(Py::new(py, object)?)?;
    }
    Ok(TgmMessage {
        metadata: meta_to_py(py, version, &meta)?,
        objects: out.unbind(),
    })
}

/// Decodes a message (the one at the start of `buf`): metadata and every object, or only
/// object `index`.
#[pyfunction]
#[pyo3(signature = (buf, *, index=None, verify_hash=false, native_byte_order=true, restore_non_finite=true, threads=0))]
pub(crate) fn tgm_decode<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    index: Option<usize>,
    verify_hash: bool,
    native_byte_order: bool,
    restore_non_finite: bool,
    threads: usize,
) -> PyResult<TgmMessage> {
    let buf = Borrowed::get(buf, false, "the message")?;
    let how = Decode::new(
        index,
        verify_hash,
        native_byte_order,
        restore_non_finite,
        threads,
    );
    let bytes = buf.bytes();
    let decoded = py
        .detach(|| decode_message(bytes, &Limits::default(), how))
        .map_err(to_py)?;
    decoded_to_py(py, decoded)
}

/// The ranges of object `index` of the message `bytes` (see [`tgm_decode_range`]), with
/// the dtype; `None` for a packed dtype.
type Ranges = Option<(tensorkit::Dtype, Vec<(Vec<u8>, ByteOrder)>)>;

fn decode_ranges(
    bytes: &[u8],
    index: usize,
    ranges: &[(u64, u64)],
    opts: DecodeOptions,
) -> frame::Result<Ranges> {
    let limits = Limits::default();
    let msg = Message::open_with(bytes, &(&limits).into())?;
    let obj = msg.object(index)?;
    let dtype = obj.descriptor().dtype;
    if dtype.is_packed() || dtype == tensorkit::Dtype::Bitmask {
        return Ok(None);
    }
    let parts = ranges
        .iter()
        .map(|&(first, count)| obj.decode_range(opts, &limits, first, count))
        .collect::<frame::Result<Vec<_>>>()?;
    Ok(Some((dtype, parts)))
}

/// [`decode_ranges`] of the message `bytes` without the GIL, handed to Python in buffers
/// numpy can write to (as every decoded array is): what [`tgm_decode_range`] and
/// `TgmFile.decode_range` return.
fn ranges_to_py(
    py: Python<'_>,
    bytes: &[u8],
    index: usize,
    ranges: &[(u64, u64)],
    native_byte_order: bool,
    restore_non_finite: bool,
) -> PyResult<Option<Vec<Array>>> {
    let opts = DecodeOptions {
        native_byte_order,
        restore_non_finite,
        ..DecodeOptions::default()
    };
    let decoded = py
        .detach(|| decode_ranges(bytes, index, ranges, opts))
        .map_err(to_py)?;
    let Some((dtype, parts)) = decoded else {
        return Ok(None);
    };
    let width = dtype.byte_width().max(1) as u64;
    parts
        .into_iter()
        .map(|(bytes, order)| {
            let mut out = LargeBuffer::zeroed(bytes.len()).map_err(to_py)?;
            out.copy_from_slice(&bytes);
            let shape = vec![bytes.len() as u64 / width];
            Array::new(py, Buffer::owned(out), dtype.name(), shape, order)
        })
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

/// Elements `[start, start + count)` of object `index` of the message at the start of
/// `buf`, for each `(start, count)` in `ranges`, decoding no more of the object than its
/// stages need (`ObjectFrame::decode_range`). `None` for an object of a packed dtype,
/// whose elements do not start on bytes: the caller decodes those whole.
#[pyfunction]
#[pyo3(signature = (buf, index, ranges, *, native_byte_order=true, restore_non_finite=true))]
pub(crate) fn tgm_decode_range(
    py: Python<'_>,
    buf: &Bound<'_, PyAny>,
    index: usize,
    ranges: Vec<(u64, u64)>,
    native_byte_order: bool,
    restore_non_finite: bool,
) -> PyResult<Option<Vec<Array>>> {
    let buf = Borrowed::get(buf, false, "the message")?;
    ranges_to_py(
        py,
        buf.bytes(),
        index,
        &ranges,
        native_byte_order,
        restore_non_finite,
    )
}

/// Metadata and descriptors of the message at the start of `bytes`, nothing decoded.
fn describe_message(py: Python<'_>, bytes: &[u8], limits: &Limits) -> PyResult<TgmDescribed> {
    let read = || -> frame::Result<_> {
        let msg = Message::open_with(bytes, &limits.into())?;
        let meta = msg.metadata()?.clone();
        let descs: Vec<DataObjectDescriptor> = (0..msg.len())
            .map(|i| msg.object(i).map(|o| o.descriptor().clone()))
            .collect::<frame::Result<_>>()?;
        Ok((msg.preamble().version, meta, descs))
    };
    let (version, meta, descs) = py.detach(read).map_err(to_py)?;
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
        .map_err(to_py)
}

/// Which part of validation found an issue, in tensogram's words.
fn issue_level(code: &str) -> &'static str {
    match code {
        "metadata"
        | "metadata_cbor_non_canonical"
        | "descriptor_cbor_non_canonical"
        | "encoding"
        | "unsupported_codec" => "metadata",
        "hash_mismatch"
        | "missing_hash"
        | "no_hash_available"
        | "hash_frame_mismatch"
        | "hash_count_mismatch"
        | "unknown_hash_algorithm" => "integrity",
        "compression" | "nan_detected" | "inf_detected" => "fidelity",
        _ => "structure",
    }
}

/// A validation depth by tensogram's names: its `default` verifies hashes, and `checksum`
/// is the same depth with the warnings left out.
fn level(name: &str) -> PyResult<(Level, bool)> {
    Ok(match name {
        "quick" => (Level::Quick, false),
        "default" => (Level::Checksum, false),
        "checksum" => (Level::Checksum, true),
        "full" => (Level::Full, false),
        other => {
            return Err(invalid(format!(
                "unknown validation level: {other:?}, expected one of: quick, default, checksum, full"
            )));
        }
    })
}

/// A report as tensogram's dict: `issues`, `object_count`, `hash_verified`.
fn report_to_py<'py>(
    py: Python<'py>,
    report: &Report,
    level: Level,
    errors_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let issues = PyList::empty(py);
    let mut hash_trouble = false;
    for i in &report.issues {
        let is_error = i.severity == Severity::Error;
        hash_trouble |= is_error && issue_level(i.code) == "integrity";
        if errors_only && !is_error {
            continue;
        }
        let d = PyDict::new(py);
        d.set_item("code", i.code)?;
        d.set_item("level", issue_level(i.code))?;
        d.set_item("severity", if is_error { "error" } else { "warning" })?;
        d.set_item("description", &i.detail)?;
        if let Some(o) = i.object {
            d.set_item("object_index", o)?;
        }
        if let Some(o) = i.offset {
            d.set_item("byte_offset", o)?;
        }
        issues.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("issues", issues)?;
    out.set_item("object_count", report.objects)?;
    out.set_item(
        "hash_verified",
        level >= Level::Checksum && report.hashes_verified > 0 && !hash_trouble,
    )?;
    Ok(out)
}

/// Validates one message buffer (tensogram's levels and report).
#[pyfunction]
#[pyo3(signature = (buf, level_name="default", canonical=false))]
pub(crate) fn tgm_validate<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    level_name: &str,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (level, errors_only) = level(level_name)?;
    let buf = Borrowed::get(buf, false, "the message")?;
    let bytes = buf.bytes();
    let opts = ValidateOptions { level, canonical };
    let report = py.detach(|| frame::validate(bytes, opts, &Limits::default()));
    report_to_py(py, &report, level, errors_only)
}

/// Validates every message of the file at `path`: bytes between messages as `file_issues`,
/// one report per message in `messages`.
#[pyfunction]
#[pyo3(signature = (path, level_name="default", canonical=false))]
pub(crate) fn tgm_validate_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    level_name: &str,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (level, errors_only) = level(level_name)?;
    let opts = ValidateOptions { level, canonical };
    let limits = Limits::default();
    let (gaps, reports) = py
        .detach(|| -> tensor_core::Result<_> {
            let source = MmapSource::open(&path)?;
            let buf: &[u8] = source.as_ref();
            let ranges = frame::scan(buf);
            let mut gaps = Vec::new();
            let mut pos = 0;
            // Each message, then an empty one at the end, so a gap before it is seen too.
            for r in ranges
                .iter()
                .cloned()
                .chain(std::iter::once(buf.len()..buf.len()))
            {
                if r.start > pos {
                    let why = frame::validate(&buf[pos..r.start], opts, &limits)
                        .issues
                        .first()
                        .map_or_else(String::new, |i| i.detail.clone());
                    gaps.push((pos, r.start - pos, why));
                }
                pos = r.end;
            }
            let reports: Vec<Report> = ranges
                .iter()
                .map(|r| frame::validate(&buf[r.clone()], opts, &limits))
                .collect();
            Ok((gaps, reports))
        })
        .map_err(to_py)?;
    let file_issues = PyList::empty(py);
    for (offset, length, why) in gaps {
        let d = PyDict::new(py);
        d.set_item("byte_offset", offset)?;
        d.set_item("length", length)?;
        d.set_item(
            "description",
            format!("{length} bytes at offset {offset} belong to no message: {why}"),
        )?;
        file_issues.append(d)?;
    }
    let messages = PyList::empty(py);
    for r in &reports {
        messages.append(report_to_py(py, r, level, errors_only)?)?;
    }
    let out = PyDict::new(py);
    out.set_item("file_issues", file_issues)?;
    out.set_item("messages", messages)?;
    Ok(out)
}

/// A `.tgm` file mapped from disk, its messages found once at open.
#[pyclass(module = "tensorkit._tensorkit", name = "TgmFile", frozen)]
pub struct TgmFile {
    inner: Handle<frame::TgmFile<MmapSource>>,
    path: String,
}

impl TgmFile {
    fn file(&self) -> PyResult<Arc<frame::TgmFile<MmapSource>>> {
        self.inner.get()
    }

    /// The bytes of message `i`, or Python's `IndexError`.
    fn range(file: &frame::TgmFile<MmapSource>, i: usize) -> PyResult<std::ops::Range<usize>> {
        file.ranges().get(i).cloned().ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "message index {i} out of range for file with {} messages",
                file.len()
            ))
        })
    }
}

#[pymethods]
impl TgmFile {
    /// Maps the file at `path` and finds its messages.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = py
            .detach(|| frame::TgmFile::map(&path, &tensorkit::ReadOptions::default()))
            .map_err(to_py)?;
        Ok(TgmFile {
            inner: Handle::new(file),
            path: path.display().to_string(),
        })
    }

    /// Where the file was opened from.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.file()?.len())
    }

    /// `(offset, length)` of each message.
    fn ranges(&self) -> PyResult<Vec<(usize, usize)>> {
        Ok(self
            .file()?
            .ranges()
            .iter()
            .map(|r| (r.start, r.len()))
            .collect())
    }

    /// The bytes of message `i` (a copy).
    fn message<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        let bytes = file.bytes();
        Ok(PyBytes::new(py, &bytes[r]))
    }

    /// Decodes message `i` (every object, or object `index`) from the map.
    #[pyo3(signature = (i, *, index=None, verify_hash=false, native_byte_order=true, restore_non_finite=true, threads=0))]
    fn decode(
        &self,
        py: Python<'_>,
        i: usize,
        index: Option<usize>,
        verify_hash: bool,
        native_byte_order: bool,
        restore_non_finite: bool,
        threads: usize,
    ) -> PyResult<TgmMessage> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        let how = Decode::new(
            index,
            verify_hash,
            native_byte_order,
            restore_non_finite,
            threads,
        );
        let decoded = py
            .detach(|| decode_message(&file.bytes()[r], &Limits::default(), how))
            .map_err(to_py)?;
        decoded_to_py(py, decoded)
    }

    /// [`tgm_decode_range`] of message `i`, read from the mapped file.
    #[pyo3(signature = (i, index, ranges, *, native_byte_order=true, restore_non_finite=true))]
    fn decode_range(
        &self,
        py: Python<'_>,
        i: usize,
        index: usize,
        ranges: Vec<(u64, u64)>,
        native_byte_order: bool,
        restore_non_finite: bool,
    ) -> PyResult<Option<Vec<Array>>> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        ranges_to_py(
            py,
            &file.bytes()[r],
            index,
            &ranges,
            native_byte_order,
            restore_non_finite,
        )
    }

    /// Metadata and descriptors of message `i`, nothing decoded.
    fn describe(&self, py: Python<'_>, i: usize) -> PyResult<TgmDescribed> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        describe_message(py, &file.bytes()[r], &Limits::default())
    }

    /// Unmaps the file (decoded arrays stay valid: they own their bytes).
    fn close(&self) -> PyResult<()> {
        self.inner.close()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __repr__(&self) -> String {
        format!("TgmFile({:?})", self.path)
    }
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
    let source = MmapSource::open(path).map_err(to_py)?;
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
    let found = py.detach(read).map_err(to_py)?;
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

/// Decodes one data object from its data frame's bytes alone, as `tensorkit.open` decodes
/// it (the frame's hash verified when it has one, NaN and ±Inf restored from its masks):
/// `(bytes, dtype, shape, byte order)`, a bitmask one byte per element.
#[pyfunction]
pub(crate) fn tgm_decode_frame<'py>(py: Python<'py>, frame: &Bound<'py, PyAny>) -> PyResult<Array> {
    let frame = Borrowed::get(frame, false, "the data frame")?;
    let bytes = frame.bytes();
    let limits = Limits::default();
    let decoded = py
        .detach(|| -> frame::Result<_> {
            let o = frame::object_frame(bytes, &limits)?;
            if o.stored_hash().is_some() {
                o.hash_check().verify()?;
            }
            let d = o.descriptor().clone();
            Ok((o.decode(DecodeOptions::default(), &limits)?, d))
        })
        .map_err(to_py)?;
    object_to_py(py, decoded.1, decoded.0)
}

/// Decodes one data object's payload on its own from its descriptor (a dict, as
/// `tgm_describe` gives it): `(bytes, dtype, shape, byte order)`, a bitmask one byte per
/// element.
#[pyfunction]
pub(crate) fn tgm_decode_payload<'py>(
    py: Python<'py>,
    descriptor: &Bound<'py, PyAny>,
    payload: &Bound<'py, PyAny>,
) -> PyResult<Array> {
    let d = self::descriptor(descriptor, 0)?;
    let payload = Borrowed::get(payload, false, "the payload")?;
    let bytes = payload.bytes();
    let decoded = py
        .detach(|| frame::decode_payload(&d, bytes, &Limits::default()))
        .map_err(to_py)?;
    object_to_py(py, d, decoded)
}

/// An object decoded by [`tgm_decode_payload`] or [`tgm_decode_frame`], as they return it.
fn object_to_py(
    py: Python<'_>,
    d: DataObjectDescriptor,
    decoded: tensorkit::Tensor,
) -> PyResult<Array> {
    let order = decoded.byte_order();
    let data = decoded.into_data();
    let out = if d.dtype.is_packed() {
        one_per_element(&d, &data).map_err(to_py)?
    } else {
        let mut b = LargeBuffer::zeroed(data.len()).map_err(to_py)?;
        b.copy_from_slice(&data);
        b
    };
    Array::new(py, Buffer::owned(out), d.dtype.name(), d.shape, order)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TgmFile>()?;
    for f in [
        wrap_pyfunction!(tgm_encode, m)?,
        wrap_pyfunction!(tgm_decode, m)?,
        wrap_pyfunction!(tgm_decode_range, m)?,
        wrap_pyfunction!(tgm_describe, m)?,
        wrap_pyfunction!(tgm_scan, m)?,
        wrap_pyfunction!(tgm_hash, m)?,
        wrap_pyfunction!(tgm_append, m)?,
        wrap_pyfunction!(tgm_validate, m)?,
        wrap_pyfunction!(tgm_validate_file, m)?,
        wrap_pyfunction!(tgm_layout, m)?,
        wrap_pyfunction!(tgm_decode_frame, m)?,
        wrap_pyfunction!(tgm_decode_payload, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
