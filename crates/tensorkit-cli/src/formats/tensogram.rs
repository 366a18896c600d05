//! Tensogram `.tgm` files, through tensor-frame (see docs/formats/tensogram.md).
//!
//! Every object of every message is one tensor, located by `message` and `object`; its name
//! is `base[i].name` when that is text, and the rest of `base[i]` becomes its attributes.
//! Writing puts every tensor in one message, file metadata in `_extra_`.

use crate::error::{Error, Result};
use crate::model::{FormatId, NamedTensor, TensorData, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::path::Path;
use tensor_core::Limits;
use tensor_core::cbor::Value;
use tensor_core::cbor::json::{to_cbor, to_json};
use tensor_dtype::Dtype;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Map, Message, TgmFile};

/// Tensogram messages start with `TENSOGRM` (a shorter file that starts like it is a
/// truncated message).
pub(super) fn looks_like(bytes: &[u8]) -> bool {
    super::starts_like(bytes, *tensor_frame::wire::MAGIC)
}

pub(crate) fn wrap(path: &Path) -> impl Fn(tensor_frame::Error) -> Error + '_ {
    move |source| Error::Tensogram {
        path: path.to_path_buf(),
        source,
    }
}

/// The messages of `bytes`, which must cover the file: bytes no message claims are
/// explained by the error opening a message there gives.
pub(crate) fn messages<'a>(
    path: &Path,
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<Vec<Message<'a>>> {
    let file = TgmFile::new(bytes, limits);
    let mut pos = 0;
    let mut out = Vec::with_capacity(file.len());
    for (i, r) in file.ranges().iter().enumerate() {
        if r.start != pos {
            break;
        }
        out.push(Message::open(&bytes[r.clone()], limits).map_err(|source| {
            Error::TensogramAt {
                path: path.to_path_buf(),
                message: i,
                offset: r.start as u64,
                source,
            }
        })?);
        pos = r.end;
    }
    if pos != bytes.len() || out.is_empty() {
        let at = pos;
        let e = Message::open(&bytes[at..], limits)
            .err()
            .unwrap_or_else(|| tensor_frame::Error::Framing {
                offset: 0,
                reason: format!("{} bytes belong to no message", bytes.len() - at),
            });
        return Err(Error::TensogramAt {
            path: path.to_path_buf(),
            message: out.len(),
            offset: at as u64,
            source: e,
        });
    }
    Ok(out)
}

/// Reads every object of every message.
pub(super) fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    let msgs = messages(path, bytes, limits)?;
    let mut tensors = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        // Every frame's hash, metadata frames included, before anything is trusted.
        m.verify_hashes().map_err(wrap(path))?;
        for j in 0..m.len() {
            let o = m.object(j).map_err(wrap(path))?;
            let data = match o.view() {
                Some(v) => TensorData::View(v),
                None => TensorData::Owned(
                    o.decode(DecodeOptions::default(), limits)
                        .map_err(wrap(path))?,
                ),
            };
            let base = m
                .metadata()
                .map_err(wrap(path))?
                .base
                .get(j)
                .cloned()
                .unwrap_or_default();
            let data = match original_dtype(&base, o.descriptor().dtype) {
                None => data,
                Some(dtype) => {
                    let t = match data {
                        TensorData::View(v) => v.to_tensor(),
                        TensorData::Owned(t) => t,
                    };
                    TensorData::Owned(tensor_dtype::Tensor::new(
                        t.into_data(),
                        dtype,
                        &o.descriptor().shape,
                        tensor_core::ByteOrder::Little,
                    )?)
                }
            };
            let name = base.get("name").and_then(Value::as_text).map(str::to_owned);
            tensors.push(NamedTensor {
                name,
                data,
                location: vec![("message", mi as u64), ("object", j as u64)],
                attributes: base
                    .into_iter()
                    .filter(|(k, _)| {
                        !matches!(
                            k.as_str(),
                            "name" | STORED_DTYPE | tensor_frame::metadata::RESERVED
                        )
                    })
                    .collect(),
            });
        }
    }
    let extra = &msgs[0].metadata().map_err(wrap(path))?.extra;
    let metadata =
        (!extra.is_empty()).then(|| extra.iter().map(|(k, v)| (k.clone(), to_json(v))).collect());
    Ok(TensorSet {
        format: FormatId::Tensogram,
        metadata,
        tensors,
    })
}

/// The `base` key that records the dtype of a one-byte tensor Tensogram has no dtype for
/// (bool, float8): it is stored as uint8, and read back as what it was.
pub(crate) const STORED_DTYPE: &str = "tensorkit_dtype";

/// One-byte dtypes Tensogram lacks, stored as uint8 with [`STORED_DTYPE`].
fn stored_as_uint8(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::Bool | Dtype::Float8E4m3 | Dtype::Float8E5m2)
}

/// The dtype an object was written from, when [`STORED_DTYPE`] names one.
fn original_dtype(base: &tensor_frame::Map, stored: Dtype) -> Option<Dtype> {
    let d: Dtype = base.get(STORED_DTYPE)?.as_text()?.parse().ok()?;
    (stored == Dtype::Uint8 && stored_as_uint8(d)).then_some(d)
}

/// Writes every tensor into one message with `pipeline` applied to each.
pub(super) fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    pipeline: &PipelineSpec,
) -> Result<()> {
    let names = set.names();
    let mut descriptors = Vec::with_capacity(set.tensors.len());
    let mut data = Vec::with_capacity(set.tensors.len());
    let mut meta = GlobalMetadata::default();
    for (name, t) in names.iter().zip(&set.tensors) {
        let v = t.view();
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(name.as_str()));
        let dtype = if stored_as_uint8(v.dtype()) {
            entry.insert(STORED_DTYPE.into(), Value::from(v.dtype().name()));
            Dtype::Uint8
        } else {
            v.dtype()
        };
        let mut d = DataObjectDescriptor::new(dtype, v.shape(), tensor_core::ByteOrder::Little);
        pipeline.apply(&mut d);
        descriptors.push(d);
        data.push(v.to_le_bytes());
        for (k, val) in &t.attributes {
            entry.insert(k.clone(), val.clone());
        }
        meta.base.push(entry);
    }
    if let Some(m) = &set.metadata {
        meta.extra = m.iter().map(|(k, v)| (k.clone(), to_cbor(v))).collect();
    }
    let slices: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
    let opts = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        ..EncodeOptions::default()
    };
    // Straight to the file: raw tensors are copied from the input as they are written.
    tensor_frame::encode_to(&meta, &descriptors, &slices, &opts, out).map_err(wrap(path))?;
    Ok(())
}
