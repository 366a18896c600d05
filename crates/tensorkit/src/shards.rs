//! Several files read as one: a Hugging Face shard set (`model.safetensors.index.json`) or
//! any list of files ([`crate::open_many`]).
//!
//! The index is `{"metadata": {...}, "weight_map": {"tensor": "shard file", ...}}`. The
//! weight map is the allowlist: a tensor a shard holds but the map does not name is left
//! out (a stale tensor in a reused shard must never shadow the indexed one), and a tensor
//! the map names but its shard lacks is an error naming both. The set's metadata is the
//! index's `metadata` but `total_size` (the shards' bookkeeping).

use crate::error::{Error, Result};
use crate::format::Format;
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
        Self::parse(path, &text, limits)
    }

    /// Checks and parses `text`, the index at `path` (a file, or a URL whose shards lie
    /// beside it).
    pub fn parse(path: &Path, text: &[u8], limits: &Limits) -> Result<Self> {
        limits.check_header_bytes(text.len() as u64)?;
        let v: Value = serde_json::from_slice(text)
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

    /// The directory the index and its shards are in.
    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// The shard files' paths, in order of first appearance in the weight map.
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        self.shards.iter().map(|s| self.dir().join(s)).collect()
    }

    /// Every tensor's name and the shard file (beside the index) that holds it, in the
    /// index's order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, PathBuf)> {
        self.weight_map
            .iter()
            .map(|(t, file)| (t.as_str(), self.dir().join(file)))
    }

    /// The shard file (beside the index) that holds `tensor`, by the weight map.
    #[must_use]
    pub fn shard_of(&self, tensor: &str) -> Option<PathBuf> {
        self.weight_map
            .iter()
            .find(|(t, _)| t == tensor)
            .map(|(_, file)| self.dir().join(file))
    }

    /// The one set the index describes, from the sets read from [`files`](Self::files): the
    /// mapped tensors, in weight-map order, each from its own shard.
    pub fn select<'a>(&self, sets: Vec<TensorSet<'a>>) -> Result<TensorSet<'a>> {
        let mut one = combined(&sets, self.metadata.clone(), &self.path)?;
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
        one.tensors = tensors;
        Ok(one)
    }
}

/// GGUF's own sets, as `gguf-split` writes them (the GGUF adapter's).
#[cfg(feature = "gguf")]
pub use crate::formats::gguf::write_split as write_gguf_split;
use crate::join::combined;
pub use crate::join::join;

/// What a shard set written by [`save`](crate::save) with a maximum shard size holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sharded {
    /// The shard files, in order.
    pub shards: Vec<PathBuf>,
    /// The index (`<path>.index.json`).
    pub index: PathBuf,
    /// What the target format left out (one note each).
    pub left_out: Vec<String>,
}

/// The name stem and extension of a shard set written for `path` (`model`, `safetensors`);
/// `model` and `format`'s extension where `path` has none.
fn stem_and_extension(path: &Path, format: Format) -> (&str, &str) {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("model");
    let ext = path
        .extension()
        .and_then(|s| s.to_str())
        .unwrap_or(format.extension());
    (stem, ext)
}

/// The index a shard set written for `path` in `format` has: `dir/model.ext.index.json`.
#[must_use]
pub fn index_path(path: &Path, format: Format) -> PathBuf {
    let (stem, ext) = stem_and_extension(path, format);
    path.parent()
        .unwrap_or(Path::new(""))
        .join(format!("{stem}.{ext}.index.json"))
}

/// Writes the Hugging Face index of `set` at `path` atomically: the set's metadata with
/// `total_size` (the tensors' bytes), and `weight_map`, tensor name to file name, in the
/// order given. [`Index`] reads it, and `tensorkit::open` opens the set through it.
pub fn write_index(
    path: &Path,
    set: &TensorSet<'_>,
    weight_map: impl IntoIterator<Item = (String, String)>,
    durability: tensor_core::atomic::Durability,
) -> Result<()> {
    let total: u64 = set.tensors().map(|t| t.byte_len()).sum();
    let mut metadata = set.metadata.clone().unwrap_or_default();
    metadata.insert("total_size".into(), Value::from(total));
    let index = serde_json::json!({
        "metadata": metadata,
        "weight_map": weight_map
            .into_iter()
            .map(|(t, f)| (t, Value::from(f)))
            .collect::<Map<_, _>>(),
    });
    let text = serde_json::to_string_pretty(&index).map_err(|e| Error::UnknownTarget {
        what: format!("the shard index: {e}"),
    })?;
    tensor_core::atomic::write(path, format!("{text}\n").as_bytes(), durability)
        .map_err(Error::from)
}

/// Writes `set` as a shard set in the Hugging Face layout: for `path` = `dir/model.ext`,
/// shards `dir/model-00001-of-0000N.ext` of at most `max_shard_bytes` of tensor data each (a
/// bigger tensor gets a shard of its own), then `dir/model.ext.index.json` with the
/// set's metadata, `total_size` and the weight map. Tensors keep their order. Each file is
/// written atomically (committed with `durability`) and the index last; if anything fails,
/// the shards already written are removed, so no partial set is left behind.
pub(crate) fn write_sharded(
    format: Format,
    set: &TensorSet<'_>,
    path: &Path,
    max_shard_bytes: u64,
    choices: &crate::write::Choices,
    durability: tensor_core::atomic::Durability,
) -> Result<Sharded> {
    if max_shard_bytes == 0 {
        return Err(Error::UnknownTarget {
            what: "a maximum shard size of 0 bytes".into(),
        });
    }
    set.check_names_for(format)?;
    // Group the tensors, in order, into shards.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut size = 0u64;
    for (i, t) in set.tensors.iter().enumerate() {
        let len = t.byte_len();
        if groups.is_empty() || (size > 0 && size.saturating_add(len) > max_shard_bytes) {
            groups.push(Vec::new());
            size = 0;
        }
        if let Some(g) = groups.last_mut() {
            g.push(i);
        }
        size = size.saturating_add(len);
    }
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let (stem, ext) = stem_and_extension(path, format);
    let n = groups.len();
    let names = set.names();
    let mut written: Vec<PathBuf> = Vec::with_capacity(n);
    let result = (|| -> Result<Sharded> {
        let mut weight_map = std::collections::BTreeMap::new();
        let mut left_out = Vec::new();
        for (k, group) in groups.iter().enumerate() {
            let file = format!("{stem}-{:05}-of-{n:05}.{ext}", k + 1);
            let shard = TensorSet {
                format,
                metadata: set.metadata.clone(),
                metadata_types: set.metadata_types.clone(),
                tensors: group
                    .iter()
                    .map(|&i| {
                        let mut t = set.tensors[i].clone();
                        t.name = Some(names[i].clone());
                        t
                    })
                    .collect(),
                limits: set.limits,
                mapped: set.mapped.clone(),
                not_read: Vec::new(),
            };
            let shard_path = dir.join(&file);
            for note in crate::write::write(format, &shard, &shard_path, choices, durability, None)?
            {
                if !left_out.contains(&note) {
                    left_out.push(note);
                }
            }
            written.push(shard_path);
            for &i in group {
                weight_map.insert(names[i].clone(), file.clone());
            }
        }
        let index_path = index_path(path, format);
        write_index(&index_path, set, weight_map, durability)?;
        Ok(Sharded {
            shards: written.clone(),
            index: index_path,
            left_out,
        })
    })();
    if result.is_err() {
        for f in &written {
            let _ = std::fs::remove_file(f);
        }
    }
    result
}

/// How the members of a set become one (the last step of [`open`](crate::open)'s path).
pub(crate) enum Joining {
    /// By a Hugging Face index's weight map.
    Index(Index),
    /// By the members' format's own rule ([`Adapter::join_members`](crate::adapter::Adapter::join_members)).
    Format(Format),
    /// In file order, names unique across them ([`join`]).
    Files,
}

/// The members' sets as one, as `joining` says.
pub(crate) fn join_as<'a>(
    paths: &[PathBuf],
    sets: Vec<TensorSet<'a>>,
    joining: &Joining,
) -> Result<TensorSet<'a>> {
    match joining {
        Joining::Index(index) => index.select(sets),
        Joining::Format(format) => format.adapter().join_members(paths, sets),
        Joining::Files => join(paths, sets),
    }
}
