//! GGUF split sets, as llama.cpp's `gguf-split` makes them: a shard names the set it
//! belongs to, the shards read as one, and a set written in shards.

use super::errors::wrap;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};
use tensor_core::ReadOptions;

/// The shards of the GGUF split set `bytes` (the file at `path`) is a shard of, in order;
/// `None` for a file on its own. Missing and extra shards are errors naming them.
pub(super) fn split_set(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Option<Vec<std::path::PathBuf>>> {
    let header =
        tensor_gguf::Header::parse(bytes, bytes.len() as u64, options).map_err(wrap(path))?;
    let Some(shard) = tensor_gguf::split::Shard::of(&header).map_err(wrap(path))? else {
        return Ok(None);
    };
    // A local set's shards are checked to be there, and no other of its prefix beside them;
    // a remote set's are named the same way, and fetched (or found missing) when opened.
    let members = if crate::local::is_url(&path.to_string_lossy()) {
        tensor_gguf::split::shard_names(path, &shard)
    } else {
        tensor_gguf::split::shard_paths(path, &shard)
    };
    members.map(Some).map_err(wrap(path))
}

/// The sets of a split set's shards (read from `paths`) as one: checked to make one whole
/// set, joined, and — as `gguf-split --merge` leaves it — `split.count` set to 0, so that
/// the set written as one file is not taken for a shard.
pub(super) fn join_split<'a>(
    paths: &[std::path::PathBuf],
    sets: Vec<TensorSet<'a>>,
) -> Result<TensorSet<'a>> {
    use tensor_gguf::split::{COUNT_KEY, NO_KEY, Shard, TENSORS_COUNT_KEY};
    let shards: Vec<(Option<Shard>, u64)> = sets
        .iter()
        .map(|s| {
            let m = s.metadata.as_ref();
            let get = |k: &str| m.and_then(|m| m.get(k)).and_then(Json::as_u64);
            let shard = match (get(NO_KEY), get(COUNT_KEY), get(TENSORS_COUNT_KEY)) {
                (Some(no), Some(count), Some(tensors)) => Some(Shard { no, count, tensors }),
                _ => None,
            };
            (shard, s.tensors.len() as u64)
        })
        .collect();
    let first = paths.first().map_or(Path::new(""), |p| p.as_path());
    tensor_gguf::split::check_set(paths, &shards).map_err(wrap(first))?;
    let mut one = crate::join::join(paths, sets)?;
    if let Some(count) = one.metadata.as_mut().and_then(|m| m.get_mut(COUNT_KEY)) {
        *count = Json::from(0);
    }
    Ok(one)
}

/// Writes `set` as a GGUF split set as llama.cpp's `gguf-split` writes one: for `prefix`
/// `dir/model`, shards `dir/model-00001-of-0000N.gguf` cut by `limit` (tensors in order), the
/// set's metadata in the first shard only, every shard with `split.no`, `split.count` and
/// `split.tensors.count`. Each file is written atomically; if anything fails, the shards
/// already written are removed. Returns the shards and what GGUF left out (one note each).
pub fn write_split(
    set: &TensorSet<'_>,
    prefix: &Path,
    limit: tensor_gguf::split::Limit,
    durability: tensor_core::atomic::Durability,
) -> Result<(Vec<PathBuf>, Vec<String>)> {
    if matches!(
        limit,
        tensor_gguf::split::Limit::Tensors(0) | tensor_gguf::split::Limit::Bytes(0)
    ) {
        return Err(Error::UnknownTarget {
            what: "a shard limit of 0".into(),
        });
    }
    set.check_unique_names(Format::GGUF.id())?;
    let sizes: Vec<u64> = set
        .tensors
        .iter()
        .map(|t| {
            t.blocks().map_or_else(
                || t.byte_len(),
                |(_, byte_shape)| byte_shape.iter().product(),
            )
        })
        .collect();
    let plan = tensor_gguf::split::plan(&sizes, limit);
    let count = plan.len() as u64;
    let names = set.names();
    let mut written: Vec<PathBuf> = Vec::with_capacity(plan.len());
    let result = (|| -> Result<(Vec<PathBuf>, Vec<String>)> {
        let mut left_out = Vec::new();
        for (no, range) in plan.iter().enumerate() {
            let no = no as u64;
            let (mut metadata, mut types) = if no == 0 {
                (
                    set.metadata.clone().unwrap_or_default(),
                    set.metadata_types.clone(),
                )
            } else {
                (Map::new(), std::collections::BTreeMap::new())
            };
            for (key, value) in tensor_gguf::split::keys(no, count, set.tensors.len() as u64) {
                metadata.insert(key.to_owned(), tensor_gguf::json::to_json(&value));
                types.insert(key.to_owned(), value.value_type().name().to_owned());
            }
            let shard = TensorSet {
                format: Format::GGUF,
                metadata: Some(metadata),
                metadata_types: types,
                tensors: set.tensors[range.clone()]
                    .iter()
                    .zip(&names[range.clone()])
                    .map(|(t, n)| NamedTensor {
                        name: Some(n.clone()),
                        location: Vec::new(),
                        ..t.clone()
                    })
                    .collect(),
                limits: set.limits,
                mapped: set.mapped.clone(),
                not_read: Vec::new(),
            };
            let path = tensor_gguf::split::shard_path(prefix, no, count);
            for note in crate::write::write(
                Format::GGUF,
                &shard,
                &path,
                &crate::write::Choices::default(),
                durability,
                None,
            )? {
                if !left_out.contains(&note) {
                    left_out.push(note);
                }
            }
            written.push(path);
        }
        Ok((written.clone(), left_out))
    })();
    if result.is_err() {
        for f in &written {
            let _ = std::fs::remove_file(f);
        }
    }
    result
}
