//! Quantizing a set's weight matrices to a ggml type as GGUF is written (gguf-py's
//! quantization, byte for byte), and what a quantized tensor becomes in another format
//! ([`Dequantize`]).

use super::blocks::{RAW_BLOCKS_KEY, dequantize, float32_of_blocks, scheme};
use super::errors::FORMAT;
use crate::error::{Error, Result};
use crate::model::{BlockBytes, Blocks, Lazy, NamedTensor, TensorData, TensorSet};
use serde_json::{Map, Value as Json};
use std::path::Path;
use std::sync::Arc;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::{Dtype, Tensor};
use tensor_gguf::GgmlType;

/// `set` with its weight matrices quantized to `ggml_type` when written as GGUF, as
/// llama.cpp's converters choose them: floating-point tensors of two dimensions or more whose
/// rows are whole blocks. The others — vectors (norms, biases), integers, tensors already
/// quantized, rows that are not whole blocks — are kept as they are, and said so (one note).
/// Quantization is gguf-py's, byte for byte (ggml's reference for `Q4_K` and `Q6_K`); it runs
/// as each tensor is written.
pub(crate) fn quantize<'a>(
    set: &TensorSet<'a>,
    ggml_type: GgmlType,
) -> Result<(TensorSet<'a>, Vec<String>)> {
    if !tensor_gguf::quant::can_quantize(ggml_type) {
        return Err(Error::UnknownTarget {
            what: format!(
                "quantizing to {ggml_type}: tensorkit makes Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (as gguf-py does), Q4_K and Q6_K (as ggml's reference does)"
            ),
        });
    }
    let mut out = set.clone();
    let mut kept = Vec::new();
    let names = set.names();
    for (t, name) in out.tensors.iter_mut().zip(names) {
        let float = matches!(
            t.dtype(),
            Dtype::Float32 | Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float64
        );
        let rows_fit = t
            .shape()
            .last()
            .is_some_and(|r| r % ggml_type.block_elements() == 0);
        if !float || t.shape().len() < 2 || !rows_fit || t.blocks().is_some() {
            kept.push(name);
            continue;
        }
        t.data = TensorData::Encoded(quantized_lazy(t.clone(), ggml_type));
    }
    let mut notes = Vec::new();
    if !kept.is_empty() {
        let shown: Vec<&str> = kept.iter().take(5).map(String::as_str).collect();
        notes.push(format!(
            "the {ggml_type} quantization of {} tensors, kept as they are (vectors, integers, tensors already quantized, rows that are not whole blocks): {}{}",
            kept.len(),
            shown.join(", "),
            if kept.len() > shown.len() { ", …" } else { "" }
        ));
    }
    Ok((out, notes))
}

/// `source` quantized to `t` when its blocks are asked for; read, the values it will hold.
fn quantized_lazy(source: NamedTensor<'_>, t: GgmlType) -> Lazy<'_> {
    let shape = source.shape().to_vec();
    let elements: u64 = shape.iter().product();
    let source = Arc::new(source);
    let blocks = {
        let source = Arc::clone(&source);
        move |limits: &Limits| -> Result<Vec<u8>> {
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            limits.check_total_bytes(elements.saturating_mul(4))?;
            let dense =
                GgmlType::for_dtype(source.dtype()).ok_or_else(|| Error::CannotRepresent {
                    format: FORMAT,
                    what: format!("dtype {} as values to quantize", source.dtype()),
                })?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "values to quantize")?;
            let le = source.le_bytes(limits)?;
            let fail = |what: String| {
                Error::format(Path::new(""), FORMAT, tensor_gguf::Error::CannotWrite(what))
            };
            tensor_gguf::dequant::to_f32(dense, &le, ByteOrder::Little, &mut values)
                .map_err(fail)?;
            let len = t.bytes_for(elements).unwrap_or_default();
            let mut out = tensor_core::buffer::try_filled(
                tensor_core::checked::to_usize(len, "quantized size")?,
                0u8,
                "quantized blocks",
            )?;
            tensor_gguf::quant::quantize(t, &values, &mut out).map_err(fail)?;
            Ok(out)
        }
    };
    let blocks: Arc<crate::model::QuantizeFn<'_>> = Arc::new(blocks);
    let values = {
        let blocks = Arc::clone(&blocks);
        move |limits: &Limits| -> Result<Vec<f32>> {
            let b = blocks(limits)?;
            let n = tensor_core::checked::to_usize(elements, "element count")?;
            let mut values = tensor_core::buffer::try_filled(n, 0f32, "dequantized tensor")?;
            dequantize(t, &b, &mut values).map_err(|what| {
                Error::format(
                    Path::new(""),
                    FORMAT,
                    tensor_gguf::Error::CannotDecode {
                        name: String::new(),
                        what,
                    },
                )
            })?;
            Ok(values)
        }
    };
    let values = Arc::new(values);
    let decode = {
        let (values, shape) = (Arc::clone(&values), shape.clone());
        move |limits: &Limits| -> Result<Tensor> {
            Ok(Tensor::from_elements(&shape, &values(limits)?)?)
        }
    };
    let decode_into = {
        let values = Arc::clone(&values);
        move |limits: &Limits, out: &mut [u8]| -> Result<()> {
            let v = values(limits)?;
            if out.len() != v.len() * 4 {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "the tensor holds {} bytes; the buffer has {}",
                    v.len() * 4,
                    out.len()
                ))
                .into());
            }
            out.copy_from_slice(bytemuck::cast_slice(&v));
            Ok(())
        }
    };
    let stream = move |limits: &Limits,
                       chunk: usize,
                       sink: &mut dyn FnMut(&[u8]) -> Result<()>|
          -> Result<()> {
        let v = values(limits)?;
        let le: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        le.chunks((chunk / 4).max(1) * 4).try_for_each(sink)
    };
    float32_of_blocks(
        Blocks {
            scheme: scheme(t),
            bytes: BlockBytes::Quantized(blocks),
        },
        shape,
        Arc::new(stream),
        Arc::new(decode),
        Arc::new(decode_into),
    )
}

/// What a quantized GGUF tensor becomes when written to another format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequantize {
    /// float32, gguf-py's values (the default).
    Float32,
    /// float16: the float32 values rounded to nearest, ties to even.
    Float16,
    /// bfloat16: the float32 values rounded to nearest, ties to even.
    Bfloat16,
    /// Its blocks as stored, `uint8` shaped `[..., bytes per row]`, the ggml type and element
    /// shape recorded in the file metadata under `gguf.raw_blocks` (converted back to GGUF,
    /// they are those blocks again).
    Raw,
}

impl Dequantize {
    /// The choice called `name` (`float32`, `float16`, `bfloat16`, `raw`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "float32" => Dequantize::Float32,
            "float16" => Dequantize::Float16,
            "bfloat16" => Dequantize::Bfloat16,
            "raw" => Dequantize::Raw,
            _ => return None,
        })
    }
}

/// `set` with its quantized tensors as `how` says; the others as they are.
pub(crate) fn dequantize_as<'a>(set: &TensorSet<'a>, how: Dequantize) -> Result<TensorSet<'a>> {
    let mut out = set.clone();
    let mut recorded = Map::new();
    for (t, name) in out.tensors.iter_mut().zip(set.names()) {
        let Some((blocks, byte_shape)) = t.blocks() else {
            continue;
        };
        let lazy = match &t.data {
            TensorData::Encoded(l) => l.clone(),
            _ => continue,
        };
        match how {
            Dequantize::Float32 => {}
            Dequantize::Float16 | Dequantize::Bfloat16 => {
                let dtype = if how == Dequantize::Float16 {
                    Dtype::Float16
                } else {
                    Dtype::Bfloat16
                };
                t.data = TensorData::Encoded(narrowed(&lazy, dtype));
            }
            Dequantize::Raw => {
                let Some(bytes) = blocks.stored() else {
                    continue;
                };
                recorded.insert(
                    name.clone(),
                    serde_json::json!({"type": blocks.scheme.name, "shape": t.shape()}),
                );
                let view = tensor_dtype::TensorView::new(
                    bytes,
                    Dtype::Uint8,
                    &byte_shape,
                    ByteOrder::Little,
                )?;
                t.data = TensorData::View(view);
            }
        }
    }
    if !recorded.is_empty() {
        out.metadata
            .get_or_insert_with(Map::new)
            .insert(RAW_BLOCKS_KEY.to_owned(), Json::Object(recorded));
        out.metadata_types
            .insert(RAW_BLOCKS_KEY.to_owned(), "JSON".to_owned());
    }
    Ok(out)
}

/// `lazy`'s float32 values rounded to `dtype` (float16 or bfloat16).
fn narrowed<'a>(lazy: &Lazy<'a>, dtype: Dtype) -> Lazy<'a> {
    let to_bits = move |v: f32| -> [u8; 2] {
        if dtype == Dtype::Float16 {
            half::f16::from_f32(v).to_le_bytes()
        } else {
            half::bf16::from_f32(v).to_le_bytes()
        }
    };
    let source = lazy.clone();
    let stream = move |limits: &Limits,
                       chunk: usize,
                       sink: &mut dyn FnMut(&[u8]) -> Result<()>|
          -> Result<()> {
        let mut narrow = Vec::new();
        (source.stream)(limits, chunk.saturating_mul(2), &mut |run: &[u8]| {
            narrow.clear();
            narrow.extend(
                run.chunks_exact(4)
                    .flat_map(|b| to_bits(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            );
            sink(&narrow)
        })
    };
    let source = lazy.clone();
    let decode = move |limits: &Limits| -> Result<Tensor> {
        let wide = (source.decode)(limits)?;
        let bytes: Vec<u8> = wide
            .view()
            .to_le_bytes()
            .chunks_exact(4)
            .flat_map(|b| to_bits(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
            .collect();
        Ok(Tensor::new(bytes, dtype, &source.shape, ByteOrder::Little)?)
    };
    Lazy {
        encoding: format!("{} as {}", lazy.encoding, dtype.name()),
        dtype,
        shape: lazy.shape.clone(),
        stream: Arc::new(stream),
        decode: Arc::new(decode),
        packed: None,
        decode_into: None,
        blocks: None,
    }
}
