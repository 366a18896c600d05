//! Format detection and the read/write entry points for every format.
//!
//! The format of a file is decided from its content, never from its name.

mod bintensors;
pub(crate) mod gguf;
pub(crate) mod grib;
mod safetensors;
pub(crate) mod tensogram;
mod ztensor;

use crate::error::{Error, Result};
use crate::model::{FormatId, NamedTensor, ReadOptions, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::path::Path;
use tensor_core::Limits;
use tensor_core::atomic::WriteSeek;
use tensor_dtype::Format as _;
use tensor_dtype::WriteChoice;

/// The shortest prefix that any supported format can be recognised from.
const MIN_DETECT_BYTES: usize = 9;

/// The order formats are tried in when recognising a file: the ones with a magic number
/// first, the one recognised by a length prefix and one byte last.
const DETECTION_ORDER: [FormatId; 8] = [
    FormatId::Gguf,
    FormatId::Ztensor01,
    FormatId::Ztensor1,
    FormatId::Ztensor2,
    FormatId::Tensogram,
    FormatId::Grib,
    FormatId::Safetensors,
    FormatId::Bintensors,
];

impl FormatId {
    /// Whether `head`, a file's first bytes, begin like this format (its crate's
    /// [`Format::recognise`](tensor_dtype::Format::recognise)).
    #[must_use]
    pub fn recognise(self, head: &[u8]) -> bool {
        match self {
            FormatId::Safetensors => tensor_safetensors::SafetensorsFormat::recognise(head),
            FormatId::Bintensors | FormatId::BintensorsLegacy => {
                tensor_bintensors::BintensorsFormat::recognise(head)
            }
            FormatId::Ztensor01 => tensor_ztensor::Ztensor01Format::recognise(head),
            FormatId::Ztensor1 => tensor_ztensor::Ztensor1Format::recognise(head),
            FormatId::Ztensor2 => tensor_ztensor::Ztensor2Format::recognise(head),
            FormatId::Tensogram => tensor_frame::TensogramFormat::recognise(head),
            FormatId::Grib => tensor_grib::GribFormat::recognise(head),
            FormatId::Gguf => tensor_gguf::GgufFormat::recognise(head),
        }
    }

    /// The byte ranges still needed of a file of this format, given what `held` holds,
    /// before its tensors can be listed (its crate's [`Format::header_ranges`](tensor_dtype::Format::header_ranges)).
    pub fn header_ranges(
        self,
        path: &Path,
        held: &dyn tensor_core::Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        match self {
            FormatId::Safetensors => {
                tensor_safetensors::SafetensorsFormat::header_ranges(held, limits)
                    .map_err(safetensors::wrap(path))
            }
            FormatId::Bintensors | FormatId::BintensorsLegacy => {
                tensor_bintensors::BintensorsFormat::header_ranges(held, limits)
                    .map_err(bintensors::wrap(path))
            }
            FormatId::Ztensor01 => tensor_ztensor::Ztensor01Format::header_ranges(held, limits)
                .map_err(ztensor::wrap(path)),
            FormatId::Ztensor1 => tensor_ztensor::Ztensor1Format::header_ranges(held, limits)
                .map_err(ztensor::wrap(path)),
            FormatId::Ztensor2 => tensor_ztensor::Ztensor2Format::header_ranges(held, limits)
                .map_err(ztensor::wrap(path)),
            FormatId::Tensogram => tensor_frame::TensogramFormat::header_ranges(held, limits)
                .map_err(tensogram::wrap(path)),
            FormatId::Grib => {
                tensor_grib::GribFormat::header_ranges(held, limits).map_err(grib::wrap(path))
            }
            FormatId::Gguf => {
                tensor_gguf::GgufFormat::header_ranges(held, limits).map_err(gguf::wrap(path))
            }
        }
    }
}

/// Recognises the format of `bytes` (the whole file, or at least its first bytes). A
/// well-known format tensorkit does not read ([`crate::foreign`]) is named in the error; it is
/// looked for before BinTensors, whose recognition (a length and a 0 or 1) such files'
/// first bytes often pass.
pub(crate) fn detect(path: &Path, bytes: &[u8]) -> Result<FormatId> {
    let (before, last) = DETECTION_ORDER.split_at(DETECTION_ORDER.len() - 1);
    if let Some(f) = before.iter().copied().find(|f| f.recognise(bytes)) {
        return Ok(f);
    }
    if let Some(what) = crate::foreign::identify(bytes) {
        return Err(Error::UnknownFormat {
            path: path.to_path_buf(),
            reason: format!("it looks like {what}"),
            too_short: false,
        });
    }
    if let Some(f) = last.iter().copied().find(|f| f.recognise(bytes)) {
        return Ok(f);
    }
    let shown: String = bytes
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    Err(Error::UnknownFormat {
        path: path.to_path_buf(),
        reason: if bytes.len() < MIN_DETECT_BYTES {
            format!(
                "the file is {} bytes long, shorter than any supported header",
                bytes.len()
            )
        } else {
            format!("it starts with {shown}")
        },
        too_short: bytes.len() < MIN_DETECT_BYTES,
    })
}

/// Reads every tensor of `bytes`, a whole file, borrowing from it, with default options but
/// `limits`.
pub(crate) fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    read_with(
        path,
        bytes,
        &ReadOptions {
            limits: *limits,
            ..ReadOptions::default()
        },
    )
}

/// Reads every tensor of `bytes`, a whole file, borrowing from it.
pub(crate) fn read_with<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<TensorSet<'a>> {
    match detect(path, bytes)? {
        FormatId::Safetensors => safetensors::read(path, bytes, options),
        FormatId::Bintensors | FormatId::BintensorsLegacy => bintensors::read(path, bytes, options),
        FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
            ztensor::read(path, bytes, options)
        }
        FormatId::Tensogram => tensogram::read(path, bytes, options),
        FormatId::Grib => grib::read(path, bytes, options),
        FormatId::Gguf => gguf::read(path, bytes, options),
    }
}

/// How a remote reader gets one tensor's elements once its bytes are fetched.
#[cfg(feature = "remote")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The bytes are the elements, contiguous in C order, in this byte order, and nothing
    /// checks them: they are used as they arrive.
    Raw(tensor_core::ByteOrder),
    /// The bytes are decoded (and their checksum or hash checked) by the format's reader,
    /// through the header parsed at open ([`Header::read_in`]).
    Decode,
}

/// One tensor as a file's header describes it, without its bytes.
#[cfg(feature = "remote")]
#[derive(Clone, Debug)]
pub(crate) struct Listed {
    pub(crate) name: Option<String>,
    pub(crate) dtype: tensor_dtype::Dtype,
    pub(crate) shape: Vec<u64>,
    /// As [`crate::TensorRef::encoding`] reports it; `None` for raw elements.
    pub(crate) encoding: Option<String>,
    pub(crate) location: Vec<(&'static str, u64)>,
    pub(crate) attributes: Vec<(String, tensor_core::cbor::Value)>,
    /// The bytes of the file the tensor's data occupies: everything [`Header::read_in`] reads.
    pub(crate) span: std::ops::Range<u64>,
    pub(crate) fetch: Fetch,
}

/// A file's tensors as its header describes them: what a remote reader lists before it
/// fetches any tensor.
#[cfg(feature = "remote")]
#[derive(Clone, Debug)]
pub(crate) struct Listing {
    pub(crate) format: FormatId,
    pub(crate) metadata: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) metadata_types: std::collections::BTreeMap<String, String>,
    pub(crate) tensors: Vec<Listed>,
}

/// What opening a file's header gives a remote reader: its tensors listed, or the byte
/// ranges it must fetch first.
#[cfg(feature = "remote")]
pub(crate) enum Opening<'a> {
    /// The tensors, and the header parsed to read them by.
    Listed(Listing, Box<Header<'a>>),
    /// These bytes (object frames a Tensogram message's metadata does not describe) are
    /// needed before the tensors can be listed.
    Needs(Vec<std::ops::Range<u64>>),
}

/// A file's header, index or manifest, parsed once: a remote reader reads any tensor from
/// its own bytes through it, without parsing the header again.
#[cfg(feature = "remote")]
pub(crate) enum Header<'a> {
    /// Tensors stored as they are (safetensors, BinTensors): their bytes are the elements.
    Raw,
    /// A zTensor file's index or manifest.
    Ztensor(tensor_ztensor::AnyZTensor<'a>),
    /// A Tensogram file's messages.
    Tensogram(tensogram::Header<'a>),
    /// A GRIB file's fields (listed from every message's headers).
    Grib(std::sync::Arc<tensor_grib::Grib<'a>>),
    /// A GGUF file's tensors: name, ggml type and shape, for dequantizing fetched blocks.
    Gguf(Vec<(String, tensor_gguf::GgmlType, Vec<u64>)>),
}

#[cfg(feature = "remote")]
impl Header<'_> {
    /// Tensor `i`, listed over `span`, from `bytes`: exactly the file's bytes in `span`.
    pub(crate) fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        span: std::ops::Range<u64>,
        bytes: &'w [u8],
        options: &ReadOptions,
    ) -> Result<crate::model::NamedTensor<'w>> {
        match self {
            Header::Ztensor(any) => ztensor::read_in(path, any, i, bytes, span.start),
            Header::Tensogram(h) => {
                h.read_in(path, i, bytes, options.verify.any(), &options.limits)
            }
            Header::Grib(g) => grib::read_in(path, g, i, bytes, options),
            Header::Gguf(types) => Ok(gguf::read_in(path, types, i, bytes)),
            Header::Raw => Err(Error::UnknownTarget {
                what: format!(
                    "{}: tensor #{i} is read as stored, not through its header",
                    path.display()
                ),
            }),
        }
    }
}

/// Lists the tensors of `bytes` — a file's length, of which only the header, index or
/// footer need hold the file's bytes (`held` tells which ranges do) — touching no tensor's
/// bytes, and keeps the header parsed to read them by.
#[cfg(feature = "remote")]
pub(crate) fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
    held: &dyn Fn(std::ops::Range<u64>) -> bool,
) -> Result<Opening<'a>> {
    let format = detect(path, bytes)?;
    let unverified = ReadOptions {
        verify: tensor_core::Verify::Never,
        ..*options
    };
    match format {
        FormatId::Tensogram => tensogram::open_header(path, bytes, options, held),
        FormatId::Grib => grib::open_header(path, bytes, options),
        FormatId::Gguf => gguf::open_header(path, bytes, options),
        FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
            ztensor::open_header(path, bytes, options)
        }
        FormatId::Safetensors | FormatId::Bintensors | FormatId::BintensorsLegacy => {
            let set = read_with(path, bytes, &unverified)?;
            let base = bytes.as_ptr() as usize;
            let tensors = set
                .tensors
                .into_iter()
                .map(|t| {
                    let crate::model::TensorData::View(v) = &t.data else {
                        unreachable!("safetensors and BinTensors tensors are views")
                    };
                    let start = (v.buffer().as_ptr() as usize - base + v.offset()) as u64;
                    Listed {
                        dtype: t.dtype(),
                        shape: t.shape().to_vec(),
                        encoding: None,
                        span: start..start + v.byte_len(),
                        fetch: Fetch::Raw(v.byte_order()),
                        name: t.name,
                        location: t.location,
                        attributes: t.attributes,
                    }
                })
                .collect();
            let listing = Listing {
                format: set.format,
                metadata: set.metadata,
                metadata_types: set.metadata_types,
                tensors,
            };
            Ok(Opening::Listed(listing, Box::new(Header::Raw)))
        }
    }
}

/// The largest header reserve ([`Layout::header_reserve`]): safetensors readers refuse
/// headers over 100 MB.
pub(crate) const MAX_HEADER_RESERVE: u64 = 64 << 20;

/// Where a writer puts things, for the formats that let it choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// zTensor 2: blobs at multiples of this many bytes
    /// ([`WriteOptions::alignment`](crate::WriteOptions::alignment)).
    pub alignment: Option<u64>,
    /// safetensors and GGUF: room left in the header for later edits in place, in bytes
    /// ([`WriteOptions::header_reserve`](crate::WriteOptions::header_reserve)); `None`: the
    /// format's own default ([`FormatInfo::header_reserve`](tensor_dtype::FormatInfo)).
    pub header_reserve: Option<u64>,
}

/// Writes `set` to `path` in `format`, atomically (a temporary file renamed into place, synced to
/// disk first if `durability` asks), with `pipeline` applied to every tensor (Tensogram output
/// only) and blobs at multiples of `alignment` where the format lets the writer choose (zTensor 2;
/// see [`WriteOptions::alignment`](crate::WriteOptions::alignment)). Returns what the target could
/// not hold and was left out (file metadata, per-tensor attributes), one note each; anything that
/// would change the tensors themselves is an error instead, and leaves no file.
///
/// `progress`, when given, is told the bytes written so far as the file grows.
pub(crate) fn write(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    pipeline: &PipelineSpec,
    layout: Layout,
    durability: tensor_core::atomic::Durability,
    progress: Option<&crate::Progress>,
) -> Result<Vec<String>> {
    let mut file = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
    let mut copying = file.copying_from(&set.mapped);
    let mut counting;
    let out: &mut dyn WriteSeek = match progress {
        None => &mut copying,
        Some(progress) => {
            counting = progress.counting(&mut copying);
            &mut counting
        }
    };
    let dropped = write_into(format, set, path, out, pipeline, layout)?;
    file.commit()?;
    Ok(dropped)
}

/// [`write()`] into `out` (a file being written at `path`, which errors name): for callers
/// that manage the file themselves, e.g. to show progress through a wrapping writer. `out`
/// must be able to seek (a file, or an `io::Cursor` over memory): Tensogram's header hash
/// frame is filled in once the data after it has been written and hashed.
///
/// The checksums and hashes the tensors carry from their file are verified on another core
/// while the tensors are written (one after the other on a one-thread pool). On any error,
/// what went to `out` is to be discarded, as [`write()`] does.
pub(crate) fn write_into(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
    pipeline: &PipelineSpec,
    layout: Layout,
) -> Result<Vec<String>> {
    if set.tensors.iter().all(|t| t.check.is_none()) {
        return write_tensors(format, set, path, out, pipeline, layout);
    }
    let unchecked = TensorSet {
        tensors: set
            .tensors
            .iter()
            .map(|t| NamedTensor {
                check: None,
                ..t.clone()
            })
            .collect(),
        ..set.clone()
    };
    let mut checked = Ok(());
    let written = tensor_core::tee::beside(
        || write_tensors(format, &unchecked, path, out, pipeline, layout),
        || checked = set.tensors.iter().try_for_each(NamedTensor::verify),
    );
    // A damaged source is the cause whatever the writer made of it.
    checked?;
    written
}

fn write_tensors(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
    pipeline: &PipelineSpec,
    layout: Layout,
) -> Result<Vec<String>> {
    let info = format.info();
    let header_reserve = layout.header_reserve.unwrap_or(info.header_reserve);
    if header_reserve > MAX_HEADER_RESERVE {
        return Err(Error::UnknownTarget {
            what: format!(
                "a header reserve of {header_reserve} bytes (at most {MAX_HEADER_RESERVE}: safetensors readers refuse longer headers)",
            ),
        });
    }
    for (choice, asked) in [
        (WriteChoice::HeaderReserve, header_reserve > 0),
        (WriteChoice::Alignment, layout.alignment.is_some()),
        (WriteChoice::Pipeline, *pipeline != PipelineSpec::default()),
    ] {
        if asked {
            format.offers(choice)?;
        }
    }
    // Checked before anything is written or handed to a third-party writer (Tensogram
    // names are metadata and may repeat).
    if format != FormatId::Tensogram {
        set.check_unique_names(format.id())?;
    }
    let mut dropped = unheld_attributes(format, set);
    // Attributes under a key the target keeps for itself are left out (and said so above).
    let kept;
    let set = if set
        .tensors
        .iter()
        .any(|t| t.attributes.iter().any(|(k, _)| info.reserves(k)))
    {
        let mut trimmed = set.clone();
        for t in &mut trimmed.tensors {
            t.attributes.retain(|(k, _)| !info.reserves(k));
        }
        kept = trimmed;
        &kept
    } else {
        set
    };
    match format {
        FormatId::Safetensors => safetensors::write(set, out, path, header_reserve)?,
        FormatId::Bintensors => {
            bintensors::write(set, out, path, tensor_bintensors::Layout::Release)?;
        }
        FormatId::BintensorsLegacy => {
            bintensors::write(set, out, path, tensor_bintensors::Layout::Legacy)?;
        }
        FormatId::Ztensor01 => dropped.extend(ztensor::write(set, out, path)?),
        FormatId::Ztensor2 => ztensor::write_v2(set, out, path, layout.alignment)?,
        FormatId::Tensogram => dropped.extend(tensogram::write(set, out, path, pipeline)?),
        FormatId::Gguf => gguf::write(set, out, path, header_reserve)?,
        FormatId::Ztensor1 => {
            return Err(Error::UnknownTarget {
                what: "zTensor 1.x is read only; write ztensor-2 (or ztensor-0.1)".into(),
            });
        }
        FormatId::Grib => {
            return Err(Error::UnknownTarget {
                what: "GRIB is read only; convert it to tensogram (or another format)".into(),
            });
        }
    }
    Ok(dropped)
}

/// The file `bytes` (which `old` was read from, and `new` is an edit of, with the same
/// tensors' bytes) written anew to `out` with the edit: what [`write_into`] writes of
/// `new`, but that Tensogram messages are re-framed with their objects' encoded payloads as
/// they are. Returns what the format left out.
pub(crate) fn write_edited(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
) -> Result<Vec<String>> {
    if new.format == FormatId::Tensogram {
        tensogram::write_edited(bytes, old, new, path, out)?;
        return Ok(Vec::new());
    }
    write_into(
        new.format,
        new,
        path,
        out,
        &PipelineSpec::default(),
        Layout::default(),
    )
}

/// What an edit did to the file metadata of `old` to make `new`'s: the keys it set (new
/// or changed, with their values) and the keys it removed.
pub(crate) fn metadata_changes<'s>(
    old: &'s TensorSet<'_>,
    new: &'s TensorSet<'_>,
) -> (Vec<(&'s str, &'s serde_json::Value)>, Vec<&'s str>) {
    let before = old.metadata.iter().flatten();
    let after = new.metadata.iter().flatten();
    let held = |set: &'s TensorSet<'_>, k: &str| set.metadata.as_ref().and_then(|m| m.get(k));
    let set = after
        .filter(|(k, v)| held(old, k) != Some(*v))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let removed = before
        .filter(|(k, _)| held(new, k).is_none())
        .map(|(k, _)| k.as_str())
        .collect();
    (set, removed)
}

/// The tensor attributes of `set` that `format` has no place for, one note each: all of
/// them in a format without attributes, those under a key the format reserves otherwise.
pub(crate) fn unheld_attributes(format: FormatId, set: &TensorSet<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let attributes = set
        .tensors
        .iter()
        .filter(|t| !t.attributes.is_empty())
        .count();
    if attributes > 0
        && !matches!(
            format,
            FormatId::Ztensor01 | FormatId::Ztensor2 | FormatId::Tensogram
        )
    {
        notes.push(format!(
            "per-tensor attributes of {attributes} tensors ({} has no place for them)",
            format.id()
        ));
    }
    let info = format.info();
    for (t, name) in set.tensors.iter().zip(set.names()) {
        for (k, _) in t.attributes.iter().filter(|(k, _)| info.reserves(k)) {
            notes.push(format!(
                "attribute {k:?} of tensor {name:?} ({} reserves the key for itself)",
                info.name
            ));
        }
    }
    notes
}

/// An error of ours met inside a callback that a format crate calls (to stream a tensor's
/// bytes — every writer's callback returns `io::Result`), where only the callback's own
/// error type can be returned: kept whole here while the crate gets a stand-in, and handed
/// back once the crate's call has returned.
#[derive(Default)]
pub(crate) struct Carried(Option<Error>);

impl Carried {
    /// Keeps `e`; the crate gets `stand_in` of its message.
    pub(crate) fn keep<E>(&mut self, e: Error, stand_in: impl FnOnce(String) -> E) -> E {
        let message = e.to_string();
        self.0 = Some(e);
        stand_in(message)
    }

    /// The kept error, if any; otherwise the crate's result, its error wrapped.
    pub(crate) fn finish<T, E>(
        self,
        result: std::result::Result<T, E>,
        wrap: impl FnOnce(E) -> Error,
    ) -> Result<T> {
        match self.0 {
            Some(e) => Err(e),
            None => result.map_err(wrap),
        }
    }
}

/// A new header for an edited file (see [`header_for_edit`]).
pub(crate) enum EditedHeader {
    /// Written over the old one: the file keeps its length or ends after it.
    InPlace(tensor_core::patch::Patch),
    /// Too long for the old one's place: a copy of the file is `header`, then the old file
    /// from `data_start` on, as it is.
    Moved {
        /// The new header, padded as the format wants the data to start.
        header: Vec<u8>,
        /// Where the old file's data section starts.
        data_start: u64,
    },
}

/// The header of an edited set, for the formats whose header can be written without moving
/// or rewriting the tensors' bytes: safetensors and GGUF (in the old header's place when it
/// fits, before the data section as it is otherwise), BinTensors (in the old header's place
/// when it fits), zTensor 2 (its manifest, at the end, always in place), Tensogram (each
/// message's metadata frame, when it keeps its padded size). `bytes` is the file
/// `old` was read from; `new` is an edit of `old`. `None` where the file is written anew.
pub(crate) fn header_for_edit(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
) -> Result<Option<EditedHeader>> {
    match new.format {
        FormatId::Safetensors => safetensors::header_for_edit(bytes, new, path),
        FormatId::Gguf => gguf::header_for_edit(bytes, new, path),
        FormatId::Ztensor2 => ztensor::header_for_edit(bytes, old, new, path),
        FormatId::Bintensors => bintensors::header_for_edit(bytes, new, path),
        FormatId::Tensogram => tensogram::header_for_edit(bytes, old, new, path),
        _ => Ok(None),
    }
}

/// Metadata for a format that stores only string values: every value must be a string.
/// A value whose type the source format recorded (GGUF's typed metadata,
/// [`TensorSet::metadata_types`]) is written as its JSON text; any other value that is not a
/// string is refused.
pub(crate) fn string_metadata(
    set: &TensorSet<'_>,
    format: &'static str,
) -> Result<Option<Vec<(String, String)>>> {
    let Some(metadata) = &set.metadata else {
        return Ok(None);
    };
    metadata
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            other if set.metadata_types.contains_key(k) => Ok((k.clone(), other.to_string())),
            other => Err(Error::CannotRepresent {
                format,
                what: format!(
                    "metadata value {k:?} = {other} ({format} metadata holds only strings)"
                ),
            }),
        })
        .collect::<Result<_>>()
        .map(Some)
}
