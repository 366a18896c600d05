//! The CBOR bodies of the non-data frames: global metadata (header, footer and preceder
//! frames), the object index and the aggregate hash list.

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use tensor_core::cbor::{Decoder, Value, to_canonical};

/// A CBOR map with text keys, as the metadata uses at its top levels. Values are
/// `ciborium::Value`, converted at the edge of our bounded decoder (`undefined` and other
/// simple values, which it cannot hold, become null).
pub type Map = BTreeMap<String, MetaValue>;

/// A metadata value, as the public API holds it: ciborium's.
pub type MetaValue = tensor_core::ciborium::Value;

/// The top-level key of per-object metadata.
pub const BASE: &str = "base";
/// The top-level key the library owns.
pub const RESERVED: &str = "_reserved_";
/// The top-level key clients may write freely.
pub const EXTRA: &str = "_extra_";

/// A message's global metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlobalMetadata {
    /// One map per data object, in object order: all application metadata for it.
    pub base: Vec<Map>,
    /// `_extra_`, plus any unknown top-level key (moved here, as the reference does).
    pub extra: Map,
    /// `_reserved_`: the library's provenance (encoder, time, uuid). Written by the encoder;
    /// a caller that sets it gets an error.
    pub reserved: Map,
}

fn text_map(v: Value, what: &str) -> Result<BTreeMap<String, Value>> {
    let Value::Map(entries) = v else {
        return Err(Error::Metadata(format!("{what} must be a map")));
    };
    let mut out = BTreeMap::new();
    for (k, v) in entries {
        let Value::Text(k) = k else {
            return Err(Error::Metadata(format!(
                "{what} has a key that is not text"
            )));
        };
        if out.contains_key(&k) {
            return Err(Error::Metadata(format!("{what} has the key {k:?} twice")));
        }
        out.insert(k, v);
    }
    Ok(out)
}

/// [`text_map`] with its values as the public API holds them.
fn public_map(v: Value, what: &str) -> Result<Map> {
    Ok(text_map(v, what)?
        .into_iter()
        .map(|(k, v)| (k, MetaValue::from(&v)))
        .collect())
}

fn to_value(m: &Map) -> Value {
    Value::Map(
        m.iter()
            .map(|(k, v)| (Value::Text(k.clone()), Value::from(v)))
            .collect(),
    )
}

/// The entry `key` of a map with text keys.
pub(crate) fn field<'v>(v: &'v MetaValue, key: &str) -> Option<&'v MetaValue> {
    v.as_map()?
        .iter()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
}

/// Decodes one CBOR item that must fill `bytes` exactly; returns it and whether the bytes
/// were its canonical encoding.
pub(crate) fn decode_cbor(bytes: &[u8], what: &str) -> Result<(Value, bool)> {
    let mut d = Decoder::new(bytes);
    let v = d
        .value()
        .map_err(|e| Error::Metadata(format!("{what}: {e}")))?;
    if d.remaining() != 0 {
        return Err(Error::Metadata(format!(
            "{what}: {} bytes follow the CBOR item",
            d.remaining()
        )));
    }
    let canonical = d.was_deterministic();
    Ok((v, canonical))
}

impl GlobalMetadata {
    /// Object `j`'s dtype and shape as the encoder recorded them in `_reserved_.tensor`
    /// (so that a reader can list the object without reading its frame); `None` where
    /// they are missing or do not parse.
    #[must_use]
    pub fn recorded_layout(&self, j: usize) -> Option<(tensor_dtype::Dtype, Vec<u64>)> {
        let prefix = format!("{RESERVED}.tensor");
        let dtype = self
            .get(j, &format!("{prefix}.dtype"))?
            .as_text()?
            .parse()
            .ok()?;
        let shape = self
            .get(j, &format!("{prefix}.shape"))?
            .as_array()?
            .iter()
            .map(|v| u64::try_from(v.as_integer()?).ok())
            .collect::<Option<Vec<u64>>>()?;
        Some((dtype, shape))
    }

    /// Decodes a metadata frame body. Returns the metadata and whether the CBOR was
    /// canonical.
    pub fn decode(bytes: &[u8]) -> Result<(Self, bool)> {
        let (v, canonical) = decode_cbor(bytes, "global metadata")?;
        Ok((Self::from_value(v)?, canonical))
    }

    /// The metadata a decoded metadata map holds.
    pub(crate) fn from_value(v: Value) -> Result<Self> {
        let mut meta = GlobalMetadata::default();
        let mut unknown = Vec::new();
        for (k, v) in text_map(v, "global metadata")? {
            match k.as_str() {
                BASE => {
                    let Value::Array(items) = v else {
                        return Err(Error::Metadata("`base` must be an array".into()));
                    };
                    meta.base = items
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| public_map(m, &format!("base[{i}]")))
                        .collect::<Result<_>>()?;
                }
                EXTRA => meta.extra = public_map(v, "`_extra_`")?,
                RESERVED => meta.reserved = public_map(v, "`_reserved_`")?,
                _ => unknown.push((k, v)),
            }
        }
        // A free-form top-level key joins `_extra_`; where `_extra_` names it too, the
        // explicit entry wins, as tensogram reads such a map.
        for (k, v) in unknown {
            meta.extra.entry(k).or_insert_with(|| MetaValue::from(&v));
        }
        Ok(meta)
    }

    /// The canonical CBOR of this metadata. Empty parts are left out.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut top = Vec::new();
        if !self.base.is_empty() {
            top.push((
                Value::Text(BASE.into()),
                Value::Array(self.base.iter().map(to_value).collect()),
            ));
        }
        if !self.extra.is_empty() {
            top.push((Value::Text(EXTRA.into()), to_value(&self.extra)));
        }
        if !self.reserved.is_empty() {
            top.push((Value::Text(RESERVED.into()), to_value(&self.reserved)));
        }
        to_canonical(&Value::Map(top))
    }

    /// This metadata without anything the library wrote (`_reserved_` at top level and in
    /// every `base` entry): what a caller passes to re-encode the same content.
    #[must_use]
    pub fn without_reserved(&self) -> Self {
        GlobalMetadata {
            base: self
                .base
                .iter()
                .map(|m| {
                    let mut m = m.clone();
                    m.remove(RESERVED);
                    m
                })
                .collect(),
            extra: self.extra.clone(),
            reserved: Map::new(),
        }
    }

    /// Checks the object count rule: `base` may not have more entries than there are
    /// objects; a shorter `base` is padded with empty maps.
    pub(crate) fn fit_to(&mut self, objects: usize) -> Result<()> {
        if self.base.len() > objects {
            return Err(Error::Metadata(format!(
                "`base` has {} entries but the message has {objects} objects",
                self.base.len()
            )));
        }
        self.base.resize_with(objects, Map::new);
        Ok(())
    }

    /// Merges a preceder frame's single `base` entry into object `i`'s entry; the
    /// preceder's keys win, and its `_reserved_` is dropped.
    pub(crate) fn merge_preceder(&mut self, i: usize, preceder: &GlobalMetadata) -> Result<()> {
        let [entry] = preceder.base.as_slice() else {
            return Err(Error::Metadata(format!(
                "a preceder metadata frame must hold exactly one `base` entry, not {}",
                preceder.base.len()
            )));
        };
        if self.base.len() <= i {
            self.base.resize_with(i + 1, Map::new);
        }
        for (k, v) in entry {
            if k != RESERVED {
                self.base[i].insert(k.clone(), v.clone());
            }
        }
        Ok(())
    }

    /// A value by dotted path, looked up in `base[object]` first, then in `_extra_`:
    /// `get(0, "mars.param")`.
    #[must_use]
    pub fn get(&self, object: usize, path: &str) -> Option<&MetaValue> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let start = self
            .base
            .get(object)
            .and_then(|m| m.get(first))
            .or_else(|| self.extra.get(first))?;
        parts.try_fold(start, |v, p| field(v, p))
    }
}

/// An index frame: where each data-object frame starts and how long it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// Offset of each data frame from the message start.
    pub offsets: Vec<u64>,
    /// Each data frame's total length (padding excluded).
    pub lengths: Vec<u64>,
}

fn uints(v: &Value, what: &str) -> Result<Vec<u64>> {
    v.as_array()
        .ok_or_else(|| Error::Metadata(format!("{what} must be an array")))?
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| Error::Metadata(format!("{what} must hold unsigned integers")))
        })
        .collect()
}

impl Index {
    /// Decodes an index frame body.
    pub fn decode(bytes: &[u8]) -> Result<(Self, bool)> {
        let (v, canonical) = decode_cbor(bytes, "index frame")?;
        let m = text_map(v, "index frame")?;
        let get = |k: &str| {
            m.get(k)
                .ok_or_else(|| Error::Metadata(format!("index frame: `{k}` is missing")))
        };
        let index = Index {
            offsets: uints(get("offsets")?, "index `offsets`")?,
            lengths: uints(get("lengths")?, "index `lengths`")?,
        };
        if index.offsets.len() != index.lengths.len() {
            return Err(Error::Metadata(format!(
                "index frame: {} offsets but {} lengths",
                index.offsets.len(),
                index.lengths.len()
            )));
        }
        Ok((index, canonical))
    }

    /// The canonical CBOR of this index.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let arr = |v: &[u64]| Value::Array(v.iter().map(|&x| Value::Uint(x)).collect());
        to_canonical(&Value::Map(vec![
            (Value::Text("offsets".into()), arr(&self.offsets)),
            (Value::Text("lengths".into()), arr(&self.lengths)),
        ]))
    }
}

/// The hash algorithm this crate writes and verifies.
pub const XXH3: &str = "xxh3";

/// An aggregate hash frame: one hash per data object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashList {
    /// The algorithm's name (`xxh3`).
    pub algorithm: String,
    /// One digest per object; `None` where the string is not 16 hex digits.
    pub hashes: Vec<Option<u64>>,
}

impl HashList {
    /// Decodes a hash frame body.
    pub fn decode(bytes: &[u8]) -> Result<(Self, bool)> {
        let (v, canonical) = decode_cbor(bytes, "hash frame")?;
        let m = text_map(v, "hash frame")?;
        let algorithm = m
            .get("algorithm")
            .and_then(Value::as_text)
            .ok_or_else(|| Error::Metadata("hash frame: `algorithm` must be text".into()))?
            .to_owned();
        let hashes = m
            .get("hashes")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Metadata("hash frame: `hashes` must be an array".into()))?
            .iter()
            .map(|h| {
                let s = h.as_text().ok_or_else(|| {
                    Error::Metadata("hash frame: every hash must be a text string".into())
                })?;
                Ok(tensor_core::hex::decode_u64(s.as_bytes()))
            })
            .collect::<Result<_>>()?;
        Ok((HashList { algorithm, hashes }, canonical))
    }

    /// The canonical CBOR of an xxh3 hash list.
    #[must_use]
    pub fn encode_xxh3(hashes: &[u64]) -> Vec<u8> {
        to_canonical(&Value::Map(vec![
            (Value::Text("algorithm".into()), Value::Text(XXH3.into())),
            (
                Value::Text("hashes".into()),
                Value::Array(
                    hashes
                        .iter()
                        .map(|h| Value::Text(format!("{h:016x}")))
                        .collect(),
                ),
            ),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_top_level_keys_move_to_extra_where_extra_does_not_name_them() {
        let v = Value::Map(vec![
            (Value::Text("version".into()), Value::Uint(2)),
            (
                Value::Text(EXTRA.into()),
                Value::Map(vec![(Value::Text("a".into()), Value::Uint(1))]),
            ),
        ]);
        let (m, canonical) = GlobalMetadata::decode(&to_canonical(&v)).unwrap();
        assert!(canonical);
        assert_eq!(m.extra.len(), 2);
        assert_eq!(m.get(0, "version"), Some(&MetaValue::from(2u64)));
        let clash = Value::Map(vec![
            (Value::Text("a".into()), Value::Uint(2)),
            (
                Value::Text(EXTRA.into()),
                Value::Map(vec![(Value::Text("a".into()), Value::Uint(1))]),
            ),
        ]);
        let (m, _) = GlobalMetadata::decode(&to_canonical(&clash)).unwrap();
        assert_eq!(m.extra.len(), 1);
        assert_eq!(
            m.get(0, "a"),
            Some(&MetaValue::from(1u64)),
            "`_extra_` wins"
        );
        let non_text = Value::Map(vec![(Value::Uint(1), Value::Uint(2))]);
        assert!(GlobalMetadata::decode(&to_canonical(&non_text)).is_err());
    }

    #[test]
    fn index_and_hash_lists_round_trip() {
        let i = Index {
            offsets: vec![384, 1 << 40],
            lengths: vec![175, 3],
        };
        let (back, canonical) = Index::decode(&i.encode()).unwrap();
        assert_eq!((back, canonical), (i, true));
        let (h, canonical) =
            HashList::decode(&HashList::encode_xxh3(&[0x83a2_a5e5_4384_b39d])).unwrap();
        assert!(canonical);
        assert_eq!(h.hashes, vec![Some(0x83a2_a5e5_4384_b39d)]);
        let uneven = to_canonical(&Value::Map(vec![
            (
                Value::Text("offsets".into()),
                Value::Array(vec![Value::Uint(1)]),
            ),
            (Value::Text("lengths".into()), Value::Array(vec![])),
        ]));
        assert!(Index::decode(&uneven).is_err());
    }

    #[test]
    fn preceders_override_and_base_longer_than_objects_fails() {
        let mut m = GlobalMetadata {
            base: vec![Map::from([("name".into(), MetaValue::Text("a".into()))])],
            ..GlobalMetadata::default()
        };
        let p = GlobalMetadata {
            base: vec![Map::from([
                ("name".into(), MetaValue::Text("b".into())),
                (RESERVED.into(), MetaValue::Null),
            ])],
            ..GlobalMetadata::default()
        };
        m.merge_preceder(0, &p).unwrap();
        assert_eq!(m.get(0, "name"), Some(&MetaValue::Text("b".into())));
        assert!(!m.base[0].contains_key(RESERVED));
        assert!(m.clone().fit_to(0).is_err());
        m.fit_to(3).unwrap();
        assert_eq!(m.base.len(), 3);
    }
}
