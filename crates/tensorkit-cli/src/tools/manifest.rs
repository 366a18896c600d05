//! The record `split` leaves beside its files (the index, or the manifest earlier versions
//! wrote), which `merge` reads back, and the file names it gives them.

use crate::error::{Error, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tensor_core::Limits;

/// The manifest `split` wrote beside the files before it wrote a Hugging Face index: the
/// real tensor names, in order. `merge` still reads it.
pub const SPLIT_MANIFEST: &str = "tensorkit-split.json";

/// File-name stems are kept to this many bytes (file systems allow 255); longer names are
/// cut and end in a hash of the whole name.
pub(super) const MAX_STEM: usize = 96;

/// The files and real names `split` recorded, when `input` is a directory holding its
/// index (the one `*.index.json` there) or [`SPLIT_MANIFEST`] (what earlier versions
/// wrote), or is one of those itself.
pub(super) fn split_manifest(
    input: &Path,
    limits: &Limits,
) -> Result<Option<Vec<(PathBuf, String)>>> {
    let is_manifest = |p: &Path| p.file_name().is_some_and(|n| n == SPLIT_MANIFEST);
    let manifest = if input.is_dir() {
        let old = input.join(SPLIT_MANIFEST);
        if old.is_file() {
            old
        } else {
            let indexes: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| tensor_core::Error::io(format!("reading {}", input.display()), e))?
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| tensorkit::shards::is_index(p))
                .collect();
            match &indexes[..] {
                [one] => one.clone(),
                _ => return Ok(None),
            }
        }
    } else if is_manifest(input) || tensorkit::shards::is_index(input) {
        input.to_path_buf()
    } else {
        return Ok(None);
    };
    if !is_manifest(&manifest) {
        let index = tensorkit::shards::Index::read(&manifest, limits)?;
        return Ok(Some(
            index
                .entries()
                .map(|(name, file)| (file, name.to_owned()))
                .collect(),
        ));
    }
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| tensor_core::Error::io(format!("reading {}", manifest.display()), e))?;
    let bad = |why: &str| Error::UnknownTarget {
        what: format!("{}: {why}", manifest.display()),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    v["tensors"]
        .as_array()
        .ok_or_else(|| bad("no \"tensors\" list"))?
        .iter()
        .map(|t| {
            let name = t["name"]
                .as_str()
                .ok_or_else(|| bad("a tensor without a name"))?;
            let file = t["file"]
                .as_str()
                .ok_or_else(|| bad("a tensor without a file"))?;
            if file.contains(['/', '\\']) || file.starts_with('.') {
                return Err(bad(&format!(
                    "file {file:?} is not a plain name in the directory"
                )));
            }
            Ok((dir.join(file), name.to_owned()))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// What identifies a file however it is named: its canonical path where it exists, else
/// the path as given (opening it then reports the error).
pub(super) fn same_file_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A file name for a tensor: its name with path separators and other awkward characters
/// replaced, cut to [`MAX_STEM`] bytes (ending in a hash of the name) when longer.
pub(super) fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    };
    if s.len() <= MAX_STEM {
        return s;
    }
    let mut cut = MAX_STEM - 17;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    let hash = <sha2::Sha256 as sha2::Digest>::digest(name.as_bytes())
        .iter()
        .fold(String::new(), |mut h, b| {
            let _ = write!(h, "{b:02x}");
            h
        });
    format!("{}~{}", &s[..cut], &hash[..16])
}
