//! [`TensorRef`]: one tensor of an open [`File`](super::File) — its name, dtype and shape,
//! and its elements three ways (a view, an owned tensor, a caller's buffer).

use crate::error::{Error, Result};
use crate::model::{NamedTensor, TensorData, TensorSet};
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, Tensor, TensorView};

/// One tensor of an open [`File`](crate::File).
#[derive(Clone, Copy)]
pub struct TensorRef<'f> {
    pub(crate) tensor: &'f NamedTensor<'f>,
    pub(crate) index: usize,
    pub(crate) set: &'f TensorSet<'f>,
}

impl std::fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorRef")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

impl<'f> TensorRef<'f> {
    /// The name (`tensor_<i>` for a tensor the file does not name).
    #[must_use]
    pub fn name(&self) -> std::borrow::Cow<'f, str> {
        match &self.tensor.name {
            Some(n) => std::borrow::Cow::Borrowed(n.as_str()),
            None => std::borrow::Cow::Owned(format!("tensor_{}", self.index)),
        }
    }

    /// The element type.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        self.tensor.dtype()
    }

    /// The dimensions.
    #[must_use]
    pub fn shape(&self) -> &'f [u64] {
        self.tensor.shape()
    }

    /// Per-tensor attributes (zTensor object attributes, Tensogram `base` entries).
    #[must_use]
    pub fn attributes(&self) -> &'f [(String, tensor_core::cbor::Value)] {
        &self.tensor.attributes
    }

    /// How the elements are stored when they need decoding (`simple_packing+szip`, `zstd`,
    /// `sparse_csr`...); `None` when they are stored as they are.
    #[must_use]
    pub fn encoding(&self) -> Option<&'f str> {
        match &self.tensor.data {
            TensorData::Encoded(l) => Some(&l.encoding),
            TensorData::View(_) | TensorData::Owned(_) => None,
        }
    }

    /// A quantized tensor's blocks as its file stores them (GGUF): their type, the bytes,
    /// and the shape of those bytes (its element shape with the last dimension in bytes:
    /// `[4, 1024]` of `Q4_K` is `[4, 576]`); `None` for every other tensor.
    #[must_use]
    pub fn blocks(&self) -> Option<(crate::BlockScheme, &'f [u8], Vec<u64>)> {
        let (blocks, shape) = self.tensor.blocks()?;
        Some((blocks.scheme, blocks.stored()?, shape))
    }

    /// The name as the file stores it; `None` for a tensor the file does not name (a
    /// Tensogram object without a `name`), which [`name`](Self::name) calls `tensor_<i>`.
    #[must_use]
    pub fn stored_name(&self) -> Option<&'f str> {
        self.tensor.name.as_deref()
    }

    /// Hands the little-endian, C-order elements to `sink` in runs of at most
    /// [`RUN_BYTES`](crate::RUN_BYTES) (whole elements), decoding as it goes: memory stays
    /// bounded whatever the tensor's size, for hashing, comparing and copying. Checked
    /// first ([`verify`](Self::verify)).
    pub fn stream(&self, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        self.tensor.stream(&self.set.limits, sink)
    }

    /// Writes the elements as every format stores them — little-endian, bool bytes as 0 or
    /// 1 — streamed in bounded runs ([`stream`](Self::stream)); exactly
    /// [`byte_len`](Self::byte_len) bytes, or it is an error.
    pub fn write_canonical(&self, out: &mut dyn std::io::Write) -> Result<()> {
        self.tensor.write_canonical(&self.set.limits, out)
    }

    /// Where the tensor sits in formats with nested structure (Tensogram: `message`,
    /// `object`; shard sets: `shard`).
    #[must_use]
    pub fn location(&self) -> &'f [(&'static str, u64)] {
        &self.tensor.location
    }

    /// Bytes the elements occupy.
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        self.tensor.byte_len()
    }

    /// A zero-copy view of the stored elements, when the file stores them as they are
    /// (raw, in any byte order); an error saying how they are stored otherwise.
    pub fn view(&self) -> Result<TensorView<'f>> {
        match &self.tensor.data {
            TensorData::View(v) => Ok(v.clone()),
            TensorData::Owned(t) => Ok(t.view()),
            TensorData::Encoded(_) => Err(Error::NotAView {
                tensor: self.name().into_owned(),
                why: "encoded (compressed or packed)".into(),
            }),
        }
    }

    /// Checks the tensor against the checksum or digest its file keeps for it (zTensor),
    /// when the file was opened to verify (the default). Copying the elements out
    /// ([`to_tensor`](Self::to_tensor), [`read_into`](Self::read_into)) checks them too,
    /// on another core while it copies when the tensor is large, and fails if they are
    /// damaged; a zero-copy [`view`](Self::view) does not, so that it costs nothing however
    /// large the tensor: call this to check what a view shows.
    pub fn verify(&self) -> Result<()> {
        self.tensor.verify()
    }

    /// The elements as they are held (in the file, or decoded already), when they are the
    /// elements as the machine holds them — raw, C order, native byte order, whole bytes per
    /// element: what copies go straight from and what zero-copy arrays show. Like a
    /// [`view`](Self::view), unchecked ([`verify`](Self::verify)).
    #[must_use]
    pub fn native_bytes(&self) -> Option<&'f [u8]> {
        let v = self.view().ok()?;
        if self.dtype().is_packed()
            || !v.byte_order().is_native()
            || v.contiguous_order() != Some(tensor_dtype::Order::C)
        {
            return None;
        }
        v.contiguous_bytes()
    }

    /// Where the stored elements lie in a local file the tensor was mapped from, when they
    /// are held there as the machine holds them ([`native_bytes`](Self::native_bytes)) or,
    /// for packed dtypes, packed in C order: the file's number (for
    /// [`File::read_stored`](crate::File::read_stored) and [`File::private_map`](crate::File::private_map)) and the offset of the first byte.
    /// `None` for encoded tensors, foreign byte orders and files not mapped (remote, in
    /// memory, migrated).
    #[must_use]
    pub fn stored_at(&self) -> Option<(usize, u64)> {
        let bytes = match self.native_bytes() {
            Some(bytes) => bytes,
            None if self.dtype().is_packed() => {
                let v = self.view().ok()?;
                if v.contiguous_order() != Some(tensor_dtype::Order::C) {
                    return None;
                }
                v.contiguous_bytes()?
            }
            None => return None,
        };
        self.set
            .mapped
            .iter()
            .enumerate()
            .find_map(|(i, m)| Some((i, m.locate(bytes)?.1)))
    }

    /// Runs `copy` (of `bytes`, the tensor's stored elements) while the tensor is checked
    /// against its checksum or digest ([`verify`](Self::verify)) on another core, when it
    /// has one and is large enough to share (see [`tensor_core::tee::beside`]): the two
    /// passes over the bytes then take the time of the slower. A failed check is the error,
    /// whatever the copy made.
    fn checked_while<T>(&self, bytes: &[u8], copy: impl FnOnce() -> Result<T>) -> Result<T> {
        if self.tensor.check.is_none() || bytes.len() < tensor_core::tee::BESIDE_FROM {
            self.tensor.verify()?;
            return copy();
        }
        let mut checked = Ok(());
        let copied = tensor_core::tee::beside(copy, || checked = self.tensor.verify());
        checked?;
        copied
    }

    /// The elements decoded into a new tensor, in the machine's byte order. Large tensors
    /// land on huge pages, copied on every core (feature `parallel`).
    pub fn to_tensor(&self) -> Result<Tensor> {
        if let Some(bytes) = self.native_bytes() {
            let data = self.checked_while(bytes, || {
                Ok(tensor_core::buffer::try_copied(bytes, "a tensor")?)
            })?;
            return Ok(Tensor::new(
                data,
                self.dtype(),
                self.shape(),
                ByteOrder::NATIVE,
            )?);
        }
        let t = match self.tensor.load(&self.set.limits)? {
            crate::model::Loaded::View(v) => v.to_tensor(),
            crate::model::Loaded::Owned(t) => t,
        };
        Ok(if t.byte_order().is_native() {
            t
        } else {
            t.view().to_tensor()
        })
    }

    /// Decodes the elements into `out`, which must be exactly [`byte_len`](Self::byte_len)
    /// bytes: C order, the machine's byte order. Memory stays within one run of decoding
    /// beyond `out`.
    pub fn read_into(&self, out: &mut [u8]) -> Result<()> {
        let want = self.byte_len();
        if out.len() as u64 != want {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?} needs a buffer of {want} bytes, not {}",
                self.name(),
                out.len()
            ))
            .into());
        }
        if let TensorData::Encoded(crate::model::Lazy {
            decode_into: Some(decode),
            ..
        }) = &self.tensor.data
        {
            self.tensor.verify()?;
            return decode(&self.set.limits, out);
        }
        if let Some(bytes) = self.native_bytes() {
            self.checked_while(bytes, || {
                tensor_core::buffer::copy(out, bytes);
                Ok(())
            })?;
            return Ok(());
        }
        // A view in the other byte order or strided (NetCDF's big-endian records): each
        // contiguous run converted straight into `out`.
        if let TensorData::View(v) = &self.tensor.data
            && !v.dtype().is_packed()
        {
            self.tensor.verify()?;
            return Ok(v.copy_native_into(out)?);
        }
        let what = format!("tensor {:?}", self.name());
        let mut fill = tensor_core::buffer::Filler::new(out, &what);
        self.tensor
            .stream(&self.set.limits, &mut |c| Ok(fill.put(c)?))?;
        fill.finish()?;
        if !ByteOrder::Little.is_native() {
            tensor_core::byte_order::swap_in_place(out, self.dtype().swap_width())?;
        }
        Ok(())
    }
}

impl<'a> TensorSet<'a> {
    /// Adds `tensor` (of an open file) under `name`, at the end, without its place in its
    /// file ([`TensorRef::location`](crate::TensorRef::location)). Nothing is read: when
    /// saved, its bytes are copied from its file as from the file's own set.
    pub fn push(&mut self, tensor: TensorRef<'a>, name: impl Into<String>) {
        self.push_named(tensor, Some(name.into()));
    }

    /// Adds `tensor` under the name it has (an unnamed one, such as a Tensogram object
    /// without a `name`, stays unnamed), at the end.
    pub fn push_as_is(&mut self, tensor: TensorRef<'a>) {
        let name = tensor.tensor.name.clone();
        self.push_named(tensor, name);
    }

    fn push_named(&mut self, tensor: TensorRef<'a>, name: Option<String>) {
        let mut t = tensor.tensor.clone();
        t.name = name;
        t.location.clear();
        self.tensors.push(t);
        for m in &tensor.set.mapped {
            if !self.mapped.iter().any(|have| std::ptr::eq(*have, *m)) {
                self.mapped.push(m);
            }
        }
    }

    /// Its tensors, in order.
    #[must_use]
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = TensorRef<'_>> {
        self.tensors
            .iter()
            .enumerate()
            .map(move |(index, tensor)| TensorRef {
                tensor,
                index,
                set: self,
            })
    }
}
