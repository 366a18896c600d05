//! Writing: the header laid out as the `safetensors` crate lays it out, then each tensor's
//! bytes streamed, one at a time.

use crate::error::{Error, Result};
use crate::header::MAX_HEADER;
use safetensors::tensor::Dtype as StDtype;
use std::collections::BTreeMap;
use std::io::Write;
use tensor_dtype::{Dtype, TensorView};

/// One tensor to write, described without its bytes ([`write_streamed`]).
#[derive(Clone, Debug)]
pub struct Entry<'n> {
    /// The name.
    pub name: &'n str,
    /// The dtype.
    pub dtype: Dtype,
    /// The shape (elements, also for packed types).
    pub shape: &'n [u64],
}

/// A tensor prepared for the header: the crate sees only its dtype, shape and length.
struct Outgoing {
    index: usize,
    name: String,
    dtype: StDtype,
    shape: Vec<usize>,
    len: usize,
}

/// The length prefix and JSON header for `outgoing` (in that order), as the crate lays them
/// out — its own `Metadata` serialised, padded with spaces to a multiple of 8 — without the
/// crate's `serialize`, which reserves room for every tensor's bytes at once.
/// The JSON is padded with spaces: by `reserve` bytes more than it needs (room for later
/// edits in place), and to at least `min_len` bytes of header in all (what an edit in place
/// needs: the old header's length).
fn header(
    outgoing: &[Outgoing],
    metadata: Option<&BTreeMap<String, String>>,
    reserve: usize,
    min_len: usize,
) -> Result<Vec<u8>> {
    let cannot = |e: &dyn std::fmt::Display| Error::Unwritable(format!("this tensor set: {e}"));
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
    // The crate checks the offsets; the JSON is the crate's `Serialize` for `Metadata`, but
    // with the metadata keys in sorted order, where the crate's `HashMap` gives a different
    // order in every process (decision 0001): the same tensors give the same bytes.
    safetensors::tensor::Metadata::new(None, infos.clone()).map_err(|e| cannot(&e))?;
    let mut json = header_json(metadata, &infos).map_err(|e| cannot(&e))?;
    let padded = json
        .len()
        .checked_add(reserve)
        .ok_or_else(|| cannot(&"the header reserve overflows"))?
        .next_multiple_of(8)
        .max(min_len.saturating_sub(8));
    if padded as u64 > MAX_HEADER {
        return Err(cannot(&format!(
            "a {padded}-byte header (readers accept at most 100 MB)"
        )));
    }
    json.resize(padded, b' ');
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    Ok(out)
}

/// The JSON header as the crate's `Serialize` for `Metadata` writes it — `__metadata__`
/// first, then each tensor in the order given, compact — with the metadata keys sorted.
fn header_json(
    metadata: Option<&BTreeMap<String, String>>,
    infos: &[(String, safetensors::tensor::TensorInfo)],
) -> serde_json::Result<Vec<u8>> {
    let mut json = vec![b'{'];
    if let Some(m) = metadata {
        json.extend_from_slice(b"\"__metadata__\":");
        serde_json::to_writer(&mut json, m)?;
    }
    for (i, (name, info)) in infos.iter().enumerate() {
        if i > 0 || metadata.is_some() {
            json.push(b',');
        }
        serde_json::to_writer(&mut json, name)?;
        json.push(b':');
        serde_json::to_writer(&mut json, info)?;
    }
    json.push(b'}');
    Ok(json)
}

fn prepare(entries: &[Entry<'_>]) -> Result<Vec<Outgoing>> {
    let mut outgoing = describe(entries)?;
    // The crate's own order: falling dtype alignment, then name. Sorting first means the
    // crate's (stable) sort keeps our order, so we know the order the header describes.
    outgoing.sort_by(|a, b| b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(&b.name)));
    Ok(outgoing)
}

/// The entries checked and described for the header, in the order given.
fn describe(entries: &[Entry<'_>]) -> Result<Vec<Outgoing>> {
    let mut outgoing = Vec::with_capacity(entries.len());
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    for (index, e) in entries.iter().enumerate() {
        let name = e.name;
        if !seen.insert(name) {
            return Err(Error::Unwritable(format!("two tensors named {name:?}")));
        }
        let dtype = crate::dtype::to_reference(e.dtype)
            .ok_or_else(|| Error::Unwritable(format!("dtype {} (tensor {name:?})", e.dtype)))?;
        let shape = e
            .shape
            .iter()
            .map(|&d| tensor_core::checked::to_usize(d, "dimension"))
            .collect::<Result<Vec<_>, _>>()?;
        let len = tensor_core::checked::to_usize(
            tensor_dtype::shape::byte_len(e.dtype, e.shape)?,
            "tensor bytes",
        )?;
        let elements = tensor_dtype::shape::element_count(e.shape)?;
        if !(u128::from(elements) * e.dtype.bit_width() as u128).is_multiple_of(8) {
            // The crate refuses such a header (MisalignedSlice): its tensors end on bytes.
            return Err(Error::Unwritable(format!(
                "{elements} {} elements in tensor {name:?}: safetensors stores only whole \
                 bytes, and {elements} × {} bits is not a multiple of 8",
                e.dtype,
                e.dtype.bit_width()
            )));
        }
        outgoing.push(Outgoing {
            index,
            name: name.to_owned(),
            dtype,
            shape,
            len,
        });
    }
    Ok(outgoing)
}

/// Empty metadata without tensors is written as none. (The crate's serialiser sizes its
/// JSON map by the number of metadata entries instead of one `__metadata__` key, and writes
/// a broken header for that one case.) With tensors, `{}` is kept.
fn metadata_for<'m>(
    metadata: Option<&'m BTreeMap<String, String>>,
    outgoing: &[Outgoing],
) -> Option<&'m BTreeMap<String, String>> {
    metadata.filter(|m| !m.is_empty() || !outgoing.is_empty())
}

/// Where the data section of the file `file` starts: after its 8-byte length prefix and the
/// header that prefix gives, framed as the reader frames them (whatever the header's size).
/// `None` for a file too short to hold a prefix, or a header longer than the file. What
/// [`header_in_place`] and [`header_moved`] are told of the old file.
#[must_use]
pub fn data_start(file: &[u8]) -> Option<u64> {
    let header = crate::read::check_framing(file, &tensor_core::Limits::unlimited()).ok()?;
    Some(header + 8)
}

/// A header to write over the header of an existing file, which is `old_len` bytes long
/// (length prefix included): `entries` are the file's tensors in stored order (as
/// [`SafeTensors`](crate::SafeTensors) lists them), each keeping its bytes where they are,
/// under the name and with the metadata given. Padded with spaces to exactly `old_len`
/// bytes when it fits (every reader accepts trailing spaces in the JSON); `None` when it
/// does not, and the file must be written anew.
pub fn header_in_place(
    entries: &[Entry<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    old_len: usize,
) -> Result<Option<Vec<u8>>> {
    let outgoing = describe(entries)?;
    let header = header(&outgoing, metadata_for(metadata, &outgoing), 0, old_len)?;
    Ok((header.len() == old_len).then_some(header))
}

/// The header of a copy of an existing file whose header [`header_in_place`] could not
/// rewrite: `entries` (the file's tensors in stored order) keep their bytes' order and
/// offsets, so that the file's data section, which starts at `data_start` in the old file,
/// follows the new header as it is.
///
/// The header is padded with spaces: at least [`ROOM_AFTER_COPY`] bytes, room for the next
/// edit in place, and as many more (under a page) as put the data section at the same
/// offset within a 4 KiB page as it was: the data is then copied page to page, which the
/// kernel's `copy_file_range` does about half again as fast as a copy that straddles pages.
pub fn header_moved(
    entries: &[Entry<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    data_start: u64,
) -> Result<Vec<u8>> {
    const PAGE: u64 = 4096;
    let outgoing = describe(entries)?;
    let mut head = header(&outgoing, metadata_for(metadata, &outgoing), 0, 0)?;
    let least = head.len() as u64 + ROOM_AFTER_COPY;
    let within = data_start % PAGE;
    // Page-aligned alike only where the old start kept the 8-byte alignment the crate
    // writes (any other start would cost it).
    let padded = if within.is_multiple_of(8) {
        least + (within + PAGE - least % PAGE) % PAGE
    } else {
        least
    };
    if padded - 8 <= MAX_HEADER {
        head.resize(padded as usize, b' ');
        head[..8].copy_from_slice(&(padded - 8).to_le_bytes());
    }
    Ok(head)
}

/// The least room for later edits that [`header_moved`] leaves in a header.
pub const ROOM_AFTER_COPY: u64 = 1024;

/// Writes a safetensors file to `out` from tensors described by `entries`, asking
/// `data(i, w)` for the little-endian elements of `entries[i]` (bools as 0/1) when they
/// are written — once each, one at a time, in the order the header lays them out (falling
/// dtype alignment, then name, as the `safetensors` crate orders them). Returns the number
/// of bytes written. `header_reserve` pads the header with that many more spaces than it
/// needs, so that later edits of its metadata fit in place ([`header_in_place`]); 0 writes
/// the bytes the crate writes.
pub fn write_streamed(
    out: &mut dyn Write,
    entries: &[Entry<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    header_reserve: usize,
    data: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
) -> Result<u64> {
    let outgoing = prepare(entries)?;
    let header = header(
        &outgoing,
        metadata_for(metadata, &outgoing),
        header_reserve,
        0,
    )?;
    let io = |e| tensor_core::Error::io("writing a safetensors file", e);
    out.write_all(&header).map_err(io)?;
    let mut written = header.len() as u64;
    for o in &outgoing {
        let mut counted = Counted {
            out: &mut *out,
            n: 0,
        };
        data(o.index, &mut counted).map_err(io)?;
        if counted.n != o.len as u64 {
            return Err(Error::Unwritable(format!(
                "tensor {:?}: {} bytes were given for a {}-byte tensor",
                o.name, counted.n, o.len
            )));
        }
        written += counted.n;
    }
    out.flush().map_err(io)?;
    Ok(written)
}

/// A writer that counts what goes through it.
struct Counted<'w> {
    out: &'w mut dyn Write,
    n: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.out.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes a safetensors file to `out` from `(name, view)` pairs. Returns the number of
/// bytes written.
pub fn write<'a, N: AsRef<str>>(
    out: &mut dyn Write,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    metadata: Option<&BTreeMap<String, String>>,
) -> Result<u64> {
    let tensors: Vec<(N, TensorView<'a>)> = tensors.into_iter().collect();
    let entries: Vec<Entry<'_>> = tensors
        .iter()
        .map(|(n, v)| Entry {
            name: n.as_ref(),
            dtype: v.dtype(),
            shape: v.shape(),
        })
        .collect();
    write_streamed(out, &entries, metadata, 0, &mut |i, w| {
        w.write_all(&tensors[i].1.to_canonical_le_bytes())
    })
}

/// A whole safetensors file in memory (see [`write()`]).
pub fn serialize<'a, N: AsRef<str>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    metadata: Option<&BTreeMap<String, String>>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(&mut out, tensors, metadata)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SafeTensors;

    fn file() -> Vec<u8> {
        let a = [1u8, 2, 3, 4];
        let b = [9u8; 8];
        let meta = BTreeMap::from([("k".to_owned(), "a long value to shrink".to_owned())]);
        serialize(
            [
                (
                    "a",
                    TensorView::new(&a, Dtype::Uint8, &[4], tensor_core::ByteOrder::Little)
                        .unwrap(),
                ),
                (
                    "b",
                    TensorView::new(&b, Dtype::Float64, &[1], tensor_core::ByteOrder::Little)
                        .unwrap(),
                ),
            ],
            Some(&meta),
        )
        .unwrap()
    }

    #[test]
    fn the_header_is_the_crates_with_metadata_keys_in_sorted_order() {
        let a = [1u8, 2, 3, 4];
        let view = TensorView::new(&a, Dtype::Uint8, &[4], tensor_core::ByteOrder::Little).unwrap();
        let meta: BTreeMap<String, String> = (0..16)
            .map(|i| (format!("k{i:02}"), i.to_string()))
            .collect();
        let bytes = serialize([("a", view.clone())], Some(&meta)).unwrap();
        let keys: Vec<&String> = meta.keys().collect();
        let len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let text = std::str::from_utf8(&bytes[8..8 + len]).unwrap();
        let at: Vec<usize> = keys
            .iter()
            .map(|k| text.find(&format!("\"{k}\"")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        // With one key there is one order: the crate's own serialisation, byte for byte.
        let one = BTreeMap::from([("format".to_owned(), "pt".to_owned())]);
        let ours = serialize([("a", view.clone())], Some(&one)).unwrap();
        let crates = safetensors::serialize(
            [(
                "a",
                safetensors::tensor::TensorView::new(safetensors::Dtype::U8, vec![4], &a).unwrap(),
            )],
            Some(one.into_iter().collect()),
        )
        .unwrap();
        assert_eq!(ours, crates);
    }

    #[test]
    fn a_header_that_fits_is_padded_to_the_old_length() {
        let bytes = file();
        let st = SafeTensors::open(&bytes).unwrap();
        let old_len = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let shapes: Vec<Vec<u64>> = st.tensors.iter().map(|t| t.view.shape().to_vec()).collect();
        let names = ["renamed_b", "a"];
        assert_eq!(st.tensors[0].name, "b", "stored order: float64 first");
        let entries: Vec<Entry<'_>> = st
            .tensors
            .iter()
            .zip(&shapes)
            .zip(names)
            .map(|((t, s), name)| Entry {
                name,
                dtype: t.view.dtype(),
                shape: s,
            })
            .collect();
        let meta = BTreeMap::from([("k".to_owned(), "short".to_owned())]);
        let header = header_in_place(&entries, Some(&meta), old_len)
            .unwrap()
            .expect("a shorter header fits");
        let mut edited = bytes.clone();
        edited[..old_len].copy_from_slice(&header);
        let read = SafeTensors::open(&edited).unwrap();
        assert_eq!(read.metadata.unwrap()["k"], "short");
        assert_eq!(read.tensors[0].name, "renamed_b");
        assert_eq!(read.tensors[0].view.buffer(), [9u8; 8]);
        assert_eq!(read.tensors[1].view.buffer(), [1, 2, 3, 4]);

        let long = BTreeMap::from([("k".to_owned(), "x".repeat(200))]);
        assert!(
            header_in_place(&entries, Some(&long), old_len)
                .unwrap()
                .is_none()
        );

        // Too long: a moved header with room for the next edit, whose data section starts
        // where it did within a page, for any old start the crate could have written, and
        // reads as the edit.
        let outgoing = describe(&entries).unwrap();
        let tight_len = super::header(&outgoing, metadata_for(Some(&long), &outgoing), 0, 0)
            .unwrap()
            .len();
        for old_start in [old_len as u64, 8, 4096, 4096 * 3 + 8, 4088] {
            let header = header_moved(&entries, Some(&long), old_start).unwrap();
            assert_eq!(header.len() as u64 % 4096, old_start % 4096, "{old_start}");
            let room = header.len() - tight_len;
            assert!((1024..1024 + 4096).contains(&room), "{old_start}: {room}");
            let mut edited = header.clone();
            edited.extend_from_slice(&bytes[old_len..]);
            let read = SafeTensors::open(&edited).unwrap();
            assert_eq!(read.metadata.unwrap()["k"], "x".repeat(200));
            assert_eq!(read.tensors[0].view.buffer(), [9u8; 8]);
        }
        // A start off the 8-byte alignment is not followed: the least room, 8-aligned.
        let unaligned = header_moved(&entries, Some(&long), 4093).unwrap();
        assert_eq!(unaligned.len(), tight_len + 1024);
    }
}
