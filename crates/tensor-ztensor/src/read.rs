//! What every zTensor generation's reader shares: a checksum's status and a tensor's
//! decoded elements.

use crate::error::Result;
use std::borrow::Cow;
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, Tensor, TensorView};

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
