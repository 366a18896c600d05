//! Tensogram `.tgm` files, through tensor-frame (see docs/formats/tensogram.md).
//!
//! Every object of every message is one tensor, located by `message` and `object`; its name
//! is `base[i].name` when that is text, and the rest of `base[i]` becomes its attributes.
//! Writing puts every tensor in one message, file metadata in `_extra_`.

use crate::error::{Error, Result};
use crate::model::{FormatId, Lazy, NamedTensor, TensorData, TensorSet};
use crate::pipeline_spec::{LeftOut, PipelineSpec};
use std::path::Path;
use tensor_core::Limits;
use tensor_core::cbor::Value;
use tensor_core::cbor::json::{to_cbor, to_json};
use tensor_dtype::Dtype;
use tensor_frame::MetaValue;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{
    DecodeOptions, EncodeOptions, GlobalMetadata, Map, Message, TgmFile, container,
};

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

/// Like [`wrap`], naming the tensor an object error concerns: `names[i]` is object `i`'s
/// name, when the message gives one.
pub(crate) fn wrap_named<'p>(
    path: &'p Path,
    names: &'p [Option<String>],
) -> impl Fn(tensor_frame::Error) -> Error + 'p {
    move |source| match source.object().and_then(|i| names.get(i)?.clone()) {
        Some(tensor) => Error::TensogramTensor {
            path: path.to_path_buf(),
            tensor,
            source: Box::new(source),
        },
        None => wrap(path)(source),
    }
}

/// The name `base` gives each object of `m` (`None` where it gives none).
fn object_names(m: &Message<'_>) -> Vec<Option<String>> {
    let base = m.metadata().map(|g| g.base.as_slice()).unwrap_or_default();
    (0..m.len())
        .map(|j| {
            base.get(j)?
                .get("name")
                .and_then(MetaValue::as_text)
                .map(str::to_owned)
        })
        .collect()
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
        out.push(
            Message::open_with(&bytes[r.clone()], limits).map_err(|source| Error::TensogramAt {
                path: path.to_path_buf(),
                message: i,
                offset: r.start as u64,
                source,
            })?,
        );
        pos = r.end;
    }
    if pos != bytes.len() || out.is_empty() {
        let at = pos;
        let e = Message::open_with(&bytes[at..], limits)
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
pub(super) fn read<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &crate::model::ReadOptions,
) -> Result<TensorSet<'a>> {
    let limits = &options.limits;
    let msgs = messages(path, bytes, limits)?;
    let mut tensors = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        // Every frame's hash, metadata frames included, before anything is trusted.
        if options.verify {
            m.verify_hashes().map_err(wrap(path))?;
        }
        for j in 0..m.len() {
            tensors.push(object_tensor(path, m, mi, j, limits)?);
        }
    }
    Ok(TensorSet {
        format: FormatId::Tensogram,
        metadata: file_metadata(path, &msgs[0])?,
        tensors,
        limits: *limits,
    })
}

/// Object `j` of message `mi`: a view when stored as it is, decoded on demand otherwise.
fn object_tensor<'a>(
    path: &Path,
    m: &Message<'a>,
    mi: usize,
    j: usize,
    limits: &Limits,
) -> Result<NamedTensor<'a>> {
    let object_names = object_names(m);
    let name = object_names.get(j).cloned().flatten();
    let named = wrap_named(path, &object_names);
    let o = m.object(j).map_err(&named)?;
    let base = base_entry(path, m, j)?;
    let stored = o.descriptor().dtype;
    let written = container::original_dtype(Some(&base), stored);
    let dtype = (written != stored).then_some(written);
    let data = match (o.view_as(written), dtype) {
        (Some(v), _) => TensorData::View(v),
        (None, d) => {
            o.check_decodable(limits).map_err(&named)?;
            TensorData::Encoded(lazy(path, name.clone(), o, d))
        }
    };
    Ok(NamedTensor {
        name,
        data,
        location: vec![("message", mi as u64), ("object", j as u64)],
        attributes: attributes(base),
    })
}

/// `base[j]` of a message (empty when `base` is shorter).
fn base_entry(path: &Path, m: &Message<'_>, j: usize) -> Result<Map> {
    Ok(m.metadata()
        .map_err(wrap(path))?
        .base
        .get(j)
        .cloned()
        .unwrap_or_default())
}

/// An object's attributes: its `base` entry but the keys the container itself uses.
fn attributes(base: Map) -> Vec<(String, Value)> {
    base.into_iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "name" | container::STORED_DTYPE | tensor_frame::metadata::RESERVED
            )
        })
        .map(|(k, v)| (k, Value::from(&v)))
        .collect()
}

/// The file metadata: the first message's `_extra_`.
fn file_metadata(
    path: &Path,
    first: &Message<'_>,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>> {
    let extra = &first.metadata().map_err(wrap(path))?.extra;
    Ok((!extra.is_empty()).then(|| {
        extra
            .iter()
            .map(|(k, v)| (k.clone(), to_json(&Value::from(v))))
            .collect()
    }))
}

/// The objects of every message as the metadata and index describe them: dtype and shape
/// from `base[i]._reserved_.tensor`, each object's span from the index. No data frame is
/// read: a message whose metadata lacks an object's `_reserved_.tensor` is an error here,
/// and the caller reads that object's frame instead ([`read_one`]).
#[cfg(feature = "remote")]
pub(super) fn list(
    path: &Path,
    bytes: &[u8],
    options: &crate::model::ReadOptions,
) -> Result<super::Listing> {
    let msgs = messages(path, bytes, &options.limits)?;
    let mut tensors = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        if options.verify {
            m.verify_section_hashes().map_err(wrap(path))?;
        }
        let start = m.bytes().as_ptr() as usize - bytes.as_ptr() as usize;
        let names = object_names(m);
        let meta = m.metadata().map_err(wrap(path))?;
        for (j, name) in names.into_iter().enumerate() {
            let (stored, shape) = reserved_layout(meta, j).ok_or_else(|| {
                wrap(path)(tensor_frame::Error::Metadata(format!(
                    "message {mi}, object {j}: the metadata does not give its dtype and shape \
                     (_reserved_.tensor); its frame must be read"
                )))
            })?;
            let base = base_entry(path, m, j)?;
            let (offset, length) = m.object_span(j);
            let at = start as u64 + offset;
            tensors.push(super::Listed {
                name,
                dtype: container::original_dtype(Some(&base), stored),
                shape,
                encoding: Some(NOT_READ.to_owned()),
                location: vec![("message", mi as u64), ("object", j as u64)],
                attributes: attributes(base),
                span: at..at.saturating_add(length),
                fetch: super::Fetch::Reparse,
            });
        }
    }
    Ok(super::Listing {
        format: FormatId::Tensogram,
        metadata: file_metadata(path, &msgs[0])?,
        tensors,
    })
}

/// What a listed object reports as its encoding until its frame is read.
#[cfg(feature = "remote")]
pub(crate) const NOT_READ: &str = "(not read yet)";

/// `_reserved_.tensor`'s dtype and shape for object `j`.
#[cfg(feature = "remote")]
fn reserved_layout(meta: &GlobalMetadata, j: usize) -> Option<(Dtype, Vec<u64>)> {
    let prefix = format!("{}.tensor", tensor_frame::metadata::RESERVED);
    let dtype: Dtype = meta
        .get(j, &format!("{prefix}.dtype"))?
        .as_text()?
        .parse()
        .ok()?;
    let shape = meta
        .get(j, &format!("{prefix}.shape"))?
        .as_array()?
        .iter()
        .map(|v| u64::try_from(v.as_integer()?).ok())
        .collect::<Option<Vec<u64>>>()?;
    Some((dtype, shape))
}

/// Object `i` of the file (counted across messages), with its own hash checked when the
/// options verify, as well as the message's metadata frames; no other data frame is read.
#[cfg(feature = "remote")]
pub(super) fn read_one<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &crate::model::ReadOptions,
    i: usize,
) -> Result<NamedTensor<'a>> {
    let msgs = messages(path, bytes, &options.limits)?;
    let mut first = 0;
    for (mi, m) in msgs.iter().enumerate() {
        if i < first + m.len() {
            let j = i - first;
            if options.verify {
                m.verify_section_hashes().map_err(wrap(path))?;
                let names = object_names(m);
                // As `verify_hashes` does for a whole message: a frame without a hash is
                // not checked, one with a hash must match it.
                let o = m.object(j).map_err(wrap_named(path, &names))?;
                if o.stored_hash().is_some() {
                    o.verify_hash().map_err(wrap_named(path, &names))?;
                }
            }
            return object_tensor(path, m, mi, j, &options.limits);
        }
        first += m.len();
    }
    Err(Error::UnknownTarget {
        what: format!("{}: no object #{i}", path.display()),
    })
}

/// An object that needs decoding, decoded only when asked: whole (one allocation, checked
/// against the limits first) or in runs (bounded memory), little-endian either way.
fn lazy<'a>(
    path: &Path,
    name: Option<String>,
    o: tensor_frame::ObjectFrame<'a>,
    dtype: Option<Dtype>,
) -> Lazy<'a> {
    let shape = o.descriptor().shape.clone();
    let dtype_out = dtype.unwrap_or(o.descriptor().dtype);
    let named = move |path: &Path| {
        let name = name.clone();
        let path = path.to_path_buf();
        move |source: tensor_frame::Error| match name.clone() {
            Some(tensor) => Error::TensogramTensor {
                path: path.clone(),
                tensor,
                source: Box::new(source),
            },
            None => wrap(&path)(source),
        }
    };
    let (w1, w2) = (named(path), named(path));
    let o2 = o.clone();
    let le = DecodeOptions {
        native_byte_order: false,
        ..DecodeOptions::default()
    };
    let big = o.descriptor().byte_order_or_native() == tensor_core::ByteOrder::Big;
    let swap = o.descriptor().dtype.swap_width();
    let d = o.descriptor();
    let stages: Vec<&str> = [&d.encoding, &d.filter, &d.compression]
        .into_iter()
        .map(String::as_str)
        .filter(|s| *s != "none")
        .collect();
    Lazy {
        encoding: stages.join("+"),
        dtype: dtype_out,
        shape: shape.clone(),
        decode: std::sync::Arc::new(move |limits| {
            let t = o.decode(DecodeOptions::default(), limits).map_err(&w1)?;
            match dtype {
                None => Ok(t),
                Some(d) => Ok(tensor_dtype::Tensor::new(
                    t.into_data(),
                    d,
                    &shape,
                    tensor_core::ByteOrder::NATIVE,
                )?),
            }
        }),
        stream: std::sync::Arc::new(move |limits, chunk, sink| {
            let mut run = Vec::new();
            let mut carried = super::Carried::default();
            let r = o2.decode_chunks(le, limits, chunk, &mut |c| {
                let out = if big && swap > 1 {
                    run.clear();
                    run.extend_from_slice(c);
                    tensor_core::byte_order::swap_in_place(&mut run, swap)?;
                    &run[..]
                } else {
                    c
                };
                sink(out).map_err(|e| carried.keep(e, tensor_frame::Error::Metadata))
            });
            carried.finish(r, &w2)?;
            Ok(())
        }),
    }
}

/// Writes every tensor into one message with `pipeline` applied to each.
pub(super) fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    pipeline: &PipelineSpec,
) -> Result<Vec<String>> {
    let names = set.names();
    let mut left_out: std::collections::BTreeMap<LeftOut, Vec<&str>> =
        std::collections::BTreeMap::new();
    let mut descriptors = Vec::with_capacity(set.tensors.len());
    let mut meta = GlobalMetadata::default();
    for (name, t) in names.iter().zip(&set.tensors) {
        let mut entry = Map::new();
        entry.insert("name".into(), MetaValue::from(name.as_str()));
        let Some(dtype) = container::storage_dtype(t.dtype()) else {
            return Err(Error::CannotRepresent {
                format: "tensogram",
                what: format!("dtype {} (tensor {name:?})", t.dtype()),
            });
        };
        container::record_dtype(&mut entry, t.dtype());
        let mut d = DataObjectDescriptor::new(dtype, t.shape(), tensor_core::ByteOrder::Little);
        for l in pipeline.apply(&mut d) {
            left_out.entry(l).or_default().push(name);
        }
        descriptors.push(d);
        for (k, val) in &t.attributes {
            entry.insert(k.clone(), MetaValue::from(val));
        }
        meta.base.push(entry);
    }
    if let Some(m) = &set.metadata {
        meta.extra = m
            .iter()
            .map(|(k, v)| (k.clone(), MetaValue::from(&to_cbor(v))))
            .collect();
    }
    // Lossless pipelines keep NaN and ±Inf bit for bit; lossy packing masks them.
    let opts = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        keep_non_finite: true,
        beyond_reference: pipeline.extensions(),
        ..EncodeOptions::default()
    };
    // Straight to the file, one tensor at a time: raw tensors are copied from the input as
    // they are written; decoded ones are encoded and dropped (and decoded again when a raw
    // frame is written), so one decoded tensor is held at a time.
    let mut carried = super::Carried::default();
    let written = tensor_frame::encode_to_streamed(
        &meta,
        &descriptors,
        &mut |i| {
            set.tensors[i]
                .le_bytes(&set.limits)
                .map_err(|e| carried.keep(e, tensor_frame::Error::InvalidArgument))
        },
        &opts,
        out,
    );
    let object_names: Vec<Option<String>> = names.iter().cloned().map(Some).collect();
    carried.finish(written, wrap_named(path, &object_names))?;
    Ok(left_out
        .into_iter()
        .map(|(l, tensors)| {
            let shown: Vec<String> = tensors.iter().take(3).map(|n| format!("{n:?}")).collect();
            let more = if tensors.len() > 3 { ", …" } else { "" };
            format!(
                "{} for {} tensor{} ({}{more}): {}",
                l.stage,
                tensors.len(),
                if tensors.len() == 1 { "" } else { "s" },
                shown.join(", "),
                l.why
            )
        })
        .collect())
}
