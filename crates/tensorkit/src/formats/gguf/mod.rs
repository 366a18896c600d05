//! GGUF, through tensor-gguf (see docs/formats/gguf.md): dense tensors as views, quantized
//! ones decoded to float32 on demand with their blocks kept for a GGUF writer; metadata as
//! JSON values with each value's GGUF type beside it.

mod blocks;
mod errors;
#[cfg(feature = "remote")]
mod listing;
mod quantize;
mod split;
mod values;

pub use quantize::Dequantize;
pub(crate) use quantize::{dequantize_as, quantize};
pub use split::write_split;

use crate::adapter::{Adapter, EditedHeader, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{BlockBytes, Lazy, NamedTensor, TensorData, TensorSet};
use blocks::{ggml_type_of, quantized, raw_blocks};
use errors::{FORMAT, wrap};
use serde_json::Value as Json;
use std::path::Path;
use std::sync::Arc;
use tensor_core::atomic::WriteSeek;
use tensor_core::{ByteOrder, Held, Limits, ReadOptions};
use tensor_dtype::{Dtype, Format as _, FormatInfo};
use tensor_gguf::{GgmlType, Gguf, GgufFormat, Value};
use values::{metadata, metadata_values};

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
        listing::open_header(path, bytes, options)
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
        split::split_set(path, bytes, options)
    }

    fn join_members<'a>(
        &self,
        paths: &[std::path::PathBuf],
        sets: Vec<TensorSet<'a>>,
    ) -> Result<TensorSet<'a>> {
        split::join_split(paths, sets)
    }
}

fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let file = Arc::new(Gguf::open_with(bytes, options).map_err(wrap(path))?);
    let (metadata, metadata_types) = metadata(&file);
    let tensors = (0..file.tensors().len())
        .map(|i| tensor(path, &file, i))
        .collect::<Result<_>>()?;
    Ok(TensorSet {
        format: Format::GGUF,
        metadata: Some(metadata),
        metadata_types,
        tensors,
        limits: options.limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
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
