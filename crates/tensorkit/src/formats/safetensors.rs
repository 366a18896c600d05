//! safetensors, read and written through the `safetensors` crate (see docs/formats/safetensors.md).

use crate::error::{Error, Result};
use crate::model::{FormatId, NamedTensor, TensorSet};
use safetensors::tensor::{Dtype as StDtype, SafeTensorError, SafeTensors};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use tensor_core::{ByteOrder, ErrorKind, Limits};
use tensor_dtype::{Dtype, TensorView};

const FORMAT: &str = "safetensors";

/// A safetensors file starts with a length and then the JSON header's `{`.
pub(super) fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[8] == b'{'
}

/// Every dtype safetensors 0.8 defines, and ours. Packed types count elements in the
/// shape, as the crate does (`F4` of shape `[n]` holds `n / 2` bytes).
const DTYPES: [(StDtype, Dtype); 22] = [
    (StDtype::BOOL, Dtype::Bool),
    (StDtype::F4, Dtype::Float4E2m1),
    (StDtype::F6_E2M3, Dtype::Float6E2m3),
    (StDtype::F6_E3M2, Dtype::Float6E3m2),
    (StDtype::U8, Dtype::Uint8),
    (StDtype::I8, Dtype::Int8),
    (StDtype::F8_E5M2, Dtype::Float8E5m2),
    (StDtype::F8_E4M3, Dtype::Float8E4m3),
    (StDtype::F8_E8M0, Dtype::Float8E8m0),
    (StDtype::F8_E4M3FNUZ, Dtype::Float8E4m3Fnuz),
    (StDtype::F8_E5M2FNUZ, Dtype::Float8E5m2Fnuz),
    (StDtype::I16, Dtype::Int16),
    (StDtype::U16, Dtype::Uint16),
    (StDtype::F16, Dtype::Float16),
    (StDtype::BF16, Dtype::Bfloat16),
    (StDtype::I32, Dtype::Int32),
    (StDtype::U32, Dtype::Uint32),
    (StDtype::F32, Dtype::Float32),
    (StDtype::C64, Dtype::Complex64),
    (StDtype::F64, Dtype::Float64),
    (StDtype::I64, Dtype::Int64),
    (StDtype::U64, Dtype::Uint64),
];

fn dtype_from(d: StDtype) -> Option<Dtype> {
    DTYPES
        .iter()
        .find(|(st, _)| *st == d)
        .map(|&(_, ours)| ours)
}

fn dtype_to(d: Dtype) -> Option<StDtype> {
    DTYPES
        .iter()
        .find(|(_, ours)| *ours == d)
        .map(|&(st, _)| st)
}

/// Checks the framing ourselves first, so that errors can say where the file went wrong;
/// the crate's own errors carry no offsets.
fn check_framing(path: &Path, bytes: &[u8], limits: &Limits) -> Result<u64> {
    let len = bytes.len() as u64;
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(Error::safetensors(
            path,
            ErrorKind::Truncated,
            format!("the file is {len} bytes long, shorter than the 8-byte header length"),
        ));
    };
    let n = u64::from_le_bytes(*prefix);
    limits.check_header_bytes(n).map_err(|e| {
        Error::safetensors(
            path,
            ErrorKind::LimitExceeded,
            format!("header length at offset 0: {e}"),
        )
    })?;
    if n > len - 8 {
        return Err(Error::safetensors(
            path,
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
fn check_unique_keys(path: &Path, header: &[u8], header_end: u64) -> Result<()> {
    let Ok(HeaderKeys(keys)) = serde_json::from_slice::<HeaderKeys>(header) else {
        return Ok(()); // not JSON: the crate's own error explains it
    };
    let mut seen = std::collections::HashSet::with_capacity(keys.len());
    for k in &keys {
        if !seen.insert(k.as_str()) {
            return Err(Error::safetensors(
                path,
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

fn describe(path: &Path, bytes: &[u8], n: u64, e: &SafeTensorError) -> Error {
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
    Error::safetensors(path, kind, message)
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

/// Reads a whole safetensors file, borrowing tensor data from `bytes`.
pub(super) fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    let n = check_framing(path, bytes, limits)?;
    let (_, meta) = SafeTensors::read_metadata(bytes).map_err(|e| describe(path, bytes, n, &e))?;
    let data_start = 8 + n as usize;
    check_unique_keys(path, &bytes[8..data_start], 8 + n)?;
    let names = stored_order(&bytes[8..data_start], &meta);
    limits.check_tensor_count(names.len() as u64)?;
    let mut tensors = Vec::with_capacity(names.len());
    for name in names {
        // The name came from this header, and read_metadata checked every offset.
        let Some(info) = meta.info(&name) else {
            continue;
        };
        let dtype = dtype_from(info.dtype).ok_or_else(|| {
            Error::safetensors(
                path,
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
        tensors.push(NamedTensor::borrowed(name, view));
    }
    let metadata = meta.metadata().as_ref().map(|m| {
        let mut sorted: Vec<_> = m.iter().collect();
        sorted.sort();
        sorted
            .into_iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<_, _>>()
    });
    Ok(TensorSet {
        format: FormatId::Safetensors,
        metadata,
        tensors,
        limits: *limits,
    })
}

/// A tensor prepared for the safetensors writer: the crate sees only its dtype, shape and
/// length to lay out the header; the elements are streamed afterwards, one tensor at a time.
struct Outgoing<'s, 'a> {
    name: String,
    dtype: StDtype,
    shape: Vec<usize>,
    len: usize,
    tensor: &'s NamedTensor<'a>,
}

/// The length prefix and JSON header for `outgoing` (in that order), as the crate lays them
/// out — its own `Metadata` serialised, padded with spaces to a multiple of 8 — without the
/// crate's `serialize`, which reserves room for every tensor's bytes at once.
fn header(
    outgoing: &[Outgoing<'_, '_>],
    metadata: Option<HashMap<String, String>>,
) -> Result<Vec<u8>> {
    let cannot = |e: &dyn std::fmt::Display| Error::CannotRepresent {
        format: FORMAT,
        what: format!("this tensor set: {e}"),
    };
    let mut offset = 0usize;
    let mut infos = Vec::with_capacity(outgoing.len());
    for o in outgoing {
        let end = offset
            .checked_add(o.len)
            .ok_or_else(|| cannot(&"the tensors' total size overflows"))?;
        infos.push((
            o.name.clone(),
            safetensors::tensor::TensorInfo {
                dtype: o.dtype,
                shape: o.shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let meta = safetensors::tensor::Metadata::new(metadata, infos).map_err(|e| cannot(&e))?;
    let mut json = serde_json::to_vec(&meta).map_err(|e| cannot(&e))?;
    json.resize(json.len().next_multiple_of(8), b' ');
    if json.len() > 100_000_000 {
        // What every safetensors reader refuses (the crate's MAX_HEADER_SIZE).
        return Err(cannot(&format!(
            "a {}-byte header (readers accept at most 100 MB)",
            json.len()
        )));
    }
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    Ok(out)
}

fn prepare<'s, 'a>(set: &'s TensorSet<'a>) -> Result<Vec<Outgoing<'s, 'a>>> {
    let mut outgoing = Vec::with_capacity(set.tensors.len());
    for (name, t) in set.names().into_iter().zip(&set.tensors) {
        let dtype = dtype_to(t.dtype()).ok_or_else(|| Error::CannotRepresent {
            format: FORMAT,
            what: format!("dtype {} (tensor {name:?})", t.dtype()),
        })?;
        let shape = t
            .shape()
            .iter()
            .map(|&d| tensor_core::checked::to_usize(d, "dimension"))
            .collect::<Result<Vec<_>, _>>()?;
        let len = tensor_core::checked::to_usize(
            tensor_dtype::shape::byte_len(t.dtype(), t.shape())?,
            "tensor bytes",
        )?;
        let elements = tensor_dtype::shape::element_count(t.shape())?;
        if !(u128::from(elements) * t.dtype().bit_width() as u128).is_multiple_of(8) {
            // The crate refuses such a header (MisalignedSlice): its tensors end on bytes.
            return Err(Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "{elements} {} elements in tensor {name:?}: safetensors stores only whole \
                     bytes, and {elements} × {} bits is not a multiple of 8",
                    t.dtype(),
                    t.dtype().bit_width()
                ),
            });
        }
        outgoing.push(Outgoing {
            name,
            dtype,
            shape,
            len,
            tensor: t,
        });
    }
    // The crate's own order: falling dtype alignment, then name. Sorting first means the
    // crate's (stable) sort keeps our order, so we know the order the header describes.
    outgoing.sort_by(|a, b| b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(&b.name)));
    Ok(outgoing)
}

/// Writes `set` as safetensors to `out`. Metadata values must be strings; unnamed tensors
/// are called `tensor_<i>`.
pub(super) fn write(set: &TensorSet<'_>, out: &mut dyn Write) -> Result<()> {
    let outgoing = prepare(set)?;
    let metadata = set
        .metadata
        .as_ref()
        .map(|m| super::string_metadata(m, FORMAT))
        .transpose()?
        .map(|m| m.into_iter().collect::<HashMap<_, _>>())
        // Empty metadata without tensors is written as none. (The crate's serialiser sizes
        // its JSON map by the number of metadata entries instead of one `__metadata__` key,
        // and writes a broken header for that one case; found by the writers fuzz target.)
        // With tensors, `{}` is kept as it was.
        .filter(|m| !m.is_empty() || !outgoing.is_empty());
    let header = header(&outgoing, metadata)?;
    let io = |e| tensor_core::Error::io("writing a safetensors file", e);
    out.write_all(&header).map_err(io)?;
    for o in &outgoing {
        // One tensor at a time, streamed in bounded runs.
        o.tensor.write_canonical(&set.limits, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_map_both_ways_where_safetensors_has_them() {
        for d in Dtype::ALL {
            match dtype_to(d) {
                Some(st) => assert_eq!(dtype_from(st), Some(d)),
                None => assert!(matches!(d, Dtype::Bitmask | Dtype::Complex128)),
            }
        }
        assert_eq!(dtype_from(StDtype::F4), Some(Dtype::Float4E2m1));
    }

    #[test]
    fn framing_errors_say_where() {
        let p = Path::new("x.safetensors");
        let l = Limits::default();
        let e = check_framing(p, &[1, 2, 3], &l).unwrap_err();
        assert!(e.to_string().contains("3 bytes long"), "{e}");
        let mut b = 100u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        let e = check_framing(p, &b, &l).unwrap_err();
        assert!(
            e.to_string()
                .contains("says 100 bytes of JSON follow, but only 2 bytes remain"),
            "{e}"
        );
        let b = u64::MAX.to_le_bytes();
        let e = check_framing(p, &b, &l).unwrap_err();
        assert_eq!(tensor_core::Kinded::kind(&e), ErrorKind::LimitExceeded);
    }
}
