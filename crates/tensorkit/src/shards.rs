//! Several files read as one: a Hugging Face shard set (`model.safetensors.index.json`) or
//! any list of files ([`crate::open_many`]).
//!
//! The index is `{"metadata": {...}, "weight_map": {"tensor": "shard file", ...}}`. The
//! weight map is the allowlist: a tensor a shard holds but the map does not name is left
//! out (a stale tensor in a reused shard must never shadow the indexed one), and a tensor
//! the map names but its shard lacks is an error naming both. The set's metadata is the
//! index's `metadata` but `total_size` (the shards' bookkeeping).

use crate::error::{Error, Result};
use crate::model::TensorSet;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tensor_core::Limits;

/// Whether `path` names a shard index (`*.index.json`).
#[must_use]
pub fn is_index(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".index.json"))
}

/// A parsed shard index.
#[derive(Clone, Debug)]
pub struct Index {
    path: PathBuf,
    metadata: Option<Map<String, Value>>,
    /// Tensor name → shard file name, in the index's order.
    weight_map: Vec<(String, String)>,
    /// The shard files, in order of first appearance.
    shards: Vec<String>,
}

fn bad(path: &Path, why: impl Into<String>) -> Error {
    Error::Spec {
        path: path.to_path_buf(),
        message: why.into(),
    }
}

impl Index {
    /// Reads and checks the index at `path` (at most `limits.max_header_bytes` bytes; shard
    /// names must be plain file names beside the index).
    pub fn read(path: &Path, limits: &Limits) -> Result<Self> {
        let len = std::fs::metadata(path)
            .map_err(|e| tensor_core::Error::io(format!("reading {}", path.display()), e))?
            .len();
        limits.check_header_bytes(len)?;
        let text = std::fs::read(path)
            .map_err(|e| tensor_core::Error::io(format!("reading {}", path.display()), e))?;
        let v: Value = serde_json::from_slice(&text)
            .map_err(|e| bad(path, format!("not a shard index: {e}")))?;
        let map = v["weight_map"]
            .as_object()
            .ok_or_else(|| bad(path, "no \"weight_map\" object"))?;
        limits.check_tensor_count(map.len() as u64)?;
        let mut weight_map = Vec::with_capacity(map.len());
        let mut shards: Vec<String> = Vec::new();
        for (tensor, file) in map {
            let file = file
                .as_str()
                .ok_or_else(|| bad(path, format!("weight_map[{tensor:?}] is not a file name")))?;
            let plain = Path::new(file).file_name().is_some_and(|n| n == file);
            if !plain || file.starts_with('.') {
                return Err(bad(
                    path,
                    format!("weight_map[{tensor:?}] = {file:?} is not a file beside the index"),
                ));
            }
            if !shards.iter().any(|s| s == file) {
                shards.push(file.to_owned());
            }
            weight_map.push((tensor.clone(), file.to_owned()));
        }
        let metadata = match &v["metadata"] {
            Value::Null => None,
            // `total_size` is the shard files' bookkeeping (their data bytes), not the
            // tensors': it is recomputed by whatever writes shards again.
            Value::Object(m) => Some(
                m.iter()
                    .filter(|(k, _)| *k != "total_size")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Map<_, _>>(),
            )
            .filter(|m| !m.is_empty()),
            other => return Err(bad(path, format!("\"metadata\" is {other}, not an object"))),
        };
        Ok(Index {
            path: path.to_path_buf(),
            metadata,
            weight_map,
            shards,
        })
    }

    /// The shard files' paths, in order of first appearance in the weight map.
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        self.shards.iter().map(|s| dir.join(s)).collect()
    }

    /// The one set the index describes, from the sets read from [`files`](Self::files): the
    /// mapped tensors, in weight-map order, each from its own shard.
    pub fn select<'a>(&self, sets: Vec<TensorSet<'a>>) -> Result<TensorSet<'a>> {
        let format = sets
            .first()
            .map_or(crate::model::FormatId::Safetensors, |s| s.format);
        let limits = sets.first().map(|s| s.limits).unwrap_or_default();
        let mut by_shard: Vec<HashMap<String, crate::model::NamedTensor<'a>>> = sets
            .into_iter()
            .map(|set| {
                let names = set.names();
                names.into_iter().zip(set.tensors).collect()
            })
            .collect();
        let mut tensors = Vec::with_capacity(self.weight_map.len());
        for (name, file) in &self.weight_map {
            let i = self.shards.iter().position(|s| s == file).unwrap_or(0);
            let mut t = by_shard[i].remove(name).ok_or_else(|| {
                bad(
                    &self.path,
                    format!(
                        "the weight map puts tensor {name:?} in {file:?}, which does not hold it"
                    ),
                )
            })?;
            t.name = Some(name.clone());
            t.location.insert(0, ("shard", i as u64));
            tensors.push(t);
        }
        Ok(TensorSet {
            format,
            metadata: self.metadata.clone(),
            tensors,
            limits,
        })
    }
}

/// Several files' sets as one: tensors in file order (each located by its file), the first
/// file's metadata; a name in two files is an error naming both.
pub fn join<'a>(paths: &[PathBuf], mut sets: Vec<TensorSet<'a>>) -> Result<TensorSet<'a>> {
    if sets.len() == 1 {
        return Ok(sets.remove(0));
    }
    let format = sets
        .first()
        .map_or(crate::model::FormatId::Safetensors, |s| s.format);
    let limits = sets.first().map(|s| s.limits).unwrap_or_default();
    let metadata = sets.first().and_then(|s| s.metadata.clone());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut tensors = Vec::new();
    for (i, set) in sets.into_iter().enumerate() {
        for (name, mut t) in set.names().into_iter().zip(set.tensors) {
            if let Some(&first) = seen.get(&name) {
                return Err(Error::UnknownTarget {
                    what: format!(
                        "tensor {name:?} is in both {} and {}",
                        paths[first].display(),
                        paths[i].display()
                    ),
                });
            }
            seen.insert(name.clone(), i);
            t.name = Some(name);
            t.location.insert(0, ("file", i as u64));
            tensors.push(t);
        }
    }
    Ok(TensorSet {
        format,
        metadata,
        tensors,
        limits,
    })
}
