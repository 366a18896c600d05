#![doc = include_str!("../../../docs/formats/stdlib-meta.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_stdlib_meta::{IndexMode, MetaData, MetaDataRef, Order, StdlibDtype, StridedArray};
//! use tensor_core::ByteOrder;
//!
//! // What stdlib emits for a 2x3 float64 row-major array on a little-endian host.
//! let meta = MetaData {
//!     byte_order: ByteOrder::Little,
//!     dtype: StdlibDtype::Float64,
//!     shape: vec![2, 3],
//!     strides: vec![24, 8],
//!     offset: 0,
//!     order: Order::RowMajor,
//!     mode: IndexMode::Throw,
//!     submodes: vec![IndexMode::Throw],
//!     flags: 0,
//! };
//! let bytes = meta.serialize()?;
//! assert_eq!(bytes.len(), 66);
//!
//! // Strict, allocation-free parsing...
//! let parsed = MetaDataRef::open(&bytes)?;
//! assert_eq!(parsed.shape().collect::<Vec<_>>(), [2, 3]);
//!
//! // ...and a view over a data buffer, bounds-checked before any access.
//! let data: Vec<u8> = (0..6).flat_map(|v| f64::from(v).to_le_bytes()).collect();
//! let array = StridedArray::new(&parsed.to_owned(), &data)?;
//! assert_eq!(array.get(&[1, 2])?, tensor_dtype::Scalar::Float(5.0));
//! # Ok::<(), tensor_stdlib_meta::Error>(())
//! ```
#![forbid(unsafe_code)]

mod array;
mod enums;
mod error;
#[cfg(feature = "json")]
pub mod json;
mod meta;

pub use array::{StridedArray, meta_for_view};
pub use enums::{IndexMode, Order, READONLY, StdlibDtype};
pub use error::{Error, Result};
pub use meta::{MAX_DIMS, MetaData, MetaDataRef, byte_length};
