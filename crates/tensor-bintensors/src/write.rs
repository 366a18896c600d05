//! Writing BinTensors files, byte for byte as the reference writer does.
//!
//! The header is encoded with bincode 2 (standard configuration) itself, so its encoding is
//! the reference's by construction. Order is canonical: metadata sorted by key bytes (a
//! `BTreeMap<String, _>` iterates that way), tensors by dtype id descending then name bytes;
//! offsets follow that order from 0; the header is padded with 0x20 to a multiple of 8.

use crate::dtype;
use crate::error::{Error, Result};
use crate::header::Layout;
use std::collections::BTreeMap;
use std::io::Write;
use tensor_dtype::{Dtype, TensorView, shape};

/// A tensor's header fields as bincode encodes them: dtype id, shape, (begin, end).
type WireInfo<'a> = (u32, &'a [u64], (u64, u64));

/// One tensor to write, described without its bytes: what the header needs. Its elements
/// are asked for only when the writer reaches it ([`write_streamed`]).
#[derive(Clone, Copy, Debug)]
pub struct Entry<'n> {
    /// The tensor's name.
    pub name: &'n str,
    /// The dtype.
    pub dtype: Dtype,
    /// The shape.
    pub shape: &'n [u64],
}

/// An entry in canonical order, with where its bytes go.
struct Outgoing<'n> {
    /// Its position in the caller's list.
    index: usize,
    name: &'n str,
    id: u32,
    shape: &'n [u64],
    len: u64,
}

/// `entries` as the header describes them, in the order given.
fn describe<'n>(entries: &[Entry<'n>]) -> Result<Vec<Outgoing<'n>>> {
    entries
        .iter()
        .enumerate()
        .map(|(index, e)| {
            let id = dtype::to_id(e.dtype).ok_or_else(|| Error::UnsupportedDtype {
                name: e.name.to_owned(),
                dtype: e.dtype,
            })?;
            let len = shape::byte_len(e.dtype, e.shape)?;
            Ok(Outgoing {
                index,
                name: e.name,
                id,
                shape: e.shape,
                len,
            })
        })
        .collect()
}

fn prepare<'n>(entries: &[Entry<'n>]) -> Result<Vec<Outgoing<'n>>> {
    let mut out = describe(entries)?;
    check_unique(&out)?;
    out.sort_by(|a, b| {
        b.id.cmp(&a.id)
            .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
    });
    Ok(out)
}

/// Refuses two tensors of one name, whatever their dtypes (readers refuse the file).
fn check_unique(outgoing: &[Outgoing<'_>]) -> Result<()> {
    let mut names: Vec<&str> = outgoing.iter().map(|t| t.name).collect();
    names.sort_unstable();
    match names.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::ValidationMismatch {
            name: w[0].to_owned(),
        }),
        None => Ok(()),
    }
}

fn header(
    tensors: &[Outgoing<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    layout: Layout,
) -> Vec<u8> {
    let config = bincode::config::standard();
    let meta: Option<Vec<(&str, &str)>> =
        metadata.map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());
    let mut offset = 0u64;
    let infos: Vec<WireInfo<'_>> = tensors
        .iter()
        .map(|t| {
            let begin = offset;
            offset += t.len;
            (t.id, t.shape, (begin, offset))
        })
        .collect();
    // Encoding plain tuples, strings, slices and integers into a Vec cannot fail.
    let mut bytes = match layout {
        Layout::Release => {
            let entries: Vec<(&str, WireInfo<'_>)> = tensors
                .iter()
                .zip(&infos)
                .map(|(t, info)| (t.name, *info))
                .collect();
            bincode::encode_to_vec((meta, entries), config)
        }
        Layout::Legacy => {
            let mut index: Vec<(&str, u64)> = tensors
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name, i as u64))
                .collect();
            index.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            bincode::encode_to_vec((meta, infos, index), config)
        }
    }
    .unwrap_or_default();
    let pad = (8 - bytes.len() % 8) % 8;
    bytes.resize(bytes.len() + pad, b' ');
    bytes
}

/// Where the data section of the file `file` starts: after its 8-byte length prefix and the
/// window that prefix gives, framed as the reader frames them (whatever the window's size).
/// `None` for a file too short to hold a prefix, or a window longer than the file. What
/// [`header_in_place`] is told of the old file.
#[must_use]
pub fn data_start(file: &[u8]) -> Option<u64> {
    let window = crate::file::framing(file, &tensor_core::Limits::unlimited()).ok()?;
    Some(window + 8)
}

/// The header (length prefix and window) to write over that of an existing file in the
/// released layout whose data section starts at `data_start` ([`data_start`]): `entries`
/// are the file's tensors in stored order, each keeping its bytes where they are, under the
/// name given, with the metadata given. The structure is padded with 0x20 to exactly the
/// old window when it fits (the reference reads past bytes inside the window; a strict
/// reader, which wants padding to 8 alone, does not), so that the data section is not
/// touched; `None` when it does not fit, and the file must be written anew.
pub fn header_in_place(
    entries: &[Entry<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    data_start: u64,
) -> Result<Option<Vec<u8>>> {
    let outgoing = describe(entries)?;
    check_unique(&outgoing)?;
    let mut window = header(&outgoing, metadata, Layout::Release);
    let Some(Ok(old_window)) = data_start.checked_sub(8).map(usize::try_from) else {
        return Ok(None);
    };
    if window.len() > old_window {
        return Ok(None);
    }
    window.resize(old_window, b' ');
    let mut out = (old_window as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&window);
    Ok(Some(out))
}

/// A writer that counts what passes through it (and, with the `paranoid` feature, keeps a
/// copy for the read-back check).
struct Counted<'w> {
    inner: &'w mut dyn Write,
    written: u64,
    #[cfg(feature = "paranoid")]
    copy: &'w mut Vec<u8>,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        #[cfg(feature = "paranoid")]
        self.copy.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes a file to `out` from tensors described by `entries`, asking `data(i, w)` to write
/// the little-endian elements of `entries[i]` (bools as 0/1) when the writer reaches it, in
/// the file's canonical order: one tensor's bytes are needed at a time, never all at once.
/// `data` must write exactly the tensor's size; anything else is an error. Returns the
/// number of bytes written.
///
/// Fails for a dtype BinTensors cannot store (bitmask, complex) and for duplicate names.
pub fn write_streamed(
    out: &mut dyn Write,
    entries: &[Entry<'_>],
    metadata: Option<&BTreeMap<String, String>>,
    layout: Layout,
    data: &mut dyn FnMut(usize, &mut dyn Write) -> std::io::Result<()>,
) -> Result<u64> {
    let outgoing = prepare(entries)?;
    let head = header(&outgoing, metadata, layout);
    let io = |e| Error::Core(tensor_core::Error::io("writing a BinTensors file", e));
    out.write_all(&(head.len() as u64).to_le_bytes())
        .map_err(io)?;
    out.write_all(&head).map_err(io)?;
    let mut total = 8 + head.len() as u64;
    #[cfg(feature = "paranoid")]
    let mut copy = [&(head.len() as u64).to_le_bytes()[..], &head].concat();
    for t in &outgoing {
        let mut w = Counted {
            inner: &mut *out,
            written: 0,
            #[cfg(feature = "paranoid")]
            copy: &mut copy,
        };
        data(t.index, &mut w)
            .map_err(|e| Error::Core(tensor_core::Error::io("writing a BinTensors file", e)))?;
        if w.written != t.len {
            return Err(Error::Core(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?}: {} bytes were written for a {}-byte tensor",
                t.name, w.written, t.len
            ))));
        }
        total += t.len;
    }
    #[cfg(feature = "paranoid")]
    self_check_streamed(&copy, &outgoing, layout)?;
    Ok(total)
}

/// The `paranoid` feature: what [`write_streamed`] wrote reads back with every tensor's
/// name, dtype, shape and the very bytes written for it.
#[cfg(feature = "paranoid")]
fn self_check_streamed(all: &[u8], outgoing: &[Outgoing<'_>], layout: Layout) -> Result<()> {
    use crate::file::LayoutChoice;
    let choice = match layout {
        Layout::Release => LayoutChoice::Release,
        Layout::Legacy => LayoutChoice::Legacy,
    };
    let file =
        crate::file::BinTensors::open_layout(all, &tensor_core::ReadOptions::default(), choice)
            .map_err(|e| Error::SelfCheck(format!("the file does not read back: {e}")))?;
    let data_start = all.len() as u64 - outgoing.iter().map(|t| t.len).sum::<u64>();
    let mut at = data_start as usize;
    for t in outgoing {
        let written = &all[at..at + t.len as usize];
        at += t.len as usize;
        let back = file
            .tensor(t.name)
            .ok_or_else(|| Error::SelfCheck(format!("tensor {:?} is missing", t.name)))?;
        if back.view.shape() != t.shape
            || dtype::to_id(back.view.dtype()) != Some(t.id)
            || back.view.contiguous_bytes() != Some(written)
        {
            return Err(Error::SelfCheck(format!(
                "tensor {:?} reads back differently",
                t.name
            )));
        }
    }
    Ok(())
}

/// Writes a file to `out` from `(name, view)` pairs: the 8-byte header length, the header,
/// then every tensor's bytes. Returns the number of bytes written.
///
/// Fails for a dtype BinTensors cannot store (bitmask, complex) and for duplicate names.
pub fn write<'a, N: AsRef<str>>(
    out: &mut dyn Write,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    metadata: Option<&BTreeMap<String, String>>,
    layout: Layout,
) -> Result<u64> {
    let tensors: Vec<(N, TensorView<'a>)> = tensors.into_iter().collect();
    let entries: Vec<Entry<'_>> = tensors
        .iter()
        .map(|(name, v)| Entry {
            name: name.as_ref(),
            dtype: v.dtype(),
            shape: v.shape(),
        })
        .collect();
    // One tensor's canonical bytes at a time (borrowed when already little-endian); with
    // the `paranoid` feature, `write_streamed` reads back what it wrote.
    write_streamed(out, &entries, metadata, layout, &mut |i, w| {
        w.write_all(&tensors[i].1.to_canonical_le_bytes())
    })
}

/// The whole file as bytes (see [`write()`]).
pub fn serialize<'a, N: AsRef<str>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    metadata: Option<&BTreeMap<String, String>>,
    layout: Layout,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(&mut out, tensors, metadata, layout)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BinTensors, LayoutChoice, ReadOptions};
    use tensor_core::ByteOrder;
    use tensor_dtype::{Dtype, Tensor};

    #[test]
    fn the_seed_example_is_the_legacy_layout() {
        let zeros = Tensor::new(vec![0; 16], Dtype::Int32, &[1, 4], ByteOrder::Little).unwrap();
        let bytes = serialize([("test", zeros.view())], None, Layout::Legacy).unwrap();
        let seed: &[u8] = b"\x10\x00\x00\x00\x00\x00\x00\x00\x00\x01\x09\x02\x01\x04\x00\x10\x01\x04\x74\x65\x73\x74\x00\x20\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
        assert_eq!(bytes, seed);
        let f = BinTensors::open(seed).unwrap();
        assert_eq!(f.layout(), Layout::Legacy);
        let t = f.tensor("test").unwrap();
        assert_eq!(
            (t.view.dtype(), t.view.shape()),
            (Dtype::Int32, &[1u64, 4][..])
        );
        assert!(
            BinTensors::open_layout(seed, &ReadOptions::default(), LayoutChoice::Release).is_err()
        );
    }

    #[test]
    fn writers_refuse_what_the_format_cannot_hold() {
        let c = Tensor::new(vec![0; 8], Dtype::Complex64, &[1], ByteOrder::Little).unwrap();
        assert!(matches!(
            serialize([("c", c.view())], None, Layout::Release),
            Err(Error::UnsupportedDtype { .. })
        ));
        let a = Tensor::from_elements(&[1], &[1u8]).unwrap();
        assert!(matches!(
            serialize([("a", a.view()), ("a", a.view())], None, Layout::Release),
            Err(Error::ValidationMismatch { .. })
        ));
        // Of different dtypes too, which the writer's order (dtype, then name) need not put
        // side by side: float64 `a`, float32 `b`, uint8 `a`.
        let f = Tensor::from_elements(&[1], &[1f64]).unwrap();
        let g = Tensor::from_elements(&[1], &[1f32]).unwrap();
        assert!(matches!(
            serialize(
                [("a", a.view()), ("b", g.view()), ("a", f.view())],
                None,
                Layout::Release
            ),
            Err(Error::ValidationMismatch { .. })
        ));
    }

    #[test]
    fn a_header_that_fits_is_padded_to_the_old_window() {
        let a = Tensor::from_elements(&[3], &[1u8, 2, 3]).unwrap();
        let b = Tensor::from_elements(&[2], &[7.5f64, -1.0]).unwrap();
        let meta = BTreeMap::from([("k".to_owned(), "a long value to shorten".to_owned())]);
        let bytes = serialize(
            [("a", a.view()), ("b", b.view())],
            Some(&meta),
            Layout::Release,
        )
        .unwrap();
        let old = BinTensors::open(&bytes).unwrap();
        let start = data_start(&bytes).unwrap();
        assert_eq!(
            start,
            8 + u64::from_le_bytes(bytes[..8].try_into().unwrap())
        );
        assert_eq!(
            (data_start(&bytes[..7]), data_start(&[0xff; 8])),
            (None, None)
        );
        let shapes: Vec<Vec<u64>> = old.tensors().map(|t| t.view.shape().to_vec()).collect();
        let names = ["renamed_b", "a"];
        assert_eq!(old.names().collect::<Vec<_>>(), ["b", "a"], "stored order");
        let entries: Vec<Entry<'_>> = old
            .tensors()
            .zip(&shapes)
            .zip(names)
            .map(|((t, shape), name)| Entry {
                name,
                dtype: t.view.dtype(),
                shape,
            })
            .collect();
        let short = BTreeMap::from([("k".to_owned(), "short".to_owned())]);
        let header = header_in_place(&entries, Some(&short), start)
            .unwrap()
            .expect("a shorter header fits");
        let mut edited = bytes.clone();
        edited[..header.len()].copy_from_slice(&header);
        assert_eq!(edited.len(), bytes.len());
        let read = BinTensors::open(&edited).unwrap();
        assert_eq!(read.metadata().unwrap()["k"], "short");
        assert_eq!(read.names().collect::<Vec<_>>(), ["renamed_b", "a"]);
        assert_eq!(read.tensor("a").unwrap().view.buffer(), [1, 2, 3]);
        assert_eq!(
            read.tensor("renamed_b").unwrap().view.buffer(),
            b.view().buffer()
        );
        // Longer padding than a conforming writer's: the reference reads it, a strict
        // reader does not.
        let strict = ReadOptions::default().strict(true);
        assert!(BinTensors::open_with(&edited, &strict).is_err());

        let long = BTreeMap::from([("k".to_owned(), "x".repeat(100))]);
        assert!(
            header_in_place(&entries, Some(&long), start)
                .unwrap()
                .is_none()
        );
        let twice = [
            entries[0],
            Entry {
                name: "renamed_b",
                ..entries[1]
            },
        ];
        assert!(matches!(
            header_in_place(&twice, None, start),
            Err(Error::ValidationMismatch { .. })
        ));
    }
}
