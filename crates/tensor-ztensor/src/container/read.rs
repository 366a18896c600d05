//! Reading an object's parts: stored bytes, digests, decoding.

use super::logical::forbidden_values;
use super::manifest::malformed;
use super::part::{Object, Part, PartEncoding};
use super::{Container, Generation};
use crate::checksum::{Checksum, ChecksumKind};
use crate::error::{Class, Error, Result};
use crate::read::Decoded;
use crate::sparse::Sparse;
use std::borrow::Cow;
use tensor_core::Verify;
use tensor_core::{ByteOrder, checked};
use tensor_dtype::{Dtype, Tensor, shape};

impl<'a> Container<'a> {
    /// A part's bytes as stored (an error only for a part outside a
    /// [window](Self::window)'s bytes).
    pub fn stored(&self, part: &Part) -> Result<&'a [u8]> {
        // Bounds within the file were checked at open.
        part.offset
            .checked_sub(self.base)
            .and_then(|at| self.bytes.get(at as usize..(at + part.length) as usize))
            .ok_or_else(|| {
                Error::format(
                    Class::BlobOutOfBounds,
                    format!(
                        "{}: blob {}+{} is not among the bytes this reader holds",
                        part.role, part.offset, part.length
                    ),
                )
            })
    }

    /// Whether digests are checked as parts are read (any [`Verify`] but `Never`).
    pub(crate) fn checks(&self) -> bool {
        self.options.verify != Verify::Never
    }

    fn check_digest(who: &str, digest: Option<&Checksum>, data: &[u8]) -> Result<()> {
        match digest {
            None | Some(Checksum::Unknown(_)) => Ok(()),
            Some(Checksum::Malformed(s)) => Err(Error::format(
                Class::ChecksumFormat,
                format!("{who}: digest {s:?} cannot be parsed"),
            )),
            Some(c) => {
                if c.matches(data) == Some(true) {
                    Ok(())
                } else {
                    Err(Error::format(
                        Class::ChecksumMismatch,
                        format!("{who}: the data does not match {}", c.to_stored()),
                    ))
                }
            }
        }
    }

    /// A part's decoded bytes (little-endian elements), its digest verified.
    pub fn part_bytes(&self, object: &Object<'_>, part: &Part) -> Result<Cow<'a, [u8]>> {
        self.part_bytes_as(object, part, self.checks())
    }

    fn part_bytes_as(
        &self,
        object: &Object<'_>,
        part: &Part,
        check: bool,
    ) -> Result<Cow<'a, [u8]>> {
        let who = format!("{}/{}", object.name, part.role);
        let stored = self.stored(part)?;
        if check && self.generation == Generation::V1 {
            Self::check_digest(&who, part.digest.as_ref(), stored)?;
        }
        let decoded = match &part.encoding {
            PartEncoding::Raw => Cow::Borrowed(stored),
            PartEncoding::Zstd { decoded_length }
            | PartEncoding::ZstdSeekable { decoded_length } => Cow::Owned(
                tensor_pipeline::zstd::decompress(stored, *decoded_length, &self.options.limits)
                    .map_err(|e| crate::runs::decompression(&who, e))?,
            ),
            PartEncoding::Other(s) => {
                return Err(Error::format(
                    Class::UnknownEncoding,
                    format!("{who}: encoding {s:?} is not supported"),
                ));
            }
        };
        if check && self.generation == Generation::V2 {
            Self::check_digest(&who, part.digest.as_ref(), &decoded)?;
        }
        Ok(decoded)
    }

    /// Bytes `start..start + dst.len()` of a part's decoded data, decoding only the frames
    /// that hold them for `zt.zstd-seekable/1` parts (no digest check: a digest covers the
    /// whole part).
    pub fn read_part_range(
        &self,
        object: &Object<'_>,
        part: &Part,
        start: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        let who = format!("{}/{}", object.name, part.role);
        if let PartEncoding::ZstdSeekable { .. } = &part.encoding {
            return tensor_pipeline::zstd::seekable::decode_range(self.stored(part)?, start, dst)
                .map_err(|e| Error::format(Class::DecompressionError, format!("{who}: {e}")));
        }
        let all = self.part_bytes(object, part)?;
        let range = checked::range(start, dst.len() as u64, all.len() as u64, "part range")?;
        dst.copy_from_slice(&all[range]);
        Ok(())
    }

    fn typed_part(&self, object: &Object<'_>, role: &str) -> Result<(Dtype, Cow<'a, [u8]>)> {
        self.typed_part_as(object, role, self.checks())
    }

    fn typed_part_as(
        &self,
        object: &Object<'_>,
        role: &str,
        check: bool,
    ) -> Result<(Dtype, Cow<'a, [u8]>)> {
        let part = object
            .part(role)
            .ok_or_else(|| malformed(format!("object {:?} has no {role:?} part", object.name)))?;
        let dtype = part.dtype()?;
        let bytes = self.part_bytes_as(object, part, check)?;
        if !bytes.len().is_multiple_of(dtype.byte_width().max(1)) {
            return Err(Error::format(
                Class::SizeMismatch,
                format!(
                    "{}/{role}: {} bytes are not whole {dtype} elements",
                    object.name,
                    bytes.len()
                ),
            ));
        }
        Ok((dtype, bytes))
    }

    /// Decodes object `i` into `dst`, which must be exactly its dense size: C order, the
    /// machine's byte order. Dense objects decode in runs straight into `dst` (digests
    /// checked as [`read_chunks`](Self::read_chunks) checks them); other layouts are
    /// expanded whole first.
    pub fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        const RUN: usize = 1 << 20;
        let o = &self.objects[i];
        let dtype = o.dtype()?;
        let need = shape::byte_len(dtype, &o.shape)?;
        if need != dst.len() as u64 {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "object {:?} holds {need} bytes; the buffer has {}",
                o.name,
                dst.len()
            ))
            .into());
        }
        let what = format!("object {:?}", o.name);
        let mut fill = tensor_core::buffer::Filler::new(dst, &what);
        if self.read_chunks(i, RUN, &mut |run| Ok(fill.put(run)?))? {
            fill.finish()?;
            tensor_core::byte_order::to_native_in_place(
                ByteOrder::Little,
                dst,
                dtype.swap_width(),
            )?;
            return Ok(());
        }
        let d = self.read(i)?;
        let view = tensor_dtype::TensorView::new(&d.data, d.dtype, &d.shape, d.byte_order)?;
        Ok(tensor_dtype::container::copy_native(&view, dst)?)
    }

    /// Object `i`'s elements (little-endian) in runs of at most `run` bytes, for dense
    /// objects: raw parts straight from the file, zstd parts decoded as a stream, so memory
    /// stays within one run whatever the object's size. Digests are checked as the options
    /// say — over the stored bytes first (1.x), or over the decoded bytes as they pass
    /// (2; a mismatch is an error after the runs). Returns `false`, having handed out
    /// nothing, for other layouts (read them whole with [`read`](Self::read)).
    pub fn read_chunks(
        &self,
        i: usize,
        run: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let o = &self.objects[i];
        if o.layout != "dense" {
            return Ok(false);
        }
        let part = o
            .part("data")
            .ok_or_else(|| malformed(format!("object {:?} has no \"data\" part", o.name)))?;
        let decoded_length = match &part.encoding {
            PartEncoding::Zstd { decoded_length }
            | PartEncoding::ZstdSeekable { decoded_length } => *decoded_length,
            _ => {
                let d = self.read(i)?;
                d.data.chunks(run.max(1)).try_for_each(&mut *sink)?;
                return Ok(true);
            }
        };
        let who = format!("{}/{}", o.name, part.role);
        let dtype = part.dtype()?;
        let need = shape::byte_len(dtype, &o.shape).map_err(|_| {
            Error::format(
                Class::ShapeOverflow,
                format!("object {:?}: shape {:?} overflows", o.name, o.shape),
            )
        })?;
        if need != decoded_length {
            return Err(Error::format(
                Class::SizeMismatch,
                format!(
                    "object {:?}: {need} bytes needed, the part decodes to {decoded_length}",
                    o.name
                ),
            ));
        }
        let stored = self.stored(part)?;
        let check = self.checks();
        if check && self.generation == Generation::V1 {
            Self::check_digest(&who, part.digest.as_ref(), stored)?;
        }
        let mut running = if check && self.generation == Generation::V2 {
            part.digest
                .as_ref()
                .and_then(Checksum::kind)
                .and_then(ChecksumKind::running)
        } else {
            None
        };
        let checked = self.generation == Generation::V2;
        let elements = shape::element_count(&o.shape).unwrap_or(0);
        let mut forbidden = None;
        let mut done = 0u64;
        crate::runs::zstd_runs(
            stored,
            decoded_length,
            &self.options.limits,
            run,
            &who,
            &mut |c| {
                if let Some(h) = running.as_mut() {
                    h.update(c);
                }
                done += c.len() as u64;
                if checked && forbidden.is_none() {
                    forbidden = forbidden_values(dtype, elements, c, done == decoded_length);
                }
                sink(c)
            },
        )?;
        if let Some(what) = forbidden {
            return Err(malformed(format!("object {:?}: {what}", o.name)));
        }
        if let (Some(h), Some(d)) = (running, part.digest.as_ref())
            && h.finish() != *d
        {
            return Err(Error::format(
                Class::ChecksumMismatch,
                format!("{who}: the data does not match {}", d.to_stored()),
            ));
        }
        Ok(true)
    }

    /// Object `i` as a dense tensor: borrowed for raw dense data, decoded or expanded
    /// otherwise. Layouts without a dense form (quantized groups, ...) are refused; their
    /// parts stay readable with [`part_bytes`](Self::part_bytes).
    pub fn read(&self, i: usize) -> Result<Decoded<'a>> {
        self.read_as(i, self.checks())
    }

    /// Object `i` as [`read`](Self::read) gives it, with the digests of the parts it
    /// reads not checked whatever the options say: a zero-copy view of a raw dense object
    /// costs nothing however large it is ([`verify`](Self::verify) checks it when asked).
    pub fn read_unverified(&self, i: usize) -> Result<Decoded<'a>> {
        self.read_as(i, false)
    }

    /// Checks the digests of object `i`'s parts (decoding compressed parts, whose digests
    /// cover the decoded bytes in zTensor 2).
    pub fn verify(&self, i: usize) -> Result<()> {
        let o = &self.objects[i];
        for p in &o.parts {
            self.part_bytes_as(o, p, true)?;
        }
        Ok(())
    }

    fn read_as(&self, i: usize, check: bool) -> Result<Decoded<'a>> {
        let o = &self.objects[i];
        let name = &o.name;
        match &*o.layout {
            "dense" => {
                let (dtype, data) = self.typed_part_as(o, "data", check)?;
                let need = shape::byte_len(dtype, &o.shape).map_err(|_| {
                    Error::format(
                        Class::ShapeOverflow,
                        format!("object {name:?}: shape {:?} overflows", o.shape),
                    )
                })?;
                if data.len() as u64 != need {
                    return Err(Error::format(
                        Class::SizeMismatch,
                        format!(
                            "object {name:?}: {need} bytes needed, the part holds {}",
                            data.len()
                        ),
                    ));
                }
                if self.generation == Generation::V2
                    && let Some(what) = forbidden_values(
                        dtype,
                        shape::element_count(&o.shape).unwrap_or(0),
                        &data,
                        true,
                    )
                {
                    return Err(malformed(format!("object {name:?}: {what}")));
                }
                Ok(Decoded {
                    data,
                    dtype,
                    shape: o.shape.to_vec(),
                    byte_order: ByteOrder::Little,
                })
            }
            "sparse_csr" | "zt.sparse_csr/1" => {
                let (dtype, values) = self.typed_part(o, "values")?;
                let indptr = self.index_part(o, "indptr")?;
                let indices = self.index_part(o, "indices")?;
                let sparse = Sparse::csr(
                    &o.shape,
                    indptr,
                    indices,
                    &values,
                    dtype,
                    ByteOrder::Little,
                    name,
                )?;
                self.dense(&sparse, dtype, &o.shape)
            }
            "sparse_coo" | "zt.sparse_coo/1" => {
                let (dtype, values) = self.typed_part(o, "values")?;
                let coords = self.index_part(o, "coords")?;
                let sparse = Sparse::coo_soa(&o.shape, &coords, &values, dtype, name)?;
                self.dense(&sparse, dtype, &o.shape)
            }
            other => Err(Error::format(
                Class::UnknownLayout,
                format!("object {name:?}: layout {other:?} has no dense form here; read its parts"),
            )),
        }
    }

    fn dense(&self, sparse: &Sparse, dtype: Dtype, dims: &[u64]) -> Result<Decoded<'a>> {
        self.options
            .limits
            .check_total_bytes(shape::byte_len(dtype, dims)?)?;
        let t: Tensor = sparse.to_dense()?;
        let byte_order = t.byte_order();
        Ok(Decoded {
            shape: t.shape().to_vec(),
            data: Cow::Owned(t.into_data()),
            dtype,
            byte_order,
        })
    }

    fn index_part(&self, o: &Object<'_>, role: &str) -> Result<Vec<u64>> {
        let (dtype, bytes) = self.typed_part(o, role)?;
        Ok(match dtype {
            Dtype::Uint64 => bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
                .collect(),
            Dtype::Uint32 => bytes
                .chunks_exact(4)
                .map(|c| u64::from(u32::from_le_bytes(c.try_into().unwrap_or_default())))
                .collect(),
            other => {
                return Err(malformed(format!(
                    "{}/{role}: index dtype {other} (u32 or u64 expected)",
                    o.name
                )));
            }
        })
    }
}
