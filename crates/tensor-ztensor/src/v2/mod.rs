//! Writing zTensor 2, the current generation (reading it is [`Container`](crate::Container)'s
//! job, shared with 1.x): canonical files, byte-identical to the reference's canonical
//! writer — blobs in object-name order, identical blobs stored once, the manifest in
//! deterministic CBOR.

mod entry;
mod write;

pub use entry::ObjectEntry;
pub use write::{ManifestEdit, ObjectEdit, manifest_in_place, serialize, write, write_streamed};
