//! `tensorkit stdlib-meta decode|encode`: stdlib-js ndarray meta data on the command line.
//!
//! JSON is tensor-stdlib-meta's (`tensorkit::stdlib_meta::json`): the keys of the conformance
//! fixtures' sidecars.

use crate::error::{Error, Result};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::{Limits, MmapSource};
use tensorkit::stdlib_meta::{MetaData, MetaDataRef};

/// The readable form of `meta`.
#[must_use]
pub fn to_table(meta: &MetaData) -> String {
    let mut out = String::new();
    let bpe = meta.dtype.bytes_per_element().map_or_else(
        || "no byte size".to_owned(),
        |b| format!("{b} bytes per element"),
    );
    let modes: Vec<&str> = meta.submodes.iter().map(|m| m.name()).collect();
    let mut flags = format!("{:#010x}", meta.flags);
    if meta.is_readonly() {
        flags.push_str(" (readonly)");
    }
    let rows = [
        (
            "format",
            format!(
                "stdlib-js ndarray meta data, {} bytes, {}-endian",
                meta.byte_length(),
                meta.byte_order
            ),
        ),
        (
            "dtype",
            format!(
                "{} (enum {}, {bpe})",
                meta.dtype.name(),
                meta.dtype.to_enum()
            ),
        ),
        ("shape", format!("{:?}", meta.shape)),
        ("strides", format!("{:?} bytes", meta.strides)),
        ("offset", format!("{} bytes", meta.offset)),
        ("order", meta.order.name().to_owned()),
        ("mode", meta.mode.name().to_owned()),
        ("submodes", format!("[{}]", modes.join(", "))),
        ("flags", flags),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "{k:<9} {v}");
    }
    out
}

fn spec_error(path: &Path, message: impl Into<String>) -> Error {
    Error::Spec {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// Reads and strictly validates the meta data in `file`.
pub fn decode(file: &Path) -> Result<MetaData> {
    let map = MmapSource::open(file)?;
    MetaDataRef::open_with(&map, &Limits::default())
        .map(|m| m.to_owned())
        .map_err(|source| Error::StdlibMeta {
            path: file.to_path_buf(),
            source,
        })
}

/// Reads the specification in `spec_path`, serializes it and writes `out` atomically.
pub fn encode(spec_path: &Path, out: &Path, durability: tensorkit::Durability) -> Result<MetaData> {
    let text = std::fs::read(spec_path)
        .map_err(|e| tensor_core::Error::io(format!("reading {}", spec_path.display()), e))?;
    let spec: Value = serde_json::from_slice(&text)
        .map_err(|e| spec_error(spec_path, format!("not valid JSON: {e}")))?;
    let meta = tensorkit::stdlib_meta::json::from_json(&spec)
        .map_err(|e| spec_error(spec_path, e.to_string()))?;
    let bytes = meta.serialize().map_err(|source| Error::StdlibMeta {
        path: out.to_path_buf(),
        source,
    })?;
    tensor_core::atomic::write(out, &bytes, durability)?;
    Ok(meta)
}
