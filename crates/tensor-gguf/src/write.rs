//! Writing GGUF v3, laid out as gguf-py's `GGUFWriter` lays it out: header, metadata in the
//! order given, tensor infos with offsets packed at the alignment, zero padding to the data
//! section, each tensor's bytes followed by zero padding to the alignment.

use crate::error::{Error, Result};
use crate::ggml::GgmlType;
use crate::read::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT, MAGIC, MAX_DIMS};
use crate::value::Value;
use std::borrow::Cow;
use std::io::Write;
use tensor_core::{ByteOrder, checked};
use tensor_dtype::Dtype;

/// The version written.
pub const VERSION: u32 = 3;

/// The metadata key holding room for later edits of the header in place: a string of
/// spaces, which [`header_in_place`] shortens or lengthens to make a new header end where
/// the old one did. (A reader takes it for one more string value.)
pub const PADDING_KEY: &str = "tensorkit.padding";

/// `metadata` with room for `reserve` more bytes of header: a [`PADDING_KEY`] string of
/// that many spaces after the rest (none when `reserve` is 0).
#[must_use]
pub fn with_padding<'m, 'v>(
    metadata: &[(&'m str, &'v Value<'v>)],
    padding: &'v Value<'v>,
) -> Vec<(&'m str, &'v Value<'v>)>
where
    'v: 'm,
{
    let mut out: Vec<(&str, &Value<'_>)> = metadata
        .iter()
        .filter(|(k, _)| *k != PADDING_KEY)
        .copied()
        .collect();
    if matches!(padding, Value::String(s) if !s.is_empty()) {
        out.push((PADDING_KEY, padding));
    }
    out
}

/// One tensor to write: its name, type and element shape (numpy order).
#[derive(Clone, Debug, PartialEq)]
pub struct Entry<'a> {
    /// The name.
    pub name: &'a str,
    /// The ggml type its bytes are in.
    pub ggml_type: GgmlType,
    /// The element shape, slowest dimension first.
    pub shape: &'a [u64],
}

impl Entry<'_> {
    /// The bytes the tensor takes.
    pub fn n_bytes(&self) -> Result<u64> {
        let elements = checked::product(self.shape.iter().copied(), "tensor element count")?;
        let row = self.shape.last().copied().unwrap_or(1);
        if row % self.ggml_type.block_elements() != 0 {
            return Err(Error::CannotWrite(format!(
                "tensor {:?}: rows of {row} elements are not whole {} blocks of {}",
                self.name,
                self.ggml_type,
                self.ggml_type.block_elements()
            )));
        }
        self.ggml_type.bytes_for(elements).ok_or_else(|| {
            Error::CannotWrite(format!("tensor {:?}: its size overflows", self.name))
        })
    }
}

/// Writes a GGUF file to `out`: `metadata` in the order given (`general.alignment`, a
/// `UINT32`, sets the alignment), then `entries`, whose bytes `fill(i, sink)` writes —
/// dense elements little-endian (swapped here when `byte_order` is big), quantized blocks
/// as they are. Returns the bytes written.
pub fn write_streamed(
    out: &mut dyn Write,
    metadata: &[(&str, &Value<'_>)],
    entries: &[Entry<'_>],
    byte_order: ByteOrder,
    fill: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
) -> Result<u64> {
    let alignment = alignment_of(metadata)?;
    let mut sizes = Vec::with_capacity(entries.len());
    let mut offsets = Vec::with_capacity(entries.len());
    let mut offset = 0u64;
    for e in entries {
        let n_bytes = e.n_bytes()?;
        offsets.push(offset);
        offset = checked::align_up(
            checked::add(offset, n_bytes, "GGUF data size")?,
            alignment,
            "GGUF data size",
        )?;
        sizes.push(n_bytes);
    }
    let mut head = head(VERSION, byte_order, metadata, entries, &offsets)?;
    let data_start = checked::align_up(head.len() as u64, alignment, "GGUF data offset")?;
    head.resize(data_start as usize, 0);
    let io = |e| tensor_core::Error::io("writing a GGUF file", e);
    out.write_all(&head).map_err(io)?;
    let mut written = data_start;
    for (i, (e, &n_bytes)) in entries.iter().zip(&sizes).enumerate() {
        let width = match (
            e.ggml_type.stored_order(byte_order),
            e.ggml_type.dense_dtype(),
        ) {
            (ByteOrder::Big, Some(d)) => d.byte_width(),
            _ => 1,
        };
        let mut sink = Counted {
            out: &mut *out,
            written: 0,
            swap: Swap::new(width),
        };
        fill(i, &mut sink).map_err(io)?;
        sink.finish().map_err(io)?;
        if sink.written != n_bytes {
            return Err(Error::CannotWrite(format!(
                "tensor {:?}: {} bytes were given for its {n_bytes}",
                e.name, sink.written
            )));
        }
        let padded = checked::align_up(n_bytes, alignment, "GGUF data size")?;
        out.write_all(&vec![0; (padded - n_bytes) as usize])
            .map_err(io)?;
        written += padded;
    }
    Ok(written)
}

/// The header — magic, version, counts, metadata, tensor infos — of a file whose tensors'
/// data starts at `offsets` in the data section, not yet padded to the alignment.
fn head(
    version: u32,
    byte_order: ByteOrder,
    metadata: &[(&str, &Value<'_>)],
    entries: &[Entry<'_>],
    offsets: &[u64],
) -> Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut p = Packer {
        out: &mut head,
        order: byte_order,
    };
    p.raw(MAGIC);
    p.u32(version);
    p.u64(entries.len() as u64);
    p.u64(metadata.len() as u64);
    let mut seen = std::collections::HashSet::new();
    for (key, value) in metadata {
        if !seen.insert(*key) {
            return Err(Error::CannotWrite(format!(
                "metadata key {key:?} given twice"
            )));
        }
        p.string(key);
        p.u32(value.value_type().id());
        p.value(value, key)?;
    }
    let mut names = std::collections::HashSet::new();
    for (e, &offset) in entries.iter().zip(offsets) {
        if !names.insert(e.name) {
            return Err(Error::CannotWrite(format!(
                "tensor {:?} given twice",
                e.name
            )));
        }
        if e.shape.len() > MAX_DIMS as usize {
            return Err(Error::CannotWrite(format!(
                "tensor {:?} has {} dimensions; GGUF holds at most {MAX_DIMS}",
                e.name,
                e.shape.len()
            )));
        }
        p.string(e.name);
        p.u32(e.shape.len() as u32);
        for &d in e.shape.iter().rev() {
            p.u64(d);
        }
        p.u32(e.ggml_type.id());
        p.u64(offset);
    }
    Ok(head)
}

/// The tensors of `old` under `names`, each with its data offset: what an edit's header
/// describes.
fn placed<'a>(old: &'a crate::Header<'_>, names: &[&'a str]) -> (Vec<Entry<'a>>, Vec<u64>) {
    let entries = old
        .tensors
        .iter()
        .zip(names)
        .map(|(t, name)| Entry {
            name,
            ggml_type: t.ggml_type,
            shape: &t.shape,
        })
        .collect();
    (entries, old.tensors.iter().map(|t| t.offset).collect())
}

/// The header of a copy of an existing file, `old` as parsed, whose header
/// [`header_in_place`] could not rewrite: `metadata` in the order given, the tensors in file
/// order under `names`, each keeping its data offset, zero-padded to the alignment, so that
/// the old data section follows it as it is. The version and byte order are the file's.
/// `None` when `metadata` changes the alignment, which moves every tensor: the file must be
/// written anew.
pub fn header_moved(
    old: &crate::Header<'_>,
    metadata: &[(&str, &Value<'_>)],
    names: &[&str],
) -> Result<Option<Vec<u8>>> {
    if alignment_of(metadata)? != old.alignment || names.len() != old.tensors.len() {
        return Ok(None);
    }
    let (entries, offsets) = placed(old, names);
    let mut head = head(old.version, old.byte_order, metadata, &entries, &offsets)?;
    let end = checked::align_up(head.len() as u64, old.alignment, "GGUF data offset")?;
    head.resize(end as usize, 0);
    Ok(Some(head))
}

/// A header to write over the header of an existing file, `old` as parsed: `metadata` in
/// the order given, and the file's tensors in file order, each keeping its type, shape and
/// data, under the names given (`names[i]` for `old.tensors[i]`). Zero-padded to the old
/// data offset when its length rounds up to exactly that offset — readers find the data
/// where the header ends, rounded up to the alignment — and `None` otherwise, when the file
/// must be written anew. The version and byte order are the file's; the alignment must
/// keep its value. A file written with room ([`PADDING_KEY`]) keeps what room is left
/// after the edit in that key, so that the header ends exactly where the old one did.
pub fn header_in_place(
    old: &crate::Header<'_>,
    metadata: &[(&str, &Value<'_>)],
    names: &[&str],
) -> Result<Option<Vec<u8>>> {
    if alignment_of(metadata)? != old.alignment || names.len() != old.tensors.len() {
        return Ok(None);
    }
    let had_padding = old.metadata.iter().any(|(k, _)| k == PADDING_KEY);
    let (entries, offsets) = placed(old, names);
    let none = Value::String("".into());
    let bare = with_padding(metadata, &none);
    let mut head = head(old.version, old.byte_order, &bare, &entries, &offsets)?;
    // The room a padding string can take: what the header lacks of the old data offset,
    // less the entry's own key, type and length.
    let entry = (8 + PADDING_KEY.len() + 4 + 8) as u64;
    if let Some(room) = (old.data_offset)
        .checked_sub(head.len() as u64 + entry)
        .filter(|_| had_padding)
    {
        let spaces = Value::String(" ".repeat(room as usize).into());
        let padded = with_padding(metadata, &spaces);
        head = self::head(old.version, old.byte_order, &padded, &entries, &offsets)?;
    }
    let end = head.len() as u64;
    if end > old.data_offset || old.data_offset - end >= old.alignment {
        return Ok(None);
    }
    head.resize(old.data_offset as usize, 0);
    Ok(Some(head))
}

fn alignment_of(metadata: &[(&str, &Value<'_>)]) -> Result<u64> {
    match metadata.iter().find(|(k, _)| *k == ALIGNMENT_KEY) {
        None => Ok(DEFAULT_ALIGNMENT),
        Some((_, Value::U32(a))) if a.is_power_of_two() => Ok(u64::from(*a)),
        Some((_, v)) => Err(Error::CannotWrite(format!(
            "{ALIGNMENT_KEY} must be a UINT32 power of two, not {v:?}"
        ))),
    }
}

struct Packer<'o> {
    out: &'o mut Vec<u8>,
    order: ByteOrder,
}

impl Packer<'_> {
    fn raw(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    fn ordered<const N: usize>(&mut self, mut le: [u8; N]) {
        if self.order == ByteOrder::Big {
            le.reverse();
        }
        self.out.extend_from_slice(&le);
    }

    fn u32(&mut self, v: u32) {
        self.ordered(v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.ordered(v.to_le_bytes());
    }

    fn string(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.raw(s.as_bytes());
    }

    fn value(&mut self, v: &Value<'_>, key: &str) -> Result<()> {
        match v {
            Value::U8(x) => self.raw(&[*x]),
            Value::I8(x) => self.raw(&x.to_le_bytes()),
            Value::Bool(x) => self.raw(&[u8::from(*x)]),
            Value::U16(x) => self.ordered(x.to_le_bytes()),
            Value::I16(x) => self.ordered(x.to_le_bytes()),
            Value::U32(x) => self.ordered(x.to_le_bytes()),
            Value::I32(x) => self.ordered(x.to_le_bytes()),
            Value::F32(x) => self.ordered(x.to_le_bytes()),
            Value::U64(x) => self.ordered(x.to_le_bytes()),
            Value::I64(x) => self.ordered(x.to_le_bytes()),
            Value::F64(x) => self.ordered(x.to_le_bytes()),
            Value::String(s) => self.string(s),
            Value::Array(a) => {
                self.u32(a.item_type.id());
                self.u64(a.items.len() as u64);
                for item in &a.items {
                    if item.value_type() != a.item_type {
                        return Err(Error::CannotWrite(format!(
                            "metadata key {key:?}: an array of {} holds a {}",
                            a.item_type,
                            item.value_type()
                        )));
                    }
                    self.value(item, key)?;
                }
            }
        }
        Ok(())
    }
}

/// Reverses each `width`-byte element of what passes through (for big-endian output).
struct Swap {
    width: usize,
    pending: Vec<u8>,
}

impl Swap {
    fn new(width: usize) -> Self {
        Swap {
            width,
            pending: Vec::new(),
        }
    }
}

/// A sink that counts what a tensor's filler writes, swapping element bytes if asked.
struct Counted<'o> {
    out: &'o mut dyn Write,
    written: u64,
    swap: Swap,
}

impl Counted<'_> {
    fn finish(&mut self) -> std::io::Result<()> {
        if self.swap.pending.is_empty() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "{} bytes left over, not a whole element of {}",
                self.swap.pending.len(),
                self.swap.width
            )))
        }
    }
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.written += buf.len() as u64;
        let w = self.swap.width;
        if w == 1 {
            self.out.write_all(buf)?;
            return Ok(buf.len());
        }
        self.swap.pending.extend_from_slice(buf);
        let whole = self.swap.pending.len() / w * w;
        let mut swapped: Vec<u8> = self.swap.pending.drain(..whole).collect();
        for e in swapped.chunks_exact_mut(w) {
            e.reverse();
        }
        self.out.write_all(&swapped)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A tensor a [`Writer`] holds: name, type, shape, bytes.
type Owned<'a> = (Cow<'a, str>, GgmlType, Vec<u64>, Cow<'a, [u8]>);

/// A GGUF file built in memory: metadata and tensors added in order, then written.
#[derive(Clone, Debug, Default)]
pub struct Writer<'a> {
    metadata: Vec<(Cow<'a, str>, Value<'a>)>,
    tensors: Vec<Owned<'a>>,
    byte_order: Option<ByteOrder>,
}

impl<'a> Writer<'a> {
    /// An empty file.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the file big-endian (as gguf-py's `endianess=GGUFEndian.BIG`).
    pub fn big_endian(&mut self) -> &mut Self {
        self.byte_order = Some(ByteOrder::Big);
        self
    }

    /// Adds a metadata entry (a key given twice is refused on write).
    pub fn metadata(&mut self, key: impl Into<Cow<'a, str>>, value: Value<'a>) -> &mut Self {
        self.metadata.push((key.into(), value));
        self
    }

    /// Adds a dense tensor: `bytes` are its elements, little-endian, C order.
    pub fn dense(
        &mut self,
        name: impl Into<Cow<'a, str>>,
        shape: &[u64],
        dtype: Dtype,
        bytes: impl Into<Cow<'a, [u8]>>,
    ) -> Result<&mut Self> {
        let name = name.into();
        let t = GgmlType::for_dtype(dtype).ok_or_else(|| {
            Error::CannotWrite(format!(
                "tensor {name:?}: GGUF has no dense type for {dtype} (it has F32, F16, BF16, F64, I8, I16, I32, I64)"
            ))
        })?;
        self.tensors.push((name, t, shape.to_vec(), bytes.into()));
        Ok(self)
    }

    /// Adds a quantized tensor of `ggml_type`: `blocks` as ggml stores them, `shape` the
    /// element shape.
    pub fn quantized(
        &mut self,
        name: impl Into<Cow<'a, str>>,
        shape: &[u64],
        ggml_type: GgmlType,
        blocks: impl Into<Cow<'a, [u8]>>,
    ) -> &mut Self {
        self.tensors
            .push((name.into(), ggml_type, shape.to_vec(), blocks.into()));
        self
    }

    /// Writes the file to `out`.
    pub fn write_to(&self, out: &mut dyn Write) -> Result<u64> {
        let metadata: Vec<(&str, &Value<'_>)> =
            self.metadata.iter().map(|(k, v)| (k.as_ref(), v)).collect();
        let entries: Vec<Entry<'_>> = self
            .tensors
            .iter()
            .map(|(n, t, s, _)| Entry {
                name: n,
                ggml_type: *t,
                shape: s,
            })
            .collect();
        write_streamed(
            out,
            &metadata,
            &entries,
            self.byte_order.unwrap_or(ByteOrder::Little),
            &mut |i, sink| sink.write_all(&self.tensors[i].3),
        )
    }

    /// The file's bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gguf;

    fn file(name: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.metadata("general.name", Value::String(name.into()));
        w.dense("a", &[4], Dtype::Float32, vec![7u8; 16]).unwrap();
        w.dense("b", &[2], Dtype::Float32, vec![9u8; 8]).unwrap();
        w.to_vec().unwrap()
    }

    #[test]
    fn a_header_rounding_up_to_the_old_data_offset_is_written_in_place() {
        let bytes = file("model");
        let g = Gguf::open(&bytes).unwrap();
        let header = g.header();
        let value = Value::String("modl".into());
        let meta = [("general.name", &value)];
        let new = header_in_place(header, &meta, &["a", "bb"])
            .unwrap()
            .expect("one byte shorter and one longer fits");
        let mut edited = bytes.clone();
        edited[..new.len()].copy_from_slice(&new);
        let e = Gguf::open(&edited).unwrap();
        assert_eq!(e.tensors()[1].name, "bb");
        assert_eq!(e.stored(0), [7u8; 16]);
        assert_eq!(e.stored(1), [9u8; 8]);
        assert_eq!(e.metadata()[0].1, value);

        let long = Value::String("x".repeat(64).into());
        assert!(
            header_in_place(header, &[("general.name", &long)], &["a", "b"])
                .unwrap()
                .is_none()
        );
        // Shorter by a whole alignment: readers would look for the data too early.
        let short = Value::String(String::new().into());
        let names = ["a", "b"];
        let fits = header_in_place(header, &[("general.name", &short)], &names).unwrap();
        let end = header.header_end - 5;
        assert_eq!(fits.is_some(), header.data_offset - end < header.alignment);
    }
}
