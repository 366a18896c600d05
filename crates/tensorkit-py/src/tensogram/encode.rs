//! Encoding: arrays under descriptors into one message (`tgm_encode`), payloads already
//! encoded (`tgm_encode_pre_encoded`), and object by object ([`TgmStreamingEncoder`]).

use super::errors::tgm_err;
use super::values::{descriptor, global_metadata};
use crate::buffer::Borrowed;
use crate::errors::invalid;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::Cursor;
use std::sync::{Mutex, PoisonError};
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{self, EncodeOptions, GlobalMetadata, MaskMethod, StreamEncoder};

/// One object to encode: descriptor dict, an object exporting the bytes, and whether the
/// bytes of a bitmask are one per element (a bool array) rather than packed.
type Input<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, bool);

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
        packed.push(packed_codes(&desc, &b, *one_per_element, i)?);
        descs.push(desc);
        borrowed.push(b);
    }
    let opts = options(
        hash,
        allow_nan,
        allow_inf,
        mask_method,
        small_mask_threshold,
    )?;
    let data: Vec<&[u8]> = borrowed
        .iter()
        .zip(&packed)
        .map(|(b, p)| p.as_deref().unwrap_or_else(|| b.bytes()))
        .collect();
    let bytes = py
        .detach(|| frame::serialize(&meta, &descs, &data, &opts))
        .map_err(tgm_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// The bytes of a packed dtype (float6, float4, bitmask) given one element per byte, packed
/// as the format stores them; `None` when the bytes are to be encoded as they are.
fn packed_codes(
    desc: &DataObjectDescriptor,
    data: &Borrowed,
    one_per_element: bool,
    i: usize,
) -> PyResult<Option<Vec<u8>>> {
    if !(one_per_element && desc.dtype.is_packed()) {
        return Ok(None);
    }
    tensor_dtype::minifloat::pack_codes(desc.dtype, data.bytes())
        .map(Some)
        .ok_or_else(|| invalid(format!("object {i}: cannot pack {}", desc.dtype)))
}

/// The encoder's options as tensogram's Python API names them.
fn options(
    hash: bool,
    allow_nan: bool,
    allow_inf: bool,
    mask_method: Option<&str>,
    small_mask_threshold: Option<u64>,
) -> PyResult<EncodeOptions> {
    let mut opts = EncodeOptions {
        hashing: hash,
        allow_nan,
        allow_inf,
        ..EncodeOptions::default()
    };
    if let Some(name) = mask_method {
        opts.mask_method = MaskMethod::from_name(name).ok_or_else(|| {
            let names: Vec<String> = MaskMethod::ALL
                .iter()
                .map(|m| format!("{:?}", m.name()))
                .collect();
            invalid(format!(
                "unknown mask method {name:?}; one of {}",
                names.join(", ")
            ))
        })?;
    }
    if let Some(t) = small_mask_threshold {
        opts.small_mask_threshold = t;
    }
    Ok(opts)
}

/// Frames payloads that are already encoded, one object each (every descriptor carrying
/// its pipeline's parameters); the message's bytes.
#[pyfunction]
#[pyo3(signature = (metadata, objects, *, hash=true))]
pub(crate) fn tgm_encode_pre_encoded<'py>(
    py: Python<'py>,
    metadata: &Bound<'py, PyAny>,
    objects: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    hash: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let meta = global_metadata(metadata)?;
    let mut descs = Vec::with_capacity(objects.len());
    let mut borrowed = Vec::with_capacity(objects.len());
    for (i, (d, data)) in objects.iter().enumerate() {
        descs.push(descriptor(d, i)?);
        borrowed.push(Borrowed::get(
            data,
            false,
            &format!("object {i}'s payload"),
        )?);
    }
    let payloads: Vec<&[u8]> = borrowed.iter().map(Borrowed::bytes).collect();
    let opts = EncodeOptions {
        hashing: hash,
        ..EncodeOptions::default()
    };
    let bytes = py
        .detach(|| frame::serialize_pre_encoded(&meta, &descs, &payloads, &opts))
        .map_err(tgm_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// A message written object by object into memory (tensogram's `StreamingEncoder`): each
/// object's frame as soon as it is given, the index, hashes and metadata in the footer at
/// `finish`. After `finish` it is spent; `finish_and_reset` starts the next message.
#[pyclass(module = "tensorkit._tensorkit", name = "TgmStreamingEncoder", frozen)]
pub struct TgmStreamingEncoder {
    state: Mutex<Option<StreamEncoder<Cursor<Vec<u8>>>>>,
    metadata: GlobalMetadata,
    opts: EncodeOptions,
}

impl TgmStreamingEncoder {
    /// Runs `f` on the encoder, or says it is finished.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut StreamEncoder<Cursor<Vec<u8>>>) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let encoder = state
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("StreamingEncoder already finished"))?;
        f(encoder)
    }

    /// Finishes the message (its length back-filled when asked); with `reset`, a new
    /// message is begun at once under the same metadata and options.
    fn finish_message<'py>(
        &self,
        py: Python<'py>,
        backfilled: bool,
        reset: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let encoder = state
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("StreamingEncoder already finished"))?;
        let sink = if backfilled {
            encoder.finish_backfilled()
        } else {
            encoder.finish()
        }
        .map_err(tgm_err)?;
        if reset {
            *state = Some(
                StreamEncoder::new(Cursor::new(Vec::new()), &self.metadata, self.opts.clone())
                    .map_err(tgm_err)?,
            );
        }
        Ok(PyBytes::new(py, &sink.into_inner()))
    }
}

#[pymethods]
impl TgmStreamingEncoder {
    #[new]
    #[pyo3(signature = (metadata, *, hash=true, allow_nan=false, allow_inf=false, mask_method=None, small_mask_threshold=None))]
    fn new(
        metadata: &Bound<'_, PyAny>,
        hash: bool,
        allow_nan: bool,
        allow_inf: bool,
        mask_method: Option<&str>,
        small_mask_threshold: Option<u64>,
    ) -> PyResult<Self> {
        let metadata = global_metadata(metadata)?;
        let opts = options(
            hash,
            allow_nan,
            allow_inf,
            mask_method,
            small_mask_threshold,
        )?;
        let encoder = StreamEncoder::new(Cursor::new(Vec::new()), &metadata, opts.clone())
            .map_err(tgm_err)?;
        Ok(TgmStreamingEncoder {
            state: Mutex::new(Some(encoder)),
            metadata,
            opts,
        })
    }

    /// Encodes one object through its descriptor's pipeline and writes its frame.
    fn write_object(
        &self,
        py: Python<'_>,
        descriptor_: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        one_per_element: bool,
    ) -> PyResult<()> {
        self.with(|encoder| {
            let i = encoder.len();
            let desc = descriptor(descriptor_, i)?;
            let b = Borrowed::get(data, false, &format!("object {i}'s data"))?;
            let packed = packed_codes(&desc, &b, one_per_element, i)?;
            let bytes = packed.as_deref().unwrap_or_else(|| b.bytes());
            py.detach(|| encoder.write_object(&desc, bytes))
                .map_err(tgm_err)
        })
    }

    /// Writes the frame of an object whose payload is already encoded.
    fn write_object_pre_encoded(
        &self,
        py: Python<'_>,
        descriptor_: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        self.with(|encoder| {
            let i = encoder.len();
            let desc = descriptor(descriptor_, i)?;
            let b = Borrowed::get(payload, false, &format!("object {i}'s payload"))?;
            let bytes = b.bytes();
            py.detach(|| encoder.write_object_pre_encoded(&desc, bytes))
                .map_err(tgm_err)
        })
    }

    /// How many objects the message being written holds so far.
    #[getter]
    fn object_count(&self) -> PyResult<usize> {
        self.with(|encoder| Ok(encoder.len()))
    }

    /// The message, `total_length` 0 in its preamble and postamble (readers walk its frames).
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.finish_message(py, false, false)
    }

    /// The message with its length written into its preamble and postamble.
    fn finish_backfilled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.finish_message(py, true, false)
    }

    /// [`finish`](Self::finish), then a new message begun under the same metadata.
    fn finish_and_reset<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.finish_message(py, false, true)
    }

    /// [`finish_backfilled`](Self::finish_backfilled), then a new message begun.
    fn finish_and_reset_backfilled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.finish_message(py, true, true)
    }
}
