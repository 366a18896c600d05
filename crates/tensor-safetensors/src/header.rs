//! The JSON header, parsed in one pass: every entry in the order the header lists it, the
//! `__metadata__` map, and the checks the `safetensors` crate's `read_metadata` makes (see
//! docs/decisions/0004-safetensors-header-parsed-in-one-pass.md) — with errors that name
//! the tensor and the bytes concerned.

use crate::error::{Error, Result};
use safetensors::tensor::Dtype as StDtype;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use tensor_core::ErrorKind;

/// The largest header the reference reads (its `MAX_HEADER_SIZE`).
pub(crate) const MAX_HEADER: u64 = 100_000_000;

/// One tensor's entry.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) dtype: StDtype,
    pub(crate) shape: Vec<usize>,
    pub(crate) offsets: (usize, usize),
}

/// The entry's fields as the reference reads them (unknown fields ignored).
#[derive(serde::Deserialize)]
struct Info {
    dtype: StDtype,
    shape: Vec<usize>,
    data_offsets: (usize, usize),
}

/// The header: entries in stored order (by data offsets; ties — empty tensors — in the
/// order listed), and `__metadata__`.
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) entries: Vec<Entry>,
    pub(crate) metadata: Option<BTreeMap<String, String>>,
}

struct Listed {
    entries: Vec<Entry>,
    metadata: Option<BTreeMap<String, String>>,
    repeated: Option<String>,
}

impl<'de> serde::Deserialize<'de> for Listed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Listed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Listed, A::Error> {
                let mut listed = Listed {
                    entries: Vec::new(),
                    metadata: None,
                    repeated: None,
                };
                let mut seen_metadata = false;
                while let Some(name) = map.next_key::<String>()? {
                    if name == "__metadata__" {
                        if seen_metadata {
                            listed.repeated.get_or_insert(name);
                        }
                        seen_metadata = true;
                        listed.metadata = map.next_value()?;
                        continue;
                    }
                    let info: Info = map
                        .next_value()
                        .map_err(|e| de::Error::custom(format_args!("tensor {name:?}: {e}")))?;
                    listed.entries.push(Entry {
                        name,
                        dtype: info.dtype,
                        shape: info.shape,
                        offsets: info.data_offsets,
                    });
                }
                Ok(listed)
            }
        }
        d.deserialize_map(Visit)
    }
}

fn malformed(message: String) -> Error {
    Error::format(ErrorKind::Malformed, message)
}

/// Parses and checks the header of a file whose first 8 bytes say the header is `n` bytes
/// long (already checked to fit in `bytes`), against the data section that follows it.
pub(crate) fn parse(bytes: &[u8], n: u64) -> Result<Header> {
    let header_end = 8 + n;
    if n > MAX_HEADER {
        return Err(Error::format(
            ErrorKind::LimitExceeded,
            "the header is larger than 100 MB",
        ));
    }
    let json = &bytes[8..header_end as usize];
    let text = std::str::from_utf8(json).map_err(|u| {
        malformed(format!(
            "the JSON header (bytes 8..{header_end}) is not UTF-8: {u}"
        ))
    })?;
    let listed: Listed = serde_json::from_str(text).map_err(|j| {
        if j.to_string().contains("unknown variant") {
            // A dtype newer than safetensors 0.8, which knows every one tensorkit reads.
            Error::format(
                ErrorKind::Unsupported,
                format!(
                    "the JSON header (bytes 8..{header_end}) names a dtype safetensors 0.8 does not define: {j}"
                ),
            )
        } else {
            malformed(format!(
                "the JSON header (bytes 8..{header_end}) is invalid: {j}"
            ))
        }
    })?;
    let mut seen = std::collections::HashSet::with_capacity(listed.entries.len());
    let repeated = listed.repeated.as_deref().or_else(|| {
        listed
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .find(|name| !seen.insert(*name))
    });
    if let Some(name) = repeated {
        return Err(malformed(format!(
            "the JSON header (bytes 8..{header_end}) lists {name:?} more than once; names must be unique"
        )));
    }
    drop(seen);
    let mut entries = listed.entries;
    entries.sort_by_key(|e| e.offsets); // stable: ties keep the listed order
    let data_len = bytes.len() as u64 - header_end;
    let mut end = 0usize;
    for e in &entries {
        let (begin, stop) = e.offsets;
        if begin != end || stop < begin {
            return Err(malformed(format!(
                "tensor {:?} has invalid data offsets [{begin}, {stop}] (they must be contiguous and start at 0)",
                e.name
            )));
        }
        end = stop;
        let overflow = || {
            malformed(format!(
                "tensor {:?}: its shape overflows 64-bit arithmetic",
                e.name
            ))
        };
        let bits = e
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .and_then(|count| count.checked_mul(e.dtype.bitsize()))
            .ok_or_else(overflow)?;
        if bits % 8 != 0 {
            return Err(malformed(format!(
                "tensor {:?} ({:?}, shape {:?}) does not fill a whole number of bytes",
                e.name, e.dtype, e.shape
            )));
        }
        if stop - begin != bits / 8 {
            return Err(malformed(format!(
                "tensor {:?}: its data offsets [{begin}, {stop}] hold {} bytes, but {:?} of shape {:?} takes {}",
                e.name,
                stop - begin,
                e.dtype,
                e.shape,
                bits / 8
            )));
        }
    }
    if end as u64 != data_len {
        return Err(if end as u64 > data_len {
            Error::format(
                ErrorKind::Truncated,
                format!(
                    "the header places tensor data up to byte {end} of the data section (offset {header_end}), but the file holds only {data_len} bytes of data"
                ),
            )
        } else {
            malformed(format!(
                "the tensors do not cover the {data_len}-byte data section at offset {header_end} exactly"
            ))
        });
    }
    Ok(Header {
        entries,
        metadata: listed.metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b.resize(b.len() + data, 0);
        b
    }

    fn accepted_alike(bytes: &[u8]) -> bool {
        let ours = parse(bytes, u64::from_le_bytes(bytes[..8].try_into().unwrap()));
        let theirs = safetensors::SafeTensors::read_metadata(bytes);
        assert_eq!(ours.is_ok(), theirs.is_ok(), "{ours:?} / {theirs:?}");
        ours.is_ok()
    }

    #[test]
    fn entries_come_in_stored_order_and_the_reference_accepts_the_same_headers() {
        let h = r#"{"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"k":"v"},"e":{"dtype":"I8","shape":[0],"data_offsets":[8,8]},"a":{"dtype":"U8","shape":[3],"data_offsets":[8,11],"extra":1}}"#;
        let bytes = file(h, 11);
        assert!(accepted_alike(&bytes));
        let header = parse(&bytes, h.len() as u64).unwrap();
        let names: Vec<&str> = header.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["b", "e", "a"]);
        assert_eq!(header.metadata.unwrap()["k"], "v");
    }

    #[test]
    fn what_the_reference_refuses_is_refused_with_the_tensor_named() {
        let cases = [
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
                12,
                "invalid data offsets",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
                8,
                "takes 12",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
                9,
                "do not cover",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
                4,
                "holds only 4",
            ),
            (
                r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#,
                1,
                "whole number",
            ),
            (
                r#"{"a":{"dtype":"X9","shape":[1],"data_offsets":[0,1]}}"#,
                1,
                "does not define",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[18446744073709551615,2],"data_offsets":[0,8]}}"#,
                8,
                "overflows",
            ),
            (
                r#"{"a":{"dtype":"F32","data_offsets":[0,8]}}"#,
                8,
                "missing field `shape`",
            ),
            (r#"{"__metadata__":{"k":1}}"#, 0, "invalid"),
            ("[1]", 0, "invalid"),
        ];
        for (h, data, want) in cases {
            let bytes = file(h, data);
            assert!(!accepted_alike(&bytes), "{h}");
            let e = parse(&bytes, h.len() as u64).unwrap_err().to_string();
            assert!(e.contains(want), "{h}: {e}");
        }
        let repeated = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
        let e = parse(&file(repeated, 2), repeated.len() as u64).unwrap_err();
        assert!(e.to_string().contains("\"a\" more than once"), "{e}");
    }
}
