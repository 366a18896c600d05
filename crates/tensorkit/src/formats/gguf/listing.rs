//! A remote GGUF file listed from its header: dense tensors fetched as stored, quantized ones
//! dequantized from their fetched blocks.

use super::blocks::quantized;
use super::errors::wrap;
use super::values::metadata;
use crate::adapter::listing::{Fetch, Listed, Listing, Opening, ReadIn};
use crate::error::Result;
use crate::format::Format;
use crate::model::{NamedTensor, TensorData};
use std::path::Path;
use tensor_core::ReadOptions;
use tensor_dtype::Dtype;
use tensor_gguf::{GgmlType, Gguf};

/// Lists a GGUF file whose header is held: dense tensors are read as stored, quantized ones
/// dequantized from their fetched blocks.
pub(super) fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<crate::adapter::Opening<'a>> {
    let file = Gguf::open_with(bytes, options).map_err(wrap(path))?;
    let (metadata, metadata_types) = metadata(&file);
    let order = file.header().byte_order;
    let tensors = file
        .tensors()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let dense = t.ggml_type.dense_dtype();
            Listed {
                name: Some(t.name.to_owned()),
                dtype: dense.unwrap_or(Dtype::Float32),
                shape: t.shape.clone(),
                encoding: dense.is_none().then(|| t.ggml_type.name().to_owned()),
                location: Vec::new(),
                attributes: Vec::new(),
                span: file.stored_range(i),
                fetch: match dense {
                    Some(_) => Fetch::Raw(t.ggml_type.stored_order(order)),
                    None => Fetch::Decode,
                },
            }
        })
        .collect();
    let listing = Listing {
        format: Format::GGUF,
        metadata: Some(metadata),
        metadata_types,
        tensors,
        not_read: Vec::new(),
    };
    let types = file
        .tensors()
        .iter()
        .map(|t| (t.name.to_owned(), t.ggml_type, t.shape.clone()))
        .collect();
    Ok(Opening::listed(listing, Types(types)))
}

/// A GGUF file's tensors: name, ggml type and shape, for dequantizing fetched blocks.
struct Types(Vec<(String, GgmlType, Vec<u64>)>);

impl ReadIn for Types {
    /// Tensor `i` of a remote file from its fetched blocks.
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        bytes: &'w [u8],
        _: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let (name, t, shape) = &self.0[i];
        Ok(NamedTensor {
            name: Some(name.clone()),
            data: TensorData::Encoded(quantized(path, name, *t, shape.clone(), bytes)),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        })
    }
}
