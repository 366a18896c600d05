//! What every zTensor generation's reader shares: the options, the verification policy and
//! a tensor's decoded elements.

use crate::error::Result;
use std::borrow::Cow;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::{Dtype, Tensor, TensorView};

/// When checksums are verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verify {
    /// Each tensor's checksum when the tensor is read (the reference's behaviour).
    #[default]
    OnRead,
    /// Every checksum when the file is opened (strict).
    OnOpen,
    /// Never.
    Never,
}

/// How to open a file.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Resource limits: the index size and tensor count, and the size of decoded zstd data.
    pub limits: Limits,
    /// When to verify checksums.
    pub verify: Verify,
    /// Refuse what the reference tolerates but no conforming writer produces (a non-zero
    /// reserved field in the zTensor 2 footer); otherwise such things are warnings
    /// ([`Container::warnings`](crate::Container::warnings)).
    pub strict: bool,
}

impl ReadOptions {
    /// These options with another verification policy.
    #[must_use]
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }

    /// These options in strict mode (or not).
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// These options with other limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// What checking a tensor's checksum found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChecksumStatus {
    /// The checksum matched.
    Verified,
    /// The tensor has none.
    Absent,
    /// The algorithm is unknown, so nothing was checked (the reference warns and reads on).
    UnknownAlgorithm(String),
}

/// A tensor's elements: borrowed from the file where they are stored as they are, decoded
/// into a new buffer otherwise.
#[derive(Clone, Debug)]
pub struct Decoded<'a> {
    /// The element bytes, C order.
    pub data: Cow<'a, [u8]>,
    /// The dtype.
    pub dtype: Dtype,
    /// The dimensions.
    pub shape: Vec<u64>,
    /// The byte order of `data`.
    pub byte_order: ByteOrder,
}

impl Decoded<'_> {
    /// A view of the elements.
    pub fn view(&self) -> Result<TensorView<'_>> {
        Ok(TensorView::new(
            &self.data,
            self.dtype,
            &self.shape,
            self.byte_order,
        )?)
    }

    /// The elements as an owned tensor in the machine's byte order.
    pub fn into_tensor(self) -> Result<Tensor> {
        Ok(Tensor::new(
            self.data.into_owned(),
            self.dtype,
            &self.shape,
            self.byte_order,
        )?
        .into_byte_order(ByteOrder::NATIVE))
    }
}
