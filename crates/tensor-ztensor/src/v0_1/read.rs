//! Reading a zTensor 0.1 file.

use super::index::{self, Encoding, Entry, Layout};
use crate::checksum::Checksum;
use crate::error::{Class, Error, Result};
use crate::generation::{ALIGNMENT_V0_1 as ALIGNMENT, MAGIC_V0_1};
use crate::read::{ChecksumStatus, Decoded};
use crate::sparse::Sparse;
use std::borrow::Cow;
use std::collections::HashSet;
use tensor_core::{ByteOrder, Limits, byte_order, checked};
use tensor_core::{ReadOptions, Verify};
use tensor_dtype::{Dtype, shape};

/// An open zTensor 0.1 file, borrowing from its bytes (usually a memory map).
#[derive(Debug)]
pub struct ZTensor<'a> {
    bytes: &'a [u8],
    /// Where `bytes` start in the file: 0, or the start of a [window](Self::window).
    base: u64,
    entries: std::sync::Arc<[Entry<'a>]>,
    index_start: u64,
    pub(crate) options: ReadOptions,
}

fn check_framing(bytes: &[u8], limits: &Limits) -> Result<(u64, u64)> {
    let len = bytes.len() as u64;
    // A file shorter than the magic that starts like it is truncated, not foreign.
    let magic_ok = if len < 8 {
        MAGIC_V0_1.starts_with(bytes)
    } else {
        &bytes[..8] == MAGIC_V0_1
    };
    if !magic_ok {
        return Err(Error::format(
            Class::BadMagic,
            "the file does not start with the zTensor 0.1 magic ZTEN0001",
        ));
    }
    if len < 16 {
        return Err(Error::format(
            Class::Truncated,
            format!(
                "the file is {len} bytes long; a zTensor 0.1 file holds at least the magic and an 8-byte index length"
            ),
        ));
    }
    let index_len = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().unwrap_or_default());
    if index_len > len - 16 {
        // No real index is 256 TiB: eight bytes that large are not a length at all, which is
        // what the end of a truncated file looks like.
        return Err(if index_len >= 1 << 48 {
            Error::format(
                Class::Truncated,
                format!(
                    "the last 8 bytes (value {index_len}) are not an index length: the file ({len} bytes) appears cut short"
                ),
            )
        } else {
            Error::format(
                Class::IndexOutOfBounds,
                format!(
                    "the index length at offset {} is {index_len} bytes, but only {} bytes precede it",
                    len - 8,
                    len - 16
                ),
            )
        });
    }
    if index_len == 0 && len > 16 {
        // Only the bare 16-byte file (magic + a zero length) is an empty file without an
        // index; bytes between the magic and a zero length belong to nothing, which is what
        // a file cut short at a run of zeros looks like.
        return Err(Error::format(
            Class::Truncated,
            format!(
                "the index length at offset {} is 0, but {} bytes lie between the magic and it: \
                 a zTensor 0.1 file always ends with its index (at least 1 byte); the file appears cut short",
                len - 8,
                len - 16
            ),
        ));
    }
    limits.check_header_bytes(index_len)?;
    Ok((len - 8 - index_len, index_len))
}

fn validate(entries: &[Entry<'_>], index_start: u64) -> Result<()> {
    let mut names = HashSet::with_capacity(entries.len());
    let mut spans = Vec::with_capacity(entries.len());
    for e in entries {
        if !names.insert(&*e.name) {
            return Err(Error::format(
                Class::DuplicateName,
                format!("tensor name {:?} appears more than once", e.name),
            ));
        }
        if e.offset % ALIGNMENT != 0 {
            return Err(Error::format(
                Class::MisalignedOffset,
                format!(
                    "tensor {:?}: offset {} is not a multiple of {ALIGNMENT}",
                    e.name, e.offset
                ),
            ));
        }
        let end = e.offset.checked_add(e.size);
        if e.offset < ALIGNMENT || end.is_none_or(|end| end > index_start) {
            return Err(Error::format(
                Class::BlobOutOfBounds,
                format!(
                    "tensor {:?}: blob at offset {} of {} bytes lies outside the data region {ALIGNMENT}..{index_start}",
                    e.name, e.offset, e.size
                ),
            ));
        }
        if let Some(dtype) = e.dtype {
            let bytes = shape::byte_len(dtype, &e.shape).map_err(|_| {
                Error::format(
                    Class::ShapeOverflow,
                    format!(
                        "tensor {:?}: shape {:?} overflows 64-bit arithmetic",
                        e.name, e.shape
                    ),
                )
            })?;
            if e.layout == Layout::Dense && e.encoding == Encoding::Raw && bytes != e.size {
                return Err(Error::format(
                    Class::SizeMismatch,
                    format!(
                        "tensor {:?}: a {dtype} tensor of shape {:?} needs {bytes} bytes, the blob holds {}",
                        e.name, e.shape, e.size
                    ),
                ));
            }
        }
        if e.size > 0 {
            spans.push((e.offset, e.offset + e.size, &*e.name));
        }
    }
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1) {
        return Err(Error::format(
            Class::OverlappingBlobs,
            format!(
                "tensor {:?} (bytes {}..{}) overlaps tensor {:?} (bytes {}..{})",
                w[1].2, w[1].0, w[1].1, w[0].2, w[0].0, w[0].1
            ),
        ));
    }
    Ok(())
}

impl<'a> ZTensor<'a> {
    /// Opens `bytes` with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens `bytes`, a whole zTensor 0.1 file: checks the magic and index bounds, parses the
    /// index, and checks every blob's alignment, bounds, overlap, size and name before any
    /// tensor data is touched.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let (index_start, index_len) = check_framing(bytes, &options.limits)?;
        let entries = if index_len == 0 {
            // The 0.1.0 reader accepts the bare 16-byte file (magic + a zero length) as
            // empty; check_framing refused a zero length after anything else.
            Vec::new()
        } else {
            let index = &bytes[index_start as usize..(index_start + index_len) as usize];
            index::parse(index, options.limits.max_tensor_count)?
        };
        validate(&entries, index_start)?;
        let file = ZTensor {
            bytes,
            base: 0,
            entries: entries.into(),
            index_start,
            options: *options,
        };
        if options.verify == Verify::OnOpen {
            for i in 0..file.entries.len() {
                file.verify(i)?;
            }
        }
        Ok(file)
    }

    /// The index entries, in index order.
    #[must_use]
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// The position of the tensor called `name`.
    #[must_use]
    pub fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// The file offset where the index starts.
    #[must_use]
    pub fn index_start(&self) -> u64 {
        self.index_start
    }

    /// The blob of tensor `i` as stored on disk (an error only for a tensor outside a
    /// [window](Self::window)'s bytes).
    pub fn stored(&self, i: usize) -> Result<&'a [u8]> {
        let e = &self.entries[i];
        // Bounds within the file were checked at open.
        e.offset
            .checked_sub(self.base)
            .and_then(|at| self.bytes.get(at as usize..(at + e.size) as usize))
            .ok_or_else(|| {
                Error::format(
                    Class::BlobOutOfBounds,
                    format!(
                        "tensor {:?}: blob {}+{} is not among the bytes this reader holds",
                        e.name, e.offset, e.size
                    ),
                )
            })
    }

    /// A reader of tensor `i` alone over `bytes`, which hold the file from offset `start` on
    /// and must cover tensor `i`'s blob: for readers that fetch one tensor's bytes at a time
    /// (a remote file) and keep the index parsed once. The window shares the parsed index
    /// (no copy); reading any other tensor from it is an error.
    pub fn window<'w>(&self, i: usize, bytes: &'w [u8], start: u64) -> Result<ZTensor<'w>>
    where
        'a: 'w,
    {
        let e = self.entries.get(i).ok_or_else(|| {
            Error::format(
                Class::BlobOutOfBounds,
                format!("no tensor #{i} (the file has {})", self.entries.len()),
            )
        })?;
        let end = start.saturating_add(bytes.len() as u64);
        if e.offset < start || e.offset.saturating_add(e.size) > end {
            return Err(Error::format(
                Class::BlobOutOfBounds,
                format!(
                    "tensor {:?}: blob {}+{} lies outside the bytes given ({start}..{end})",
                    e.name, e.offset, e.size
                ),
            ));
        }
        Ok(ZTensor {
            bytes,
            base: start,
            entries: std::sync::Arc::<[Entry<'a>]>::clone(&self.entries),
            index_start: self.index_start,
            options: self.options,
        })
    }

    /// Checks tensor `i`'s checksum against its stored bytes.
    pub fn verify(&self, i: usize) -> Result<ChecksumStatus> {
        let e = &self.entries[i];
        match &e.checksum {
            None => Ok(ChecksumStatus::Absent),
            Some(Checksum::Unknown(s)) => Ok(ChecksumStatus::UnknownAlgorithm(s.clone())),
            Some(Checksum::Malformed(s)) => Err(Error::format(
                Class::ChecksumFormat,
                format!("tensor {:?}: checksum {s:?} cannot be parsed", e.name),
            )),
            Some(c) => {
                if c.matches(self.stored(i)?) == Some(true) {
                    Ok(ChecksumStatus::Verified)
                } else {
                    Err(Error::format(
                        Class::ChecksumMismatch,
                        format!(
                            "tensor {:?}: the {} bytes at offset {} do not match {}",
                            e.name,
                            e.size,
                            e.offset,
                            c.to_stored()
                        ),
                    ))
                }
            }
        }
    }

    pub(crate) fn known_dtype(&self, i: usize) -> Result<Dtype> {
        let e = &self.entries[i];
        e.dtype.ok_or_else(|| {
            Error::format(
                Class::UnknownDtype,
                format!(
                    "tensor {:?}: dtype {:?} is not a zTensor 0.1 dtype",
                    e.name, e.dtype_name
                ),
            )
        })
    }

    /// The blob of tensor `i` after its encoding is undone (checksum verified first, as the
    /// options say), with the byte order its elements are in.
    fn blob(&self, i: usize, expected: u64) -> Result<(Cow<'a, [u8]>, ByteOrder)> {
        self.blob_as(i, expected, self.options.verify == Verify::OnRead)
    }

    fn blob_as(&self, i: usize, expected: u64, check: bool) -> Result<(Cow<'a, [u8]>, ByteOrder)> {
        let e = &self.entries[i];
        if check {
            self.verify(i)?;
        }
        let stored = self.stored(i)?;
        match &e.encoding {
            Encoding::Raw => Ok((Cow::Borrowed(stored), e.byte_order)),
            Encoding::Zstd => {
                let out = tensor_pipeline::zstd::decompress(stored, expected, &self.options.limits)
                    .map_err(|err| {
                        crate::runs::decompression(&format!("tensor {:?}", e.name), err)
                    })?;
                // zstd payloads hold little-endian elements whatever `data_endianness` says.
                Ok((Cow::Owned(out), ByteOrder::Little))
            }
            Encoding::Other(s) => Err(Error::format(
                Class::UnknownEncoding,
                format!(
                    "tensor {:?}: encoding {s:?} is not a zTensor 0.1 encoding",
                    e.name
                ),
            )),
        }
    }

    /// Tensor `i`'s elements, dense: zero-copy for raw dense tensors, decoded for zstd,
    /// materialised for sparse ones.
    pub fn read(&self, i: usize) -> Result<Decoded<'a>> {
        self.read_as(i, self.options.verify == Verify::OnRead)
    }

    /// Tensor `i` as [`read`](Self::read) gives it, its checksum not checked whatever the
    /// options say: a zero-copy view costs nothing however large the tensor
    /// ([`verify`](Self::verify) checks it when asked).
    pub fn read_unverified(&self, i: usize) -> Result<Decoded<'a>> {
        self.read_as(i, false)
    }

    fn read_as(&self, i: usize, check: bool) -> Result<Decoded<'a>> {
        let e = &self.entries[i];
        let dtype = self.known_dtype(i)?;
        match &e.layout {
            Layout::Dense => {
                let expected = shape::byte_len(dtype, &e.shape)?;
                let (data, byte_order) = self.blob_as(i, expected, check)?;
                Ok(Decoded {
                    data,
                    dtype,
                    shape: e.shape.clone(),
                    byte_order,
                })
            }
            Layout::SparseCsr | Layout::SparseCoo => {
                let dense = self.sparse(i)?.to_dense()?;
                let shape = dense.shape().to_vec();
                let byte_order = dense.byte_order();
                Ok(Decoded {
                    data: Cow::Owned(dense.into_data()),
                    dtype,
                    shape,
                    byte_order,
                })
            }
            Layout::Other(s) => Err(Error::format(
                Class::UnknownLayout,
                format!(
                    "tensor {:?}: layout {s:?} is not supported (sparse tensors use \"sparsecsr\" or \"sparsecoo\")",
                    e.name
                ),
            )),
        }
    }

    /// Tensor `i`'s elements in runs of at most `run` bytes, for dense tensors: raw ones
    /// straight from the file, zstd ones decoded as a stream — memory stays within one run
    /// whatever the tensor's size (the checksum, over the stored bytes, is verified first as
    /// the options say). Returns the byte order of the runs, or `None`, having handed out
    /// nothing, for a sparse tensor (read it whole with [`read`](Self::read)).
    pub fn read_chunks(
        &self,
        i: usize,
        run: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<Option<ByteOrder>> {
        let e = &self.entries[i];
        let dtype = self.known_dtype(i)?;
        if matches!(e.layout, Layout::SparseCsr | Layout::SparseCoo) {
            return Ok(None);
        }
        if e.encoding != Encoding::Zstd || e.layout != Layout::Dense {
            // Raw dense tensors are views already; anything unknown fails as in `read`.
            let d = self.read(i)?;
            d.data.chunks(run.max(1)).try_for_each(&mut *sink)?;
            return Ok(Some(d.byte_order));
        }
        let expected = shape::byte_len(dtype, &e.shape)?;
        if self.options.verify == Verify::OnRead {
            self.verify(i)?;
        }
        let who = format!("tensor {:?}", e.name);
        crate::runs::zstd_runs(
            self.stored(i)?,
            expected,
            &self.options.limits,
            run,
            &who,
            sink,
        )?;
        // zstd payloads hold little-endian elements whatever `data_endianness` says.
        Ok(Some(ByteOrder::Little))
    }

    /// Decodes tensor `i` (dense) into `dst`, in the machine's byte order. `dst` must be
    /// exactly the tensor's size.
    pub fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let e = &self.entries[i];
        let dtype = self.known_dtype(i)?;
        let expected = shape::byte_len(dtype, &e.shape)?;
        if expected != dst.len() as u64 || e.layout != Layout::Dense {
            let d = self.read(i)?.into_tensor()?;
            if d.data().len() != dst.len() {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "tensor {:?} holds {} bytes; the buffer has {}",
                    e.name,
                    d.data().len(),
                    dst.len()
                ))
                .into());
            }
            dst.copy_from_slice(d.data());
            return Ok(());
        }
        if e.encoding == Encoding::Zstd {
            if self.options.verify == Verify::OnRead {
                self.verify(i)?;
            }
            tensor_pipeline::zstd::decompress_into(self.stored(i)?, dst).map_err(|err| {
                Error::format(
                    Class::DecompressionError,
                    format!("tensor {:?}: {err}", e.name),
                )
            })?;
            byte_order::to_native_in_place(ByteOrder::Little, dst, dtype.swap_width())?;
            return Ok(());
        }
        let (data, order) = self.blob(i, expected)?;
        byte_order::convert_copy(&data, order, dst, ByteOrder::NATIVE, dtype.swap_width())?;
        Ok(())
    }

    /// The components of sparse tensor `i`.
    pub fn sparse(&self, i: usize) -> Result<Sparse> {
        let e = &self.entries[i];
        let dtype = self.known_dtype(i)?;
        // The blob's decoded size follows from its components, not from the shape: cap it
        // by the limits and the stored size instead.
        let cap = match e.encoding {
            Encoding::Zstd => checked::mul(
                e.size.max(1),
                self.options.limits.max_decompression_ratio.min(1 << 20),
                "sparse blob",
            )
            .unwrap_or(u64::MAX)
            .min(self.options.limits.max_total_bytes),
            _ => e.size,
        };
        let blob = match &e.encoding {
            Encoding::Zstd => {
                if self.options.verify == Verify::OnRead {
                    self.verify(i)?;
                }
                Cow::Owned(zstd_unsized(self.stored(i)?, cap).map_err(|m| {
                    Error::format(
                        Class::DecompressionError,
                        format!("tensor {:?}: {m}", e.name),
                    )
                })?)
            }
            _ => self.blob(i, e.size)?.0,
        };
        Sparse::parse(&e.layout, &blob, dtype, &e.shape, e.byte_order, &e.name)
    }
}

/// Decodes zstd data whose size is not known in advance, up to `cap` bytes.
fn zstd_unsized(src: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let dec = zstd_decoder(src)?;
    let mut out = Vec::new();
    dec.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > cap {
        return Err(format!("decodes to more than {cap} bytes"));
    }
    Ok(out)
}

fn zstd_decoder(src: &[u8]) -> Result<impl std::io::Read + '_, String> {
    tensor_pipeline::zstd::reader(src).map_err(|e| e.to_string())
}
