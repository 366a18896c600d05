//! The commands that look inside files and move tensors between them: `ls`, `get`,
//! `diff`, `merge` and `split`, one module each, and what they share.

mod diff;
mod get;
mod ls;
mod manifest;
mod merge;
mod split;
mod tensors;

pub use diff::diff;
pub use get::get;
pub use ls::ls;
pub use manifest::SPLIT_MANIFEST;
pub use merge::merge;
pub use split::{split, split_gguf};
pub use tensors::find;
