//! Editing a shard set through its index (`*.index.json`) so that a process killed at any
//! instant leaves the set as it was or as it was meant to become.
//!
//! Metadata lives in the index; renames and attributes in the shard holding each tensor,
//! renames in the index's weight map too. Each shard and the index are replaced one at a
//! time, each atomically, so the set needs a journal of its own, a redo log as
//! [`tensor_core::patch`] keeps for one file: before any file is touched, the whole plan
//! — each shard's edits with a digest of the shard before and after them, and the index's
//! new text — is written, sealed by a checksum, to `.NAME.tkedit` beside the index. Then
//! the shards are edited, the index replaced, the journal removed. [`recover`] (which
//! opening an index calls first) finishes a plan a killed process left: a shard whose
//! digest is the one after is done, one whose digest is the one before is edited now,
//! anything else is an error naming the shard; then the index is written and the journal
//! removed. A journal cut short is dropped: its writer had touched nothing yet.

use super::file::edit_file;
use super::spec::{Change, EditOptions, EditReport, Edits, Expected, Method, apply};
use crate::error::{Error, Result};
use crate::model::TensorSet;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::atomic::Durability;
use tensor_core::patch;

const MAGIC: &[u8; 8] = b"TKSETED1";

/// One shard's part of a set edit.
#[derive(Debug, PartialEq)]
struct ShardPlan {
    /// The shard's file name, beside the index.
    file: String,
    /// [`digest`] of the shard before its edits, and after.
    before: String,
    after: String,
    edits: Edits,
}

/// What a set edit will do, as its journal holds it.
#[derive(Debug, PartialEq)]
struct Plan {
    shards: Vec<ShardPlan>,
    /// The index's text once edited.
    index: String,
}

impl Plan {
    fn encode(&self) -> Vec<u8> {
        let shards: Vec<Json> = self
            .shards
            .iter()
            .map(|s| {
                serde_json::json!({
                    "file": s.file,
                    "before": s.before,
                    "after": s.after,
                    "rename": s.edits.rename,
                    "attributes": s.edits.attributes,
                })
            })
            .collect();
        let body = serde_json::json!({"shards": shards, "index": self.index});
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(body.to_string().as_bytes());
        patch::seal(out)
    }

    /// The plan a journal holds; `None` for a journal cut short or damaged.
    fn decode(bytes: &[u8], journal: &Path) -> Result<Option<Self>> {
        let Some(body) = patch::unseal(bytes).and_then(|b| b.strip_prefix(MAGIC)) else {
            return Ok(None);
        };
        let bad = |why: &str| Error::Edit {
            path: journal.to_path_buf(),
            what: format!("a shard-set edit journal that {why}"),
        };
        let v: Json = serde_json::from_slice(body).map_err(|_| bad("is not JSON"))?;
        let text = |v: &Json, what: &str| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| bad(&format!("has no {what}")))
        };
        let pairs = |v: &Json| -> Option<Vec<(String, String)>> {
            v.as_array()?
                .iter()
                .map(|p| Some((p.get(0)?.as_str()?.into(), p.get(1)?.as_str()?.into())))
                .collect()
        };
        let triples = |v: &Json| -> Option<Vec<(String, String, Json)>> {
            v.as_array()?
                .iter()
                .map(|p| {
                    Some((
                        p.get(0)?.as_str()?.into(),
                        p.get(1)?.as_str()?.into(),
                        p.get(2)?.clone(),
                    ))
                })
                .collect()
        };
        let shards = v["shards"]
            .as_array()
            .ok_or_else(|| bad("lists no shards"))?
            .iter()
            .map(|s| {
                Ok(ShardPlan {
                    file: text(&s["file"], "shard file")?,
                    before: text(&s["before"], "digest before")?,
                    after: text(&s["after"], "digest after")?,
                    edits: Edits {
                        rename: pairs(&s["rename"]).ok_or_else(|| bad("has a bad rename"))?,
                        attributes: triples(&s["attributes"])
                            .ok_or_else(|| bad("has a bad attribute"))?,
                        ..Edits::default()
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Plan {
            shards,
            index: text(&v["index"], "index text")?,
        }))
    }
}

/// The journal of a set edit through the index at `path`: `.<name>.tkedit` beside it.
fn journal_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "index".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tkedit"))
}

/// What a shard holds that a set edit changes or must keep: each tensor's name, dtype,
/// shape, attributes and (for tensors stored as they are) a sample of its bytes, which ties
/// a name to its tensor when renames swap names between tensors of one dtype and shape.
/// The file's metadata and the order it stores the tensors in (a copy may change it) are
/// left out.
fn digest(set: &TensorSet<'_>) -> String {
    let mut samples: Vec<(String, Vec<u8>)> = set
        .names()
        .into_iter()
        .zip(&set.tensors)
        .map(|(name, t)| {
            let stored = match &t.data {
                crate::model::TensorData::View(v) => v.contiguous_bytes(),
                crate::model::TensorData::Encoded(lazy) => {
                    lazy.blocks.as_ref().and_then(crate::model::Blocks::stored)
                }
                crate::model::TensorData::Owned(_) => None,
            }
            .unwrap_or_default();
            let sample = [
                &stored[..stored.len().min(256)],
                &stored[stored.len().saturating_sub(256)..],
            ]
            .concat();
            (name, sample)
        })
        .collect();
    samples.sort_by(|a, b| a.0.cmp(&b.0));
    let text = format!("{:?}{samples:?}", Expected::of(set).tensors);
    format!("{:016x}", tensor_core::xxh3::xxh3_64(text.as_bytes()))
}

/// Edits a shard set through its index (see the module's description): metadata in the
/// index (which is what opening the index reads), renames and attributes in the shard
/// holding each tensor, renames in the weight map too.
pub(super) fn edit(path: &Path, edits: &Edits, options: EditOptions) -> Result<EditReport> {
    let recovered = !options.dry_run && recover(path, options.durability)?;
    let file = crate::open::read::read_local(path, &options.read_options())?;
    let set = file.tensor_set();
    let format = set.format;
    let mut new = set.clone();
    // Checked against the whole set first: nothing is written if any edit cannot be made.
    let changes = apply(&mut new, edits, path)?;
    drop(new);
    drop(file);
    let mut report = EditReport {
        path: path.to_path_buf(),
        format,
        method: if changes.is_empty() {
            Method::Unchanged
        } else {
            Method::Copy
        },
        changes,
        dry_run: options.dry_run,
        recovered,
    };
    if options.dry_run || report.changes.is_empty() {
        return Ok(report);
    }
    let index = crate::shards::Index::read(path, &options.limits)?;
    let per_shard = shares(path, &index, &report.changes)?;
    let mut plan = Plan {
        shards: Vec::with_capacity(per_shard.len()),
        index: edited_index(path, &report.changes)?,
    };
    for (shard, edits) in per_shard {
        let file = crate::open::read::read_local(&shard, &options.read_options())?;
        let before = file.tensor_set();
        let mut after = before.clone();
        apply(&mut after, &edits, &shard)?;
        plan.shards.push(ShardPlan {
            file: shard
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            before: digest(before),
            after: digest(&after),
            edits,
        });
    }
    let journal = journal_path(path);
    patch::write_journal(&journal, &plan.encode(), options.durability)?;
    let mut all_in_place = true;
    for shard in &plan.shards {
        let r = edit_file(&path.with_file_name(&shard.file), &shard.edits, &options)?;
        all_in_place &= r.method == Method::InPlace;
    }
    tensor_core::atomic::write(path, plan.index.as_bytes(), options.durability)?;
    patch::remove_journal(&journal, options.durability)?;
    let metadata_changed = report
        .changes
        .iter()
        .any(|c| matches!(c, Change::Set { .. } | Change::Deleted { .. }));
    if all_in_place && !metadata_changed {
        report.method = Method::InPlace;
    }
    // Read back through the index: every tensor where the weight map says.
    crate::open::read::read_local(path, &options.read_options())?;
    Ok(report)
}

/// Finishes a set edit through the index at `path` that a killed process left unfinished,
/// if any (see the module's description). Returns whether there was one.
pub(crate) fn recover(path: &Path, durability: Durability) -> Result<bool> {
    let journal = journal_path(path);
    let Some(bytes) = patch::read_journal(&journal)? else {
        return Ok(false);
    };
    let Some(plan) = Plan::decode(&bytes, &journal)? else {
        patch::remove_journal(&journal, durability)?;
        return Ok(false);
    };
    let options = EditOptions {
        durability,
        ..EditOptions::default()
    };
    for shard in &plan.shards {
        let file = path.with_file_name(&shard.file);
        let now =
            digest(crate::open::read::read_local(&file, &options.read_options())?.tensor_set());
        if now == shard.after {
            continue;
        }
        if now != shard.before {
            return Err(Error::Edit {
                path: file,
                what: format!(
                    "{} records an unfinished edit of this shard, but the shard is neither \
                     as it was before that edit nor as it was to become: it was changed \
                     since. Remove the journal if the set is as it should be",
                    journal.display()
                ),
            });
        }
        edit_file(&file, &shard.edits, &options)?;
    }
    if std::fs::read(path).ok().as_deref() != Some(plan.index.as_bytes()) {
        tensor_core::atomic::write(path, plan.index.as_bytes(), durability)?;
    }
    patch::remove_journal(&journal, durability)?;
    Ok(true)
}

/// Each shard's share of the renames and attributes among `changes`, following renames
/// made before (a tensor renamed twice is looked up in the weight map by its first name).
fn shares(
    path: &Path,
    index: &crate::shards::Index,
    changes: &[Change],
) -> Result<Vec<(PathBuf, Edits)>> {
    let mut per_shard: Vec<(PathBuf, Edits)> = Vec::new();
    let mut renamed: Vec<(String, String)> = Vec::new();
    for change in changes {
        let (tensor, rename, attribute) = match change {
            Change::Renamed { from, to } => (from, Some((from.clone(), to.clone())), None),
            Change::Attribute {
                tensor, key, new, ..
            } => (
                tensor,
                None,
                Some((tensor.clone(), key.clone(), new.clone())),
            ),
            Change::Set { .. } | Change::Deleted { .. } => continue,
        };
        let original = renamed
            .iter()
            .rev()
            .find(|(_, to)| to == tensor)
            .map_or(tensor, |(from, _)| from);
        let shard = index.shard_of(original).ok_or_else(|| Error::Edit {
            path: path.to_path_buf(),
            what: format!("the weight map names no shard for tensor {tensor:?}"),
        })?;
        let i = per_shard
            .iter()
            .position(|(p, _)| *p == shard)
            .unwrap_or_else(|| {
                per_shard.push((shard, Edits::default()));
                per_shard.len() - 1
            });
        if let Some((from, to)) = rename {
            // A rename's tensor is `from`: the name it had first is `original`.
            renamed.push((original.clone(), to.clone()));
            per_shard[i].1.rename.push((from, to));
        }
        per_shard[i].1.attributes.extend(attribute);
    }
    Ok(per_shard)
}

/// The text of the shard index at `path` with `changes` made: metadata keys set or removed
/// in its `metadata`, renamed tensors renamed in its `weight_map` (in place, order kept);
/// everything else as it was.
fn edited_index(path: &Path, changes: &[Change]) -> Result<String> {
    let text = std::fs::read(path)
        .map_err(|e| tensor_core::Error::io(format!("reading {}", path.display()), e))?;
    let mut json: Json = serde_json::from_slice(&text).map_err(|e| Error::Spec {
        path: path.to_path_buf(),
        message: format!("not a shard index: {e}"),
    })?;
    for change in changes {
        match change {
            Change::Set { key, new, .. } => {
                if !json["metadata"].is_object() {
                    json["metadata"] = Json::Object(serde_json::Map::new());
                }
                json["metadata"][key] = new.clone();
            }
            Change::Deleted { key, .. } => {
                if let Some(m) = json["metadata"].as_object_mut() {
                    m.shift_remove(key);
                }
            }
            Change::Renamed { from, to } => {
                if let Some(m) = json["weight_map"].as_object_mut() {
                    *m = std::mem::take(m)
                        .into_iter()
                        .map(|(k, v)| (if k == *from { to.clone() } else { k }, v))
                        .collect();
                }
            }
            Change::Attribute { .. } => {}
        }
    }
    let pretty = serde_json::to_string_pretty(&json).map_err(|e| Error::Spec {
        path: path.to_path_buf(),
        message: format!("the edited index: {e}"),
    })?;
    Ok(format!("{pretty}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip_and_a_journal_cut_short_reads_as_none() {
        let plan = Plan {
            shards: vec![ShardPlan {
                file: "m-00001-of-00002.safetensors".into(),
                before: "0123".into(),
                after: "4567".into(),
                edits: Edits {
                    rename: vec![("a".into(), "b".into()), ("b".into(), "c".into())],
                    attributes: vec![("c".into(), "unit".into(), serde_json::json!("K"))],
                    ..Edits::default()
                },
            }],
            index: "{\"weight_map\": {}}\n".into(),
        };
        let j = Path::new("j");
        let bytes = plan.encode();
        assert_eq!(Plan::decode(&bytes, j).unwrap(), Some(plan));
        for cut in [0, 8, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(Plan::decode(&bytes[..cut], j).unwrap(), None);
        }
    }
}
