//! Saving: [`WriteOptions`], [`save`] (an open file in another format), [`save_set`] (a
//! tensor set, changed or put together), [`save_tensors`] and [`serialize_tensors`] (any
//! views).

use super::File;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
#[cfg(feature = "frame")]
use crate::pipeline_spec::PipelineSpec;
use crate::write::{Choices, Progress};
use std::borrow::Cow;
use std::path::Path;
use tensor_dtype::TensorView;

/// How to write a file, for every format.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The format; `None` follows the output's extension (`.safetensors`, `.bt`, `.zt` for
    /// zTensor 2, `.tgm`).
    pub format: Option<Format>,
    /// File-level metadata to write instead of the source's (`save`) or at all
    /// (`save_tensors`).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// Tensogram output only: the encoding stages, chosen per tensor.
    #[cfg(feature = "frame")]
    pub pipeline: PipelineSpec,
    /// Attributes of the tensors written by [`save_tensors`] and [`serialize_tensors`], by
    /// tensor name: each a JSON object of keys (a GRIB field's keys — `shortName`, `level`,
    /// `gridType`, `Ni`... — a zTensor object's attributes, a Tensogram object's `base`
    /// entry). Formats without per-tensor attributes leave them out, with a note.
    pub attributes: Option<serde_json::Map<String, serde_json::Value>>,
    /// GRIB output only: how each field's values are packed — `simple`, `simple:BITS`,
    /// `ccsds`, `ccsds:BITS`, `ieee`, `ieee64`. `None` (the default) packs a field read from
    /// GRIB as its kept sections say (the message comes back byte for byte when the values
    /// are unchanged) and any other tensor as ecCodes packs a field of a sample: simple
    /// packing at 16 bits per value.
    pub packing: Option<String>,
    /// Write a shard set instead of one file: shards of at most this many bytes of tensor
    /// data beside `path`, and `<path>.index.json` (the Hugging Face layout; see
    /// [`crate::shards`]).
    pub max_shard_size: Option<u64>,
    /// Where the format lets the writer choose it — zTensor 2 — blobs start at multiples of
    /// this many bytes: a power of two, at least 4096. `None` writes the canonical 64 KiB,
    /// byte-identical to the reference's canonical writer. Every other format fixes its own
    /// layout (safetensors and BinTensors pack tensors after an 8-byte-padded header,
    /// zTensor 0.1 aligns to 64, Tensogram frames to 8), and refuses a value.
    pub alignment: Option<u64>,
    /// safetensors and GGUF output: room for this many more bytes of header, so that later
    /// metadata edits fit in place ([`crate::edit()`]) — safetensors pads its JSON with
    /// spaces, GGUF holds the room in a `tensorkit.padding` string of spaces. Every reader
    /// accepts both. `None` (the default) leaves the format's own default room
    /// ([`FormatInfo::header_reserve`](tensor_dtype::FormatInfo)): 4 KiB of spaces in
    /// safetensors, none in GGUF, whose room is a key that readers list. `Some(0)` writes
    /// exactly what the reference writers write.
    pub header_reserve: Option<u64>,
    /// Whether a written file is also synced to disk before it is renamed into place, to
    /// survive a power failure once `save` returns ([`Durability::Synced`](crate::Durability),
    /// fsync). The default leaves writing back to the kernel, as `cp` does; either way the
    /// file appears under its name only when complete.
    pub durability: crate::Durability,
    /// GGUF output only: quantize the weight matrices to this ggml type, as llama.cpp's
    /// converters choose them — floating-point tensors of two dimensions or more whose rows
    /// are whole blocks — byte for byte as gguf-py quantizes; the others are kept as they
    /// are, and said so in the notes `save` returns.
    #[cfg(feature = "gguf")]
    pub quantize: Option<tensor_gguf::GgmlType>,
    /// What a GGUF quantized tensor becomes when written (float32 when `None`;
    /// [`Dequantize`](crate::Dequantize)).
    #[cfg(feature = "gguf")]
    pub dequantize: Option<crate::formats::gguf::Dequantize>,
    /// Unpack CF's packed variables before writing: `scale_factor` and `add_offset`
    /// applied, `_FillValue`, `missing_value` and values outside the valid range as NaN,
    /// those attributes dropped (tensors carrying them, from NetCDF or converted from it).
    /// `false` (the default) keeps the packed integers as they are, losslessly.
    pub unpack: bool,
    /// Tensors that share a name (a Tensogram file holding the same message twice): `false`
    /// (the default) refuses to write them, naming the tensor; `true` keeps them apart by
    /// suffixing every repeat with `~m<message>` (Tensogram) or `~<n>`, the n-th repeat.
    pub rename_duplicates: bool,
    /// Told the bytes written so far while a single file is written (not a shard set).
    pub progress: Option<Progress>,
    /// How tensors are grouped into messages (Tensogram): all in one (the default), one per
    /// tensor, or one per record of the unlimited dimension ([`SplitBy`](crate::SplitBy)).
    pub split_by: crate::SplitBy,
}

impl WriteOptions {
    /// Options writing `format`.
    #[must_use]
    pub fn for_format(format: Format) -> Self {
        WriteOptions {
            format: Some(format),
            ..WriteOptions::default()
        }
    }

    fn choices(&self) -> Choices {
        Choices {
            alignment: self.alignment,
            header_reserve: self.header_reserve,
            #[cfg(feature = "frame")]
            pipeline: self.pipeline.clone(),
            packing: self.packing.clone(),
            split_by: self.split_by,
        }
    }

    fn format_for(&self, path: &Path) -> Result<Format> {
        self.format
            .or_else(|| Format::from_extension(path))
            .ok_or_else(|| Error::UnknownTarget {
                what: format!(
                    "{}: no format given and none known for its extension",
                    path.display()
                ),
            })
    }
}

/// Writes every tensor of `file` to `path` atomically (nothing is left behind on error), or
/// a shard set with [`WriteOptions::max_shard_size`]. Returns what the target format could
/// not hold and left out (one note each).
pub fn save(path: impl AsRef<Path>, file: &File, options: &WriteOptions) -> Result<Vec<String>> {
    let path = path.as_ref();
    let format = options.format_for(path)?;
    let source = file.tensor_set();
    let set = TensorSet {
        format,
        metadata: options.metadata.clone().or_else(|| source.metadata.clone()),
        metadata_types: source.metadata_types.clone(),
        tensors: source.tensors.clone(),
        limits: source.limits,
        mapped: source.mapped.clone(),
        not_read: source.not_read.clone(),
    };
    write_set(format, &set, path, options)
}

/// Writes `set` — the tensors of an open file ([`File::tensor_set`]), changed or put together
/// from several — to `path` atomically, or a shard set with [`WriteOptions::max_shard_size`],
/// as [`save`] writes a file. Returns what the target format left out (one note each).
pub fn save_set(
    path: impl AsRef<Path>,
    set: &TensorSet<'_>,
    options: &WriteOptions,
) -> Result<Vec<String>> {
    let path = path.as_ref();
    write_set(options.format_for(path)?, set, path, options)
}

impl WriteOptions {
    /// `set` as these options have it written to `format`: repeated names suffixed
    /// ([`WriteOptions::rename_duplicates`]), CF's packed variables unpacked
    /// ([`WriteOptions::unpack`]), GGUF's quantized tensors dequantized
    /// ([`WriteOptions::dequantize`]), then weight matrices quantized
    /// ([`WriteOptions::quantize`], GGUF output only). Returns it with what quantizing kept
    /// as it was, one note each; `set` itself when nothing is asked.
    pub fn prepare<'s, 'a>(
        &self,
        set: &'s TensorSet<'a>,
        format: Format,
    ) -> Result<(Cow<'s, TensorSet<'a>>, Vec<String>)> {
        let mut set = Cow::Borrowed(set);
        if self.rename_duplicates {
            set.to_mut().disambiguate();
        }
        if self.unpack {
            set = Cow::Owned(crate::cf::unpack(&set));
        }
        #[cfg(feature = "gguf")]
        if let Some(how) = self.dequantize {
            set = Cow::Owned(crate::formats::gguf::dequantize_as(&set, how)?);
        }
        #[cfg(feature = "gguf")]
        if let Some(t) = self.quantize {
            format.offers(tensor_dtype::WriteChoice::Quantize)?;
            let (q, mut kept) = crate::formats::gguf::quantize(&set, t)?;
            kept.extend(not_read_notes(&set));
            return Ok((Cow::Owned(q), kept));
        }
        let _ = format;
        let notes = not_read_notes(&set);
        Ok((set, notes))
    }
}

/// What the source held that no tensor could, said in the notes of what is written from it.
fn not_read_notes(set: &TensorSet<'_>) -> Vec<String> {
    set.not_read
        .iter()
        .map(|n| {
            format!(
                "{:?} not read from the source, so not written: {}",
                n.name, n.why
            )
        })
        .collect()
}

fn write_set(
    format: Format,
    set: &TensorSet<'_>,
    path: &Path,
    options: &WriteOptions,
) -> Result<Vec<String>> {
    let (set, mut notes) = options.prepare(set, format)?;
    let written = match options.max_shard_size {
        Some(max) => {
            crate::shards::write_sharded(
                format,
                &set,
                path,
                max,
                &options.choices(),
                options.durability,
            )?
            .left_out
        }
        None => crate::write::write(
            format,
            &set,
            path,
            &options.choices(),
            options.durability,
            options.progress.as_ref(),
        )?,
    };
    notes.extend(written);
    Ok(notes)
}

/// Writes `tensors` — any `(name, view)` pairs — to `path` atomically, in the format the
/// options or the extension name. Returns what the target format left out.
pub fn save_tensors<'a, N: Into<String>>(
    path: impl AsRef<Path>,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> Result<Vec<String>> {
    let path = path.as_ref();
    let format = options.format_for(path)?;
    let set = named_set(format, tensors, options);
    write_set(format, &set, path, options)
}

/// The bytes of a file holding `tensors` — any `(name, view)` pairs — in the format the
/// options name (required: there is no extension to follow). Shard sets are files of their
/// own: [`WriteOptions::max_shard_size`] is refused here.
pub fn serialize_tensors<'a, N: Into<String>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> Result<Vec<u8>> {
    let format = options.format.ok_or_else(|| Error::UnknownTarget {
        what: "serializing needs a format (WriteOptions::format)".into(),
    })?;
    if options.max_shard_size.is_some() {
        return Err(Error::UnknownTarget {
            what: "a shard set is several files; serializing makes one".into(),
        });
    }
    let set = named_set(format, tensors, options);
    let (set, _) = options.prepare(&set, format)?;
    let mut out = std::io::Cursor::new(Vec::new());
    crate::write::write_into(
        format,
        &set,
        Path::new("<bytes>"),
        &mut out,
        &options.choices(),
    )?;
    Ok(out.into_inner())
}

fn named_set<'a, N: Into<String>>(
    format: Format,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> TensorSet<'a> {
    TensorSet {
        format,
        metadata: options.metadata.clone(),
        metadata_types: std::collections::BTreeMap::new(),
        tensors: tensors
            .into_iter()
            .map(|(n, v)| {
                let name: String = n.into();
                let attributes = options
                    .attributes
                    .as_ref()
                    .and_then(|a| a.get(&name))
                    .and_then(serde_json::Value::as_object)
                    .map(|keys| {
                        keys.iter()
                            .map(|(k, v)| (k.clone(), tensor_core::cbor::json::to_cbor(v)))
                            .collect()
                    })
                    .unwrap_or_default();
                NamedTensor {
                    attributes,
                    ..NamedTensor::borrowed(name, v)
                }
            })
            .collect(),
        limits: tensor_core::Limits::default(),
        mapped: Vec::new(),
        not_read: Vec::new(),
    }
}
