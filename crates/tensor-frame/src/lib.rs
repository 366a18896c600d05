#![doc = include_str!("../../../docs/formats/tensogram.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Message, serialize};
//! use tensor_frame::descriptor::DataObjectDescriptor;
//! use tensor_core::{ByteOrder, Limits};
//!
//! // A 2×3 float32 field, stored zstd-compressed.
//! let values = [271.5f32, 272.0, 273.25, 274.0, 275.5, 276.0];
//! let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
//! let mut desc = DataObjectDescriptor::new(tensor_dtype::Dtype::Float32, &[2, 3], ByteOrder::Little);
//! desc.compression = "zstd".into();
//! let mut meta = GlobalMetadata::default();
//! meta.base.push([("name".to_owned(), "2t".into())].into());
//! let bytes = serialize(&meta, &[desc], &[&data], &EncodeOptions::default())?;
//!
//! // Random access: the header index leads straight to object 0; its hash is checked.
//! let msg = Message::open(&bytes)?;
//! let opts = DecodeOptions { verify_hash: true, ..DecodeOptions::default() };
//! let field = msg.decode_object(0, opts)?;
//! assert_eq!(&*field.view().typed::<f32>()?, &values);
//! assert_eq!(msg.metadata()?.get(0, "name").and_then(|v| v.as_text()), Some("2t"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod container;
mod encode;
mod error;
mod file;
mod frame_out;
mod hash;
mod message;
mod messages;
pub mod metadata;
mod nonfinite;
mod object;
#[cfg(feature = "paranoid")]
mod paranoid;
pub mod pipeline_spec;
mod provenance;
mod stream;
pub mod v2;
pub mod validate;
pub mod wire;

pub use encode::{
    EncodeOptions, HashFrames, IndexFrame, ObjectBytes, ObjectSource, metadata_in_place,
    reframe_to, regroup_to, serialize, serialize_into, serialize_pre_encoded, write, write_from,
    write_streamed,
};
pub use error::{Class, Error, Result};
pub use file::{MessageReader, TgmFile, append, scan, scan_backward};
pub use hash::xxh3;
pub use message::{FrameInfo, Message, decode, metadata_frame, object_frame};
pub use messages::{Messages, TensogramFormat};
pub use metadata::{GlobalMetadata, HashList, Index, Map, MetaValue};
pub use nonfinite::{MaskingChange, masking_changes};
pub use object::{DecodeOptions, HashCheck, ObjectFrame, UNSUPPORTED_CODECS, decode_payload};
pub use provenance::Provenance;
pub use stream::StreamEncoder;
pub use tensor_descriptor as descriptor;
pub use tensor_pipeline as pipeline;
pub use tensor_pipeline::masks::{MaskKind, MaskMethod};
pub use validate::{Issue, Level, Report, Severity, ValidateOptions, validate};
