#![doc = include_str!("../../../docs/formats/tensogram-encodings.md")]
//!
//! ## Using this crate
//!
//! Encoding stages shared by the format crates. Every decoder here is bounded: it is told
//! how many bytes the output must have and fails — without allocating more — when the
//! input would produce more, less, or garbage.
//!
//! Stages: [`simple_packing`] (encoding), [`shuffle`] (filter), [`szip`], [`zstd`], [`lz4`]
//! and the [`bitmask`] codecs (compression), chained by [`Pipeline`]; [`masks`] for NaN/Inf.
//!
//! ```
//! use tensor_pipeline::zstd;
//!
//! let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
//! let packed = zstd::compress(&data, 3)?;
//! assert!(packed.len() < data.len());
//! let mut out = vec![0u8; data.len()];
//! zstd::decompress_into(&packed, &mut out)?;
//! assert_eq!(out, data);
//! // One byte too few or too many is an error, never a larger allocation.
//! assert!(zstd::decompress_into(&packed, &mut vec![0u8; data.len() - 1]).is_err());
//! # Ok::<(), tensor_pipeline::Error>(())
//! ```
// Unsafe code is refused everywhere but in the calls into zfp's C library (`zfp::ffi`).
#![deny(unsafe_code)]

pub mod bitmask;
pub mod blosc2;
pub mod codecs;
pub mod dense_bits;
mod error;
mod float64_field;
pub mod lz4;
pub mod masks;
mod pipeline;
pub mod shuffle;
pub mod simple_packing;
pub mod sz3;
pub mod szip;
pub mod zfp;
pub mod zstd;

pub use error::{Error, Result};
pub use pipeline::{Compression, Encoded, Encoding, Filter, Pipeline};
pub use simple_packing::SimplePacking;
