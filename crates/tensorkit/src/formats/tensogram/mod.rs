//! Tensogram `.tgm` files, through tensor-frame (see docs/formats/tensogram.md).
//!
//! Every object of every message is one tensor, located by `message` and `object`; its name
//! is `base[i].name` when that is text, and the rest of `base[i]` becomes its attributes.
//! Writing puts every tensor in one message, file metadata in `_extra_`.

mod check;
mod source;

use crate::adapter::{Adapter, Checked, EditedHeader, Upgraded, Writing};
use crate::check::report::{Validation, Verification};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Lazy, NamedTensor, TensorData, TensorSet};
use crate::pipeline_spec::{LeftOut, PipelineSpec};
use std::path::Path;
use std::sync::Arc;
use tensor_core::atomic::WriteSeek;
use tensor_core::cbor::Value;
use tensor_core::cbor::json::{to_cbor, to_json};
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::Format as _;
use tensor_dtype::{Dtype, FormatInfo, ValidateOptions};
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Map, Message, container};
use tensor_frame::{Messages, MetaValue, TensogramFormat};

/// Tensogram, as the front door reads and writes it.
pub(crate) struct Tensogram;

/// The registry's entry.
pub(crate) static ADAPTER: Tensogram = Tensogram;

const FORMAT: &str = TensogramFormat::INFO.id;

impl Adapter for Tensogram {
    fn info(&self) -> &'static FormatInfo {
        &TensogramFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        TensogramFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        read(path, bytes, options)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        path: &Path,
        writing: &Writing<'_>,
    ) -> Result<Vec<String>> {
        write(set, out, path, writing.pipeline)
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        TensogramFormat::header_ranges(held, limits).map_err(wrap(path))
    }

    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        held: &dyn Fn(std::ops::Range<u64>) -> bool,
    ) -> Result<crate::adapter::Opening<'a>> {
        open_header(path, bytes, options, held)
    }

    fn header_for_edit(
        &self,
        bytes: &[u8],
        old: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
    ) -> Result<Option<EditedHeader>> {
        header_for_edit(bytes, old, new, path)
    }

    fn write_edited(
        &self,
        bytes: &[u8],
        old: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
        out: &mut dyn WriteSeek,
    ) -> Result<Option<Vec<String>>> {
        write_edited(bytes, old, new, path, out)?;
        Ok(Some(Vec::new()))
    }

    fn verify_checksums(&self, _: &Path, _: &[u8]) -> Result<Checked> {
        Ok(Checked::default())
    }

    fn validate(
        &self,
        _: &Path,
        bytes: &[u8],
        options: ValidateOptions,
        limits: &Limits,
    ) -> Option<Validation> {
        Some(check::validate(bytes, options, limits).0)
    }

    fn verify(&self, path: &Path, bytes: &[u8], limits: &Limits) -> Option<Result<Verification>> {
        let decode_all = |bytes: &[u8]| -> Result<usize> {
            let set = read(path, bytes, &ReadOptions::default().limits(*limits))?;
            set.decode_every_tensor()?;
            Ok(set.tensors.len())
        };
        Some(check::verify(path, bytes, limits, decode_all))
    }

    fn upgrade(&self, path: &Path, bytes: &[u8], limits: &Limits) -> Result<Option<Upgraded>> {
        if !tensor_frame::v2::holds_v2(bytes) {
            return Ok(None);
        }
        let m = tensor_frame::v2::migrate(bytes, limits).map_err(wrap(path))?;
        Ok(Some(Upgraded {
            report: crate::adapter::Migrated {
                v2_messages: m.v2_messages,
                v3_messages: m.v3_messages,
                objects: m.v2_objects,
                hashes_verified: m.hashes_verified,
                bytes: m.bytes.len() as u64,
                notes: m.notes,
            },
            bytes: m.bytes,
        }))
    }
}

/// The crate's errors with the file they concern.
fn wrap(path: &Path) -> impl Fn(tensor_frame::Error) -> Error + '_ {
    move |source| Error::format(path, FORMAT, source)
}

/// Like [`wrap`], naming the tensor an object error concerns: `names[i]` is object `i`'s
/// name, when the message gives one.
pub(crate) fn wrap_named<'p>(
    path: &'p Path,
    names: &'p [Option<String>],
) -> impl Fn(tensor_frame::Error) -> Error + 'p {
    move |source| match source.object().and_then(|i| names.get(i)?.clone()) {
        Some(tensor) => Error::format_at(path, FORMAT, format!("tensor {tensor:?}"), source),
        None => wrap(path)(source),
    }
}

/// Like [`wrap`], naming the tensor (when it has a name) an object error concerns.
fn wrap_one(path: &Path, name: Option<String>) -> impl Fn(tensor_frame::Error) -> Error + use<> {
    let path = path.to_path_buf();
    move |source| match name.clone() {
        Some(tensor) => Error::format_at(&path, FORMAT, format!("tensor {tensor:?}"), source),
        None => wrap(&path)(source),
    }
}

/// The messages of `bytes`, which must cover the file, opened with `options` (the hashes
/// of the frames that describe the data checked unless `options.verify` is `Never`).
pub(crate) fn messages<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<Vec<Message<'a>>> {
    match Messages::open_with(bytes, options) {
        Ok(m) => Ok(m.into_messages()),
        Err(tensor_frame::Error::InMessage {
            index,
            offset,
            source,
        }) => Err(Error::format_at(
            path,
            FORMAT,
            format!("message {index} (at byte {offset})"),
            *source,
        )),
        Err(e) => Err(wrap(path)(e)),
    }
}

/// Reads every object of every message.
fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let limits = &options.limits;
    // The hashes of the frames that describe the data are checked as the messages open;
    // each data frame's when its elements are copied out or checked
    // (`NamedTensor::check`), so opening reads no data.
    let msgs = messages(path, bytes, options)?;
    let mut tensors = Vec::new();
    for (mi, m) in msgs.iter().enumerate() {
        for j in 0..m.len() {
            tensors.push(object_tensor(path, m, mi, j, options.verify.any(), limits)?);
        }
    }
    Ok(TensorSet {
        format: Format::TENSOGRAM,
        metadata: file_metadata(path, &msgs[0])?,
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        limits: *limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
}

/// Object `j` of message `mi`: a view when stored as it is, decoded on demand otherwise.
fn object_tensor<'a>(
    path: &Path,
    m: &Message<'a>,
    mi: usize,
    j: usize,
    verify: bool,
    limits: &Limits,
) -> Result<NamedTensor<'a>> {
    frame_tensor(path, m, (mi, j), || m.object(j), verify, limits)
}

/// Object `j` of message `mi`, its frame from `frame` (the message's, or one fetched on its
/// own), its hash checked when `verify` before its elements are copied out or when asked
/// (a frame without one is not checked, as for a whole message).
fn frame_tensor<'a>(
    path: &Path,
    m: &Message<'_>,
    (mi, j): (usize, usize),
    frame: impl FnOnce() -> tensor_frame::Result<tensor_frame::ObjectFrame<'a>>,
    verify: bool,
    limits: &Limits,
) -> Result<NamedTensor<'a>> {
    let base = base_entry(path, m, j)?;
    let name = object_name(&base);
    let named = wrap_one(path, name.clone());
    let o = frame().map_err(&named)?;
    let check = (verify && o.stored_hash().is_some()).then(|| {
        let frame = o.hash_check();
        Arc::new(move || frame.verify().map_err(&named)) as Arc<crate::model::CheckFn<'a>>
    });
    Ok(NamedTensor {
        data: object_data(path, name.clone(), o, &base, limits)?,
        name,
        location: vec![("message", mi as u64), ("object", j as u64)],
        attributes: container::attributes(base),
        check,
    })
}

/// An object's elements: a view when stored as they are (in the dtype `base` records),
/// decoded on demand otherwise.
fn object_data<'a>(
    path: &Path,
    name: Option<String>,
    o: tensor_frame::ObjectFrame<'a>,
    base: &Map,
    limits: &Limits,
) -> Result<TensorData<'a>> {
    let stored = o.descriptor().dtype;
    let written = container::original_dtype(Some(base), stored);
    let dtype = (written != stored).then_some(written);
    Ok(match (o.view_as(written), dtype) {
        (Some(v), _) => TensorData::View(v),
        (None, d) => {
            o.check_decodable(limits)
                .map_err(wrap_one(path, name.clone()))?;
            TensorData::Encoded(lazy(path, name, o, d))
        }
    })
}

/// The name `base` gives an object, when it gives one as text.
fn object_name(base: &Map) -> Option<String> {
    base.get("name")
        .and_then(MetaValue::as_text)
        .map(str::to_owned)
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

/// The objects of every message as the metadata and index describe them, and the messages
/// parsed (kept to read objects from their frames' bytes alone). Dtype and shape come from
/// `base[i]._reserved_.tensor`, each object's span from the index; no data frame is read,
/// except where the metadata lacks an object's `_reserved_.tensor`: its frame must be among
/// the bytes held (`held` says which are), or it is asked for.
#[cfg(feature = "remote")]
fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
    held: &dyn Fn(std::ops::Range<u64>) -> bool,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    let messages = messages(path, bytes, options)?;
    let mut tensors = Vec::new();
    let mut at = Vec::new();
    let mut needed = Vec::new();
    for (mi, m) in messages.iter().enumerate() {
        let start = (m.bytes().as_ptr() as usize - bytes.as_ptr() as usize) as u64;
        let meta = m.metadata().map_err(wrap(path))?;
        for j in 0..m.len() {
            let base = base_entry(path, m, j)?;
            let name = object_name(&base);
            let (offset, length) = m.object_span(j);
            let span = start + offset..(start + offset).saturating_add(length);
            let (dtype, shape, encoding) = match meta.recorded_layout(j) {
                Some((stored, shape)) => (
                    container::original_dtype(Some(&base), stored),
                    shape,
                    Some(NOT_READ.to_owned()),
                ),
                None if held(span.clone()) => {
                    let o = m.object(j).map_err(wrap_one(path, name.clone()))?;
                    let d = o.descriptor();
                    let stages = stages(d);
                    (
                        container::original_dtype(Some(&base), d.dtype),
                        d.shape.clone(),
                        (!stages.is_empty()).then_some(stages),
                    )
                }
                None => {
                    needed.push(span);
                    continue;
                }
            };
            tensors.push(Listed {
                name,
                dtype,
                shape,
                encoding,
                location: vec![("message", mi as u64), ("object", j as u64)],
                attributes: container::attributes(base),
                span,
                fetch: Fetch::Decode,
            });
            at.push((mi, j));
        }
    }
    if !needed.is_empty() {
        return Ok(Opening::needs(needed));
    }
    let listing = Listing {
        format: Format::TENSOGRAM,
        metadata: file_metadata(path, &messages[0])?,
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        not_read: Vec::new(),
    };
    Ok(Opening::listed(listing, Header { messages, at }))
}

/// A Tensogram file's messages, parsed once, and where each object is: message and object
/// index, in file order.
#[cfg(feature = "remote")]
struct Header<'a> {
    messages: Vec<Message<'a>>,
    at: Vec<(usize, usize)>,
}

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Header<'_> {
    /// Object `i` of the file (counted across messages) from `frame`, its frame's bytes
    /// alone, with its hash checked when the options verify.
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        frame: &'w [u8],
        options: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let (verify, limits) = (options.verify.any(), &options.limits);
        let &(mi, j) = self.at.get(i).ok_or_else(|| Error::UnknownTarget {
            what: format!("{}: no object #{i}", path.display()),
        })?;
        let m = &self.messages[mi];
        frame_tensor(path, m, (mi, j), || m.object_in(j, frame), verify, limits)
    }
}

/// What a listed object reports as its encoding until its frame is read.
#[cfg(feature = "remote")]
pub(crate) const NOT_READ: &str = "(not read yet)";

/// How an object is encoded, for people: its stages joined by `+` (`simple_packing+zstd`).
fn stages(d: &DataObjectDescriptor) -> String {
    let stages: Vec<&str> = [&d.encoding, &d.filter, &d.compression]
        .into_iter()
        .map(String::as_str)
        .filter(|s| *s != "none")
        .collect();
    stages.join("+")
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
    let (w1, w2) = (wrap_one(path, name.clone()), wrap_one(path, name));
    let o2 = o.clone();
    let le = DecodeOptions {
        native_byte_order: false,
        ..DecodeOptions::default()
    };
    let big = o.descriptor().byte_order_or_native() == tensor_core::ByteOrder::Big;
    let swap = o.descriptor().dtype.swap_width();
    Lazy {
        blocks: None,
        encoding: stages(o.descriptor()),
        dtype: dtype_out,
        shape: shape.clone(),
        packed: None,
        decode_into: None,
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
            let mut carried = crate::formats::Carried::default();
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
fn write(
    set: &TensorSet<'_>,
    out: &mut dyn tensor_core::atomic::WriteSeek,
    path: &Path,
    pipeline: &PipelineSpec,
) -> Result<Vec<String>> {
    let names = set.names();
    let mut left_out: std::collections::BTreeMap<LeftOut, Vec<&str>> =
        std::collections::BTreeMap::new();
    let mut descriptors = Vec::with_capacity(set.tensors.len());
    let mut kept: Vec<Option<Vec<u8>>> = vec![None; set.tensors.len()];
    let mut meta = GlobalMetadata::default();
    for (i, (name, t)) in names.iter().zip(&set.tensors).enumerate() {
        let mut entry = Map::new();
        let Some(dtype) = container::storage_dtype(t.dtype()) else {
            return Err(Error::CannotRepresent {
                format: FORMAT,
                what: format!("dtype {} (tensor {name:?})", t.dtype()),
            });
        };
        container::record_dtype(&mut entry, t.dtype());
        let mut d = DataObjectDescriptor::new(dtype, t.shape(), tensor_core::ByteOrder::Little);
        let packed = if pipeline.keeps_packing() {
            match packed_form(t, &set.limits)? {
                None => None,
                Some(Ok(p)) => Some(p),
                Some(Err(why)) => {
                    let stage = "keep";
                    left_out
                        .entry(LeftOut { stage, why })
                        .or_default()
                        .push(name);
                    None
                }
            }
        } else {
            None
        };
        match packed {
            Some(p) => kept[i] = Some(keep_packing(&mut d, p)),
            None => {
                for l in pipeline.apply(&mut d) {
                    left_out.entry(l).or_default().push(name);
                }
            }
        }
        descriptors.push(d);
        for (k, val) in &t.attributes {
            entry.insert(k.clone(), MetaValue::from(val));
        }
        // The tensor's name, whatever its attributes hold; an unnamed one stays unnamed.
        if t.name.is_some() {
            entry.insert("name".into(), MetaValue::from(name.as_str()));
        }
        meta.base.push(entry);
    }
    if let Some(m) = &set.metadata {
        meta.extra = m
            .iter()
            .map(|(k, v)| (k.clone(), MetaValue::from(&to_cbor(v))))
            .collect();
    }
    // NaN and ±Inf go into masks, as tensogram writes them, so that its full validation
    // passes; with extensions allowed, lossless pipelines keep them bit for bit instead (NaN
    // payloads included), which tensogram decodes but flags as `nan_detected`.
    let opts = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        keep_non_finite: pipeline.extensions(),
        beyond_reference: pipeline.extensions(),
        ..EncodeOptions::default()
    };
    // Straight to the file, one tensor at a time: raw tensors are read (decoded where they
    // are stored encoded) a run at a time, once to find their NaN and ±Inf and again as
    // their frames are written; those a stage encodes are decoded whole, encoded and dropped.
    let mut source = source::Source {
        format: FORMAT,
        set,
        names: &names,
        kept: &kept,
        dtypes: descriptors.iter().map(|d| d.dtype).collect(),
        masked: !opts.keep_non_finite,
        nan_bits: !pipeline.canonical_nan(),
        checked: vec![false; descriptors.len()],
        carried: crate::formats::Carried::default(),
    };
    let written = tensor_frame::write_from(&meta, &descriptors, &mut source, &opts, out);
    let carried = source.carried;
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

/// A packed tensor's packed form for `keep` (`None` for a tensor not stored packed), or why
/// Tensogram cannot hold it so.
fn packed_form(
    t: &crate::model::NamedTensor<'_>,
    limits: &tensor_core::Limits,
) -> Result<Option<std::result::Result<crate::model::Packed, String>>> {
    match &t.data {
        TensorData::Encoded(Lazy {
            blocks: None,
            packed: Some(pack),
            ..
        }) => {
            // The packed bytes are copied as they are: checked first, as a decode would be.
            t.verify()?;
            pack(limits).map(Some)
        }
        _ => Ok(None),
    }
}

/// Sets `d` to hold `p` as it is (`simple_packing`, then `szip` when `p` is szip-coded), and
/// returns the payload.
fn keep_packing(d: &mut DataObjectDescriptor, p: crate::model::Packed) -> Vec<u8> {
    use tensor_frame::descriptor::ParamValue as V;
    d.encoding = "simple_packing".into();
    let sp = [
        ("sp_bits_per_value", V::from(u64::from(p.bits_per_value))),
        ("sp_reference_value", V::from(p.reference_value)),
        (
            "sp_binary_scale_factor",
            V::from(i64::from(p.binary_scale_factor)),
        ),
        (
            "sp_decimal_scale_factor",
            V::from(i64::from(p.decimal_scale_factor)),
        ),
    ];
    d.params.extend(sp.map(|(k, v)| (k.to_owned(), v)));
    if let Some(s) = p.szip {
        d.compression = "szip".into();
        let offsets = s.block_offsets.into_iter().map(V::from).collect::<Vec<_>>();
        let szip = [
            ("szip_rsi", V::from(u64::from(s.rsi))),
            ("szip_block_size", V::from(u64::from(s.block_size))),
            ("szip_flags", V::from(u64::from(s.flags))),
            ("szip_block_offsets", V::Array(offsets)),
        ];
        d.params.extend(szip.map(|(k, v)| (k.to_owned(), v)));
    }
    p.payload
}

/// The Tensogram file `bytes` (which `old` was read from, and `new` is an edit of) written
/// to `out` with the edit ([`edited_metadata`]): every message re-framed with its objects'
/// descriptors and encoded payloads as they are ([`tensor_frame::reframe_to`], which writes
/// each payload from the file's mapping: the memory of a header, whatever the message's
/// size).
fn write_edited(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn tensor_core::atomic::WriteSeek,
) -> Result<()> {
    let (set, removed) = crate::formats::metadata_changes(old, new);
    let msgs = messages(path, bytes, &ReadOptions::default().limits(old.limits))?;
    let mut tensors = new.tensors.iter();
    for m in &msgs {
        let meta = edited_metadata(m, &set, &removed, &mut tensors, path)?;
        tensor_frame::reframe_to(m, &meta, out).map_err(wrap(path))?;
    }
    Ok(())
}

/// The edit of a Tensogram file in place, when every message's new metadata frame takes
/// exactly the bytes its old one and its padding took
/// ([`tensor_frame::metadata_in_place`]: a value of the same length, or one that stays
/// within the frame's alignment padding); `None` otherwise (the file is re-framed,
/// [`write_edited`]).
fn header_for_edit(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
) -> Result<Option<EditedHeader>> {
    let (set, removed) = crate::formats::metadata_changes(old, new);
    let msgs = messages(path, bytes, &ReadOptions::default().limits(old.limits))?;
    let mut tensors = new.tensors.iter();
    let mut writes = Vec::new();
    for m in &msgs {
        let meta = edited_metadata(m, &set, &removed, &mut tensors, path)?;
        let Some((at, frame)) = tensor_frame::metadata_in_place(m, &meta).map_err(wrap(path))?
        else {
            return Ok(None);
        };
        // The message's offset in the file it was read from.
        let start = (m.bytes().as_ptr() as usize)
            .checked_sub(bytes.as_ptr() as usize)
            .filter(|s| s + m.bytes().len() <= bytes.len())
            .ok_or_else(|| Error::Edit {
                path: path.to_path_buf(),
                what: "a message that does not lie in the file".into(),
            })?;
        writes.push((start as u64 + at, frame));
    }
    Ok(Some(EditedHeader::InPlace(tensor_core::patch::Patch {
        writes,
        len: bytes.len() as u64,
    })))
}

/// Message `m`'s global metadata with an edit made: the metadata keys the edit set or
/// removed set or removed in its `_extra_` (a file's metadata is its first message's, but a
/// key set on the file is set on each message); each object's name and attributes those of
/// the next tensor of `tensors` (the edited set's, in file order, message by message).
fn edited_metadata<'t>(
    m: &tensor_frame::Message<'_>,
    set: &[(&str, &serde_json::Value)],
    removed: &[&str],
    tensors: &mut impl Iterator<Item = &'t crate::model::NamedTensor<'t>>,
    path: &Path,
) -> Result<tensor_frame::GlobalMetadata> {
    let mut meta = m.metadata().map_err(wrap(path))?.clone();
    for (k, v) in set {
        meta.extra
            .insert((*k).to_owned(), MetaValue::from(&to_cbor(v)));
    }
    for k in removed {
        meta.extra.remove(*k);
    }
    meta.base.resize(m.len().max(meta.base.len()), Map::new());
    for entry in meta.base.iter_mut().take(m.len()) {
        let t = tensors.next().ok_or_else(|| Error::Edit {
            path: path.to_path_buf(),
            what: "the file holds more objects than were read".into(),
        })?;
        entry.retain(|k, _| tensor_frame::TensogramFormat::INFO.reserves(k));
        for (k, v) in &t.attributes {
            entry.insert(k.clone(), MetaValue::from(v));
        }
        if let Some(name) = &t.name {
            entry.insert("name".into(), MetaValue::from(name.as_str()));
        }
    }
    Ok(meta)
}
