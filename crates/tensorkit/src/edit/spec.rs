//! What an edit asks for ([`Edits`], [`EditOptions`]) and what it did ([`EditReport`],
//! [`Change`]), applied to a tensor set ([`apply`]) and checked on reading back ([`Expected`]).

use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::TensorSet;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::atomic::Durability;
use tensor_core::cbor::json::{to_cbor, to_json};

/// What to change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edits {
    /// File metadata to set: `(key, value, type)`. The type matters to formats whose
    /// values are typed beyond JSON (GGUF: `UINT32`, `FLOAT32`, `ARRAY[STRING]`...): `None`
    /// keeps the key's recorded type when the value fits it, and otherwise gives the type a
    /// new file would get (gguf-py's choice: `INT32` for integers, `FLOAT32` for floats).
    pub set: Vec<(String, Json, Option<String>)>,
    /// File metadata keys to remove (each must be there).
    pub delete: Vec<String>,
    /// Tensors to rename: `(old, new)`.
    pub rename: Vec<(String, String)>,
    /// Tensor attributes to set, for formats that keep them (zTensor, Tensogram):
    /// `(tensor, key, value)`.
    pub attributes: Vec<(String, String, Json)>,
}

impl Edits {
    /// Whether nothing is asked for.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
            && self.delete.is_empty()
            && self.rename.is_empty()
            && self.attributes.is_empty()
    }
}

impl Edits {
    /// Edits from their JSON form, which `tensorkit edit --from-json` reads and Python's
    /// `tensorkit.edit` keywords mirror: an object with any of `metadata` (keys to set:
    /// values), `types` (a typed format's type for some of those keys, e.g.
    /// `{"general.file_type": "UINT32"}`), `delete` (keys), `rename` (old name: new name)
    /// and `attributes` (tensor: {key: value}). `what` names the source in errors.
    pub fn from_json(v: &Json, what: &str) -> Result<Self> {
        let bad = |why: String| Error::Spec {
            path: PathBuf::from(what),
            message: why,
        };
        let object = v
            .as_object()
            .ok_or_else(|| bad("edits are a JSON object".into()))?;
        let mut edits = Edits::default();
        let map_of = |key: &str| -> Result<Option<&serde_json::Map<String, Json>>> {
            match object.get(key) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::Object(m)) => Ok(Some(m)),
                Some(other) => Err(bad(format!("{key:?} must be an object, not {other}"))),
            }
        };
        let string = |v: &Json, what: &str| -> Result<String> {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("{what} must be a string, not {v}")))
        };
        let types = map_of("types")?;
        for (key, value) in map_of("metadata")?.into_iter().flatten() {
            let label = types
                .and_then(|t| t.get(key))
                .map(|t| string(t, &format!("the type of {key:?}")))
                .transpose()?;
            edits.set.push((key.clone(), value.clone(), label));
        }
        for key in types.into_iter().flatten().map(|(k, _)| k) {
            if !edits.set.iter().any(|(k, ..)| k == key) {
                return Err(bad(format!(
                    "a type is given for {key:?}, which is not set"
                )));
            }
        }
        match object.get("delete") {
            None | Some(Json::Null) => {}
            Some(Json::Array(keys)) => {
                for k in keys {
                    edits.delete.push(string(k, "a key to delete")?);
                }
            }
            Some(other) => return Err(bad(format!("\"delete\" must be a list, not {other}"))),
        }
        for (from, to) in map_of("rename")?.into_iter().flatten() {
            edits.rename.push((
                from.clone(),
                string(to, &format!("the new name of {from:?}"))?,
            ));
        }
        for (tensor, attrs) in map_of("attributes")?.into_iter().flatten() {
            let attrs = attrs.as_object().ok_or_else(|| {
                bad(format!(
                    "the attributes of {tensor:?} must be an object, not {attrs}"
                ))
            })?;
            for (key, value) in attrs {
                edits
                    .attributes
                    .push((tensor.clone(), key.clone(), value.clone()));
            }
        }
        if let Some(unknown) = object.keys().find(|k| {
            !["metadata", "types", "delete", "rename", "attributes"].contains(&k.as_str())
        }) {
            return Err(bad(format!(
                "unknown key {unknown:?} (edits have metadata, types, delete, rename and attributes)"
            )));
        }
        Ok(edits)
    }
}

/// How to edit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EditOptions {
    /// Work out what would change and how, and change nothing.
    pub dry_run: bool,
    /// Whether the edited file is synced to disk before [`edit`](crate::edit()) returns.
    pub durability: Durability,
    /// What the file (and the edited file, read back) is read with: a header or metadata
    /// larger than these limits allow is refused, and a copy that has to decode a tensor
    /// (a format whose writer cannot take its stored bytes as they are) decodes no more.
    pub limits: tensor_core::Limits,
}

impl EditOptions {
    pub(super) fn read_options(&self) -> crate::ReadOptions {
        crate::ReadOptions {
            limits: self.limits,
            ..crate::ReadOptions::default()
        }
    }
}

/// One change an edit makes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// A metadata key set: its old value (`None` for a new key) and its new one.
    Set {
        /// The key.
        key: String,
        /// The value it had.
        old: Option<Json>,
        /// The value it gets.
        new: Json,
    },
    /// A metadata key removed, with the value it had.
    Deleted {
        /// The key.
        key: String,
        /// The value it had.
        old: Json,
    },
    /// A tensor renamed.
    Renamed {
        /// Its old name.
        from: String,
        /// Its new name.
        to: String,
    },
    /// A tensor attribute set.
    Attribute {
        /// The tensor.
        tensor: String,
        /// The attribute.
        key: String,
        /// The value it had (`None` for a new attribute).
        old: Option<Json>,
        /// The value it gets.
        new: Json,
    },
}

/// How an edit was (or, in a dry run, would be) written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// Nothing changed: every value already was as asked.
    Unchanged,
    /// The new header took the old one's place; no tensor byte was moved.
    InPlace,
    /// The file was written anew beside itself and renamed into place, the tensors' bytes
    /// copied by the kernel.
    Copy,
}

impl Method {
    /// `unchanged`, `in-place` or `copy`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Unchanged => "unchanged",
            Method::InPlace => "in-place",
            Method::Copy => "copy",
        }
    }
}

/// What an edit changed, and how it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct EditReport {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// The changes, in the order they were asked for.
    pub changes: Vec<Change>,
    /// How the file was (or would be) written.
    pub method: Method,
    /// Whether this was a dry run (nothing was written).
    pub dry_run: bool,
    /// Whether an edit a killed process had left unfinished was finished first.
    pub recovered: bool,
}

impl EditReport {
    /// The report as JSON (`tensorkit edit --json`, Python's `tensorkit.edit`).
    #[must_use]
    pub fn to_json(&self) -> Json {
        let changes: Vec<Json> = self
            .changes
            .iter()
            .map(|c| match c {
                Change::Set { key, old, new } => {
                    serde_json::json!({"op": "set", "key": key, "old": old, "new": new})
                }
                Change::Deleted { key, old } => {
                    serde_json::json!({"op": "delete", "key": key, "old": old})
                }
                Change::Renamed { from, to } => {
                    serde_json::json!({"op": "rename", "from": from, "to": to})
                }
                Change::Attribute {
                    tensor,
                    key,
                    old,
                    new,
                } => serde_json::json!({
                    "op": "attribute", "tensor": tensor, "key": key, "old": old, "new": new
                }),
            })
            .collect();
        serde_json::json!({
            "path": self.path.display().to_string(),
            "format": self.format.id(),
            "method": self.method.as_str(),
            "dry_run": self.dry_run,
            "recovered": self.recovered,
            "changes": changes,
        })
    }
}

/// Applies `edits` to `set`, checking each against what is there; returns the changes.
pub(super) fn apply(set: &mut TensorSet<'_>, edits: &Edits, path: &Path) -> Result<Vec<Change>> {
    let fail = |what: String| Error::Edit {
        path: path.to_path_buf(),
        what,
    };
    let mut changes = Vec::new();
    for (key, value, type_label) in &edits.set {
        // Text for a key of a typed format keeps the key's type when it spells a value of it.
        let coerced = match (value, type_label, set.metadata_types.get(key)) {
            (Json::String(text), None, Some(recorded)) => {
                set.format.adapter().typed_metadata(text, recorded)
            }
            _ => None,
        };
        let value = coerced.as_ref().unwrap_or(value);
        let metadata = set.metadata.get_or_insert_with(serde_json::Map::new);
        let old = metadata.get(key).cloned();
        let type_changes = type_label
            .as_ref()
            .is_some_and(|t| set.metadata_types.get(key) != Some(t));
        if old.as_ref() == Some(value) && !type_changes {
            continue;
        }
        metadata.insert(key.clone(), value.clone());
        match type_label {
            Some(t) => {
                set.metadata_types.insert(key.clone(), t.clone());
            }
            None if old.is_none() => {
                set.metadata_types.remove(key);
            }
            None => {}
        }
        changes.push(Change::Set {
            key: key.clone(),
            old,
            new: value.clone(),
        });
    }
    for key in &edits.delete {
        let old = set
            .metadata
            .as_mut()
            .and_then(|m| m.shift_remove(key))
            .ok_or_else(|| fail(format!("no metadata key {key:?} to delete")))?;
        set.metadata_types.remove(key);
        changes.push(Change::Deleted {
            key: key.clone(),
            old,
        });
    }
    let index_of = |set: &TensorSet<'_>, name: &str| {
        set.names()
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| set.no_such_tensor(path, name))
    };
    for (from, to) in &edits.rename {
        let i = index_of(set, from)?;
        if from == to {
            continue;
        }
        if to.is_empty() || set.names().iter().any(|n| n == to) {
            return Err(fail(format!(
                "cannot rename {from:?} to {to:?}: {}",
                if to.is_empty() {
                    "a tensor needs a name"
                } else {
                    "a tensor already has that name"
                }
            )));
        }
        set.tensors[i].name = Some(to.clone());
        changes.push(Change::Renamed {
            from: from.clone(),
            to: to.clone(),
        });
    }
    for (tensor, key, value) in &edits.attributes {
        let i = index_of(set, tensor)?;
        let attributes = &mut set.tensors[i].attributes;
        let cbor = to_cbor(value);
        let old = match attributes.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) if *v == cbor => continue,
            Some((_, v)) => Some(to_json(&std::mem::replace(v, cbor))),
            None => {
                attributes.push((key.clone(), cbor));
                None
            }
        };
        changes.push(Change::Attribute {
            tensor: tensor.clone(),
            key: key.clone(),
            old,
            new: value.clone(),
        });
    }
    Ok(changes)
}

/// What an edited file must read back as: its metadata, and each tensor's name, dtype,
/// shape and attributes (as JSON), sorted by name (a copy may store the tensors in another
/// order). The dtype and shape tie each name to its tensor, so that a rename that went to
/// the wrong tensor is caught.
#[derive(Debug, PartialEq)]
pub(super) struct Expected {
    pub(super) metadata: Option<serde_json::Map<String, Json>>,
    pub(super) tensors: Vec<ExpectedTensor>,
}

/// A tensor as [`Expected`] holds it: name, dtype, shape, attributes sorted by key.
type ExpectedTensor = (String, tensor_dtype::Dtype, Vec<u64>, Vec<(String, Json)>);

impl Expected {
    pub(super) fn of(set: &TensorSet<'_>) -> Self {
        let derived = set.format.adapter().derived_attributes();
        let mut tensors: Vec<ExpectedTensor> = set
            .names()
            .into_iter()
            .zip(&set.tensors)
            .map(|(name, t)| {
                let mut attributes: Vec<(String, Json)> = t
                    .attributes
                    .iter()
                    .filter(|(k, _)| !derived.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), to_json(v)))
                    .collect();
                attributes.sort_by(|a, b| a.0.cmp(&b.0));
                (name, t.dtype(), t.shape().to_vec(), attributes)
            })
            .collect();
        tensors.sort_by(|a, b| a.0.cmp(&b.0));
        Expected {
            metadata: set.metadata.clone().filter(|m| !m.is_empty()),
            tensors,
        }
    }
}
