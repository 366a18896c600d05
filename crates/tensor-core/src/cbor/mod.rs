//! CBOR (RFC 8949): a decoder that never allocates more than its input justifies, and an
//! encoder that writes either exactly what it is told (definite or indefinite maps, keys in
//! the given order) or the deterministic encoding of §4.2.1.
//!
//! Several formats keep their metadata in CBOR (zTensor indexes and manifests, Tensogram
//! descriptors), so the codec lives here, once. Decoding is bounded: every length is checked
//! against the bytes that remain before anything is reserved, and nesting is limited to
//! [`MAX_DEPTH`]. [`Decoder::value_with_span`] also returns the bytes an item occupied, so
//! unknown entries can be written back byte for byte.

mod decode;
mod encode;
#[cfg(feature = "json")]
pub mod json;
mod value;

pub use decode::{Decoder, Head, from_slice};
pub use encode::{Encoder, to_canonical, to_canonical_plain_nan};
pub use value::{MAX_DEPTH, Value};

#[cfg(test)]
mod tests;
