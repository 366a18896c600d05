//! One object to write, described without its bytes.

use tensor_core::cbor::Value;
use tensor_dtype::Dtype;

/// One object to write, described without its bytes ([`write_streamed`](super::write_streamed)).
#[derive(Clone, Debug)]
pub struct ObjectEntry<'n> {
    /// The object's name.
    pub name: &'n str,
    /// The dtype.
    pub dtype: Dtype,
    /// The shape.
    pub shape: &'n [u64],
    /// The object's attributes, if any.
    pub attributes: Option<Value>,
}
