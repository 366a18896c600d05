//! Editing a file's metadata, tensor names and tensor attributes without touching its
//! tensors' bytes: [`edit`].
//!
//! An edit is written **in place** when the format lets a new header take the old one's
//! bytes — safetensors and BinTensors (a header padded with spaces, which every reader
//! accepts), GGUF (a header that ends where the data's alignment padding allows), zTensor 2
//! (its manifest, at the end) and Tensogram (a metadata frame that keeps its padded size) —
//! as a
//! [`tensor_core::patch`], which a killed process leaves finished or undone, never half
//! done. Otherwise the file is written anew through an atomic file, each tensor's stored
//! bytes copied by the kernel (`copy_file_range`), so that a multi-gigabyte file costs about
//! a `cp`. Either way the file is read back before [`edit`] returns, and a file whose
//! format cannot hold an edit (a typed value in safetensors, an attribute in GGUF) is left
//! as it was.

mod file;
mod shard_set;
mod spec;

pub(crate) use shard_set::recover as recover_shard_set;
pub use spec::{Change, EditOptions, EditReport, Edits, Method};

use crate::error::{Error, Result};
use std::path::Path;

/// Edits the file at `path`: sets and deletes metadata keys, renames tensors and sets
/// tensor attributes, in place where the format allows and by an atomic copy otherwise
/// (see the module's description), then reads the file back to check it. Nothing is
/// written when an edit cannot be made as asked, or with [`EditOptions::dry_run`].
pub fn edit(path: impl AsRef<Path>, edits: &Edits, options: &EditOptions) -> Result<EditReport> {
    let path = path.as_ref();
    if crate::local::is_url(&path.to_string_lossy()) {
        return Err(Error::Edit {
            path: path.to_path_buf(),
            what: "only a local file can be edited".into(),
        });
    }
    if crate::shards::is_index(path) {
        return shard_set::edit(path, edits, *options);
    }
    file::edit_file(path, edits, options)
}
