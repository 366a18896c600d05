//! Saving: [`WriteOptions`], [`save`] (an open file in another format), [`save_set`] (a
//! tensor set, changed or put together), [`save_tensors`] and [`serialize_tensors`] (any
//! views), and the [`Progress`] hook they report to.

use super::File;
use crate::error::{Error, Result};
use crate::formats;
use crate::model::{FormatId, NamedTensor, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::borrow::Cow;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;
use tensor_dtype::TensorView;

/// A hook told how many bytes of a file have been written so far (the length the file has
/// reached), as it grows: what a progress bar follows. It is called from the writing
/// thread, often (once per write the format's writer makes), so it should be cheap.
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64) + Send + Sync>);

impl Progress {
    /// A hook calling `f` with the bytes written so far.
    pub fn new(f: impl Fn(u64) + Send + Sync + 'static) -> Self {
        Progress(Arc::new(f))
    }

    /// `out`, telling this hook of every byte written through it.
    pub(crate) fn counting<'w, W: Write + Seek + ?Sized>(
        &'w self,
        out: &'w mut W,
    ) -> Counting<'w, W> {
        Counting {
            out,
            progress: self,
            at: 0,
            written: 0,
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// A writer passing everything on to `out` and telling a [`Progress`] how far the file
/// reaches. The writes themselves go through unchanged, so a writer that copies mapped bytes
/// by range (`AtomicFile::copying_from`) still recognises them.
pub(crate) struct Counting<'w, W: ?Sized> {
    out: &'w mut W,
    progress: &'w Progress,
    /// Where the next write lands.
    at: u64,
    /// The end of the furthest write: the file's length so far.
    written: u64,
}

impl<W: Write + ?Sized> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.at += n as u64;
        if self.at > self.written {
            self.written = self.at;
            (self.progress.0)(self.written);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl<W: Seek + ?Sized> Seek for Counting<'_, W> {
    /// Seeking back (to fill in a header) and writing there rewrites bytes already counted:
    /// the count stays until a write goes past it.
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.at = self.out.seek(pos)?;
        Ok(self.at)
    }
}

/// How to write a file, for every format.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The format; `None` follows the output's extension (`.safetensors`, `.bt`, `.zt` for
    /// zTensor 2, `.tgm`).
    pub format: Option<FormatId>,
    /// File-level metadata to write instead of the source's (`save`) or at all
    /// (`save_tensors`).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// Tensogram output only: the encoding stages, chosen per tensor.
    pub pipeline: PipelineSpec,
    /// Write a shard set instead of one file: shards of at most this many bytes of tensor
    /// data beside `path`, and `<path>.index.json` (the Hugging Face layout; see
    /// [`crate::shards::write_sharded`]).
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
    pub quantize: Option<tensor_gguf::GgmlType>,
    /// What a GGUF quantized tensor becomes when written (float32 when `None`;
    /// [`Dequantize`](crate::Dequantize)).
    pub dequantize: Option<formats::gguf::Dequantize>,
    /// Tensors that share a name (a Tensogram file holding the same message twice): `false`
    /// (the default) refuses to write them, naming the tensor; `true` keeps them apart by
    /// suffixing every repeat with `~m<message>` (Tensogram) or `~<n>`, the n-th repeat.
    pub rename_duplicates: bool,
    /// Told the bytes written so far while a single file is written (not a shard set).
    pub progress: Option<Progress>,
}

impl WriteOptions {
    /// Options writing `format`.
    #[must_use]
    pub fn for_format(format: FormatId) -> Self {
        WriteOptions {
            format: Some(format),
            ..WriteOptions::default()
        }
    }

    fn layout(&self) -> formats::Layout {
        formats::Layout {
            alignment: self.alignment,
            header_reserve: self.header_reserve,
        }
    }

    fn format_for(&self, path: &Path) -> Result<FormatId> {
        self.format
            .or_else(|| FormatId::from_extension(path))
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
    /// ([`WriteOptions::rename_duplicates`]), GGUF's quantized tensors dequantized
    /// ([`WriteOptions::dequantize`]), then weight matrices quantized
    /// ([`WriteOptions::quantize`], GGUF output only). Returns it with what quantizing kept
    /// as it was, one note each; `set` itself when nothing is asked.
    pub fn prepare<'s, 'a>(
        &self,
        set: &'s TensorSet<'a>,
        format: FormatId,
    ) -> Result<(Cow<'s, TensorSet<'a>>, Vec<String>)> {
        let mut set = Cow::Borrowed(set);
        if self.rename_duplicates {
            set.to_mut().disambiguate();
        }
        if let Some(how) = self.dequantize {
            set = Cow::Owned(formats::gguf::dequantize_as(&set, how)?);
        }
        match self.quantize {
            None => Ok((set, Vec::new())),
            Some(t) => {
                format.offers(tensor_dtype::WriteChoice::Quantize)?;
                let (q, kept) = formats::gguf::quantize(&set, t)?;
                Ok((Cow::Owned(q), kept))
            }
        }
    }
}

fn write_set(
    format: FormatId,
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
                &options.pipeline,
                options.layout(),
                options.durability,
            )?
            .left_out
        }
        None => formats::write(
            format,
            &set,
            path,
            &options.pipeline,
            options.layout(),
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
    formats::write_into(
        format,
        &set,
        Path::new("<bytes>"),
        &mut out,
        &options.pipeline,
        options.layout(),
    )?;
    Ok(out.into_inner())
}

fn named_set<'a, N: Into<String>>(
    format: FormatId,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> TensorSet<'a> {
    TensorSet {
        format,
        metadata: options.metadata.clone(),
        metadata_types: std::collections::BTreeMap::new(),
        tensors: tensors
            .into_iter()
            .map(|(n, v)| NamedTensor::borrowed(n.into(), v))
            .collect(),
        limits: tensor_core::Limits::default(),
        mapped: Vec::new(),
    }
}
