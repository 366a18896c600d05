//! The commands that look inside files and move tensors between them: `ls`, `get`,
//! `diff`, `merge` and `split`, one module each, and what they share.

mod copy;
mod diff;
mod get;
mod ls;
mod manifest;
mod merge;
mod messages;
mod reshuffle;
pub mod select;
mod split;
mod tensors;

pub use copy::{Copying, copy};
pub use diff::diff;
pub use get::{Which, get};
pub use ls::{Listing, ls};
pub use manifest::SPLIT_MANIFEST;
pub use merge::merge;
pub use reshuffle::{Reshuffling, reshuffle};
pub use split::{split, split_gguf};
pub use tensors::find;
