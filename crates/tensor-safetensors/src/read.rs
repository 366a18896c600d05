//! Reading: the framing checked first (so errors say where), then the header through the
//! `safetensors` crate.

use crate::error::{Error, Result};
use safetensors::tensor::{SafeTensorError, SafeTensors as StSafeTensors};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tensor_core::{ByteOrder, ErrorKind, Limits};
use tensor_dtype::TensorView;

/// Checks the framing ourselves first, so that errors can say where the file went wrong;
/// the crate's own errors carry no offsets.
fn check_framing(bytes: &[u8], limits: &Limits) -> Result<u64> {
    let len = bytes.len() as u64;
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(Error::format(
            ErrorKind::Truncated,
            format!("the file is {len} bytes long, shorter than the 8-byte header length"),
        ));
    };
    let n = u64::from_le_bytes(*prefix);
    limits.check_header_bytes(n).map_err(|e| {
        Error::format(
            ErrorKind::LimitExceeded,
            format!("header length at offset 0: {e}"),
        )
    })?;
    if n > len - 8 {
        return Err(Error::format(
            ErrorKind::Truncated,
            format!(
                "the header length at offset 0 says {n} bytes of JSON follow, but only {} bytes remain",
                len - 8
            ),
        ));
    }
    Ok(n)
}

/// The header's top-level keys in order, repeats included (a JSON map type would keep only
/// the last of each).
struct HeaderKeys(Vec<String>);

impl<'de> serde::Deserialize<'de> for HeaderKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = HeaderKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<HeaderKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, serde::de::IgnoredAny)) = map.next_entry::<String, _>()? {
                    keys.push(k);
                }
                Ok(HeaderKeys(keys))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// The format requires unique names; a JSON parser would silently keep the last entry of a
/// repeated key, so repeats are refused here, naming the key.
fn check_unique_keys(header: &[u8], header_end: u64) -> Result<()> {
    let Ok(HeaderKeys(keys)) = serde_json::from_slice::<HeaderKeys>(header) else {
        return Ok(()); // not JSON: the crate's own error explains it
    };
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    for k in &keys {
        if !seen.insert(k.as_str()) {
            return Err(Error::format(
                ErrorKind::Malformed,
                format!(
                    "the JSON header (bytes 8..{header_end}) lists {k:?} more than once; names must be unique"
                ),
            ));
        }
    }
    Ok(())
}

/// The data length the header claims, for explaining a buffer mismatch.
fn claimed_data_len(header: &[u8]) -> Option<u64> {
    let v: Value = serde_json::from_slice(header).ok()?;
    v.as_object()?
        .iter()
        .filter(|(k, _)| *k != "__metadata__")
        .filter_map(|(_, t)| t.get("data_offsets")?.get(1)?.as_u64())
        .max()
}

fn describe(bytes: &[u8], n: u64, e: &SafeTensorError) -> Error {
    let header_end = 8 + n;
    let (kind, message) = match e {
        SafeTensorError::InvalidHeader(u) => (
            ErrorKind::Malformed,
            format!("the JSON header (bytes 8..{header_end}) is not UTF-8: {u}"),
        ),
        SafeTensorError::InvalidHeaderDeserialization(j) | SafeTensorError::JsonError(j)
            if j.to_string().contains("unknown variant") =>
        {
            // A dtype newer than safetensors 0.8, which knows every one tensorkit reads.
            (
                ErrorKind::Unsupported,
                format!(
                    "the JSON header (bytes 8..{header_end}) names a dtype safetensors 0.8 does not define: {j}"
                ),
            )
        }
        SafeTensorError::InvalidHeaderDeserialization(j) | SafeTensorError::JsonError(j) => (
            ErrorKind::Malformed,
            format!("the JSON header (bytes 8..{header_end}) is invalid: {j}"),
        ),
        SafeTensorError::HeaderTooLarge => (
            ErrorKind::LimitExceeded,
            "the header is larger than 100 MB".into(),
        ),
        SafeTensorError::MetadataIncompleteBuffer => {
            let have = bytes.len() as u64 - header_end;
            match claimed_data_len(&bytes[8..header_end as usize]) {
                Some(claimed) if claimed > have => (
                    ErrorKind::Truncated,
                    format!(
                        "the header places tensor data up to byte {claimed} of the data section (offset {header_end}), but the file holds only {have} bytes of data"
                    ),
                ),
                _ => (
                    ErrorKind::Malformed,
                    format!(
                        "the tensors do not cover the {have}-byte data section at offset {header_end} exactly"
                    ),
                ),
            }
        }
        SafeTensorError::InvalidOffset(name) => (
            ErrorKind::Malformed,
            format!(
                "tensor {name:?} has invalid data offsets (they must be contiguous and start at 0)"
            ),
        ),
        SafeTensorError::TensorInvalidInfo => (
            ErrorKind::Malformed,
            "a tensor's data offsets do not match its shape and dtype".into(),
        ),
        SafeTensorError::ValidationOverflow => (
            ErrorKind::Malformed,
            "a tensor's shape overflows 64-bit arithmetic".into(),
        ),
        other => (ErrorKind::Malformed, other.to_string()),
    };
    Error::format(kind, message)
}

/// Tensor names in stored order: by data offsets, and for equal offsets (empty tensors) in
/// the order the header lists them, so that the order is the file's and never a hash map's.
fn stored_order(header: &[u8], meta: &safetensors::tensor::Metadata) -> Vec<String> {
    // read_metadata already parsed this header, so it is valid JSON with an object on top.
    let listed: Vec<String> = serde_json::from_slice::<Map<String, Value>>(header).map_or_else(
        |_| meta.offset_keys(),
        |m| {
            m.into_iter()
                .map(|(k, _)| k)
                .filter(|k| k != "__metadata__")
                .collect()
        },
    );
    let mut keyed: Vec<((usize, usize), String)> = listed
        .into_iter()
        .filter_map(|name| Some((meta.info(&name)?.data_offsets, name)))
        .collect();
    keyed.sort_by_key(|(offsets, _)| *offsets);
    keyed.into_iter().map(|(_, name)| name).collect()
}

/// One tensor of a safetensors file, borrowed from the file's bytes.
#[derive(Clone, Debug)]
pub struct Tensor<'a> {
    /// The name.
    pub name: String,
    /// The elements: little-endian, C order.
    pub view: TensorView<'a>,
}

/// A safetensors file, read: its tensors in stored order (by data offset) and its
/// `__metadata__`, keys sorted.
#[derive(Clone, Debug)]
pub struct SafeTensors<'a> {
    /// The tensors, borrowing the bytes they were read from.
    pub tensors: Vec<Tensor<'a>>,
    /// `__metadata__`, when the header has one.
    pub metadata: Option<BTreeMap<String, String>>,
}

impl<'a> SafeTensors<'a> {
    /// Reads a whole file from `bytes` with default limits.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &Limits::default())
    }

    /// Reads a whole file from `bytes`: the framing first (with offsets in errors), then the
    /// header through the `safetensors` crate, refusing names the header repeats.
    pub fn open_with(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        let n = check_framing(bytes, limits)?;
        let (_, meta) = StSafeTensors::read_metadata(bytes).map_err(|e| describe(bytes, n, &e))?;
        let data_start = 8 + n as usize;
        check_unique_keys(&bytes[8..data_start], 8 + n)?;
        let names = stored_order(&bytes[8..data_start], &meta);
        limits.check_tensor_count(names.len() as u64)?;
        let mut tensors = Vec::with_capacity(names.len());
        for name in names {
            // The name came from this header, and read_metadata checked every offset.
            let Some(info) = meta.info(&name) else {
                continue;
            };
            let dtype = crate::dtype::from_reference(info.dtype).ok_or_else(|| {
                Error::format(
                    ErrorKind::Unsupported,
                    format!(
                        "tensor {name:?} has dtype {:?}, which tensorkit does not support",
                        info.dtype
                    ),
                )
            })?;
            let (begin, end) = info.data_offsets;
            let data = &bytes[data_start + begin..data_start + end];
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            let view = TensorView::new(data, dtype, &shape, ByteOrder::Little)?;
            tensors.push(Tensor { name, view });
        }
        let metadata = meta
            .metadata()
            .as_ref()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        Ok(SafeTensors { tensors, metadata })
    }

    /// The tensor called `name`.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'a>> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for SafeTensors<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.tensors.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.tensors[i].name)
    }

    fn dtype(&self, i: usize) -> Result<tensor_dtype::Dtype> {
        Ok(self.tensors[i].view.dtype())
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(self.tensors[i].view.shape())
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        Ok(Some(self.tensors[i].view.clone()))
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        Ok(tensor_dtype::container::copy_native(
            &self.tensors[i].view,
            dst,
        )?)
    }
}
