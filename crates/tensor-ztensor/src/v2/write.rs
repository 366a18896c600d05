//! Writing canonical zTensor 2 files.
//!
//! Layout: the magic; zero padding; each distinct blob at the next multiple of 64 KiB (the
//! canonical alignment; tensors with identical bytes share one blob); the manifest — itself a
//! blob, in deterministic CBOR — at the next multiple of 64 KiB; then the 40-byte footer
//! (manifest offset, manifest length, XXH3-64 of the manifest, version 2, reserved 0, magic).
//! Every part carries an `xxh3:` digest of its decoded bytes.

use super::entry::ObjectEntry;
use crate::container::{ALIGNMENT_V2, CANONICAL_ALIGNMENT, MAGIC_V2, MAX_RANK_V2};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::Write;
use tensor_core::cbor::{Value, to_canonical_plain_nan};
use tensor_dtype::{Dtype, TensorView};

fn text(s: &str) -> Value {
    Value::Text(s.to_owned())
}

/// Storage dtype and logical type for a tensorkit dtype.
fn storage(dtype: Dtype, name: &str) -> Result<(&'static str, Option<&'static str>)> {
    if let Some(l) = crate::container::logical::LOGICAL_TYPES
        .iter()
        .find(|l| l.dtype == dtype)
    {
        let short = STORAGE_NAMES.iter().find(|(d, _)| *d == l.storage);
        return Ok((short.map_or("u8", |s| s.1), Some(l.names[0])));
    }
    STORAGE_NAMES
        .iter()
        .find(|(d, _)| *d == dtype)
        .map(|&(_, short)| (short, None))
        .ok_or_else(|| Error::Unwritable(format!("dtype {dtype} (tensor {name:?}) in zTensor 2")))
}

/// zTensor 2's twelve storage dtypes.
const STORAGE_NAMES: [(Dtype, &str); 12] = [
    (Dtype::Float64, "f64"),
    (Dtype::Float32, "f32"),
    (Dtype::Float16, "f16"),
    (Dtype::Bfloat16, "bf16"),
    (Dtype::Int64, "i64"),
    (Dtype::Int32, "i32"),
    (Dtype::Int16, "i16"),
    (Dtype::Int8, "i8"),
    (Dtype::Uint64, "u64"),
    (Dtype::Uint32, "u32"),
    (Dtype::Uint16, "u16"),
    (Dtype::Uint8, "u8"),
];

/// Refuses what zTensor 2 readers refuse in an attribute map (spec §3.1, §3.5): keys that
/// are not text of 1 to 1024 bytes without NUL, tags, and nesting past 32 levels from the
/// manifest root (`depth` is the map's own level).
fn check_attributes(value: &Value, whose: &str, depth: usize) -> Result<()> {
    let Value::Map(entries) = value else {
        return Err(Error::Unwritable(format!(
            "{whose}: attributes must be a map"
        )));
    };
    for (k, v) in entries {
        match k {
            Value::Text(key) if !key.is_empty() && key.len() <= 1024 && !key.contains('\0') => {}
            other => {
                return Err(Error::Unwritable(format!(
                    "{whose}: {} (zTensor 2 attribute keys are text of 1 to 1024 bytes without \
                     NUL; ztensor refuses the file otherwise)",
                    unwritable_key(other)
                )));
            }
        }
        check_attribute_value(v, whose, depth + 1)?;
    }
    Ok(())
}

/// A key zTensor 2 cannot hold, in words.
fn unwritable_key(key: &Value) -> String {
    match key {
        Value::Text(k) if k.is_empty() => "an empty key".to_owned(),
        Value::Text(k) if k.contains('\0') => format!("the key {k:?} holds a NUL character"),
        Value::Text(k) => format!("a key of {} bytes", k.len()),
        Value::Uint(n) => format!("the integer key {n}"),
        Value::Nint(n) => format!("the integer key -{}", u128::from(*n) + 1),
        Value::Bytes(_) => "a key of bytes".to_owned(),
        _ => "a key that is not text".to_owned(),
    }
}

fn check_attribute_value(value: &Value, whose: &str, depth: usize) -> Result<()> {
    if depth > 32 {
        return Err(Error::Unwritable(format!(
            "{whose} nest deeper than zTensor 2's 32 levels"
        )));
    }
    match value {
        Value::Map(_) => check_attributes(value, whose, depth),
        Value::Array(items) => items
            .iter()
            .try_for_each(|v| check_attribute_value(v, whose, depth + 1)),
        Value::Tag(..) => Err(Error::Unwritable(format!(
            "{whose}: zTensor 2 attribute values carry no CBOR tags"
        ))),
        _ => Ok(()),
    }
}

/// A sink that knows how many bytes it has written.
struct Sink<'w> {
    out: &'w mut dyn Write,
    pos: u64,
    alignment: u64,
    /// Everything written, for the `paranoid` feature's read-back.
    #[cfg(feature = "paranoid")]
    copy: Vec<u8>,
}

impl Sink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::Core(tensor_core::Error::io("writing a zTensor 2 file", e)))?;
        self.pos += bytes.len() as u64;
        #[cfg(feature = "paranoid")]
        self.copy.extend_from_slice(bytes);
        Ok(())
    }

    /// Zero padding up to the next multiple of the alignment.
    fn align(&mut self) -> Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        let target = self.pos.div_ceil(self.alignment) * self.alignment;
        while self.pos < target {
            let n = ((target - self.pos) as usize).min(ZEROS.len());
            self.put(&ZEROS[..n])?;
        }
        Ok(())
    }
}

impl Write for Sink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.put(buf).map_err(std::io::Error::other)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A writer that hands what it is given to a closure: a digest, or the file and a digest.
struct Feed<F>(F);

impl<F: FnMut(&[u8]) -> std::io::Result<()>> Write for Feed<F> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (self.0)(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A failure to write a zTensor 2 file (the sink's, or the source's the caller reported).
fn io(e: std::io::Error) -> Error {
    Error::Core(tensor_core::Error::io("writing a zTensor 2 file", e))
}

/// The blobs written so far, by digest and length, to find an object whose bytes are
/// already in the file; equal digests are confirmed with SHA-256 of both objects, asked
/// for again only then (identical tensors are rare, and SHA-256 slow).
#[derive(Default)]
struct Written {
    by_digest: HashMap<(u64, u64), Vec<(usize, u64)>>,
    sha: HashMap<usize, [u8; 32]>,
}

impl Written {
    fn sha(
        &mut self,
        i: usize,
        data: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
    ) -> Result<[u8; 32]> {
        if let Some(s) = self.sha.get(&i) {
            return Ok(*s);
        }
        let mut h = sha2::Sha256::default();
        data(
            i,
            &mut Feed(|b: &[u8]| {
                sha2::Digest::update(&mut h, b);
                Ok(())
            }),
        )
        .map_err(io)?;
        let s = sha2::Digest::finalize(h).into();
        self.sha.insert(i, s);
        Ok(s)
    }

    /// The offset of a blob already written with the bytes of object `i`.
    fn find(
        &mut self,
        i: usize,
        key: (u64, u64),
        data: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Option<u64>> {
        let candidates = self.by_digest.get(&key).cloned().unwrap_or_default();
        for (j, offset) in candidates {
            if self.sha(i, data)? == self.sha(j, data)? {
                return Ok(Some(offset));
            }
        }
        Ok(None)
    }
}

/// Writes a canonical zTensor 2 file to `out` from objects described by `entries` (blobs in
/// the bytewise order of the object names, whatever the order of `entries`, so the bytes
/// are those of ztensor's own canonical writer), asking
/// `data(i, w)` for the little-endian elements of `entries[i]` (bools as 0/1) when they are
/// needed, never for more than one object at a time: once to write and digest them; for an
/// object whose length another shares, once more beforehand to digest them (objects with
/// identical bytes share one blob), and again for SHA-256 when its digest matches a written
/// blob's. `data` must produce the same bytes every time, exactly the object's size. Blobs and the manifest
/// start at multiples of `alignment`: a power of two, at least [`ALIGNMENT_V2`] (4096);
/// [`CANONICAL_ALIGNMENT`] (64 KiB) gives the canonical bytes. Returns the number of bytes
/// written.
pub fn write_streamed(
    out: &mut dyn Write,
    entries: &[ObjectEntry<'_>],
    attributes: Option<Value>,
    alignment: u64,
    data: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
) -> Result<u64> {
    if !alignment.is_power_of_two() || alignment < ALIGNMENT_V2 {
        return Err(Error::Core(tensor_core::Error::InvalidArgument(format!(
            "zTensor 2 alignment {alignment} is not a power of two of at least {ALIGNMENT_V2}"
        ))));
    }
    let mut sink = Sink {
        out,
        pos: 0,
        alignment,
        #[cfg(feature = "paranoid")]
        copy: Vec::new(),
    };
    sink.put(MAGIC_V2)?;
    let mut written = Written::default();
    // Only objects whose length another object shares can share its blob: those are
    // digested before they are written, the others while they are written.
    let lens = entries
        .iter()
        .map(|e| tensor_dtype::shape::byte_len(e.dtype, e.shape))
        .collect::<std::result::Result<Vec<u64>, _>>()?;
    let mut same_len: HashMap<u64, usize> = HashMap::new();
    for &len in &lens {
        *same_len.entry(len).or_default() += 1;
    }
    let mut names = std::collections::HashSet::new();
    let mut objects = Vec::with_capacity(entries.len());
    // Canonical form places blobs in (object name, part name) byte order (spec §6.3).
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| entries[a].name.as_bytes().cmp(entries[b].name.as_bytes()));
    if let Some(a) = &attributes {
        check_attributes(a, "the file's attributes", 2)?;
    }
    for i in order {
        let e = &entries[i];
        let name = e.name;
        if name.is_empty() || name.len() > 1024 || name.contains('\0') || !names.insert(name) {
            return Err(Error::Unwritable(format!(
                "the object name {name:?} (names are unique, 1 to 1024 bytes, without NUL)"
            )));
        }
        let (dtype, logical) = storage(e.dtype, name)?;
        if e.shape.len() > MAX_RANK_V2 {
            return Err(Error::Unwritable(format!(
                "object {name:?} has rank {}; zTensor 2 readers accept at most {}",
                e.shape.len(),
                MAX_RANK_V2
            )));
        }
        let len = lens[i];
        let size_error = |got: u64| {
            Error::Unwritable(format!(
                "object {name:?}: {got} bytes were given for a {len}-byte tensor"
            ))
        };
        // An object whose length another shares may share its blob: it is digested first
        // to find out. Any other is digested while it is written, on another core.
        let first = if same_len[&len] > 1 {
            let mut xxh3 = tensor_core::xxh3::Xxh3::new();
            let mut got = 0u64;
            data(
                i,
                &mut Feed(|b: &[u8]| {
                    xxh3.update(b);
                    got += b.len() as u64;
                    Ok(())
                }),
            )
            .map_err(io)?;
            if got != len {
                return Err(size_error(got));
            }
            let digest = xxh3.digest();
            Some((digest, written.find(i, (digest, len), data)?))
        } else {
            None
        };
        let (offset, digest) = if let Some((digest, Some(offset))) = first {
            // Identical bytes share one blob (weight tying).
            (offset, digest)
        } else {
            sink.align()?;
            let offset = sink.pos;
            let mut xxh3 = tensor_core::xxh3::Xxh3::new();
            if first.is_some() {
                data(i, &mut sink).map_err(io)?;
            } else {
                data(
                    i,
                    &mut Feed(|b: &[u8]| {
                        tensor_core::tee::write(&mut sink, b, &mut |p| xxh3.update(p))
                    }),
                )
                .map_err(io)?;
            }
            if sink.pos - offset != len {
                return Err(size_error(sink.pos - offset));
            }
            let digest = first.map_or_else(|| xxh3.digest(), |(digest, _)| digest);
            if first.is_some() {
                written
                    .by_digest
                    .entry((digest, len))
                    .or_default()
                    .push((i, offset));
            }
            (offset, digest)
        };
        let mut part = vec![
            (text("dtype"), text(dtype)),
            (
                text("blob"),
                Value::Array(vec![Value::Uint(offset), Value::Uint(len)]),
            ),
            (text("digest"), text(&format!("xxh3:{digest:016x}"))),
        ];
        if let Some(l) = logical {
            part.push((text("type"), text(l)));
        }
        let mut object = vec![
            (
                text("shape"),
                Value::Array(e.shape.iter().map(|&d| Value::Uint(d)).collect()),
            ),
            (text("layout"), text("dense")),
            (
                text("parts"),
                Value::Map(vec![(text("data"), Value::Map(part))]),
            ),
        ];
        if let Some(a) = &e.attributes {
            check_attributes(a, &format!("object {name:?}'s attributes"), 4)?;
            object.push((text("attributes"), a.clone()));
        }
        objects.push((text(name), Value::Map(object)));
    }
    let mut root = vec![(text("objects"), Value::Map(objects))];
    if let Some(a) = attributes {
        root.push((text("attributes"), a));
    }
    let manifest = to_canonical_plain_nan(&Value::Map(root));
    sink.align()?;
    let m_offset = sink.pos;
    sink.put(&manifest)?;
    sink.put(&footer(m_offset, &manifest))?;
    sink.out
        .flush()
        .map_err(|e| Error::Core(tensor_core::Error::io("writing a zTensor 2 file", e)))?;
    #[cfg(feature = "paranoid")]
    crate::paranoid::check_written(&sink.copy, entries)?;
    Ok(sink.pos)
}

/// The 40-byte footer of a manifest at `offset`.
fn footer(offset: u64, manifest: &[u8]) -> Vec<u8> {
    let mut footer = Vec::with_capacity(40);
    footer.extend_from_slice(&offset.to_le_bytes());
    footer.extend_from_slice(&(manifest.len() as u64).to_le_bytes());
    footer.extend_from_slice(&tensor_core::xxh3::xxh3_64(manifest).to_le_bytes());
    footer.extend_from_slice(&2u32.to_le_bytes());
    footer.extend_from_slice(&0u32.to_le_bytes());
    footer.extend_from_slice(MAGIC_V2);
    footer
}

/// What an edit changes in a zTensor 2 manifest ([`manifest_in_place`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManifestEdit {
    /// File attributes to set, with their values.
    pub set: Vec<(String, Value)>,
    /// File attributes to remove.
    pub remove: Vec<String>,
    /// Objects to change, by the name the file gives them: its new name, and (when `Some`)
    /// all of its new attributes (an empty list removes them). All are renamed at once, so
    /// names may be swapped.
    pub objects: Vec<ObjectEdit>,
}

/// One object of a [`ManifestEdit`]: the name the file gives it, its new name, and (when
/// `Some`) all of its new attributes.
pub type ObjectEdit = (String, String, Option<Vec<(String, Value)>>);

/// What an edit writes over the manifest and footer of the zTensor 2 file `bytes`: the
/// manifest as the file holds it with `edit` made, in deterministic CBOR, then its footer —
/// to be written at the offset returned, the old manifest's, the file ending after it. The
/// blobs before it are not touched: renaming an object, or changing its attributes or the
/// file's, moves no data. The result is checked as the writer checks what it writes
/// (names, attribute keys and nesting).
pub fn manifest_in_place(
    bytes: &[u8],
    options: &tensor_core::ReadOptions,
    edit: &ManifestEdit,
) -> Result<(u64, Vec<u8>)> {
    let container = crate::Container::open_with(bytes, options)?;
    if container.generation() != crate::Generation::V2 {
        return Err(Error::Unwritable(
            "only a zTensor 2 manifest is rewritten in place".into(),
        ));
    }
    let (offset, len) = container.manifest_place()?;
    let manifest = &bytes[offset as usize..(offset + len) as usize];
    let mut root = tensor_core::cbor::Decoder::new(manifest).value()?;
    let attributes = entry(&mut root, "attributes");
    for (k, v) in &edit.set {
        set(attributes, k, v.clone());
    }
    for k in &edit.remove {
        remove(attributes, k);
    }
    if matches!(attributes, Value::Map(m) if m.is_empty()) {
        remove(&mut root, "attributes");
    }
    if let Value::Map(objects) = entry(&mut root, "objects") {
        for (key, object) in objects.iter_mut() {
            let Some((_, name, attributes)) = edit
                .objects
                .iter()
                .find(|(old, ..)| key.as_text() == Some(old.as_str()))
            else {
                continue;
            };
            *key = text(name);
            match attributes {
                Some(a) if a.is_empty() => remove(object, "attributes"),
                Some(a) => {
                    let map = a.iter().map(|(k, v)| (text(k), v.clone())).collect();
                    set(object, "attributes", Value::Map(map));
                }
                None => {}
            }
        }
    }
    check_manifest(&root)?;
    let manifest = to_canonical_plain_nan(&root);
    let mut out = manifest.clone();
    out.extend_from_slice(&footer(offset, &manifest));
    Ok((offset, out))
}

/// Refuses an edited manifest the writer would not write: object names that are not unique
/// text of 1 to 1024 bytes without NUL, attributes readers refuse.
fn check_manifest(root: &Value) -> Result<()> {
    if let Some(a) = root.get("attributes") {
        check_attributes(a, "the file's attributes", 2)?;
    }
    let mut names = std::collections::HashSet::new();
    for (name, object) in root
        .get("objects")
        .and_then(Value::as_map)
        .unwrap_or_default()
    {
        let name = name.as_text().unwrap_or_default();
        if name.is_empty() || name.len() > 1024 || name.contains('\0') || !names.insert(name) {
            return Err(Error::Unwritable(format!(
                "the object name {name:?} (names are unique, 1 to 1024 bytes, without NUL)"
            )));
        }
        if let Some(a) = object.get("attributes") {
            check_attributes(a, &format!("object {name:?}'s attributes"), 4)?;
        }
    }
    Ok(())
}

/// The value under text `key` in `map`, an empty map inserted when there is none.
fn entry<'v>(map: &'v mut Value, key: &str) -> &'v mut Value {
    if map.get(key).is_none() {
        set(map, key, Value::Map(Vec::new()));
    }
    let Value::Map(entries) = map else {
        unreachable!("set made it a map")
    };
    entries
        .iter_mut()
        .find(|(k, _)| k.as_text() == Some(key))
        .map(|(_, v)| v)
        .expect("inserted above")
}

/// Sets text `key` of `map` (a map, or made one) to `value`.
fn set(map: &mut Value, key: &str, value: Value) {
    if !matches!(map, Value::Map(_)) {
        *map = Value::Map(Vec::new());
    }
    let Value::Map(entries) = map else {
        return;
    };
    match entries.iter_mut().find(|(k, _)| k.as_text() == Some(key)) {
        Some((_, v)) => *v = value,
        None => entries.push((text(key), value)),
    }
}

/// Removes text `key` from `map`, if it is a map holding it.
fn remove(map: &mut Value, key: &str) {
    if let Value::Map(entries) = map {
        entries.retain(|(k, _)| k.as_text() != Some(key));
    }
}

/// Writes a canonical zTensor 2 file to `out` from `(name, view, attributes)` triples:
/// tensors as dense objects, each with its attributes; `attributes` for the file. Returns
/// the number of bytes written.
pub fn write<'a, N: AsRef<str>>(
    out: &mut dyn Write,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>, Option<Value>)>,
    attributes: Option<Value>,
) -> Result<u64> {
    let tensors: Vec<(N, TensorView<'a>, Option<Value>)> = tensors.into_iter().collect();
    let entries: Vec<ObjectEntry<'_>> = tensors
        .iter()
        .map(|(name, view, attrs)| ObjectEntry {
            name: name.as_ref(),
            dtype: view.dtype(),
            shape: view.shape(),
            attributes: attrs.clone(),
        })
        .collect();
    write_streamed(
        out,
        &entries,
        attributes,
        CANONICAL_ALIGNMENT,
        &mut |i, w| w.write_all(&tensors[i].1.to_canonical_le_bytes()),
    )
}

/// A whole canonical zTensor 2 file in memory (see [`write()`]).
pub fn serialize<'a, N: AsRef<str>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>, Option<Value>)>,
    attributes: Option<Value>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(&mut out, tensors, attributes)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tensors: &[&[f32]]) -> Vec<u8> {
        let names: Vec<String> = (0..tensors.len()).map(|i| format!("t{i}")).collect();
        let views: Vec<_> = tensors
            .iter()
            .zip(&names)
            .map(|(t, n)| {
                let view = TensorView::new(
                    le_bytes(t),
                    Dtype::Float32,
                    &[t.len() as u64],
                    tensor_core::ByteOrder::Little,
                )
                .unwrap();
                (n.as_str(), view, None)
            })
            .collect();
        serialize(views, None).unwrap()
    }

    fn le_bytes(t: &[f32]) -> &'static [u8] {
        let bytes: Vec<u8> = t.iter().flat_map(|x| x.to_le_bytes()).collect();
        Box::leak(bytes.into_boxed_slice())
    }

    fn blobs(bytes: &[u8]) -> Vec<u64> {
        let c = crate::Container::open(bytes).unwrap();
        let mut offsets: Vec<u64> = c.objects().iter().map(|o| o.parts[0].offset).collect();
        offsets.sort_unstable();
        offsets.dedup();
        offsets
    }

    #[test]
    fn identical_tensors_share_a_blob_and_others_do_not() {
        let (a, b) = ([1.0f32, 2.0], [1.0f32, 3.0]);
        assert_eq!(blobs(&file(&[&a, &a])).len(), 1);
        assert_eq!(blobs(&file(&[&a, &b])).len(), 2);
        assert_eq!(blobs(&file(&[&a, &b, &a, &[5.0]])).len(), 3);
        // Every tensor reads back as written, digests checked.
        let bytes = file(&[&a, &b, &a, &[5.0]]);
        let c = crate::Container::open(&bytes).unwrap();
        for (i, want) in [&a[..], &b, &a, &[5.0]].iter().enumerate() {
            assert_eq!(&*c.read(i).unwrap().data, le_bytes(want));
        }
    }

    #[test]
    fn equal_digests_share_a_blob_only_when_the_bytes_are_equal() {
        // Two objects filed under the same digest and length, as a collision would:
        // SHA-256 of both decides.
        let objects: [&[u8]; 3] = [b"abcd", b"abce", b"abcd"];
        let mut data = |i: usize, w: &mut dyn Write| w.write_all(objects[i]);
        let mut written = Written::default();
        written.by_digest.insert((42, 4), vec![(0, 65_536)]);
        assert_eq!(written.find(1, (42, 4), &mut data).unwrap(), None);
        assert_eq!(written.find(2, (42, 4), &mut data).unwrap(), Some(65_536));
        assert_eq!(written.find(2, (43, 4), &mut data).unwrap(), None);
    }
}
