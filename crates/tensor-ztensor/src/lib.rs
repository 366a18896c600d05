#![doc = include_str!("../../../docs/formats/ztensor.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_ztensor::{AnyZTensor, v0_1, v2};
//! use tensor_dtype::Tensor;
//!
//! let field = Tensor::from_elements(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let ids = Tensor::from_elements(&[4], &[7i64, 8, 9, 10])?;
//! // zTensor 2, the current generation: canonical, as ztensor 2.x writes it.
//! let bytes = v2::serialize([("field", field.view(), None), ("ids", ids.view(), None)], None)?;
//!
//! let file = AnyZTensor::open(&bytes)?; // any generation, told apart by its magic
//! let i = file.position("field").unwrap();
//! let decoded = file.read(i)?; // raw and little-endian: borrowed from `bytes`
//! assert_eq!(&*decoded.view()?.typed::<f32>()?, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//!
//! // zTensor 0.1, with per-tensor options: zstd and a CRC-32C checksum for `ids`.
//! let zstd = v0_1::TensorOptions {
//!     encoding: v0_1::WriteEncoding::Zstd(3),
//!     checksum: tensor_ztensor::ChecksumKind::Crc32c,
//!     ..v0_1::TensorOptions::default()
//! };
//! let old = v0_1::serialize([("ids", ids.view(), zstd)])?;
//! let file = v0_1::ZTensor::open(&old)?;
//! assert_eq!(file.read(0)?.into_tensor()?, ids); // decompressed, checksum verified
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod any;
mod checksum;
mod container;
mod error;
mod format;
mod generation;
#[cfg(feature = "paranoid")]
mod paranoid;
mod read;
mod runs;
mod sparse;
pub mod v0_1;
pub mod v2;

pub use any::AnyZTensor;
pub use checksum::{Checksum, ChecksumKind};
pub use container::{
    ALIGNMENT_V2, CANONICAL_ALIGNMENT, Container, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2,
    MAX_RANK_V2, Object, Part, PartEncoding, detect,
};
pub use error::{Class, Error, Result};
pub use format::{Ztensor01Format, Ztensor1Format, Ztensor2Format, recognise};
pub use read::{ChecksumStatus, Decoded};
pub use sparse::Sparse;
pub use tensor_core::{ReadOptions, Verify};
