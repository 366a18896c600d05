//! zTensor 0.1 (`ZTEN0001`): a CBOR index of tensors at the end of the file, blobs aligned
//! to 64 bytes before it. [`ZTensor`] reads it; [`write()`], [`serialize`] and [`Writer`]
//! write it, one [`TensorOptions`] per tensor (raw or zstd, a checksum or none).

mod index;
mod read;
mod write;

pub use index::{CustomField, Encoding, Entry, Layout, RESERVED_KEYS};
pub use read::ZTensor;
pub use write::{TensorOptions, WriteEncoding, Writer, serialize, write};

/// The magic number of zTensor 0.1 files.
pub use crate::generation::MAGIC_V0_1;

/// Blob alignment in zTensor 0.1.
pub use crate::generation::ALIGNMENT_V0_1 as ALIGNMENT;
