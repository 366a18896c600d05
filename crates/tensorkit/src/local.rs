//! Local paths: told apart from URLs, and mapped for reading the one way every local path
//! maps a file.

use crate::error::Result;
use std::path::Path;
use tensor_core::MmapSource;

/// A local file mapped for reading: the one way every local path maps a file — a file
/// opened alone, each shard of a shard set or GGUF split set, each file of a list, a file
/// validated or verified. An edit in place that a killed process left unfinished is
/// finished first, as a database rolls a hot journal forward ([`crate::edit()`]): no file is
/// read half edited, however it is reached.
pub(crate) fn map_local(path: &Path) -> Result<MmapSource> {
    tensor_core::patch::recover(path, tensor_core::atomic::Durability::Cached)?;
    Ok(MmapSource::open(path)?)
}

/// Whether `path` is a URL that [`open`](crate::open) reads remotely (with the `remote` feature) rather
/// than a local path.
#[must_use]
pub fn is_url(path: &str) -> bool {
    #[cfg(feature = "remote")]
    {
        crate::remote::is_url(path)
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = path;
        false
    }
}
