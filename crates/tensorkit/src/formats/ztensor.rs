//! zTensor, through tensor-ztensor (see docs/formats/ztensor.md).

use crate::adapter::{Adapter, Checked, EditedHeader, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Lazy, NamedTensor, TensorData, TensorSet};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
use tensor_core::atomic::WriteSeek;
use tensor_core::cbor::Encoder;
use tensor_core::cbor::Value;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo, TensorView};
use tensor_ztensor::v0_1::{self, TensorOptions};
use tensor_ztensor::{AnyZTensor, ChecksumKind, Generation};
use tensor_ztensor::{Ztensor01Format, Ztensor1Format, Ztensor2Format};

/// One zTensor generation, as the front door reads and writes it (reading any generation
/// tells it by itself).
pub(crate) struct Ztensor(Generation);

/// The registry's entries, oldest generation first.
pub(crate) static ADAPTERS: [Ztensor; 3] = [
    Ztensor(Generation::V0_1),
    Ztensor(Generation::V1),
    Ztensor(Generation::V2),
];

/// What a file of generation `g` is.
fn info(g: Generation) -> &'static FormatInfo {
    match g {
        Generation::V0_1 => &Ztensor01Format::INFO,
        Generation::V1 => &Ztensor1Format::INFO,
        Generation::V2 => &Ztensor2Format::INFO,
    }
}

impl Adapter for Ztensor {
    fn info(&self) -> &'static FormatInfo {
        info(self.0)
    }

    fn recognise(&self, head: &[u8]) -> bool {
        match self.0 {
            Generation::V0_1 => Ztensor01Format::recognise(head),
            Generation::V1 => Ztensor1Format::recognise(head),
            Generation::V2 => Ztensor2Format::recognise(head),
        }
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
        match self.0 {
            Generation::V0_1 => write(set, out, path),
            Generation::V2 => write_v2(set, out, path, writing.alignment).map(|()| Vec::new()),
            Generation::V1 => Err(Error::UnknownTarget {
                what: "zTensor 1.x is read only; write ztensor-2 (or ztensor-0.1)".into(),
            }),
        }
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        match self.0 {
            Generation::V0_1 => Ztensor01Format::header_ranges(held, limits),
            Generation::V1 => Ztensor1Format::header_ranges(held, limits),
            Generation::V2 => Ztensor2Format::header_ranges(held, limits),
        }
        .map_err(wrap(path))
    }

    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        _: &dyn Fn(std::ops::Range<u64>) -> bool,
    ) -> Result<crate::adapter::Opening<'a>> {
        open_header(path, bytes, options)
    }

    fn header_for_edit(
        &self,
        bytes: &[u8],
        old: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
    ) -> Result<Option<EditedHeader>> {
        if self.0 != Generation::V2 {
            return Ok(None);
        }
        header_for_edit(bytes, old, new, path)
    }

    fn verify_checksums(&self, path: &Path, bytes: &[u8]) -> Result<Checked> {
        AnyZTensor::open(bytes)
            .and_then(|z| {
                Ok(Checked {
                    verified: z.verify_all()?,
                    tolerated: z.warnings(),
                })
            })
            .map_err(wrap(path))
    }
}

/// The crate's errors with the file they concern.
fn wrap(path: &Path) -> impl Fn(tensor_ztensor::Error) -> Error + '_ {
    move |source| Error::format(path, "ztensor", source)
}

/// Tensor `i` of `file`, which needs decoding (compressed, or sparse), decoded only when
/// asked: whole, or — dense tensors — streamed in runs straight from the decompressor
/// (sparse ones are expanded whole and then cut into runs).
fn lazy<'a>(
    path: &Arc<Path>,
    file: &Arc<AnyZTensor<'a>>,
    i: usize,
    encoding: String,
    dtype: tensor_dtype::Dtype,
    shape: Vec<u64>,
) -> TensorData<'a> {
    let (whole, runs) = (Arc::clone(file), Arc::clone(file));
    let (p1, p2) = (Arc::clone(path), Arc::clone(path));
    TensorData::Encoded(Lazy {
        blocks: None,
        encoding,
        dtype,
        shape,
        packed: None,
        decode_into: None,
        decode: Arc::new(move |_| {
            whole
                .read(i)
                .and_then(tensor_ztensor::Decoded::into_tensor)
                .map_err(wrap(&p1))
        }),
        stream: Arc::new(move |_, chunk, sink| {
            // Only compressed and sparse tensors are lazy, and zstd data is always
            // little-endian: the runs need no swapping.
            let mut carried = super::Carried::default();
            let order = runs.read_chunks(i, chunk, &mut |c| {
                sink(c).map_err(|e| carried.keep(e, invalid_argument))
            });
            if carried.finish(order, wrap(&p2))?.is_some() {
                return Ok(());
            }
            // Sparse: expanded whole, then handed out in runs.
            let t = runs
                .read(i)
                .and_then(tensor_ztensor::Decoded::into_tensor)
                .map_err(wrap(&p2))?;
            crate::model::stream_view(&t.view(), sink)
        }),
    })
}

fn tensor_data(d: tensor_ztensor::Decoded<'_>) -> Result<TensorData<'_>> {
    Ok(match d.data {
        Cow::Borrowed(b) => TensorData::View(TensorView::new(b, d.dtype, &d.shape, d.byte_order)?),
        Cow::Owned(v) => TensorData::Owned(tensor_dtype::Tensor::new(
            v,
            d.dtype,
            &d.shape,
            d.byte_order,
        )?),
    })
}

/// Reads any zTensor generation.
fn read<'a>(path: &Path, bytes: &'a [u8], read: &ReadOptions) -> Result<TensorSet<'a>> {
    let limits = &read.limits;
    let any = Arc::new(AnyZTensor::open_with(bytes, read).map_err(wrap(path))?);
    let (format, count) = shape_of(&any);
    let shared: Arc<Path> = Arc::from(path);
    let tensors = (0..count)
        .map(|i| tensor(&shared, &any, i))
        .collect::<Result<Vec<_>>>()?;
    Ok(TensorSet {
        format,
        metadata: file_metadata(&any),
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        limits: *limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
}

/// The generation and the number of tensors.
fn shape_of(any: &AnyZTensor<'_>) -> (Format, usize) {
    match any {
        AnyZTensor::V0_1(f) => (Format::of(info(Generation::V0_1)), f.entries().len()),
        AnyZTensor::Later(c) => (Format::of(info(c.generation())), c.objects().len()),
    }
}

/// zTensor 1.x and 2 file attributes, as metadata (0.1 has none).
fn file_metadata(any: &AnyZTensor<'_>) -> Option<serde_json::Map<String, serde_json::Value>> {
    let AnyZTensor::Later(c) = any else {
        return None;
    };
    c.attributes().and_then(Value::as_map).map(|m| {
        m.iter()
            .filter_map(|(k, v)| {
                Some((k.as_text()?.to_owned(), tensor_core::cbor::json::to_json(v)))
            })
            .collect()
    })
}

/// Tensor `i` of any generation: raw dense tensors as views, their checksum or digest
/// checked (when `any` was opened to verify) before their elements are copied out but not
/// for a zero-copy view; compressed and sparse ones decoded on demand, checked as they are
/// decoded; anything this build cannot decode refused.
fn tensor<'a>(path: &Arc<Path>, any: &Arc<AnyZTensor<'a>>, i: usize) -> Result<NamedTensor<'a>> {
    let check = || -> Option<Arc<crate::model::CheckFn<'a>>> {
        let (any, path) = (Arc::clone(any), Arc::clone(path));
        any.verifies().then(|| {
            Arc::new(move || any.verify(i).map_err(wrap(&path))) as Arc<crate::model::CheckFn<'a>>
        })
    };
    match &**any {
        AnyZTensor::V0_1(file) => {
            let e = &file.entries()[i];
            let deferred = e.encoding == v0_1::Encoding::Zstd
                || (e.encoding == v0_1::Encoding::Raw
                    && matches!(e.layout, v0_1::Layout::SparseCsr | v0_1::Layout::SparseCoo));
            let (data, check) = match e.dtype {
                Some(dtype) if deferred => (
                    lazy(path, any, i, stages_v0_1(e), dtype, e.shape.clone()),
                    None,
                ),
                _ => (
                    tensor_data(file.read_unverified(i).map_err(wrap(path))?)?,
                    check(),
                ),
            };
            Ok(NamedTensor {
                name: Some(e.name.to_string()),
                data,
                location: Vec::new(),
                attributes: e
                    .custom
                    .iter()
                    .map(|c| (c.key.clone(), c.value.clone()))
                    .collect(),
                check,
            })
        }
        AnyZTensor::Later(c) => {
            let o = &c.objects()[i];
            let (data, check) = match o.dtype().ok() {
                Some(dtype) if !o.is_raw_dense() && decodable(o) => {
                    (lazy(path, any, i, stages(o), dtype, o.shape.to_vec()), None)
                }
                Some(_) if o.is_raw_dense() => (
                    tensor_data(c.read_unverified(i).map_err(wrap(path))?)?,
                    check(),
                ),
                _ => (tensor_data(c.read(i).map_err(wrap(path))?)?, None),
            };
            Ok(NamedTensor {
                name: Some(o.name.to_string()),
                data,
                location: Vec::new(),
                attributes: object_attributes(o),
                check,
            })
        }
    }
}

/// How a 0.1 tensor is stored, for people (`zstd`, `sparse_csr`, `zstd+sparse_coo`).
fn stages_v0_1(e: &v0_1::Entry<'_>) -> String {
    let mut stages = Vec::new();
    if e.encoding == v0_1::Encoding::Zstd {
        stages.push("zstd");
    }
    match e.layout {
        v0_1::Layout::SparseCsr => stages.push("sparse_csr"),
        v0_1::Layout::SparseCoo => stages.push("sparse_coo"),
        _ => {}
    }
    stages.join("+")
}

/// How a 1.x or 2 object is stored, for people.
fn stages(o: &tensor_ztensor::Object<'_>) -> String {
    let mut stages = Vec::new();
    if o.layout != "dense" {
        stages.push(&*o.layout);
    }
    if o.parts
        .iter()
        .any(|p| p.encoding != tensor_ztensor::PartEncoding::Raw)
    {
        stages.push("zstd");
    }
    stages.join("+")
}

fn decodable(o: &tensor_ztensor::Object<'_>) -> bool {
    o.parts
        .iter()
        .all(|p| !matches!(p.encoding, tensor_ztensor::PartEncoding::Other(_)))
}

fn object_attributes(o: &tensor_ztensor::Object<'_>) -> Vec<(String, Value)> {
    match &o.attributes {
        Some(Value::Map(m)) => m
            .iter()
            .filter_map(|(k, v)| Some((k.as_text()?.to_owned(), v.clone())))
            .collect(),
        _ => Vec::new(),
    }
}

/// The tensors of a zTensor file as its index or manifest describes them, each with the
/// bytes its parts occupy, and the index or manifest parsed (kept to read any tensor from
/// its own bytes, [`read_in`]); no tensor's bytes are read.
#[cfg(feature = "remote")]
fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    read: &ReadOptions,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    let any = AnyZTensor::open_with(bytes, read).map_err(wrap(path))?;
    let (format, _) = shape_of(&any);
    let unsupported = |name: &str| Error::CannotRepresent {
        format: "tensorkit",
        what: format!("tensor {name:?}: its dtype is not one this build reads"),
    };
    let tensors = match &any {
        AnyZTensor::V0_1(file) => file
            .entries()
            .iter()
            .map(|e| {
                let stages = stages_v0_1(e);
                Ok(Listed {
                    name: Some(e.name.to_string()),
                    dtype: e.dtype.ok_or_else(|| unsupported(&e.name))?,
                    shape: e.shape.clone(),
                    encoding: (!stages.is_empty()).then_some(stages),
                    location: Vec::new(),
                    attributes: e
                        .custom
                        .iter()
                        .map(|c| (c.key.clone(), c.value.clone()))
                        .collect(),
                    span: e.offset..e.offset.saturating_add(e.size),
                    fetch: Fetch::Decode,
                })
            })
            .collect::<Result<Vec<_>>>()?,
        AnyZTensor::Later(c) => c
            .objects()
            .iter()
            .map(|o| {
                let start = o.parts.iter().map(|p| p.offset).min().unwrap_or(0);
                let end = o
                    .parts
                    .iter()
                    .map(|p| p.offset.saturating_add(p.length))
                    .max()
                    .unwrap_or(0);
                Ok(Listed {
                    name: Some(o.name.to_string()),
                    dtype: o.dtype().map_err(wrap(path))?,
                    shape: o.shape.to_vec(),
                    encoding: (!o.is_raw_dense()).then(|| stages(o)),
                    location: Vec::new(),
                    attributes: object_attributes(o),
                    span: start..end.max(start),
                    fetch: Fetch::Decode,
                })
            })
            .collect::<Result<Vec<_>>>()?,
    };
    let listing = Listing {
        format,
        metadata: file_metadata(&any),
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        not_read: Vec::new(),
    };
    Ok(Opening::listed(listing, Manifest(any)))
}

/// A zTensor file's index or manifest, parsed at open.
#[cfg(feature = "remote")]
struct Manifest<'a>(AnyZTensor<'a>);

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Manifest<'_> {
    /// Tensor `i` from `bytes`, which hold the file over `span` and cover the tensor's
    /// parts; checked as the manifest's options say.
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        span: std::ops::Range<u64>,
        bytes: &'w [u8],
        _: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let window = self.0.window(i, bytes, span.start).map_err(wrap(path))?;
        tensor(&Arc::from(path), &Arc::new(window), i)
    }
}

/// Writes a canonical zTensor 2 file: metadata as file attributes, per-tensor attributes as
/// object attributes.
fn write_v2(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    alignment: Option<u64>,
) -> Result<()> {
    let names = set.names();
    let entries: Vec<tensor_ztensor::v2::ObjectEntry<'_>> = names
        .iter()
        .zip(&set.tensors)
        .map(|(n, t)| tensor_ztensor::v2::ObjectEntry {
            name: n,
            dtype: t.dtype(),
            shape: t.shape(),
            attributes: (!t.attributes.is_empty()).then(|| {
                Value::Map(
                    t.attributes
                        .iter()
                        .map(|(k, v)| (Value::Text(k.clone()), v.clone()))
                        .collect(),
                )
            }),
        })
        .collect();
    let attributes = set.metadata.as_ref().map(|m| {
        Value::Map(
            m.iter()
                .map(|(k, v)| (Value::Text(k.clone()), tensor_core::cbor::json::to_cbor(v)))
                .collect(),
        )
    });
    // One tensor decoded at a time, when the writer asks for it (twice: to digest it, then
    // to write it); an error from our side is kept whole and returned as it is.
    let mut carried = super::Carried::default();
    let written = tensor_ztensor::v2::write_streamed(
        out,
        &entries,
        attributes,
        alignment.unwrap_or(tensor_ztensor::CANONICAL_ALIGNMENT),
        &mut |i, w| {
            set.tensors[i]
                .write_canonical(&set.limits, w)
                .map_err(|e| carried.keep(e, std::io::Error::other))
        },
    );
    carried.finish(written, wrap(path))?;
    Ok(())
}

/// The stand-in zTensor error for one of ours ([`super::Carried`]).
fn invalid_argument(message: String) -> tensor_ztensor::Error {
    tensor_ztensor::Error::Core(tensor_core::Error::InvalidArgument(message))
}

/// Writes raw tensors with CRC-32C checksums, per-tensor attributes as custom keys.
fn write(set: &TensorSet<'_>, out: &mut dyn std::io::Write, path: &Path) -> Result<Vec<String>> {
    let mut dropped = Vec::new();
    if set.metadata.as_ref().is_some_and(|m| !m.is_empty()) {
        dropped.push("file-level metadata (zTensor 0.1 has none)".to_owned());
    }
    let names = set.names();
    let mut w = v0_1::Writer::new(out).map_err(wrap(path))?;
    // One tensor at a time, streamed in bounded runs (decoded as it goes, if need be).
    for (name, t) in names.iter().zip(&set.tensors) {
        // Keys the format reserves were left out before (`formats::write_tensors`).
        let custom = t
            .attributes
            .iter()
            .map(|(k, v)| {
                let mut e = Encoder::new();
                e.value(v);
                (k.clone(), e.out)
            })
            .collect();
        let options = TensorOptions {
            checksum: ChecksumKind::Crc32c,
            custom,
            ..TensorOptions::default()
        };
        let mut carried = super::Carried::default();
        let added = w.add_streamed(
            name,
            t.dtype(),
            t.shape(),
            &options,
            t.byte_len(),
            &mut |out| {
                t.write_canonical(&set.limits, out)
                    .map_err(|e| carried.keep(e, std::io::Error::other))
            },
        );
        carried.finish(added, wrap(path))?;
    }
    w.finish().map_err(wrap(path))?;
    Ok(dropped)
}

/// The patch an edit writes over the manifest of the zTensor 2 file `bytes` (which `old`
/// was read from, and `new` is an edit of): the file attributes the edit set or removed,
/// renamed objects and their new attributes, in the manifest as the file holds it
/// ([`tensor_ztensor::v2::manifest_in_place`]); the blobs before it stay where they are.
fn header_for_edit(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
) -> Result<Option<EditedHeader>> {
    let (set, removed) = super::metadata_changes(old, new);
    let edit = tensor_ztensor::v2::ManifestEdit {
        set: set
            .into_iter()
            .map(|(k, v)| (k.to_owned(), tensor_core::cbor::json::to_cbor(v)))
            .collect(),
        remove: removed.into_iter().map(str::to_owned).collect(),
        objects: old
            .names()
            .into_iter()
            .zip(new.names())
            .zip(old.tensors.iter().zip(&new.tensors))
            .filter(|((from, to), (was, is))| from != to || was.attributes != is.attributes)
            .map(|((from, to), (was, is))| {
                let attributes = (was.attributes != is.attributes).then(|| is.attributes.clone());
                (from, to, attributes)
            })
            .collect(),
    };
    let (offset, tail) = tensor_ztensor::v2::manifest_in_place(
        bytes,
        &tensor_core::ReadOptions::default().limits(old.limits),
        &edit,
    )
    .map_err(wrap(path))?;
    Ok(Some(EditedHeader::InPlace(tensor_core::patch::Patch {
        len: offset + tail.len() as u64,
        writes: vec![(offset, tail)],
    })))
}
