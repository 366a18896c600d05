//! A tensor whose stored form is decoded a range of its outermost rows at a time (HDF5's
//! chunked and filtered datasets, NetCDF-4's variables): decoded whole when asked, straight
//! into a caller's buffer where one is given, and streamed a window of whole chunk rows at a
//! time, so that memory holds a window, never the tensor.

use super::{DecodeFn, DecodeIntoFn, Lazy, NamedTensor, TensorData};
use crate::error::Result;
use std::ops::Range;
use std::sync::Arc;
use tensor_core::Limits;
use tensor_dtype::Dtype;

/// Reads rows of the outermost dimension into a buffer of exactly their size, in the
/// machine's byte order.
pub(crate) type ReadRowsFn<'a> = dyn Fn(Range<u64>, &mut [u8]) -> Result<()> + Send + Sync + 'a;

/// What a tensor decoded by rows is.
pub(crate) struct ByRows<'a> {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    /// How it is stored, for people (`chunked 1x721x1440 shuffle+deflate`).
    pub encoding: String,
    /// The rows one chunk holds: a window is a whole number of them.
    pub chunk_rows: u64,
    pub read_rows: Arc<ReadRowsFn<'a>>,
}

/// The most bytes a streamed window holds (at least one chunk row).
const WINDOW: u64 = 16 << 20;

/// `r` as a tensor decoded when read.
pub(crate) fn decoded_in_rows(r: ByRows<'_>) -> Result<NamedTensor<'_>> {
    let ByRows {
        name,
        dtype,
        shape,
        encoding,
        chunk_rows,
        read_rows,
    } = r;
    let bytes = tensor_dtype::shape::byte_len(dtype, &shape)?;
    let rows = shape.first().copied().unwrap_or(1);
    let decode_into = {
        let read = read_rows.clone();
        move |limits: &Limits, out: &mut [u8]| -> Result<()> {
            limits.check_total_bytes(out.len() as u64)?;
            read(0..rows, out)
        }
    };
    let decode_into: Arc<DecodeIntoFn<'_>> = Arc::new(decode_into);
    let decode = {
        let (into, shape) = (decode_into.clone(), shape.clone());
        move |limits: &Limits| -> Result<tensor_dtype::Tensor> {
            limits.check_total_bytes(bytes)?;
            let len = tensor_core::checked::to_usize(bytes, "a tensor decoded by rows")?;
            let mut data = tensor_core::buffer::try_filled(len, 0u8, "a tensor decoded by rows")?;
            into(limits, &mut data)?;
            Ok(tensor_dtype::Tensor::new(
                data,
                dtype,
                &shape,
                tensor_core::ByteOrder::NATIVE,
            )?)
        }
    };
    let decode: Arc<DecodeFn<'_>> = Arc::new(decode);
    let stream = {
        let shape = shape.clone();
        move |limits: &Limits,
              run: usize,
              sink: &mut dyn FnMut(&[u8]) -> Result<()>|
              -> Result<()> {
            let width = dtype.byte_width().max(1);
            let row = if shape.is_empty() || rows == 0 {
                bytes
            } else {
                bytes / rows
            };
            let per = (WINDOW / row.max(1) / chunk_rows.max(1)).max(1) * chunk_rows.max(1);
            let mut buffer = Vec::new();
            let mut start = 0;
            while start < rows.max(u64::from(shape.is_empty())) {
                let end = (start + per).min(rows.max(1));
                let len = tensor_core::checked::to_usize((end - start) * row, "a window of rows")?;
                limits.check_total_bytes(len as u64)?;
                buffer.clear();
                buffer.resize(len, 0);
                read_rows(start..end, &mut buffer)?;
                if !tensor_core::ByteOrder::Little.is_native() {
                    tensor_core::byte_order::swap_in_place(&mut buffer, width)?;
                }
                buffer
                    .chunks((run / width).max(1) * width)
                    .try_for_each(&mut *sink)?;
                start = end;
            }
            Ok(())
        }
    };
    Ok(NamedTensor {
        name: Some(name),
        data: TensorData::Encoded(Lazy {
            encoding,
            dtype,
            shape,
            stream: Arc::new(stream),
            decode,
            packed: None,
            decode_into: Some(decode_into),
            blocks: None,
        }),
        location: Vec::new(),
        attributes: Vec::new(),
        check: None,
    })
}
