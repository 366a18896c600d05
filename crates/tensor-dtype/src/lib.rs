//! # tensor-dtype
//!
//! Element types, shapes, strides and typed views: the vocabulary every tensorkit format
//! crate uses to describe a tensor.
//!
//! - [`Dtype`] — every element type our formats store, with widths and canonical names.
//! - [`shape`] — element counts, C and Fortran strides, contiguity, with overflow reported.
//! - [`TensorView`] — borrowed bytes with a dtype, shape, byte strides and byte order;
//!   [`Tensor`] — the owned, C-contiguous counterpart.
//! - [`Scalar`] and [`scalar::decode`] — single elements for display and comparison.
//! - [`minifloat`] — exact decoding of the floats narrower than 16 bits, and the bit order
//!   of the packed (sub-byte) types.
//!
//! ```
//! use tensor_dtype::{Dtype, Tensor, TensorView, shape};
//! use tensor_core::ByteOrder;
//!
//! assert_eq!(shape::c_strides(&[4, 5, 6])?, vec![30, 6, 1]);
//! assert_eq!("bfloat16".parse::<Dtype>()?.byte_width(), 2);
//!
//! // Two big-endian float32 values, read as native f32.
//! let bytes = [0x3f, 0xc0, 0, 0, 0xc0, 0x20, 0, 0];
//! let view = TensorView::new(&bytes, Dtype::Float32, &[2], ByteOrder::Big)?;
//! assert_eq!(&*view.typed::<f32>()?, &[1.5, -2.5]);
//!
//! let t = Tensor::from_elements(&[2, 2], &[1u16, 2, 3, 4])?;
//! assert_eq!(t.view().strides(), &[4, 2]);
//! # Ok::<(), tensor_dtype::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod container;
mod dtype;
mod error;
mod fallible;
pub mod format;
pub mod minifloat;
pub mod scalar;
pub mod shape;
pub mod validate;
mod view;

pub use container::TensorContainer;
pub use dtype::Dtype;
pub use error::{Error, Result};
pub use format::{Checks, Format, FormatInfo, WriteChoice};
pub use scalar::Scalar;
pub use shape::Order;
pub use validate::{Level, Severity, ValidateOptions};
pub use view::{Element, Tensor, TensorView};
