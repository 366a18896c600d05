//! Several files' sets read as one: their tensors in file order, each located by its file.

use crate::error::{Error, Result};
use crate::model::TensorSet;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What several sets read together share, before their tensors are gathered: the first
/// set's format and limits (an error, about the index or list at `path`, when there is none),
/// `metadata`, and every set's mappings.
pub(crate) fn combined<'a>(
    sets: &[TensorSet<'a>],
    metadata: Option<Map<String, Value>>,
    path: &Path,
) -> Result<TensorSet<'a>> {
    let first = sets.first().ok_or_else(|| Error::Spec {
        path: path.to_path_buf(),
        message: "it names no file to read tensors from".into(),
    })?;
    Ok(TensorSet {
        format: first.format,
        metadata,
        metadata_types: sets
            .first()
            .map(|s| s.metadata_types.clone())
            .unwrap_or_default(),
        tensors: Vec::new(),
        limits: sets.first().map(|s| s.limits).unwrap_or_default(),
        mapped: sets.iter().flat_map(|s| s.mapped.iter().copied()).collect(),
        not_read: sets
            .iter()
            .flat_map(|s| s.not_read.iter().cloned())
            .collect(),
    })
}

/// Several files' sets as one: tensors in file order (each located by its file), the first
/// file's metadata; a name in two files is an error naming both.
pub fn join<'a>(paths: &[PathBuf], mut sets: Vec<TensorSet<'a>>) -> Result<TensorSet<'a>> {
    if sets.len() == 1 {
        return Ok(sets.remove(0));
    }
    let first = paths.first().map_or(Path::new(""), PathBuf::as_path);
    let mut one = combined(&sets, sets.first().and_then(|s| s.metadata.clone()), first)?;
    let mut seen: HashMap<String, usize> = HashMap::new();
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
            one.tensors.push(t);
        }
    }
    Ok(one)
}
