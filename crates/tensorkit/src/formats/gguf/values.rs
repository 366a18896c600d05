//! GGUF's metadata as JSON values, each with its GGUF type beside it, and back.

use super::blocks::RAW_BLOCKS_KEY;
use super::errors::FORMAT;
use crate::error::{Error, Result};
use crate::model::TensorSet;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use tensor_gguf::{Gguf, Value};

/// The metadata as JSON, and each key's GGUF type.
pub(super) fn metadata(file: &Gguf<'_>) -> (Map<String, Json>, BTreeMap<String, String>) {
    let mut values = Map::new();
    let mut types = BTreeMap::new();
    // Room for edits in place is the writer's, not the model's.
    for (k, v) in file
        .metadata()
        .iter()
        .filter(|(k, _)| k != tensor_gguf::PADDING_KEY)
    {
        values.insert(k.to_string(), tensor_gguf::json::to_json(v));
        types.insert(k.to_string(), tensor_gguf::json::type_label(v));
    }
    (values, types)
}

/// The set's metadata as GGUF values, in order (without [`RAW_BLOCKS_KEY`] when its blocks
/// are quantized tensors again).
pub(super) fn metadata_values(
    set: &TensorSet<'_>,
    raw: bool,
) -> Result<Vec<(String, Value<'static>)>> {
    set.metadata
        .iter()
        .flatten()
        .filter(|(k, _)| !raw || k.as_str() != RAW_BLOCKS_KEY)
        .map(|(k, v)| {
            let recorded = set.metadata_types.get(k).map(String::as_str);
            let value = tensor_gguf::json::from_json(v, recorded).ok_or_else(|| Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "metadata value {k:?} = {v} (GGUF holds numbers, strings, booleans and arrays of one type)"
                ),
            })?;
            Ok((k.clone(), value))
        })
        .collect()
}
