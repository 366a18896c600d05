#![doc = include_str!("../../../docs/formats/ztensor.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_ztensor::{ChecksumKind, TensorOptions, WriteEncoding, ZTensor, serialize};
//! use tensor_dtype::Tensor;
//!
//! let field = Tensor::from_elements(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let ids = Tensor::from_elements(&[4], &[7i64, 8, 9, 10])?;
//! let zstd = TensorOptions { encoding: WriteEncoding::Zstd(3), checksum: ChecksumKind::Crc32c, ..TensorOptions::default() };
//! let bytes = serialize(&[("field", field.view(), TensorOptions::default()), ("ids", ids.view(), zstd)])?;
//!
//! let file = ZTensor::open(&bytes)?;
//! let i = file.position("field").unwrap();
//! let decoded = file.read(i)?; // raw and little-endian: borrowed from `bytes`
//! assert_eq!(&*decoded.view()?.typed::<f32>()?, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
//! let ids_back = file.read(file.position("ids").unwrap())?.into_tensor()?; // zstd, checksum verified
//! assert_eq!(ids_back, ids);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod any;
mod checksum;
mod container;
mod error;
mod file;
mod index;
#[cfg(feature = "paranoid")]
mod paranoid;
mod runs;
mod sparse;
mod write;
mod write_v2;

pub use any::AnyZTensor;
pub use checksum::{Checksum, ChecksumKind};
pub use container::{
    ALIGNMENT_V2, CANONICAL_ALIGNMENT, Container, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2,
    MAX_RANK_V2, Object, Part, PartEncoding, detect,
};
pub use error::{Class, Error, Result};
pub use file::{ALIGNMENT, ChecksumStatus, Decoded, MAGIC_V0_1, ReadOptions, Verify, ZTensor};
pub use index::{CustomField, Encoding, Entry, Layout};
pub use sparse::Sparse;
pub use write::{TensorOptions, WriteEncoding, Writer, serialize, write_file};
pub use write_v2::{ObjectEntry, write_v2, write_v2_file, write_v2_streamed};
