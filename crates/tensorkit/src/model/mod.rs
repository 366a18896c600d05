//! The format-neutral view of a tensor file that every command works on: a set of named
//! tensors ([`TensorSet`]), each holding its elements as its file stores them.

// With some formats left out of the build, parts only the others use go unused.
#![cfg_attr(not(feature = "full"), allow(dead_code, unused_imports))]

#[cfg(any(feature = "netcdf", feature = "hdf5", feature = "onnx"))]
pub(crate) mod rows;
mod set;
mod stored;
mod tensor;

pub use set::{NotRead, TensorSet};
pub use stored::BlockScheme;
pub(crate) use stored::{
    BlockBytes, Blocks, DecodeFn, DecodeIntoFn, Lazy, Packed, PackedSzip, QuantizeFn, StreamFn,
    TensorData,
};
pub use tensor::RUN_BYTES;
pub(crate) use tensor::{CheckFn, Loaded, NamedTensor, stream_view};
