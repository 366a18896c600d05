//! GRIB 2 out: each tensor one message, written by tensor-grib from the GRIB sections kept
//! with it — a field read from GRIB 2 carries them in its `grib` attribute, and keeps them
//! through any format that keeps attributes (Tensogram, zTensor) — or, without them, from its
//! GRIB keys (`shortName`, `typeOfLevel`, `level`, `dataDate`, `gridType`, `Ni`...), and its
//! values.

use crate::error::{Error, Result};
use crate::model::{NamedTensor, TensorSet};
use std::collections::BTreeSet;
use std::path::Path;
use tensor_core::cbor::Value;
use tensor_dtype::Dtype;
use tensor_grib::write::Repacking;

/// The attribute a field's sections are kept in: `{"discipline": D, "sections": bytes}`.
pub(super) const KEPT: &str = "grib";

/// Keys that say how values are packed, or how many are missing: a packing chosen anew
/// changes them, and edited values change the count.
const PACKING_KEYS: [&str; 3] = ["packingType", "bitsPerValue", "numberOfMissing"];

/// The `grib` attribute of a GRIB 2 field: its discipline and sections 1 to 5.
pub(super) fn kept(discipline: u8, sections: Vec<u8>) -> (String, Value) {
    (
        KEPT.into(),
        Value::Map(vec![
            (
                Value::from("discipline"),
                Value::Uint(u64::from(discipline)),
            ),
            (Value::from("sections"), Value::Bytes(sections)),
        ]),
    )
}

/// Writes every tensor of `set` as one GRIB 2 message, packed as `packing` says (or as the
/// kept sections say). Returns what GRIB had no place for.
pub(super) fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    packing: Option<&str>,
) -> Result<Vec<String>> {
    let how = packing
        .map(str::parse::<Repacking>)
        .transpose()
        .map_err(|e| Error::from(tensor_core::Error::InvalidArgument(e.to_string())))?;
    // A GRIB file is its messages and nothing else: one of none is an empty file, which no
    // reader (ecCodes included) can tell from any other empty file.
    if set.tensors.is_empty() {
        return Err(Error::CannotRepresent {
            format: "grib",
            what: "a set of no tensors: a GRIB file of no messages is an empty file".into(),
        });
    }
    let mut notes = Vec::new();
    if let Some(m) = set.metadata.as_ref().filter(|m| !m.is_empty()) {
        notes.push(format!(
            "file metadata ({} keys): GRIB has no place for it",
            m.len()
        ));
    }
    let mut unused: BTreeSet<String> = BTreeSet::new();
    for (name, t) in set.names().iter().zip(&set.tensors) {
        let cannot = |what: String| Error::CannotRepresent {
            format: "grib",
            what: format!("tensor {name:?}: {what}"),
        };
        let values = values(t, &set.limits).map_err(|e| match e {
            Error::CannotRepresent { what, .. } => cannot(what),
            other => other,
        })?;
        let from_keys = || -> Result<tensor_grib::write::Written> {
            let keys = |name: &str| tensor_grib::attribute_key(&t.attributes, name);
            let (d, s, h) = tensor_grib::write::sections_from_keys(&keys, values.len(), how)
                .map_err(|e| cannot(e.to_string()))?;
            tensor_grib::write::field(d, &s, &values, Some(h), &set.limits)
                .map_err(|e| cannot(e.to_string()))
        };
        let written = match sections(t) {
            None => {
                let written = from_keys()?;
                unused.extend(agree(t, &written.attributes, false).map_err(cannot)?);
                written
            }
            Some((discipline, kept)) => {
                let written =
                    tensor_grib::write::field(discipline, kept, &values, how, &set.limits)
                        .map_err(|e| cannot(e.to_string()))?;
                match agree(t, &written.attributes, true) {
                    Ok(more) => {
                        unused.extend(more);
                        written
                    }
                    // A key edited since the field was read: the keys are what the user
                    // wants, so the field is written from them, and said so (what the kept
                    // sections held beyond the keys is not written).
                    Err(edited) => {
                        let again = from_keys()
                            .map_err(|e| cannot(format!("{edited}; and from its keys: {e}")))?;
                        unused.extend(agree(t, &again.attributes, false).map_err(cannot)?);
                        notes.push(format!(
                            "tensor {name:?}: written from its keys, not its kept GRIB \
                             sections ({edited})"
                        ));
                        again
                    }
                }
            }
        };
        out.write_all(&written.message)
            .map_err(|e| tensor_core::Error::io(format!("writing {}", path.display()), e))?;
        if let Some(note) = written.note {
            notes.push(format!("tensor {name:?}: {note}"));
        }
    }
    if !unused.is_empty() {
        notes.push(format!(
            "attributes that are no GRIB keys: {}",
            unused.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(notes)
}

/// The tensor's values as float64, one per grid point (missing ones NaN): borrowed where
/// they are stored so (little-endian float64, aligned, on a little-endian machine).
fn values<'t>(
    t: &'t NamedTensor<'_>,
    limits: &tensor_core::Limits,
) -> Result<std::borrow::Cow<'t, [f64]>> {
    use std::borrow::Cow;
    let bytes = t.le_bytes(limits)?;
    match t.dtype() {
        Dtype::Float64 => {
            if tensor_core::ByteOrder::Little.is_native()
                && let Cow::Borrowed(b) = bytes
                && let Ok(v) = bytemuck::try_cast_slice::<u8, f64>(b)
            {
                return Ok(Cow::Borrowed(v));
            }
            Ok(Cow::Owned(
                bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
                    .collect(),
            ))
        }
        Dtype::Float32 => Ok(Cow::Owned(
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap_or_default())))
                .collect(),
        )),
        other => Err(Error::CannotRepresent {
            format: "grib",
            what: format!("dtype {other}: GRIB holds float32 and float64 values"),
        }),
    }
}

/// The discipline and sections 1 to 5 kept in the tensor's `grib` attribute.
fn sections<'t>(t: &'t NamedTensor<'_>) -> Option<(u8, &'t [u8])> {
    let (_, Value::Map(kept)) = t.attributes.iter().find(|(k, _)| k == KEPT)? else {
        return None;
    };
    let get = |key: &str| {
        kept.iter()
            .find(|(k, _)| k.as_text() == Some(key))
            .map(|(_, v)| v)
    };
    let discipline = match get("discipline")? {
        Value::Uint(d) => u8::try_from(*d).ok()?,
        _ => return None,
    };
    match get("sections")? {
        Value::Bytes(b) => Some((discipline, b)),
        _ => None,
    }
}

/// Checks that every GRIB key among the tensor's attributes says what the message written
/// says (`keys`, as read back: an attribute edited since the field was read, or keys that
/// contradict each other, would otherwise be lost without a word); returns the attributes
/// that are no GRIB keys. `kept`: the message was written from kept sections, not from the
/// keys.
fn agree(
    t: &NamedTensor<'_>,
    keys: &[(String, Value)],
    kept: bool,
) -> std::result::Result<Vec<String>, String> {
    let mut unused = Vec::new();
    for (k, v) in &t.attributes {
        if k == KEPT || k == "name" || PACKING_KEYS.contains(&k.as_str()) {
            continue;
        }
        match keys.iter().find(|(key, _)| key == k) {
            Some((_, written)) if same(v, written) => {}
            // A centre by its abbreviation (`ecmf`), as ecCodes also names it.
            Some((_, Value::Uint(code)))
                if k == "centre"
                    && v.as_text().is_some_and(|t| {
                        i64::try_from(*code)
                            .ok()
                            .and_then(tensor_grib::names::centre)
                            .is_some_and(|(abbreviation, _)| abbreviation == t)
                    }) => {}
            Some((_, written)) => {
                let how = if kept {
                    "its GRIB sections say"
                } else {
                    "the other keys make it"
                };
                return Err(format!(
                    "attribute {k:?} is {} but {how} {}",
                    tensor_core::cbor::json::to_json(v),
                    tensor_core::cbor::json::to_json(written)
                ));
            }
            None => unused.push(k.clone()),
        }
    }
    Ok(unused)
}

/// Whether the value `a` given says what `b` written says: numbers by value, whatever their
/// CBOR type; a map by the entries it gives (the MARS keys written include more).
fn same(a: &Value, b: &Value) -> bool {
    if let (Value::Map(given), Value::Map(written)) = (a, b) {
        return given.iter().all(|(k, v)| {
            written
                .iter()
                .any(|(wk, wv)| wk.as_text() == k.as_text() && same(v, wv))
        });
    }
    let (a, b) = (
        tensor_core::cbor::json::to_json(a),
        tensor_core::cbor::json::to_json(b),
    );
    a == b || matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
}
