//! Opening the files a command reads.

use crate::error::Result;
use std::path::Path;
use tensor_core::Limits;

/// Opens `path` through the library's front door (any format, or a shard index) within
/// `limits`.
pub fn open(path: &Path, limits: &Limits) -> Result<tensorkit::File> {
    tensorkit::open_with(
        path,
        &tensorkit::ReadOptions {
            limits: *limits,
            ..tensorkit::ReadOptions::default()
        },
    )
}
