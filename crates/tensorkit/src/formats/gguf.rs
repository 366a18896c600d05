//! GGUF, through tensor-gguf (see docs/formats/gguf.md): dense tensors as views, quantized
//! ones decoded to float32 on demand with their blocks kept for a GGUF writer; metadata as
//! JSON values with each value's GGUF type beside it.

use crate::adapter::{Adapter, EditedHeader, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{BlockBytes, Blocks, Lazy, NamedTensor, TensorData, TensorSet};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use tensor_core::atomic::WriteSeek;
use tensor_core::{ByteOrder, Limits};
use tensor_core::{Held, ReadOptions};
use tensor_dtype::{Dtype, Tensor};
use tensor_dtype::{Format as _, FormatInfo};
use tensor_gguf::{GgmlType, Gguf, GgufFormat, Value};

const FORMAT: &str = "gguf";

/// GGUF, as the front door reads and writes it.
pub(crate) struct GgufAdapter;

/// The registry's entry.
pub(crate) static ADAPTER: GgufAdapter = GgufAdapter;

impl Adapter for GgufAdapter {
    fn info(&self) -> &'static FormatInfo {
        &GgufFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        GgufFormat::recognise(head)
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
        write(set, out, path, writing.header_reserve)?;
        Ok(Vec::new())
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        GgufFormat::header_ranges(held, limits).map_err(wrap(path))
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
        _: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
    ) -> Result<Option<EditedHeader>> {
        header_for_edit(bytes, new, path)
    }

    fn typed_metadata(&self, text: &str, recorded: &str) -> Option<Json> {
        tensor_gguf::json::text_as_type(text, recorded)
    }

    fn set_members(
        &self,
        path: &Path,
        bytes: &[u8],
        options: &ReadOptions,
    ) -> Result<Option<Vec<std::path::PathBuf>>> {
        split_set(path, bytes, options)
    }

    fn join_members<'a>(
        &self,
        paths: &[std::path::PathBuf],
        sets: Vec<TensorSet<'a>>,
    ) -> Result<TensorSet<'a>> {
        join_split(paths, sets)
    }
}

/// The format-neutral handle of a ggml type.
fn scheme(t: GgmlType) -> crate::model::BlockScheme {
    crate::model::BlockScheme {
        name: t.name(),
        block_elements: t.block_elements(),
        block_bytes: t.block_bytes(),
    }
}

/// The ggml type of blocks a set holds, which only GGUF makes.
fn ggml_type_of(scheme: crate::model::BlockScheme) -> Result<GgmlType> {
    GgmlType::from_name(scheme.name).ok_or_else(|| Error::CannotRepresent {
        format: FORMAT,
        what: format!("blocks of type {} (not a ggml type)", scheme.name),
    })
}

fn wrap(path: &Path) -> impl Fn(tensor_gguf::Error) -> Error + '_ {
    move |source| Error::format(path, FORMAT, source)
}

fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let file = Arc::new(Gguf::open_with(bytes, options).map_err(wrap(path))?);
    let (metadata, metadata_types) = metadata(&file);
    let tensors = (0..file.tensors().len())
        .map(|i| tensor(path, &file, i))
        .collect::<Result<_>>()?;
    Ok(TensorSet {
        format: Format::of(&GgufFormat::INFO),
        metadata: Some(metadata),
        metadata_types,
        tensors,
        limits: options.limits,
        mapped: Vec::new(),
    })
}

/// The metadata as JSON, and each key's GGUF type.
fn metadata(file: &Gguf<'_>) -> (Map<String, Json>, BTreeMap<String, String>) {
    let mut values = Map::new();
    let mut types = BTreeMap::new();
    // Room for edits in place is the writer's, not the model's.
    for (k, v) in file
        .metadata()
        .iter()
        .filter(|(k, _)| k != tensor_gguf::PADDING_KEY)
    {
        values.insert(k.to_string(), tensor_gguf::json::to_json(v));
        types.insert(k.to_string(), tensor_gguf::json::type_label(v));
    }
    (values, types)
}

/// Tensor `i`: a view when dense, decoded on demand when quantized.
fn tensor<'a>(path: &Path, file: &Arc<Gguf<'a>>, i: usize) -> Result<NamedTensor<'a>> {
    let info = &file.tensors()[i];
    if let Some(view) = file.view(i).map_err(wrap(path))? {
        return Ok(NamedTensor::borrowed(info.name, view));
    }
    Ok(NamedTensor {
        name: Some(info.name.to_owned()),
        data: TensorData::Encoded(quantized(
            path,
            info.name,
            info.ggml_type,
            info.shape.clone(),
            file.stored(i),
        )),
        location: Vec::new(),
        attributes: Vec::new(),
        check: None,
    })
}

/// A quantized tensor of `ggml_type` and element shape `shape` stored as `blocks`, decoded to
/// float32 on demand.
fn quantized<'a>(
    path: &Path,
    name: &str,
    ggml_type: GgmlType,
    shape: Vec<u64>,
    blocks: &'a [u8],
) -> Lazy<'a> {
    let elements: u64 = shape.iter().product();
    let (path, name) = (path.to_path_buf(), name.to_owned());
    let named = move |what: String| {
        Error::format(
            &path,
            FORMAT,
            tensor_gguf::Error::CannotDecode {
                name: name.clone(),
                what,
            },
        )
    };
    let decode_into = {
        let named = named.clone();
        move |limits: &Limits, out: &mut [u8]| -> Result<()> {
            limits.check_total_bytes(elements.saturating_mul(4))?;
            if out.len() as u64 != elements.saturating_mul(4) {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "the tensor dequantizes to {} bytes; the buffer has {}",
                    elements.saturating_mul(4),
                    out.len()
                ))
                .into());
            }
            tensor_gguf::dequant::to_f32_bytes(ggml_type, blocks, ByteOrder::Little, out)
                .map_err(&named)
        }
    };
    let decode = {
        let (named, shape) = (named.clone(), shape.clone());
        move |limits: &Limits| -> Result<Tensor> {
            limits.check_total_bytes(elements.saturating_mul(4))?;
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "dequantized tensor")?;
            dequantize(ggml_type, blocks, &mut values).map_err(&named)?;
            Ok(Tensor::from_elements(&shape, &values)?)
        }
    };
    // Runs of whole blocks, so that memory stays bounded whatever the tensor's size.
    let stream =
        move |_: &Limits, chunk: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>| -> Result<()> {
            let block_elements = ggml_type.block_elements() as usize;
            let block_bytes = ggml_type.block_bytes() as usize;
            let blocks_per_run = (chunk / (block_elements * 4)).max(1);
            let mut values = vec![0f32; blocks_per_run * block_elements];
            let mut le = Vec::with_capacity(values.len() * 4);
            for run in blocks.chunks(blocks_per_run * block_bytes) {
                let n = run.len() / block_bytes * block_elements;
                dequantize(ggml_type, run, &mut values[..n]).map_err(&named)?;
                le.clear();
                le.extend(values[..n].iter().flat_map(|v| v.to_le_bytes()));
                sink(&le)?;
            }
            Ok(())
        };
    float32_of_blocks(
        Blocks {
            scheme: scheme(ggml_type),
            bytes: BlockBytes::Stored(blocks),
        },
        shape,
        Arc::new(stream),
        Arc::new(decode),
        Arc::new(decode_into),
    )
}

/// A quantized tensor of `shape` read as float32 through the given decoders, with its blocks.
fn float32_of_blocks<'a>(
    blocks: Blocks<'a>,
    shape: Vec<u64>,
    stream: Arc<crate::model::StreamFn<'a>>,
    decode: Arc<crate::model::DecodeFn<'a>>,
    decode_into: Arc<crate::model::DecodeIntoFn<'a>>,
) -> Lazy<'a> {
    Lazy {
        encoding: blocks.scheme.name.to_owned(),
        dtype: Dtype::Float32,
        shape,
        stream,
        decode,
        packed: None,
        decode_into: Some(decode_into),
        blocks: Some(blocks),
    }
}

fn dequantize(t: GgmlType, blocks: &[u8], dst: &mut [f32]) -> std::result::Result<(), String> {
    tensor_gguf::dequant::to_f32(t, blocks, ByteOrder::Little, dst)
}

/// Lists a GGUF file whose header is held: dense tensors are read as stored, quantized ones
/// dequantized from their fetched blocks.
#[cfg(feature = "remote")]
fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    let file = Gguf::open_with(bytes, options).map_err(wrap(path))?;
    let (metadata, metadata_types) = metadata(&file);
    let order = file.header().byte_order;
    let tensors = file
        .tensors()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let dense = t.ggml_type.dense_dtype();
            Listed {
                name: Some(t.name.to_owned()),
                dtype: dense.unwrap_or(Dtype::Float32),
                shape: t.shape.clone(),
                encoding: dense.is_none().then(|| t.ggml_type.name().to_owned()),
                location: Vec::new(),
                attributes: Vec::new(),
                span: file.stored_range(i),
                fetch: match dense {
                    Some(_) => Fetch::Raw(t.ggml_type.stored_order(order)),
                    None => Fetch::Decode,
                },
            }
        })
        .collect();
    let listing = Listing {
        format: Format::of(&GgufFormat::INFO),
        metadata: Some(metadata),
        metadata_types,
        tensors,
    };
    let types = file
        .tensors()
        .iter()
        .map(|t| (t.name.to_owned(), t.ggml_type, t.shape.clone()))
        .collect();
    Ok(Opening::listed(listing, Types(types)))
}

/// A GGUF file's tensors: name, ggml type and shape, for dequantizing fetched blocks.
#[cfg(feature = "remote")]
struct Types(Vec<(String, GgmlType, Vec<u64>)>);

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Types {
    /// Tensor `i` of a remote file from its fetched blocks.
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        bytes: &'w [u8],
        _: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let (name, t, shape) = &self.0[i];
        Ok(NamedTensor {
            name: Some(name.clone()),
            data: TensorData::Encoded(quantized(path, name, *t, shape.clone(), bytes)),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        })
    }
}

/// Writes `set` as GGUF v3: metadata with the types recorded for it (else chosen as gguf-py
/// chooses them, floats that float32 cannot hold exactly as `FLOAT64`), dense tensors in
/// their own type, quantized ones as their stored blocks.
fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    header_reserve: u64,
) -> Result<()> {
    let reserve = tensor_core::checked::to_usize(header_reserve, "header reserve")?;
    // Blocks another format holds as `uint8` (written with `Dequantize::Raw`) are quantized
    // tensors again.
    let raw = raw_blocks(set);
    let metadata = metadata_values(set, !raw.is_empty())?;
    let names = set.names();
    let mut entries = Vec::with_capacity(set.tensors.len());
    for (name, t) in names.iter().zip(&set.tensors) {
        if let Some((ggml_type, shape)) = raw.get(name).filter(|(ty, shape)| {
            t.dtype() == Dtype::Uint8 && ty.bytes_for(shape.iter().product()) == Some(t.byte_len())
        }) {
            entries.push(tensor_gguf::Entry {
                name,
                ggml_type: *ggml_type,
                shape,
            });
            continue;
        }
        let ggml_type = match &t.data {
            TensorData::Encoded(Lazy {
                blocks: Some(b), ..
            }) => ggml_type_of(b.scheme)?,
            _ => GgmlType::for_dtype(t.dtype()).ok_or_else(|| Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "tensor {name:?} of dtype {} (GGUF stores float32, float16, bfloat16, float64, int8, int16, int32, int64 and ggml's quantized types)",
                    t.dtype()
                ),
            })?,
        };
        if t.shape().len() > tensor_gguf::MAX_DIMS as usize {
            return Err(Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "tensor {name:?} of {} dimensions (GGUF holds at most {})",
                    t.shape().len(),
                    tensor_gguf::MAX_DIMS
                ),
            });
        }
        entries.push(tensor_gguf::Entry {
            name,
            ggml_type,
            shape: t.shape(),
        });
    }
    let pairs: Vec<(&str, &Value<'_>)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let padding = Value::String(" ".repeat(reserve).into());
    let pairs = tensor_gguf::with_padding(&pairs, &padding);
    let mut carried = super::Carried::default();
    let written =
        tensor_gguf::write_streamed(out, &pairs, &entries, ByteOrder::Little, &mut |i, w| {
            let t = &set.tensors[i];
            let result = match &t.data {
                TensorData::Encoded(Lazy {
                    blocks: Some(b), ..
                }) => match &b.bytes {
                    BlockBytes::Stored(bytes) => w
                        .write_all(bytes)
                        .map_err(|e| tensor_core::Error::io("writing GGUF blocks", e).into()),
                    BlockBytes::Quantized(quantize) => quantize(&set.limits).and_then(|bytes| {
                        w.write_all(&bytes)
                            .map_err(|e| tensor_core::Error::io("writing GGUF blocks", e).into())
                    }),
                },
                _ => t.write_canonical(&set.limits, w),
            };
            result.map_err(|e| carried.keep(e, std::io::Error::other))
        });
    carried.finish(written, wrap(path))?;
    Ok(())
}

/// The set's metadata as GGUF values, in order (without [`RAW_BLOCKS_KEY`] when its blocks
/// are quantized tensors again).
fn metadata_values(set: &TensorSet<'_>, raw: bool) -> Result<Vec<(String, Value<'static>)>> {
    set.metadata
        .iter()
        .flatten()
        .filter(|(k, _)| !raw || k.as_str() != RAW_BLOCKS_KEY)
        .map(|(k, v)| {
            let recorded = set.metadata_types.get(k).map(String::as_str);
            let value = tensor_gguf::json::from_json(v, recorded).ok_or_else(|| Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "metadata value {k:?} = {v} (GGUF holds numbers, strings, booleans and arrays of one type)"
                ),
            })?;
            Ok((k.clone(), value))
        })
        .collect()
}

/// The header an edit writes over the header of the GGUF file `bytes` (which `set` was
/// read from, then given new names and metadata): in its place when it fits, or for a copy
/// of the file whose data section follows it as it is.
fn header_for_edit(bytes: &[u8], set: &TensorSet<'_>, path: &Path) -> Result<Option<EditedHeader>> {
    let header = tensor_gguf::Header::parse(
        bytes,
        bytes.len() as u64,
        &tensor_gguf::ReadOptions::default().limits(set.limits),
    )
    .map_err(wrap(path))?;
    let metadata = metadata_values(set, false)?;
    let pairs: Vec<(&str, &Value<'_>)> = metadata.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let names = set.names();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    if let Some(h) = tensor_gguf::header_in_place(&header, &pairs, &names).map_err(wrap(path))? {
        return Ok(Some(EditedHeader::at_start(h, bytes.len() as u64)));
    }
    // A new alignment moves every tensor: then the file is written anew.
    let moved = tensor_gguf::header_moved(&header, &pairs, &names).map_err(wrap(path))?;
    Ok(moved.map(|header_bytes| EditedHeader::Moved {
        header: header_bytes,
        data_start: header.data_offset,
    }))
}

/// The shards of the GGUF split set `bytes` (the file at `path`) is a shard of, in order;
/// `None` for a file on its own. Missing and extra shards are errors naming them.
fn split_set(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Option<Vec<std::path::PathBuf>>> {
    let header =
        tensor_gguf::Header::parse(bytes, bytes.len() as u64, options).map_err(wrap(path))?;
    let Some(shard) = tensor_gguf::split::Shard::of(&header).map_err(wrap(path))? else {
        return Ok(None);
    };
    // A local set's shards are checked to be there, and no other of its prefix beside them;
    // a remote set's are named the same way, and fetched (or found missing) when opened.
    let members = if crate::local::is_url(&path.to_string_lossy()) {
        tensor_gguf::split::shard_names(path, &shard)
    } else {
        tensor_gguf::split::shard_paths(path, &shard)
    };
    members.map(Some).map_err(wrap(path))
}

/// The sets of a split set's shards (read from `paths`) as one: checked to make one whole
/// set, joined, and — as `gguf-split --merge` leaves it — `split.count` set to 0, so that
/// the set written as one file is not taken for a shard.
fn join_split<'a>(paths: &[std::path::PathBuf], sets: Vec<TensorSet<'a>>) -> Result<TensorSet<'a>> {
    use tensor_gguf::split::{COUNT_KEY, NO_KEY, Shard, TENSORS_COUNT_KEY};
    let shards: Vec<(Option<Shard>, u64)> = sets
        .iter()
        .map(|s| {
            let m = s.metadata.as_ref();
            let get = |k: &str| m.and_then(|m| m.get(k)).and_then(Json::as_u64);
            let shard = match (get(NO_KEY), get(COUNT_KEY), get(TENSORS_COUNT_KEY)) {
                (Some(no), Some(count), Some(tensors)) => Some(Shard { no, count, tensors }),
                _ => None,
            };
            (shard, s.tensors.len() as u64)
        })
        .collect();
    let first = paths.first().map_or(Path::new(""), |p| p.as_path());
    tensor_gguf::split::check_set(paths, &shards).map_err(wrap(first))?;
    let mut one = crate::join::join(paths, sets)?;
    if let Some(count) = one.metadata.as_mut().and_then(|m| m.get_mut(COUNT_KEY)) {
        *count = Json::from(0);
    }
    Ok(one)
}

/// `set` with its weight matrices quantized to `ggml_type` when written as GGUF, as
/// llama.cpp's converters choose them: floating-point tensors of two dimensions or more whose
/// rows are whole blocks. The others — vectors (norms, biases), integers, tensors already
/// quantized, rows that are not whole blocks — are kept as they are, and said so (one note).
/// Quantization is gguf-py's, byte for byte (ggml's reference for `Q4_K` and `Q6_K`); it runs
/// as each tensor is written.
pub(crate) fn quantize<'a>(
    set: &TensorSet<'a>,
    ggml_type: GgmlType,
) -> Result<(TensorSet<'a>, Vec<String>)> {
    if !tensor_gguf::quant::can_quantize(ggml_type) {
        return Err(Error::UnknownTarget {
            what: format!(
                "quantizing to {ggml_type}: tensorkit makes Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (as gguf-py does), Q4_K and Q6_K (as ggml's reference does)"
            ),
        });
    }
    let mut out = set.clone();
    let mut kept = Vec::new();
    let names = set.names();
    for (t, name) in out.tensors.iter_mut().zip(names) {
        let float = matches!(
            t.dtype(),
            Dtype::Float32 | Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float64
        );
        let rows_fit = t
            .shape()
            .last()
            .is_some_and(|r| r % ggml_type.block_elements() == 0);
        if !float || t.shape().len() < 2 || !rows_fit || t.blocks().is_some() {
            kept.push(name);
            continue;
        }
        t.data = TensorData::Encoded(quantized_lazy(t.clone(), ggml_type));
    }
    let mut notes = Vec::new();
    if !kept.is_empty() {
        let shown: Vec<&str> = kept.iter().take(5).map(String::as_str).collect();
        notes.push(format!(
            "the {ggml_type} quantization of {} tensors, kept as they are (vectors, integers, tensors already quantized, rows that are not whole blocks): {}{}",
            kept.len(),
            shown.join(", "),
            if kept.len() > shown.len() { ", …" } else { "" }
        ));
    }
    Ok((out, notes))
}

/// `source` quantized to `t` when its blocks are asked for; read, the values it will hold.
fn quantized_lazy(source: NamedTensor<'_>, t: GgmlType) -> Lazy<'_> {
    let shape = source.shape().to_vec();
    let elements: u64 = shape.iter().product();
    let source = Arc::new(source);
    let blocks = {
        let source = Arc::clone(&source);
        move |limits: &Limits| -> Result<Vec<u8>> {
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            limits.check_total_bytes(elements.saturating_mul(4))?;
            let dense =
                GgmlType::for_dtype(source.dtype()).ok_or_else(|| Error::CannotRepresent {
                    format: FORMAT,
                    what: format!("dtype {} as values to quantize", source.dtype()),
                })?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "values to quantize")?;
            let le = source.le_bytes(limits)?;
            let fail = |what: String| {
                Error::format(Path::new(""), FORMAT, tensor_gguf::Error::CannotWrite(what))
            };
            tensor_gguf::dequant::to_f32(dense, &le, ByteOrder::Little, &mut values)
                .map_err(fail)?;
            let len = t.bytes_for(elements).unwrap_or_default();
            let mut out = tensor_core::buffer::try_filled(
                tensor_core::checked::to_usize(len, "quantized size")?,
                0u8,
                "quantized blocks",
            )?;
            tensor_gguf::quant::quantize(t, &values, &mut out).map_err(fail)?;
            Ok(out)
        }
    };
    let blocks: Arc<crate::model::QuantizeFn<'_>> = Arc::new(blocks);
    let values = {
        let blocks = Arc::clone(&blocks);
        move |limits: &Limits| -> Result<Vec<f32>> {
            let b = blocks(limits)?;
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "dequantized tensor")?;
            dequantize(t, &b, &mut values).map_err(|what| {
                Error::format(
                    Path::new(""),
                    FORMAT,
                    tensor_gguf::Error::CannotDecode {
                        name: String::new(),
                        what,
                    },
                )
            })?;
            Ok(values)
        }
    };
    let values = Arc::new(values);
    let decode = {
        let (values, shape) = (Arc::clone(&values), shape.clone());
        move |limits: &Limits| -> Result<Tensor> {
            Ok(Tensor::from_elements(&shape, &values(limits)?)?)
        }
    };
    let decode_into = {
        let values = Arc::clone(&values);
        move |limits: &Limits, out: &mut [u8]| -> Result<()> {
            let v = values(limits)?;
            if out.len() != v.len() * 4 {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "the tensor holds {} bytes; the buffer has {}",
                    v.len() * 4,
                    out.len()
                ))
                .into());
            }
            out.copy_from_slice(bytemuck::cast_slice(&v));
            Ok(())
        }
    };
    let stream = move |limits: &Limits,
                       chunk: usize,
                       sink: &mut dyn FnMut(&[u8]) -> Result<()>|
          -> Result<()> {
        let v = values(limits)?;
        let le: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        le.chunks((chunk / 4).max(1) * 4).try_for_each(sink)
    };
    float32_of_blocks(
        Blocks {
            scheme: scheme(t),
            bytes: BlockBytes::Quantized(blocks),
        },
        shape,
        Arc::new(stream),
        Arc::new(decode),
        Arc::new(decode_into),
    )
}

/// The file-metadata key under which [`Dequantize::Raw`] records each tensor's ggml type and
/// element shape (`{"name": {"type": "Q4_K", "shape": [4, 1024]}}`; its JSON text where
/// metadata holds only strings), so that writing the set as GGUF again stores those
/// tensors as the quantized blocks they are.
pub(crate) const RAW_BLOCKS_KEY: &str = "gguf.raw_blocks";

/// What a quantized GGUF tensor becomes when written to another format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequantize {
    /// float32, gguf-py's values (the default).
    Float32,
    /// float16: the float32 values rounded to nearest, ties to even.
    Float16,
    /// bfloat16: the float32 values rounded to nearest, ties to even.
    Bfloat16,
    /// Its blocks as stored, `uint8` shaped `[..., bytes per row]`, the ggml type and element
    /// shape recorded in the file metadata under `gguf.raw_blocks` (converted back to GGUF,
    /// they are those blocks again).
    Raw,
}

impl Dequantize {
    /// The choice called `name` (`float32`, `float16`, `bfloat16`, `raw`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "float32" => Dequantize::Float32,
            "float16" => Dequantize::Float16,
            "bfloat16" => Dequantize::Bfloat16,
            "raw" => Dequantize::Raw,
            _ => return None,
        })
    }
}

/// `set` with its quantized tensors as `how` says; the others as they are.
pub(crate) fn dequantize_as<'a>(set: &TensorSet<'a>, how: Dequantize) -> Result<TensorSet<'a>> {
    let mut out = set.clone();
    let mut recorded = Map::new();
    for (t, name) in out.tensors.iter_mut().zip(set.names()) {
        let Some((blocks, byte_shape)) = t.blocks() else {
            continue;
        };
        let lazy = match &t.data {
            TensorData::Encoded(l) => l.clone(),
            _ => continue,
        };
        match how {
            Dequantize::Float32 => {}
            Dequantize::Float16 | Dequantize::Bfloat16 => {
                let dtype = if how == Dequantize::Float16 {
                    Dtype::Float16
                } else {
                    Dtype::Bfloat16
                };
                t.data = TensorData::Encoded(narrowed(&lazy, dtype));
            }
            Dequantize::Raw => {
                let Some(bytes) = blocks.stored() else {
                    continue;
                };
                recorded.insert(
                    name.clone(),
                    serde_json::json!({"type": blocks.scheme.name, "shape": t.shape()}),
                );
                let view = tensor_dtype::TensorView::new(
                    bytes,
                    Dtype::Uint8,
                    &byte_shape,
                    ByteOrder::Little,
                )?;
                t.data = TensorData::View(view);
            }
        }
    }
    if !recorded.is_empty() {
        out.metadata
            .get_or_insert_with(Map::new)
            .insert(RAW_BLOCKS_KEY.to_owned(), Json::Object(recorded));
        out.metadata_types
            .insert(RAW_BLOCKS_KEY.to_owned(), "JSON".to_owned());
    }
    Ok(out)
}

/// `lazy`'s float32 values rounded to `dtype` (float16 or bfloat16).
fn narrowed<'a>(lazy: &Lazy<'a>, dtype: Dtype) -> Lazy<'a> {
    let to_bits = move |v: f32| -> [u8; 2] {
        if dtype == Dtype::Float16 {
            half::f16::from_f32(v).to_le_bytes()
        } else {
            half::bf16::from_f32(v).to_le_bytes()
        }
    };
    let source = lazy.clone();
    let stream = move |limits: &Limits,
                       chunk: usize,
                       sink: &mut dyn FnMut(&[u8]) -> Result<()>|
          -> Result<()> {
        let mut narrow = Vec::new();
        (source.stream)(limits, chunk.saturating_mul(2), &mut |run: &[u8]| {
            narrow.clear();
            narrow.extend(
                run.chunks_exact(4)
                    .flat_map(|b| to_bits(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            );
            sink(&narrow)
        })
    };
    let source = lazy.clone();
    let decode = move |limits: &Limits| -> Result<Tensor> {
        let wide = (source.decode)(limits)?;
        let bytes: Vec<u8> = wide
            .view()
            .to_le_bytes()
            .chunks_exact(4)
            .flat_map(|b| to_bits(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect();
        Ok(Tensor::new(bytes, dtype, &source.shape, ByteOrder::Little)?)
    };
    Lazy {
        encoding: format!("{} as {}", lazy.encoding, dtype.name()),
        dtype,
        shape: lazy.shape.clone(),
        stream: Arc::new(stream),
        decode: Arc::new(decode),
        packed: None,
        decode_into: None,
        blocks: None,
    }
}

/// The tensors of `set` that [`Dequantize::Raw`] wrote as `uint8` blocks, by name: their
/// ggml type and element shape, from [`RAW_BLOCKS_KEY`] (an object, or its JSON text).
fn raw_blocks(set: &TensorSet<'_>) -> std::collections::HashMap<String, (GgmlType, Vec<u64>)> {
    let Some(v) = set.metadata.as_ref().and_then(|m| m.get(RAW_BLOCKS_KEY)) else {
        return std::collections::HashMap::new();
    };
    let parsed;
    let object = match v {
        Json::Object(o) => o,
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Object(o)) => {
                parsed = o;
                &parsed
            }
            _ => return std::collections::HashMap::new(),
        },
        _ => return std::collections::HashMap::new(),
    };
    object
        .iter()
        .filter_map(|(name, e)| {
            let t = GgmlType::from_name(e.get("type")?.as_str()?)?;
            let shape = e
                .get("shape")?
                .as_array()?
                .iter()
                .map(Json::as_u64)
                .collect::<Option<Vec<u64>>>()?;
            Some((name.clone(), (t, shape)))
        })
        .collect()
}
