//! The built-in formats' adapters, one module each, and what several of them share.
//!
//! Each adapter implements [`Adapter`](crate::adapter::Adapter) with its crate; the registry
//! ([`crate::registry`]) holds them. Nothing here dispatches on a format.
// With some formats left out of the build, parts only the others use go unused.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

#[cfg(feature = "bintensors")]
pub(crate) mod bintensors;
#[cfg(feature = "gguf")]
pub(crate) mod gguf;
#[cfg(feature = "grib")]
pub(crate) mod grib;
#[cfg(feature = "hdf5")]
pub(crate) mod hdf5;
#[cfg(feature = "netcdf")]
pub(crate) mod netcdf;
#[cfg(feature = "numpy")]
pub(crate) mod numpy;
#[cfg(feature = "onnx")]
pub(crate) mod onnx;
#[cfg(feature = "pytorch")]
pub(crate) mod pytorch;
#[cfg(feature = "safetensors")]
pub(crate) mod safetensors;
#[cfg(feature = "frame")]
pub(crate) mod tensogram;
#[cfg(feature = "ztensor")]
pub(crate) mod ztensor;

use crate::error::{Error, Result};
use crate::model::TensorSet;

/// What an edit did to the file metadata of `old` to make `new`'s: the keys it set (new
/// or changed, with their values) and the keys it removed.
pub(crate) fn metadata_changes<'s>(
    old: &'s TensorSet<'_>,
    new: &'s TensorSet<'_>,
) -> (Vec<(&'s str, &'s serde_json::Value)>, Vec<&'s str>) {
    let before = old.metadata.iter().flatten();
    let after = new.metadata.iter().flatten();
    let held = |set: &'s TensorSet<'_>, k: &str| set.metadata.as_ref().and_then(|m| m.get(k));
    let set = after
        .filter(|(k, v)| held(old, k) != Some(*v))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let removed = before
        .filter(|(k, _)| held(new, k).is_none())
        .map(|(k, _)| k.as_str())
        .collect();
    (set, removed)
}

/// An error of ours met inside a callback that a format crate calls (to stream a tensor's
/// bytes — every writer's callback returns `io::Result`), where only the callback's own
/// error type can be returned: kept whole here while the crate gets a stand-in, and handed
/// back once the crate's call has returned.
#[derive(Default)]
pub(crate) struct Carried(Option<Error>);

impl Carried {
    /// Keeps `e`; the crate gets `stand_in` of its message.
    pub(crate) fn keep<E>(&mut self, e: Error, stand_in: impl FnOnce(String) -> E) -> E {
        let message = e.to_string();
        self.0 = Some(e);
        stand_in(message)
    }

    /// The kept error, if any; otherwise the crate's result, its error wrapped.
    pub(crate) fn finish<T, E>(
        self,
        result: std::result::Result<T, E>,
        wrap: impl FnOnce(E) -> Error,
    ) -> Result<T> {
        match self.0 {
            Some(e) => Err(e),
            None => result.map_err(wrap),
        }
    }
}

/// Metadata for a format that stores only string values: every value must be a string.
/// A value whose type the source format recorded (GGUF's typed metadata,
/// [`TensorSet::metadata_types`]) is written as its JSON text; any other value that is not a
/// string is refused.
pub(crate) fn string_metadata(
    set: &TensorSet<'_>,
    format: &'static str,
) -> Result<Option<Vec<(String, String)>>> {
    let Some(metadata) = &set.metadata else {
        return Ok(None);
    };
    metadata
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => Ok((k.clone(), s.clone())),
            other if set.metadata_types.contains_key(k) => Ok((k.clone(), other.to_string())),
            other => Err(Error::CannotRepresent {
                format,
                what: format!(
                    "metadata value {k:?} = {other} ({format} metadata holds only strings)"
                ),
            }),
        })
        .collect::<Result<_>>()
        .map(Some)
}
