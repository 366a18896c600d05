//! Decoding: whole messages or single objects (in parallel, without the GIL), ranges of
//! an object's elements, and frames or payloads a virtual store references.

use super::errors::tgm_err;
use super::values::{descriptor_to_py, meta_to_py};
use crate::buffer::{Borrowed, Buffer};
use crate::results::{Array, TgmMessage, TgmObject};
use pyo3::prelude::*;
use pyo3::types::PyList;
use tensor_core::buffer::LargeBuffer;
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{self, DecodeOptions, GlobalMetadata, Message, ObjectFrame};
use tensorkit::{ByteOrder, Limits};

/// What to decode, and how.
#[derive(Clone, Copy)]
pub(super) struct Decode {
    /// One object, or all of them.
    index: Option<usize>,
    opts: DecodeOptions,
    /// 0: every core; 1: this thread; n: n threads.
    threads: usize,
}

impl Decode {
    /// What Python's keywords ask for.
    pub(super) fn new(
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
pub(super) struct Decoded {
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
    decode_frames(&objects, *msg.limits(), how)
}

/// Decodes `objects` (within `limits` together), in parallel.
pub(super) fn decode_frames(
    objects: &[ObjectFrame<'_>],
    limits: Limits,
    how: Decode,
) -> frame::Result<Vec<Decoded>> {
    let mut total = 0u64;
    for o in objects {
        total = tensor_core::checked::add(total, array_len(o)?, "decoded message size")?;
    }
    limits.check_total_bytes(total)?;
    crate::threads::map_each(objects, how.threads, |o| decode_one(o, how.opts, &limits))
}

/// Decodes the message at the start of `bytes`: its version, metadata and objects.
pub(super) fn decode_message(
    bytes: &[u8],
    limits: &Limits,
    how: Decode,
) -> frame::Result<(u16, GlobalMetadata, Vec<Decoded>)> {
    let msg = Message::open_with(bytes, &limits.into())?;
    let meta = msg.metadata()?.clone();
    let objects = decode_objects(&msg, how)?;
    Ok((msg.preamble().version, meta, objects))
}

pub(super) fn decoded_to_py(
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
        .map_err(tgm_err)?;
    decoded_to_py(py, decoded)
}

/// The ranges of object `index` of the message `bytes` (see [`tgm_decode_range`]), with
/// the dtype; `None` for a packed dtype.
pub(super) type Ranges = Option<(tensorkit::Dtype, Vec<(Vec<u8>, ByteOrder)>)>;

pub(super) fn decode_ranges(
    bytes: &[u8],
    index: usize,
    ranges: &[(u64, u64)],
    opts: DecodeOptions,
) -> frame::Result<Ranges> {
    let limits = Limits::default();
    let msg = Message::open_with(bytes, &(&limits).into())?;
    ranges_of(&msg.object(index)?, ranges, opts, &limits)
}

/// The ranges of `obj` (see [`decode_ranges`]).
pub(super) fn ranges_of(
    obj: &ObjectFrame<'_>,
    ranges: &[(u64, u64)],
    opts: DecodeOptions,
    limits: &Limits,
) -> frame::Result<Ranges> {
    let dtype = obj.descriptor().dtype;
    if dtype.is_packed() || dtype == tensorkit::Dtype::Bitmask {
        return Ok(None);
    }
    let parts = ranges
        .iter()
        .map(|&(first, count)| obj.decode_range(opts, limits, first, count))
        .collect::<frame::Result<Vec<_>>>()?;
    Ok(Some((dtype, parts)))
}

/// [`decode_ranges`] of the message `bytes` without the GIL, handed to Python in buffers
/// numpy can write to (as every decoded array is): what [`tgm_decode_range`] and
/// `TgmFile.decode_range` return.
pub(super) fn ranges_to_py(
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
        .map_err(tgm_err)?;
    decoded_ranges_to_py(py, decoded)
}

/// Decoded ranges handed to Python, each in a buffer of its own.
pub(super) fn decoded_ranges_to_py(
    py: Python<'_>,
    decoded: Ranges,
) -> PyResult<Option<Vec<Array>>> {
    let Some((dtype, parts)) = decoded else {
        return Ok(None);
    };
    let width = dtype.byte_width().max(1) as u64;
    parts
        .into_iter()
        .map(|(bytes, order)| {
            let mut out = LargeBuffer::zeroed(bytes.len()).map_err(tgm_err)?;
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
        .map_err(tgm_err)?;
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
    let d = super::values::descriptor(descriptor, 0)?;
    let payload = Borrowed::get(payload, false, "the payload")?;
    let bytes = payload.bytes();
    let decoded = py
        .detach(|| frame::decode_payload(&d, bytes, &Limits::default()))
        .map_err(tgm_err)?;
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
        one_per_element(&d, &data).map_err(tgm_err)?
    } else {
        let mut b = LargeBuffer::zeroed(data.len()).map_err(tgm_err)?;
        b.copy_from_slice(&data);
        b
    };
    Array::new(py, Buffer::owned(out), d.dtype.name(), d.shape, order)
}
