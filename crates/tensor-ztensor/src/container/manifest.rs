//! Finding and parsing the manifest: the footer or trailer that locates it, then every
//! object and part it lists.

use super::logical::STORAGE_DTYPES;
use super::part::{Object, Part, PartEncoding};
use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use crate::generation::{ALIGNMENT_V2, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2, MAX_RANK_V2};
use smallvec::SmallVec;
use std::borrow::Cow;
use tensor_core::cbor::{Decoder, Head, Value};
use tensor_core::checked;

pub(super) fn malformed(msg: impl Into<String>) -> Error {
    Error::format(Class::IndexMalformed, msg)
}

/// What a manifest holds.
pub(super) struct Manifest<'m> {
    pub objects: Vec<Object<'m>>,
    pub attributes: Option<Value>,
    /// Whether the root has a `tensors` map (zTensor 1.0) rather than `objects`.
    pub has_tensors: bool,
}

/// Reads a manifest in one pass, straight into objects and parts (no tree of values is
/// built, except for attributes): checks that `bytes` hold exactly one CBOR map, for
/// zTensor 2 that it is deterministic (shortest heads, definite lengths, keys sorted),
/// and that every object follows the schema; at most `limits`' tensor count.
pub(super) fn read_manifest<'m>(
    bytes: &'m [u8],
    generation: Generation,
    limits: &tensor_core::Limits,
) -> Result<Manifest<'m>> {
    let mut d = Decoder::new(bytes);
    let (mut listed, mut tensors, mut attributes) = (None, None, None);
    let is_map = d
        .for_each_field(|key, d| -> Result<()> {
            match key {
                b"objects" if listed.is_none() => listed = Some(objects(d, generation, limits)?),
                b"tensors" if tensors.is_none() => tensors = Some(objects(d, generation, limits)?),
                b"attributes" if attributes.is_none() => attributes = Some(d.value()?),
                _ => d.skip()?,
            }
            Ok(())
        })
        .map_err(cbor)?;
    if !is_map {
        d.skip().map_err(|e| cbor(e.into()))?;
    }
    if d.remaining() != 0 {
        return Err(malformed(format!(
            "{} bytes follow the manifest",
            d.remaining()
        )));
    }
    if generation == Generation::V2 && !(d.was_canonical() && d.keys_were_sorted()) {
        return Err(malformed(
            "the manifest is not in deterministic CBOR (shortest forms, definite lengths, sorted keys)",
        ));
    }
    if !is_map {
        return Err(malformed("the manifest is not a CBOR map"));
    }
    Ok(Manifest {
        has_tensors: tensors.is_some(),
        // `objects` wins over 1.0's `tensors`.
        objects: listed.or(tensors).unwrap_or_default(),
        attributes,
    })
}

/// The objects of the map that comes next (`objects`, or 1.0's `tensors`): a large map of
/// definite length is read on two cores (see [`Decoder::collect_entries`]).
fn objects<'m>(
    d: &mut Decoder<'m>,
    generation: Generation,
    limits: &tensor_core::Limits,
) -> Result<Vec<Object<'m>>> {
    let named = |d: &mut Decoder<'m>| -> Result<Object<'m>> {
        let name = d
            .text()
            .map_err(|_| malformed("object name must be text"))?;
        object(d, name, generation)
    };
    let head = d.peek()?;
    if let (5, Some(n)) = (head.major, head.arg) {
        limits.check_tensor_count(n)?;
        if let Some(objects) = d.collect_entries(named)? {
            return Ok(objects);
        }
    }
    let mut objects = Vec::new();
    let is_map = d.for_each_entry(|d| -> Result<()> {
        limits.check_tensor_count(objects.len() as u64 + 1)?;
        objects.push(named(d)?);
        Ok(())
    })?;
    if !is_map {
        return Err(malformed("objects must be a map"));
    }
    Ok(objects)
}

#[inline]
fn object<'m>(
    d: &mut Decoder<'m>,
    name: Cow<'m, str>,
    generation: Generation,
) -> Result<Object<'m>> {
    if generation == Generation::V2 && (name.is_empty() || name.len() > 1024 || name.contains('\0'))
    {
        return Err(malformed(format!(
            "object {name:?} must be 1 to 1024 bytes without NUL"
        )));
    }
    if generation == Generation::V2 {
        let mut known_form = d.clone();
        if let Some((shape, layout, part)) = dense_v2(&mut known_form) {
            *d = known_form;
            return Ok(Object {
                name,
                shape,
                layout,
                parts: smallvec::smallvec![part],
                attributes: None,
            });
        }
    }
    object_fields(d, name, generation)
}

/// A dense object of one part as zTensor 2 writers encode it, which deterministic CBOR
/// fixes byte for byte but for the values: `{"parts": {"data": {"blob": [offset, length],
/// "dtype": t, "digest": h}}, "shape": [dims], "layout": l}`, the digest optional. Its
/// keys are matched in place rather than read and compared one by one (opening a manifest
/// of many objects takes half the time); `None` for anything else, which
/// [`object_fields`] reads, wording any fault. What it returns is what `object_fields`
/// makes of the same bytes.
fn dense_v2(d: &mut Decoder<'_>) -> Option<(SmallVec<[u64; 4]>, Cow<'static, str>, Part)> {
    if !d.literal(b"\xa3\x65parts\xa1\x64data") {
        return None;
    }
    let digested = if d.literal(b"\xa3\x64blob\x82") {
        true
    } else if d.literal(b"\xa2\x64blob\x82") {
        false
    } else {
        return None;
    };
    let (offset, length) = (d.uint().ok()?, d.uint().ok()?);
    if !d.literal(b"\x65dtype") {
        return None;
    }
    let dtype = d.text_bytes().ok().filter(|t| !t.is_empty())?;
    let digest = if digested {
        if !d.literal(b"\x66digest") {
            return None;
        }
        Some(parse_digest(&d.text_bytes().ok()?))
    } else {
        None
    };
    if !d.literal(b"\x65shape") {
        return None;
    }
    let rank = match d.head().ok()? {
        Head {
            major: 4,
            arg: Some(n),
            ..
        } if n <= MAX_RANK_V2 as u64 => n,
        _ => return None,
    };
    let mut shape = SmallVec::new();
    for _ in 0..rank {
        shape.push(d.uint().ok()?);
    }
    if !d.literal(b"\x66layout") {
        return None;
    }
    let layout = known(&d.text_bytes().ok()?, LAYOUTS);
    let part = Part {
        role: Cow::Borrowed("data"),
        dtype_name: known(&dtype, &DTYPES),
        logical: None,
        offset,
        length,
        encoding: PartEncoding::Raw,
        digest,
    };
    Some((shape, layout, part))
}

/// An object read field by field, whatever its form.
fn object_fields<'m>(
    d: &mut Decoder<'m>,
    name: Cow<'m, str>,
    generation: Generation,
) -> Result<Object<'m>> {
    let what = |k: &str| format!("object {name:?}: {k}");
    let (layout_key, parts_key) = match generation {
        Generation::V2 => ("layout", "parts"),
        _ => ("format", "components"),
    };
    let (layout_field, parts_field) = (layout_key.as_bytes(), parts_key.as_bytes());
    let mut shape = None;
    let mut layout = None;
    let mut object_dtype = None;
    let mut parts = None;
    let mut attributes = None;
    let is_map = d.for_each_field(|key, d| -> Result<()> {
        match key {
            b"shape" if shape.is_none() => {
                let mut dims = SmallVec::<[u64; 4]>::new();
                dims.reserve(announced(d, 4, MAX_RANK_V2));
                let is_array = d.for_each_item(|d| -> Result<()> {
                    dims.push(uint(d, || what("shape"))?);
                    if dims.len() > MAX_RANK_V2 {
                        return Err(malformed(what(&format!("rank is over {MAX_RANK_V2}"))));
                    }
                    Ok(())
                })?;
                if !is_array {
                    return Err(malformed(what("shape must be an array")));
                }
                shape = Some(dims);
            }
            k if k == layout_field && layout.is_none() => {
                layout = Some(known(&text_bytes(d, || what(layout_key))?, LAYOUTS));
            }
            b"dtype" if object_dtype.is_none() => {
                // Only a default for the parts: anything but text is ignored.
                object_dtype = Some(if d.peek()?.major == 3 {
                    Some(known(&text_bytes(d, || what("dtype"))?, &DTYPES))
                } else {
                    d.skip()?;
                    None
                });
            }
            k if k == parts_field && parts.is_none() => {
                let mut list = SmallVec::<[Part; 1]>::new();
                list.reserve(announced(d, 5, ROLES.len()));
                let is_map = d.for_each_entry(|d| -> Result<()> {
                    let role = d
                        .text()
                        .map_err(|_| malformed(what("part role must be text")))?;
                    list.push(part(d, &role, generation)?);
                    Ok(())
                })?;
                if !is_map {
                    return Err(malformed(what(&format!("{parts_key} must be a map"))));
                }
                parts = Some(list);
            }
            b"attributes" if attributes.is_none() => attributes = Some(d.value()?),
            _ => d.skip()?,
        }
        Ok(())
    })?;
    if !is_map {
        return Err(malformed(what("must be a map")));
    }
    let shape = shape.ok_or_else(|| malformed(what("shape must be an array")))?;
    let mut parts = parts.ok_or_else(|| malformed(what(&format!("{parts_key} must be a map"))))?;
    let object_dtype = object_dtype.flatten();
    for p in &mut parts {
        if p.dtype_name.is_empty() {
            p.dtype_name = object_dtype
                .clone()
                .ok_or_else(|| malformed(format!("part {:?}: dtype is missing", p.role)))?;
        }
    }
    Ok(Object {
        name,
        shape,
        layout: layout.unwrap_or(Cow::Borrowed("dense")),
        parts,
        attributes,
    })
}

/// One part; its `dtype_name` is left empty when the part has none (the object's applies).
#[inline]
fn part(d: &mut Decoder<'_>, role: &str, generation: Generation) -> Result<Part> {
    let what = |k: &str| format!("part {role:?}: {k}");
    let mut dtype_name = None;
    let mut logical = None;
    let mut blob = None;
    let (mut offset, mut length) = (None, None);
    let mut encoding = None;
    let (mut decoded, mut uncompressed) = (None, None);
    let mut digest = None;
    let is_map = d.for_each_field(|key, d| -> Result<()> {
        match key {
            b"dtype" if dtype_name.is_none() => {
                dtype_name = Some(known(&text_bytes(d, || what("dtype"))?, &DTYPES));
            }
            b"type" if logical.is_none() => logical = Some(text(d, || what("type"))?.into_owned()),
            b"blob" if blob.is_none() && generation == Generation::V2 => {
                let bad = || malformed(what("blob must be [offset, length]"));
                let (mut at, mut n) = ([0u64; 2], 0);
                let is_array = d.for_each_item(|d| -> Result<()> {
                    let slot = at.get_mut(n).ok_or_else(bad)?;
                    *slot = uint(d, || what(["blob offset", "blob length"][n]))?;
                    n += 1;
                    Ok(())
                })?;
                if !is_array || n != 2 {
                    return Err(bad());
                }
                blob = Some((at[0], at[1]));
            }
            b"offset" if offset.is_none() => offset = Some(uint(d, || what("offset"))?),
            b"length" if length.is_none() => length = Some(uint(d, || what("length"))?),
            b"encoding" if encoding.is_none() => encoding = Some(text(d, || what("encoding"))?),
            b"decoded_length" if decoded.is_none() => {
                decoded = Some(uint(d, || what("decoded_length"))?);
            }
            b"uncompressed_length" if uncompressed.is_none() => {
                uncompressed = Some(uint(d, || what("uncompressed_length"))?);
            }
            b"digest" if digest.is_none() => {
                digest = Some(parse_digest(&text_bytes(d, || what("digest"))?));
            }
            _ => d.skip()?,
        }
        Ok(())
    })?;
    if !is_map {
        return Err(malformed(what("must be a map")));
    }
    let (offset, length) = match generation {
        Generation::V2 => blob.ok_or_else(|| malformed(what("blob must be [offset, length]")))?,
        _ => (
            offset.ok_or_else(|| malformed(what("offset is missing")))?,
            length.ok_or_else(|| malformed(what("length is missing")))?,
        ),
    };
    let required = |v: Option<u64>, key: &str| {
        v.ok_or_else(|| malformed(what(&format!("{key} is required with an encoding"))))
    };
    let encoding = match encoding.as_deref() {
        None | Some("raw") => PartEncoding::Raw,
        Some("zstd") if generation == Generation::V1 => PartEncoding::Zstd {
            decoded_length: required(uncompressed, "uncompressed_length")?,
        },
        Some("zt.zstd-seekable/1") if generation == Generation::V2 => PartEncoding::ZstdSeekable {
            decoded_length: required(decoded, "decoded_length")?,
        },
        Some(other) => PartEncoding::Other(other.to_owned()),
    };
    Ok(Part {
        role: known(role.as_bytes(), ROLES),
        dtype_name: dtype_name.unwrap_or_default(),
        logical,
        offset,
        length,
        encoding,
        digest,
    })
}

/// The layouts, roles and dtypes a manifest usually names: kept as `&'static str` rather than
/// allocated once per object.
const LAYOUTS: &[&str] = &[
    "dense",
    "zt.sparse_csr/1",
    "zt.sparse_coo/1",
    "sparse_csr",
    "sparse_coo",
];
const ROLES: &[&str] = &["data", "values", "indices", "indptr", "coords"];
const DTYPES: [&str; STORAGE_DTYPES.len()] = {
    let mut names = [""; STORAGE_DTYPES.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = STORAGE_DTYPES[i].0;
        i += 1;
    }
    names
};

/// Text `s` (UTF-8, as the decoder checked it), borrowed from `names` when it is one of them.
fn known(s: &[u8], names: &[&'static str]) -> Cow<'static, str> {
    names.iter().find(|n| n.as_bytes() == s).map_or_else(
        || Cow::Owned(String::from_utf8_lossy(s).into_owned()),
        |&name| Cow::Borrowed(name),
    )
}

/// The length the array (major type 4) or map (5) that comes next announces, as room to make
/// for its items: at most `most` (more are not expected, though the list may grow).
fn announced(d: &Decoder<'_>, major: u8, most: usize) -> usize {
    match d.peek() {
        Ok(h) if h.major == major => h
            .arg
            .and_then(|n| usize::try_from(n).ok())
            .map_or(0, |n| n.min(most)),
        _ => 0,
    }
}

fn uint(d: &mut Decoder<'_>, what: impl FnOnce() -> String) -> Result<u64> {
    d.uint()
        .map_err(|_| malformed(format!("{} must be an unsigned integer", what())))
}

fn text<'m>(d: &mut Decoder<'m>, what: impl FnOnce() -> String) -> Result<Cow<'m, str>> {
    d.text().map_err(|_| not_text(what))
}

/// [`text`], as bytes (ASCII found without a UTF-8 check), for text compared with known
/// spellings.
fn text_bytes<'m>(d: &mut Decoder<'m>, what: impl FnOnce() -> String) -> Result<Cow<'m, [u8]>> {
    d.text_bytes().map_err(|_| not_text(what))
}

fn not_text(what: impl FnOnce() -> String) -> Error {
    malformed(format!("{} must be text", what()))
}

/// A CBOR error met anywhere in the manifest is the manifest's.
fn cbor(e: Error) -> Error {
    match e {
        Error::Core(e @ tensor_core::Error::Malformed { .. }) => {
            malformed(format!("manifest: {e}"))
        }
        other => other,
    }
}

/// A digest's text, as bytes (UTF-8 already checked, or ASCII).
fn parse_digest(s: &[u8]) -> Checksum {
    if let Some(hex) = s.strip_prefix(b"xxh3:")
        && let Some(h) = tensor_core::hex::decode_u64(hex)
    {
        return Checksum::Xxh3(h);
    }
    let s = String::from_utf8_lossy(s);
    if s.starts_with("xxh3:") {
        Checksum::Malformed(s.into_owned())
    } else {
        Checksum::parse(&s)
    }
}

/// The manifest's offset and length, and for zTensor 2 the footer's manifest hash and
/// reserved field.
pub(super) type ManifestPlace = (u64, u64, Option<(u64, u32)>);

/// Where the manifest is, per generation, after the framing checks.
/// For zTensor 2 also the footer's manifest hash and its reserved field.
pub(super) fn locate_manifest(bytes: &[u8], generation: Generation) -> Result<ManifestPlace> {
    let len = bytes.len() as u64;
    match generation {
        Generation::V1 => {
            let trailer = len >= 24 && &bytes[bytes.len() - 8..] == MAGIC_V1;
            let size_at = if trailer {
                len - 16
            } else {
                len.checked_sub(8)
                    .filter(|&s| s >= 8)
                    .ok_or_else(|| Error::format(Class::Truncated, "the file is too short"))?
            };
            if size_at < 8 {
                return Err(Error::format(
                    Class::Truncated,
                    format!("the file is {len} bytes long"),
                ));
            }
            let size = u64::from_le_bytes(
                bytes[size_at as usize..size_at as usize + 8]
                    .try_into()
                    .unwrap_or_default(),
            );
            if size > size_at - 8 {
                return Err(Error::format(
                    Class::IndexOutOfBounds,
                    format!(
                        "the manifest length {size} at offset {size_at} runs past the file's start"
                    ),
                ));
            }
            Ok((size_at - size, size, None))
        }
        Generation::V2 => {
            if bytes.len() < 8 + FOOTER_V2 {
                return Err(Error::format(
                    Class::Truncated,
                    format!("the file is {len} bytes long; zTensor 2 files hold at least 48"),
                ));
            }
            let f = &bytes[bytes.len() - FOOTER_V2..];
            if &f[32..40] != MAGIC_V2 {
                // A damaged magic differs in a byte or two; a file cut short ends in
                // whatever came before the cut.
                let differing = f[32..40]
                    .iter()
                    .zip(MAGIC_V2)
                    .filter(|(a, b)| a != b)
                    .count();
                return Err(if differing <= 2 {
                    Error::format(
                        Class::BadMagic,
                        "the footer does not end with the zTensor 2 magic",
                    )
                } else {
                    Error::format(
                        Class::Truncated,
                        format!(
                            "the file ({len} bytes) does not end with the zTensor 2 footer and its magic: it appears cut short"
                        ),
                    )
                });
            }
            let word = |i: usize| u64::from_le_bytes(f[i..i + 8].try_into().unwrap_or_default());
            let version = u32::from_le_bytes(f[24..28].try_into().unwrap_or_default());
            if version != 2 {
                return Err(Error::format(
                    Class::UnknownEncoding,
                    format!("container version {version} is not supported (2 is)"),
                ));
            }
            let (offset, length, hash) = (word(0), word(8), word(16));
            let end = checked::add(offset, length, "manifest end")?;
            if offset < ALIGNMENT_V2 || end > len - FOOTER_V2 as u64 {
                return Err(Error::format(
                    Class::IndexOutOfBounds,
                    format!("the manifest at {offset}..{end} lies outside the file's blob region"),
                ));
            }
            if offset % ALIGNMENT_V2 != 0 {
                return Err(Error::format(
                    Class::MisalignedOffset,
                    format!("the manifest offset {offset} is not a multiple of {ALIGNMENT_V2}"),
                ));
            }
            let reserved = u32::from_le_bytes(f[28..32].try_into().unwrap_or_default());
            Ok((offset, length, Some((hash, reserved))))
        }
        Generation::V0_1 => Err(Error::format(
            Class::BadMagic,
            "a zTensor 0.1 file is read with ZTensor::open",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tensor_core::cbor::{Encoder, to_canonical};

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(
            entries
                .iter()
                .map(|(k, v)| (Value::from(*k), v.clone()))
                .collect(),
        )
    }

    fn v2_object(part: Value) -> Value {
        map(&[(
            "objects",
            map(&[(
                "w",
                map(&[
                    ("shape", Value::Array(vec![Value::Uint(2)])),
                    ("parts", map(&[("data", part)])),
                ]),
            )]),
        )])
    }

    fn read(bytes: &[u8], generation: Generation) -> Result<Manifest<'_>> {
        read_manifest(bytes, generation, &tensor_core::Limits::default())
    }

    fn message(r: Result<Manifest<'_>>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn a_v2_part_reads_in_one_pass() {
        let part = map(&[
            (
                "blob",
                Value::Array(vec![Value::Uint(4096), Value::Uint(8)]),
            ),
            ("digest", Value::from("xxh3:00000000000000ff")),
            ("dtype", Value::from("f32")),
        ]);
        let bytes = to_canonical(&v2_object(part));
        let m = read(&bytes, Generation::V2).unwrap();
        let p = &m.objects[0].parts[0];
        assert_eq!((p.offset, p.length, &*p.dtype_name), (4096, 8, "f32"));
        assert_eq!(p.digest, Some(Checksum::Xxh3(0xff)));
        for bad in [
            "xxh3:+00000000000000f",
            "xxh3:00ff",
            "xxh3:00000000000000fg",
        ] {
            assert_eq!(
                parse_digest(bad.as_bytes()),
                Checksum::Malformed(bad.to_owned())
            );
        }
        assert_eq!(m.objects[0].layout, "dense");
        assert!(!m.has_tensors && m.attributes.is_none());
    }

    #[test]
    fn schema_and_encoding_faults_are_named() {
        let blob = Value::Array(vec![Value::Uint(4096), Value::Uint(8)]);
        // No dtype on the part nor on the object.
        let no_dtype = to_canonical(&v2_object(map(&[("blob", blob.clone())])));
        assert!(message(read(&no_dtype, Generation::V2)).contains("dtype is missing"));
        // A blob of three numbers.
        let three = Value::Array(vec![Value::Uint(1), Value::Uint(2), Value::Uint(3)]);
        let bad_blob = to_canonical(&v2_object(map(&[
            ("blob", three),
            ("dtype", Value::from("f32")),
        ])));
        assert!(message(read(&bad_blob, Generation::V2)).contains("blob must be"));
        // Keys out of order: refused for 2, tolerated for 1.x.
        let mut e = Encoder::new();
        e.value(&v2_object(map(&[
            ("dtype", Value::from("f32")),
            ("blob", blob),
        ])));
        assert!(message(read(&e.out, Generation::V2)).contains("deterministic"));
        // A root that is not a map, and bytes after the manifest.
        assert!(message(read(&[0x01], Generation::V2)).contains("not a CBOR map"));
        assert!(message(read(&[0xa0, 0x00], Generation::V2)).contains("follow the manifest"));
        // A manifest cut short is malformed, not a core error.
        let cut = &no_dtype[..no_dtype.len() - 3];
        let err = read(cut, Generation::V2).err().unwrap();
        assert_eq!(err.class(), Some(Class::IndexMalformed));
    }

    #[test]
    fn v1_parts_take_the_object_dtype() {
        let v = map(&[(
            "tensors",
            map(&[(
                "w",
                map(&[
                    (
                        "components",
                        map(&[(
                            "data",
                            map(&[("length", Value::Uint(8)), ("offset", Value::Uint(64))]),
                        )]),
                    ),
                    ("dtype", Value::from("float32")),
                    ("shape", Value::Array(vec![Value::Uint(2)])),
                ]),
            )]),
        )]);
        let bytes = to_canonical(&v);
        let m = read(&bytes, Generation::V1).unwrap();
        assert!(m.has_tensors);
        assert_eq!(m.objects[0].parts[0].dtype_name, "float32");
        assert_eq!(m.objects[0].parts[0].offset, 64);
    }

    #[test]
    fn the_tensor_count_is_limited_before_objects_are_read() {
        let many = map(&[(
            "objects",
            Value::Map(
                (0..5)
                    .map(|i| (Value::from(format!("t{i}")), Value::Null))
                    .collect(),
            ),
        )]);
        let mut limits = tensor_core::Limits::default();
        limits.max_tensor_count = 4;
        let err = read_manifest(&to_canonical(&many), Generation::V2, &limits)
            .err()
            .unwrap();
        assert!(matches!(
            err,
            Error::Core(tensor_core::Error::LimitExceeded { .. })
        ));
    }

    /// A dense object as a zTensor 2 writer encodes it, with what varies.
    fn dense(shape: &[u64], dtype: &str, digest: Option<&str>, layout: &str) -> Value {
        let mut part = vec![
            (
                "blob",
                Value::Array(vec![Value::Uint(4096), Value::Uint(1 << 20)]),
            ),
            ("dtype", Value::from(dtype)),
        ];
        if let Some(h) = digest {
            part.push(("digest", Value::from(h)));
        }
        map(&[
            ("parts", map(&[("data", map(&part))])),
            (
                "shape",
                Value::Array(shape.iter().map(|&n| Value::Uint(n)).collect()),
            ),
            ("layout", Value::from(layout)),
        ])
    }

    /// What reading one object leaves: the object or the error, where the decoder stopped,
    /// and its encoding flags; through the known-form path or field by field only.
    fn read_object(bytes: &[u8], fields_only: bool) -> (String, usize, bool, bool) {
        let mut d = Decoder::new(bytes);
        let name = Cow::Borrowed("w");
        let r = if fields_only {
            object_fields(&mut d, name, Generation::V2)
        } else {
            object(&mut d, name, Generation::V2)
        };
        (
            format!("{r:?}"),
            d.position(),
            d.was_canonical(),
            d.keys_were_sorted(),
        )
    }

    #[test]
    fn the_writers_form_is_matched_in_place() {
        let digest = "xxh3:00000000000000ff";
        for (shape, digest) in [(&[2u64, 3][..], Some(digest)), (&[], None)] {
            let bytes = to_canonical(&dense(shape, "f32", digest, "dense"));
            assert!(dense_v2(&mut Decoder::new(&bytes)).is_some());
            assert_eq!(read_object(&bytes, false), read_object(&bytes, true));
        }
        // What the writer makes of a tensor takes that path.
        let data = [0u8; 8];
        let view = tensor_dtype::TensorView::new(
            &data,
            tensor_dtype::Dtype::Float32,
            &[2],
            tensor_core::ByteOrder::Little,
        )
        .unwrap();
        let mut file = Vec::new();
        crate::v2::write(&mut file, [("w", view, None)], None).unwrap();
        let (at, len, _) = locate_manifest(&file, Generation::V2).unwrap();
        let manifest = &file[at as usize..(at + len) as usize];
        let object_at = manifest.windows(2).position(|w| w == b"aw").unwrap() + 2;
        assert!(dense_v2(&mut Decoder::at(manifest, object_at)).is_some());
        // Anything else is read field by field, to the same result.
        for other in [
            dense(&[2; MAX_RANK_V2 + 1], "f32", None, "dense"),
            dense(&[2], "", None, "dense"),
            dense(&[2], "f32", Some("xxh3:+0"), "zt.sparse_csr/1"),
            Value::Uint(3),
        ] {
            let bytes = to_canonical(&other);
            assert_eq!(read_object(&bytes, false), read_object(&bytes, true));
        }
    }

    proptest! {
        /// Whatever the bytes, the object read through the known-form path is the one read
        /// field by field, with the same error, position and flags.
        #[test]
        fn the_known_form_reads_as_the_fields_do(
            shape in proptest::collection::vec(0u64..100_000, 0..7),
            dtype in "(f32|bf16|u8|x|)",
            digest in proptest::option::of("(xxh3:[0-9a-f]{16}|xxh3:[+0-9a-z]{0,17}|sha256:00)"),
            layout in "(dense|zt.sparse_coo/1|[a-z]{0,3})",
            damage in proptest::option::of((0.0f64..1.0, any::<u8>())),
        ) {
            let mut bytes = to_canonical(&dense(&shape, &dtype, digest.as_deref(), &layout));
            if let Some((at, byte)) = damage {
                let last = bytes.len() - 1;
                bytes[((at * last as f64) as usize).min(last)] = byte;
            }
            prop_assert_eq!(read_object(&bytes, false), read_object(&bytes, true));
        }
    }
}
