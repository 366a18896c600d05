//! Format detection and the read/write entry points for every format.
//!
//! The format of a file is decided from its content, never from its name.

mod bintensors;
#[doc = include_str!("../../../../docs/formats/safetensors.md")]
mod safetensors;

use crate::error::{Error, Result};
use crate::model::{FormatId, TensorSet};
use std::path::Path;
use tensor_core::Limits;

/// The shortest prefix that any supported format can be recognised from.
const MIN_DETECT_BYTES: usize = 9;

/// Recognises the format of `bytes` (the whole file, or at least its first bytes).
pub fn detect(path: &Path, bytes: &[u8]) -> Result<FormatId> {
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

/// Reads every tensor of `bytes`, a whole file, borrowing from it.
pub fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    match detect(path, bytes)? {
        FormatId::Safetensors => safetensors::read(path, bytes, limits),
        FormatId::Bintensors | FormatId::BintensorsLegacy => bintensors::read(path, bytes, limits),
    }
}

/// Writes `set` to `path` in `format`, atomically.
pub fn write(format: FormatId, set: &TensorSet<'_>, path: &Path) -> Result<()> {
    match format {
        FormatId::Safetensors => safetensors::write(set, path),
        FormatId::Bintensors => bintensors::write(set, path, tensor_bintensors::Layout::Release),
        FormatId::BintensorsLegacy => {
            bintensors::write(set, path, tensor_bintensors::Layout::Legacy)
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
