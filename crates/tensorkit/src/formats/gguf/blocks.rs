//! What every part of the GGUF adapter shares: the format's id and errors, ggml's block
//! types as the format-neutral model holds them ([`BlockScheme`](crate::model::BlockScheme)),
//! quantized tensors decoded from their blocks, and the record of blocks another format
//! holds as bytes ([`RAW_BLOCKS_KEY`]).

use super::errors::FORMAT;
use crate::error::{Error, Result};
use crate::model::{BlockBytes, BlockScheme, Blocks, Lazy, TensorSet};
use serde_json::Value as Json;
use std::path::Path;
use std::sync::Arc;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::{Dtype, Tensor};
use tensor_gguf::GgmlType;

/// The format-neutral handle of a ggml type.
pub(super) fn scheme(t: GgmlType) -> BlockScheme {
    BlockScheme {
        name: t.name(),
        block_elements: t.block_elements(),
        block_bytes: t.block_bytes(),
    }
}

/// The ggml type of blocks a set holds, which only GGUF makes.
pub(super) fn ggml_type_of(scheme: BlockScheme) -> Result<GgmlType> {
    GgmlType::from_name(scheme.name).ok_or_else(|| Error::CannotRepresent {
        format: FORMAT,
        what: format!("blocks of type {} (not a ggml type)", scheme.name),
    })
}

/// A quantized tensor of `ggml_type` and element shape `shape` stored as `blocks`, decoded to
/// float32 on demand.
pub(super) fn quantized<'a>(
    path: &Path,
    name: &str,
    ggml_type: GgmlType,
    shape: Vec<u64>,
    blocks: &'a [u8],
) -> Lazy<'a> {
    let elements: u64 = shape.iter().product();
    let (path, name) = (path.to_path_buf(), name.to_owned());
    let named = move |what: String| {
        Error::format(
            &path,
            FORMAT,
            tensor_gguf::Error::CannotDecode {
                name: name.clone(),
                what,
            },
        )
    };
    let decode_into = {
        let named = named.clone();
        move |limits: &Limits, out: &mut [u8]| -> Result<()> {
            limits.check_total_bytes(elements.saturating_mul(4))?;
            if out.len() as u64 != elements.saturating_mul(4) {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "the tensor dequantizes to {} bytes; the buffer has {}",
                    elements.saturating_mul(4),
                    out.len()
                ))
                .into());
            }
            tensor_gguf::dequant::to_f32_bytes(ggml_type, blocks, ByteOrder::Little, out)
                .map_err(&named)
        }
    };
    let decode = {
        let (named, shape) = (named.clone(), shape.clone());
        move |limits: &Limits| -> Result<Tensor> {
            limits.check_total_bytes(elements.saturating_mul(4))?;
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "dequantized tensor")?;
            dequantize(ggml_type, blocks, &mut values).map_err(&named)?;
            Ok(Tensor::from_elements(&shape, &values)?)
        }
    };
    // Runs of whole blocks, so that memory stays bounded whatever the tensor's size.
    let stream =
        move |_: &Limits, chunk: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>| -> Result<()> {
            let block_elements = ggml_type.block_elements() as usize;
            let block_bytes = ggml_type.block_bytes() as usize;
            let blocks_per_run = (chunk / (block_elements * 4)).max(1);
            let mut values = vec![0f32; blocks_per_run * block_elements];
            let mut le = Vec::with_capacity(values.len() * 4);
            for run in blocks.chunks(blocks_per_run * block_bytes) {
                let n = run.len() / block_bytes * block_elements;
                dequantize(ggml_type, run, &mut values[..n]).map_err(&named)?;
                le.clear();
                le.extend(values[..n].iter().flat_map(|v| v.to_le_bytes()));
                sink(&le)?;
            }
            Ok(())
        };
    float32_of_blocks(
        Blocks {
            scheme: scheme(ggml_type),
            bytes: BlockBytes::Stored(blocks),
        },
        shape,
        Arc::new(stream),
        Arc::new(decode),
        Arc::new(decode_into),
    )
}

/// A quantized tensor of `shape` read as float32 through the given decoders, with its blocks.
pub(super) fn float32_of_blocks<'a>(
    blocks: Blocks<'a>,
    shape: Vec<u64>,
    stream: Arc<crate::model::StreamFn<'a>>,
    decode: Arc<crate::model::DecodeFn<'a>>,
    decode_into: Arc<crate::model::DecodeIntoFn<'a>>,
) -> Lazy<'a> {
    Lazy {
        encoding: blocks.scheme.name.to_owned(),
        dtype: Dtype::Float32,
        shape,
        stream,
        decode,
        packed: None,
        decode_into: Some(decode_into),
        blocks: Some(blocks),
    }
}

pub(super) fn dequantize(
    t: GgmlType,
    blocks: &[u8],
    dst: &mut [f32],
) -> std::result::Result<(), String> {
    tensor_gguf::dequant::to_f32(t, blocks, ByteOrder::Little, dst)
}

/// The file-metadata key under which [`Dequantize::Raw`] records each tensor's ggml type and
/// element shape (`{"name": {"type": "Q4_K", "shape": [4, 1024]}}`; its JSON text where
/// metadata holds only strings), so that writing the set as GGUF again stores those
/// tensors as the quantized blocks they are.
pub(crate) const RAW_BLOCKS_KEY: &str = "gguf.raw_blocks";

/// The tensors of `set` that [`Dequantize::Raw`] wrote as `uint8` blocks, by name: their
/// ggml type and element shape, from [`RAW_BLOCKS_KEY`] (an object, or its JSON text).
pub(super) fn raw_blocks(
    set: &TensorSet<'_>,
) -> std::collections::HashMap<String, (GgmlType, Vec<u64>)> {
    let Some(v) = set.metadata.as_ref().and_then(|m| m.get(RAW_BLOCKS_KEY)) else {
        return std::collections::HashMap::new();
    };
    let parsed;
    let object = match v {
        Json::Object(o) => o,
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(Json::Object(o)) => {
                parsed = o;
                &parsed
            }
            _ => return std::collections::HashMap::new(),
        },
        _ => return std::collections::HashMap::new(),
    };
    object
        .iter()
        .filter_map(|(name, e)| {
            let t = GgmlType::from_name(e.get("type")?.as_str()?)?;
            let shape = e
                .get("shape")?
                .as_array()?
                .iter()
                .map(Json::as_u64)
                .collect::<Option<Vec<u64>>>()?;
            Some((name.clone(), (t, shape)))
        })
        .collect()
}
