//! # tensor-core
//!
//! The bottom layer of tensorkit: everything the format crates share about raw bytes, and
//! nothing about any one format.
//!
//! - [`ErrorKind`] — the small taxonomy every crate's error enum maps onto, and
//!   [`Error`], the leaf errors every decoder needs (truncation, overflow, limits, I/O).
//! - [`Limits`] — the resource bounds every decoder takes.
//! - [`ByteOrder`] and the swap functions in [`byte_order`].
//! - [`buffer`] — large zeroed output buffers backed by huge pages.
//! - [`cbor`] — a bounded CBOR decoder (with byte spans) and encoder (canonical or as-is).
//! - [`checked`] — size arithmetic that reports overflow instead of wrapping.
//! - [`source`] — byte sources: slices, a memory-mapped file, a positioned file reader.
//! - [`atomic`] — files written under a temporary name and renamed into place.
//! - [`hex`] — lower-case hex for digests in messages and reports.
//! - [`tee`] — writing bytes while another core hashes them.
//! - [`xxh3`] — XXH3-64, with the widest SIMD kernel the CPU has, chosen at run time.
//!
//! ```
//! use tensor_core::{ByteOrder, Limits, byte_order, checked};
//!
//! // Three big-endian u16 values, swapped to little-endian in place.
//! let mut bytes = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06];
//! byte_order::swap_in_place(&mut bytes, 2)?;
//! assert_eq!(bytes, [0x02, 0x01, 0x04, 0x03, 0x06, 0x05]);
//!
//! // Sizes that would wrap are errors, never silent.
//! assert!(checked::mul(1 << 40, 1 << 40, "element count").is_err());
//!
//! // A header larger than the limits allow is refused before anything is read.
//! let limits = Limits::default();
//! assert!(limits.check_header_bytes(u64::MAX).is_err());
//! assert!(ByteOrder::NATIVE.is_native());
//! # Ok::<(), tensor_core::Error>(())
//! ```
// Memory mapping (source::MmapSource, source::PrivateMap) is the one place that needs `unsafe`; each carries a
// `// SAFETY:` comment and a local `allow`. Everything else stays safe.
#![deny(unsafe_code)]

/// The user's CBOR value type: public parameter and metadata values are `ciborium::Value`.
pub use ciborium;
pub mod atomic;
pub mod buffer;
pub mod byte_order;
pub mod cbor;
pub mod checked;
pub mod civil;
mod error;
pub mod held;
pub mod hex;
mod limits;
pub mod options;
pub mod patch;
mod readahead;
pub mod size;
pub mod source;
pub mod tee;
pub mod xxh3;

pub use byte_order::ByteOrder;
pub use error::{Error, ErrorKind, Kinded, Result};
pub use held::Held;
pub use limits::{
    DEFAULT_EXPANSION_ALLOWANCE, DEFAULT_MAX_DECOMPRESSION_RATIO, Limits, physical_memory,
};
pub use options::{ReadOptions, Verify};
pub use source::{ByteSource, FileSource, MmapSource, PrivateMap};
