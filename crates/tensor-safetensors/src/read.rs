//! Reading: the framing checked first (so errors say where), then the header
//! ([`crate::header`]).

use crate::error::{Error, Result};
use std::collections::BTreeMap;
use tensor_core::{ByteOrder, ErrorKind, Limits, ReadOptions};
use tensor_dtype::TensorView;

/// Checks the framing ourselves first, so that errors can say where the file went wrong;
/// the crate's own errors carry no offsets.
pub(crate) fn check_framing(bytes: &[u8], limits: &Limits) -> Result<u64> {
    let len = bytes.len() as u64;
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(Error::format(
            ErrorKind::Truncated,
            format!("the file is {len} bytes long, shorter than the 8-byte header length"),
        ));
    };
    let n = u64::from_le_bytes(*prefix);
    limits.check_header_bytes(n).map_err(|e| {
        Error::format(
            ErrorKind::LimitExceeded,
            format!("header length at offset 0: {e}"),
        )
    })?;
    if n > len - 8 {
        return Err(Error::format(
            ErrorKind::Truncated,
            format!(
                "the header length at offset 0 says {n} bytes of JSON follow, but only {} bytes remain",
                len - 8
            ),
        ));
    }
    Ok(n)
}

/// One tensor of a safetensors file, borrowed from the file's bytes.
#[derive(Clone, Debug)]
pub struct Tensor<'a> {
    /// The name.
    pub name: String,
    /// The elements: little-endian, C order.
    pub view: TensorView<'a>,
}

/// A safetensors file, read: its tensors in stored order (by data offset) and its
/// `__metadata__`, keys sorted.
#[derive(Clone, Debug)]
pub struct SafeTensors<'a> {
    /// The tensors, borrowing the bytes they were read from.
    pub tensors: Vec<Tensor<'a>>,
    /// `__metadata__`, when the header has one.
    pub metadata: Option<BTreeMap<String, String>>,
}

impl<'a> SafeTensors<'a> {
    /// Reads a whole file from `bytes` with default limits.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Reads a whole file from `bytes`: the framing first, then the header in one pass
    /// (refusing what the reference refuses, and names the header repeats), then a view of
    /// each tensor.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let limits = &options.limits;
        let n = check_framing(bytes, limits)?;
        let header = crate::header::parse(bytes, n)?;
        limits.check_tensor_count(header.entries.len() as u64)?;
        let data_start = 8 + n as usize;
        let mut tensors = Vec::with_capacity(header.entries.len());
        for e in header.entries {
            let dtype = crate::dtype::from_reference(e.dtype).ok_or_else(|| {
                Error::format(
                    ErrorKind::Unsupported,
                    format!(
                        "tensor {:?} has dtype {:?}, which tensorkit does not support",
                        e.name, e.dtype
                    ),
                )
            })?;
            // header::parse checked that the offsets tile the data section.
            let (begin, end) = e.offsets;
            let data = &bytes[data_start + begin..data_start + end];
            let shape: Vec<u64> = e.shape.iter().map(|&d| d as u64).collect();
            let view = TensorView::new(data, dtype, &shape, ByteOrder::Little)?;
            tensors.push(Tensor { name: e.name, view });
        }
        Ok(SafeTensors {
            tensors,
            metadata: header.metadata,
        })
    }

    /// The tensor called `name`.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&Tensor<'a>> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for SafeTensors<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.tensors.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.tensors[i].name)
    }

    fn dtype(&self, i: usize) -> Result<tensor_dtype::Dtype> {
        Ok(self.tensors[i].view.dtype())
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(self.tensors[i].view.shape())
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        Ok(Some(self.tensors[i].view.clone()))
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        Ok(tensor_dtype::container::copy_native(
            &self.tensors[i].view,
            dst,
        )?)
    }
}
