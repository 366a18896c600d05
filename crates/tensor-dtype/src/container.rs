//! [`TensorContainer`]: what the reader of every format crate offers, so that code written
//! once reads any of them.

#[cfg(doc)]
use crate::shape;
use crate::{Dtype, Result, TensorView};
use tensor_core::Kinded;

/// A file of tensors, opened in place over its bytes (`'a`): each tensor by position, its
/// name, dtype and shape known without reading its data.
///
/// Every format crate's reader implements it (safetensors, BinTensors, zTensor of every
/// generation, a Tensogram message). Format-specific readers keep their own richer
/// methods; this is the part they share.
pub trait TensorContainer<'a> {
    /// The reader's error, which maps to a [`tensor_core::ErrorKind`].
    type Error: Kinded + Send + Sync + 'static;

    /// How many tensors the file holds.
    fn len(&self) -> usize;

    /// Whether the file holds no tensor.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of tensor `i`; `None` for a format that allows unnamed tensors (a Tensogram
    /// object without a `name` in its metadata). `i` must be below [`len`](Self::len).
    fn name(&self, i: usize) -> Option<&str>;

    /// The position of the first tensor named `name`.
    fn position(&self, name: &str) -> Option<usize> {
        (0..self.len()).find(|&i| self.name(i) == Some(name))
    }

    /// The dtype of tensor `i` (an error for a dtype this build cannot represent).
    fn dtype(&self, i: usize) -> Result<Dtype, Self::Error>;

    /// The shape of tensor `i` (an error where the format keeps it in a part of the file
    /// that has not been read yet and does not parse).
    fn shape(&self, i: usize) -> Result<&[u64], Self::Error>;

    /// Tensor `i` viewed in place, zero-copy, when it is stored as plain elements
    /// (uncompressed, dense); `None` when it must be decoded.
    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>, Self::Error>;

    /// Decodes tensor `i` into `dst` — C order, the machine's byte order — which must be
    /// exactly its size ([`shape::byte_len`] of its dtype and shape). Checksums and hashes the format
    /// carries are verified as the reader's options say.
    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<(), Self::Error>;
}

/// Copies the elements of `view` into `dst` in C order and the machine's byte order: the
/// [`TensorContainer::read_into`] of formats whose tensors are views. `dst` must be exactly
/// the view's size.
pub fn copy_native(view: &TensorView<'_>, dst: &mut [u8]) -> Result<()> {
    view.copy_native_into(dst)
}
