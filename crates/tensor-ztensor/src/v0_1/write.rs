//! Writing zTensor 0.1 files exactly as the reference 0.1 writer does.
//!
//! Blobs stream out as they come, each after zero padding to a multiple of 64; the index
//! follows the last blob directly, then its length as a little-endian u64. Index entries are
//! indefinite-length CBOR maps with keys in the reference's order — name, offset, size,
//! dtype, layout, shape, encoding, then `data_endianness` (raw multi-byte tensors only) and
//! `checksum` if present, then custom keys sorted by their bytes — inside a definite array.

use super::index;
use crate::checksum::ChecksumKind;
use crate::error::{Error, Result};
use crate::generation::{ALIGNMENT_V0_1 as ALIGNMENT, MAGIC_V0_1};
use std::io::Write;
use tensor_core::cbor::Encoder;
use tensor_core::{ByteOrder, byte_order};
use tensor_dtype::TensorView;

/// How a tensor's blob is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WriteEncoding {
    /// As it is.
    #[default]
    Raw,
    /// zstd at a level (0 is zstd's default, 3), one frame without a content-size field.
    Zstd(i32),
}

/// How one tensor is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorOptions {
    /// The blob encoding.
    pub encoding: WriteEncoding,
    /// The checksum to store (computed over the bytes on disk).
    pub checksum: ChecksumKind,
    /// The byte order of raw multi-byte data, stored as `data_endianness`; `None` stores
    /// little-endian data without the key (as the Rust API could). zstd data is always
    /// little-endian and never carries the key.
    pub byte_order: Option<ByteOrder>,
    /// Extra keys, each with its value already encoded as CBOR.
    pub custom: Vec<(String, Vec<u8>)>,
}

impl Default for TensorOptions {
    /// Raw, no checksum, explicit little-endian — what the reference Python writer produces.
    fn default() -> Self {
        TensorOptions {
            encoding: WriteEncoding::Raw,
            checksum: ChecksumKind::None,
            byte_order: Some(ByteOrder::Little),
            custom: Vec::new(),
        }
    }
}

/// A streaming zTensor 0.1 writer.
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    pos: u64,
    entries: Vec<Vec<u8>>,
    /// Everything written and what each tensor must read back as, for the `paranoid`
    /// feature.
    #[cfg(feature = "paranoid")]
    copy: (Vec<u8>, Vec<crate::paranoid::Expected>),
}

fn io(e: std::io::Error) -> Error {
    Error::Core(tensor_core::Error::io("writing a zTensor file", e))
}

impl<W: Write> Writer<W> {
    /// Starts a file on `out` (writes the magic).
    pub fn new(mut out: W) -> Result<Self> {
        out.write_all(MAGIC_V0_1).map_err(io)?;
        Ok(Writer {
            out,
            pos: 8,
            entries: Vec::new(),
            #[cfg(feature = "paranoid")]
            copy: (MAGIC_V0_1.to_vec(), Vec::new()),
        })
    }

    /// Refuses what the reader would refuse: a dtype zTensor 0.1 has no name for, and a
    /// custom key the reader takes for one of its own (a file it refuses, or reads as
    /// another tensor).
    fn check(name: &str, dtype: tensor_dtype::Dtype, options: &TensorOptions) -> Result<()> {
        if index::dtype_from_name(dtype.name()).is_none() {
            return Err(Error::Unwritable(format!(
                "dtype {dtype} (tensor {name:?})"
            )));
        }
        if let Some((key, _)) = options
            .custom
            .iter()
            .find(|(k, _)| index::RESERVED_KEYS.contains(&k.as_str()))
        {
            return Err(Error::Unwritable(format!(
                "tensor {name:?}: the attribute {key:?}, a key zTensor 0.1 reserves for itself"
            )));
        }
        Ok(())
    }

    /// Pads to the next blob's alignment; returns where the blob starts.
    fn pad(&mut self) -> Result<u64> {
        let pad = (ALIGNMENT - self.pos % ALIGNMENT) % ALIGNMENT;
        self.out
            .write_all(&[0u8; ALIGNMENT as usize][..pad as usize])
            .map_err(io)?;
        Ok(self.pos + pad)
    }

    /// Writes one tensor's blob now and remembers its index entry.
    pub fn add(
        &mut self,
        name: &str,
        view: &TensorView<'_>,
        options: &TensorOptions,
    ) -> Result<()> {
        let dtype = view.dtype();
        Self::check(name, dtype, options)?;
        let le = view.to_canonical_le_bytes();
        let multi_byte = dtype.byte_width() > 1;
        let (blob, endianness) = match options.encoding {
            WriteEncoding::Zstd(level) => (
                std::borrow::Cow::Owned(
                    tensor_pipeline::zstd::compress(&le, level)
                        .map_err(|e| Error::Unwritable(e.to_string()))?,
                ),
                None,
            ),
            WriteEncoding::Raw => match options.byte_order {
                Some(ByteOrder::Big) if multi_byte => {
                    let mut b = le.into_owned();
                    byte_order::swap_in_place(&mut b, dtype.swap_width())?;
                    (std::borrow::Cow::Owned(b), Some(ByteOrder::Big))
                }
                Some(order) if multi_byte => (le, Some(order)),
                _ => (le, None),
            },
        };
        let offset = self.pad()?;
        // The checksum is computed on another core while the blob is written; without one
        // the blob goes out in one piece.
        let mut running = options.checksum.running();
        match &mut running {
            Some(r) => tensor_core::tee::write(&mut self.out, &blob, &mut |piece| r.update(piece)),
            None => self.out.write_all(&blob),
        }
        .map_err(io)?;
        self.pos = offset + blob.len() as u64;
        #[cfg(feature = "paranoid")]
        {
            self.copy.0.resize(offset as usize, 0);
            self.copy.0.extend_from_slice(&blob);
            self.copy
                .1
                .push((name.to_owned(), view.to_canonical_le_bytes().into_owned()));
        }
        self.entry(
            name,
            dtype,
            view.shape(),
            offset,
            blob.len() as u64,
            options,
            endianness,
            running,
        );
        Ok(())
    }

    /// Writes one tensor's blob as it comes — `fill` writes its `len` little-endian bytes
    /// (bools as 0/1), in runs of any size — and remembers its index entry: a tensor of any
    /// size goes out without being held whole. Raw little-endian blobs only: `options`
    /// asking for zstd or big-endian data are refused ([`add`](Self::add) writes those). An
    /// error from `fill` is returned as it is, and a `fill` that writes more or fewer than
    /// `len` bytes is an error.
    pub fn add_streamed(
        &mut self,
        name: &str,
        dtype: tensor_dtype::Dtype,
        shape: &[u64],
        options: &TensorOptions,
        len: u64,
        fill: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        Self::check(name, dtype, options)?;
        if options.encoding != WriteEncoding::Raw || options.byte_order == Some(ByteOrder::Big) {
            return Err(Error::Unwritable(format!(
                "tensor {name:?}: a streamed blob is raw and little-endian"
            )));
        }
        let endianness = options.byte_order.filter(|_| dtype.byte_width() > 1);
        let offset = self.pad()?;
        let mut blob = Blob {
            out: &mut self.out,
            running: options.checksum.running(),
            written: 0,
            #[cfg(feature = "paranoid")]
            copy: Vec::new(),
        };
        fill(&mut blob).map_err(io)?;
        if blob.written != len {
            return Err(Error::Unwritable(format!(
                "tensor {name:?}: {} bytes were written for a blob of {len}",
                blob.written
            )));
        }
        let running = blob.running.take();
        #[cfg(feature = "paranoid")]
        {
            let bytes = std::mem::take(&mut blob.copy);
            self.copy.0.resize(offset as usize, 0);
            self.copy.0.extend_from_slice(&bytes);
            self.copy.1.push((name.to_owned(), bytes));
        }
        self.pos = offset + len;
        self.entry(
            name, dtype, shape, offset, len, options, endianness, running,
        );
        Ok(())
    }

    /// Remembers the index entry of a blob written at `offset`.
    // The entry's fields, each from the blob just written.
    #[allow(clippy::too_many_arguments)]
    fn entry(
        &mut self,
        name: &str,
        dtype: tensor_dtype::Dtype,
        shape: &[u64],
        offset: u64,
        size: u64,
        options: &TensorOptions,
        endianness: Option<ByteOrder>,
        running: Option<crate::checksum::Running>,
    ) {
        let mut e = Encoder::new();
        e.indefinite_map();
        e.text("name");
        e.text(name);
        e.text("offset");
        e.uint(offset);
        e.text("size");
        e.uint(size);
        e.text("dtype");
        e.text(dtype.name());
        e.text("layout");
        e.text("dense");
        e.text("shape");
        e.array(shape.len());
        for &d in shape {
            e.uint(d);
        }
        e.text("encoding");
        e.text(match options.encoding {
            WriteEncoding::Raw => "raw",
            WriteEncoding::Zstd(_) => "zstd",
        });
        if let Some(order) = endianness {
            e.text("data_endianness");
            e.text(order.as_str());
        }
        if let Some(c) = running.map(crate::checksum::Running::finish) {
            e.text("checksum");
            e.text(&c.to_stored());
        }
        let mut custom: Vec<&(String, Vec<u8>)> = options.custom.iter().collect();
        custom.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (k, v) in custom {
            e.text(k);
            e.raw(v);
        }
        e.brk();
        self.entries.push(e.out);
    }

    /// Writes the index and its length; returns the sink and the file's total length.
    pub fn finish(mut self) -> Result<(W, u64)> {
        let mut e = Encoder::new();
        e.array(self.entries.len());
        for entry in &self.entries {
            e.raw(entry);
        }
        self.out.write_all(&e.out).map_err(io)?;
        self.out
            .write_all(&(e.out.len() as u64).to_le_bytes())
            .map_err(io)?;
        self.out.flush().map_err(io)?;
        #[cfg(feature = "paranoid")]
        {
            let (mut copy, expected) = std::mem::take(&mut self.copy);
            copy.extend_from_slice(&e.out);
            copy.extend_from_slice(&(e.out.len() as u64).to_le_bytes());
            crate::paranoid::check(&copy, &expected)?;
        }
        Ok((self.out, self.pos + e.out.len() as u64 + 8))
    }
}

/// The writer a streamed blob goes through: on to the file, into its running checksum, and
/// counted.
struct Blob<'w, W: Write> {
    out: &'w mut W,
    running: Option<crate::checksum::Running>,
    written: u64,
    /// The blob's bytes, for the `paranoid` read-back.
    #[cfg(feature = "paranoid")]
    copy: Vec<u8>,
}

impl<W: Write> Write for Blob<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if let Some(r) = &mut self.running {
            r.update(&buf[..n]);
        }
        self.written += n as u64;
        #[cfg(feature = "paranoid")]
        self.copy.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes a whole file to `out` from `(name, view, options)` triples, one options value per
/// tensor. Returns the number of bytes written.
pub fn write<'a, N: AsRef<str>>(
    out: &mut dyn Write,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>, TensorOptions)>,
) -> Result<u64> {
    let mut w = Writer::new(out)?;
    for (name, view, options) in tensors {
        w.add(name.as_ref(), &view, &options)?;
    }
    Ok(w.finish()?.1)
}

/// A whole file in memory (see [`write()`]).
pub fn serialize<'a, N: AsRef<str>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>, TensorOptions)>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(&mut out, tensors)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A custom key the reader takes for one of its own is refused, naming the tensor and
    /// the key; any other is written and read back.
    #[test]
    fn reserved_keys_are_refused_as_attributes() {
        let t = tensor_dtype::Tensor::from_elements(&[2], &[1.0f32, 2.0]).unwrap();
        let mut cbor_five = tensor_core::cbor::Encoder::new();
        cbor_five.uint(5);
        for key in index::RESERVED_KEYS {
            let options = TensorOptions {
                custom: vec![(key.to_owned(), cbor_five.out.clone())],
                ..TensorOptions::default()
            };
            let e = serialize([("w", t.view(), options)]).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("\"w\"") && text.contains(key),
                "{key}: {text}"
            );
        }
        let options = TensorOptions {
            custom: vec![("units".to_owned(), cbor_five.out.clone())],
            ..TensorOptions::default()
        };
        let bytes = serialize([("w", t.view(), options)]).unwrap();
        assert!(crate::v0_1::ZTensor::open(&bytes).is_ok());
    }

    /// A blob written as it comes, in runs, gives the bytes the whole-view writer gives,
    /// checksum included; a wrong length, an error from the runs, and what a streamed blob
    /// cannot be are refused.
    #[test]
    fn streamed_blobs_are_the_bytes_whole_ones_are() {
        let values: Vec<f32> = (0..1000u16).map(f32::from).collect();
        let t = tensor_dtype::Tensor::from_elements(&[10, 100], &values).unwrap();
        let le = t.view().to_canonical_le_bytes().into_owned();
        for checksum in [
            ChecksumKind::None,
            ChecksumKind::Crc32c,
            ChecksumKind::Sha256,
        ] {
            let options = TensorOptions {
                checksum,
                ..TensorOptions::default()
            };
            let whole = serialize([("w", t.view(), options.clone())]).unwrap();
            let mut streamed = Writer::new(Vec::new()).unwrap();
            streamed
                .add_streamed(
                    "w",
                    t.dtype(),
                    t.shape(),
                    &options,
                    le.len() as u64,
                    &mut |out| le.chunks(7).try_for_each(|c| out.write_all(c)),
                )
                .unwrap();
            assert_eq!(streamed.finish().unwrap().0, whole, "{checksum:?}");
        }
        let mut w = Writer::new(Vec::new()).unwrap();
        let options = TensorOptions::default();
        let short = w.add_streamed(
            "w",
            t.dtype(),
            t.shape(),
            &options,
            le.len() as u64,
            &mut |out| out.write_all(&le[1..]),
        );
        assert!(short.unwrap_err().to_string().contains("3999 bytes"));
        let failing = w.add_streamed("w", t.dtype(), t.shape(), &options, 4, &mut |_| {
            Err(std::io::Error::other("the source went away"))
        });
        assert!(
            failing
                .unwrap_err()
                .to_string()
                .contains("the source went away")
        );
        for options in [
            TensorOptions {
                encoding: WriteEncoding::Zstd(3),
                ..TensorOptions::default()
            },
            TensorOptions {
                byte_order: Some(ByteOrder::Big),
                ..TensorOptions::default()
            },
        ] {
            let refused = w.add_streamed("w", t.dtype(), t.shape(), &options, 4, &mut |_| Ok(()));
            assert!(matches!(refused, Err(Error::Unwritable(_))), "{options:?}");
        }
    }
}
