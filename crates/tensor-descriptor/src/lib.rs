//! # tensor-descriptor
//!
//! The data-object descriptor of Tensogram messages: one flat CBOR map per object holding
//! the tensor's metadata (`type`, `ndim`, `shape`, `strides`, `dtype`, `byte_order`), its
//! encoding pipeline (`encoding`, `filter`, `compression`), optional NaN/Inf `masks`, and
//! the pipeline's parameters flattened into the same map. Unknown keys are kept and written
//! back unchanged. Decoding accepts any key order and reports whether the input was
//! canonical; encoding is always canonical (RFC 8949 deterministic encoding: keys sorted by
//! their encoded bytes, shortest integers and floats). The format is described in
//! `docs/formats/tensogram.md` (the frame layer comes with tensor-frame).
//!
//! This crate is data only: the pipeline crate interprets the parameters.
//!
//! ```
//! use tensor_descriptor::{DataObjectDescriptor, ParamValue};
//! use tensor_dtype::Dtype;
//!
//! let mut d = DataObjectDescriptor {
//!     obj_type: "ntensor".into(),
//!     ndim: 2,
//!     shape: vec![100, 200],
//!     strides: vec![200, 1],
//!     dtype: Dtype::Float32,
//!     byte_order: Some(tensor_core::ByteOrder::Big),
//!     encoding: "simple_packing".into(),
//!     filter: "shuffle".into(),
//!     compression: "szip".into(),
//!     masks: None,
//!     params: Default::default(),
//! };
//! // Parameters are `ciborium::Value`s.
//! d.params.insert("sp_reference_value".into(), ParamValue::Float(230.5));
//! d.params.insert("sp_bits_per_value".into(), ParamValue::from(16u64));
//! let bytes = d.encode();
//! let (back, canonical) = DataObjectDescriptor::decode(&bytes)?;
//! assert!(canonical);
//! assert_eq!(back, d);
//! assert_eq!(back.param_f64("sp_reference_value")?, Some(230.5));
//! # Ok::<(), tensor_descriptor::Error>(())
//! ```
#![forbid(unsafe_code)]

mod descriptor;
mod error;

pub use descriptor::{DTYPES, DataObjectDescriptor, MaskEntry, MasksMetadata, ParamValue};
pub use error::{Error, Result};
