//! Format detection and the read/write entry points for every format.
//!
//! The format of a file is decided from its content, never from its name.

mod bintensors;
mod safetensors;
pub(crate) mod tensogram;
mod ztensor;

use crate::error::{Error, Result};
use crate::model::{FormatId, ReadOptions, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::path::Path;
use tensor_core::Limits;

/// The shortest prefix that any supported format can be recognised from.
const MIN_DETECT_BYTES: usize = 9;

/// Whether `bytes` begin like the 8-byte `magic`: all of it, or — for a file cut short —
/// at least its first 4 bytes, so that a truncated file is reported as such.
pub(crate) fn starts_like(bytes: &[u8], magic: [u8; 8]) -> bool {
    let n = bytes.len().min(8);
    n >= 4 && bytes[..n] == magic[..n]
}

/// Recognises the format of `bytes` (the whole file, or at least its first bytes).
pub fn detect(path: &Path, bytes: &[u8]) -> Result<FormatId> {
    if ztensor::looks_like(bytes) {
        return Ok(match tensor_ztensor::detect(bytes) {
            Some(tensor_ztensor::Generation::V1) => FormatId::Ztensor1,
            Some(tensor_ztensor::Generation::V2) => FormatId::Ztensor2,
            _ => FormatId::Ztensor01,
        });
    }
    if tensogram::looks_like(bytes) {
        return Ok(FormatId::Tensogram);
    }
    if safetensors::looks_like(bytes) {
        return Ok(FormatId::Safetensors);
    }
    if bintensors::looks_like(bytes) {
        return Ok(FormatId::Bintensors);
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
pub fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
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
pub fn read_with<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    match detect(path, bytes)? {
        FormatId::Safetensors => safetensors::read(path, bytes, &options.limits),
        FormatId::Bintensors | FormatId::BintensorsLegacy => bintensors::read(path, bytes, options),
        FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
            ztensor::read(path, bytes, options)
        }
        FormatId::Tensogram => tensogram::read(path, bytes, options),
    }
}

/// Writes `set` to `path` in `format`, atomically (a temporary file, synced, renamed into
/// place), with `pipeline` applied to every tensor (Tensogram output only) and blobs at
/// multiples of `alignment` where the format lets the writer choose (zTensor 2; see
/// [`WriteOptions::alignment`](crate::WriteOptions::alignment)). Returns what the target could not
/// hold and was left out (file metadata, per-tensor attributes), one note each; anything
/// that would change the tensors themselves is an error instead, and leaves no file.
pub fn write(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    pipeline: &PipelineSpec,
    alignment: Option<u64>,
) -> Result<Vec<String>> {
    let mut file = tensor_core::atomic::AtomicFile::create(path)?;
    let dropped = write_into(format, set, path, &mut file, pipeline, alignment)?;
    file.commit()?;
    Ok(dropped)
}

/// [`write()`] into `out` (a file being written at `path`, which errors name): for callers
/// that manage the file themselves, e.g. to show progress through a wrapping writer.
pub fn write_into(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn std::io::Write,
    pipeline: &PipelineSpec,
    alignment: Option<u64>,
) -> Result<Vec<String>> {
    if alignment.is_some() && format != FormatId::Ztensor2 {
        return Err(Error::UnknownTarget {
            what: format!(
                "an alignment applies to ztensor-2 output only; {} lays its tensors out itself",
                format.id()
            ),
        });
    }
    if format != FormatId::Tensogram && *pipeline != PipelineSpec::default() {
        return Err(Error::UnknownTarget {
            what: format!(
                "--pipeline applies to tensogram output, not {}",
                format.id()
            ),
        });
    }
    // Checked before anything is written or handed to a third-party writer (Tensogram
    // names are metadata and may repeat).
    if format != FormatId::Tensogram {
        set.check_unique_names(format.id())?;
    }
    let attributes = set
        .tensors
        .iter()
        .filter(|t| !t.attributes.is_empty())
        .count();
    let mut dropped = Vec::new();
    if attributes > 0
        && !matches!(
            format,
            FormatId::Ztensor01 | FormatId::Ztensor2 | FormatId::Tensogram
        )
    {
        dropped.push(format!(
            "per-tensor attributes of {attributes} tensors ({} has no place for them)",
            format.id()
        ));
    }
    match format {
        FormatId::Safetensors => safetensors::write(set, out, path)?,
        FormatId::Bintensors => {
            bintensors::write(set, out, path, tensor_bintensors::Layout::Release)?;
        }
        FormatId::BintensorsLegacy => {
            bintensors::write(set, out, path, tensor_bintensors::Layout::Legacy)?;
        }
        FormatId::Ztensor01 => dropped.extend(ztensor::write(set, out, path)?),
        FormatId::Ztensor2 => ztensor::write_v2(set, out, path, alignment)?,
        FormatId::Tensogram => dropped.extend(tensogram::write(set, out, path, pipeline)?),
        FormatId::Ztensor1 => {
            return Err(Error::UnknownTarget {
                what: "zTensor 1.x is read only; write ztensor-2 (or ztensor-0.1)".into(),
            });
        }
    }
    Ok(dropped)
}

/// An error of ours met inside a callback that a format crate calls (to stream a tensor's
/// bytes), where only the crate's own error type can be returned: kept whole here while the
/// crate gets a stand-in, and handed back once the crate's call has returned.
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

/// Metadata for a format that stores only string values: every value must be a string.
pub(crate) fn string_metadata(
    metadata: &serde_json::Map<String, serde_json::Value>,
    format: &'static str,
) -> Result<Vec<(String, String)>> {
    metadata
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            other => Err(Error::CannotRepresent {
                format,
                what: format!(
                    "metadata value {k:?} = {other} ({format} metadata holds only strings)"
                ),
            }),
        })
        .collect()
}
