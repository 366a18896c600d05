//! ONNX models' weights: the initializers of a `ModelProto`'s graph (`TensorProto`s),
//! read with every length checked — `raw_data` viewed where it lies, typed fields
//! (`float_data`, `int32_data`, …) decoded, external data located in files beside the model
//! (never outside its folder) — and the model's `metadata_props`. The graph itself (nodes,
//! inputs, outputs) is skipped unparsed. See `docs/formats/onnx.md`.
#![forbid(unsafe_code)]

mod error;
pub mod model;
pub mod wire;

pub use error::{Error, Result};
pub use model::{Data, Initializer, Model, external_path, open};

/// ONNX models, as the format contract describes them: read only.
#[derive(Clone, Copy, Debug)]
pub struct OnnxFormat;

impl OnnxFormat {
    /// The format's description.
    pub const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "onnx",
        name: "ONNX model",
        extensions: &["onnx"],
        writes: false,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: false,
        any_tensor: true,
    };

    /// Whether `head` begins as `onnx.save` writes a model: `ir_version` (field 1, a varint
    /// from 1 to 15), then `producer_name`, `producer_version`, `domain`, `model_version`,
    /// `doc_string`, `graph` or `opset_import` (fields 2 to 8).
    #[must_use]
    pub fn recognise(head: &[u8]) -> bool {
        matches!(
            head,
            [
                0x08,
                1..=15,
                0x12 | 0x1a | 0x22 | 0x28 | 0x32 | 0x3a | 0x42,
                ..
            ]
        )
    }
}
