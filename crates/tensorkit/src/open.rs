//! The front door: open any tensor file, whatever its format, read its tensors, and save
//! tensors in any format.
//!
//! Every file opens along one path, local and remote alike:
//!
//! 1. **resolve the source**: a local file mapped (an edit a killed process left unfinished
//!    finished first, [`crate::local`]), or a remote object's header fetched
//!    ([`crate::remote`]);
//! 2. **expand sets**: a Hugging Face shard index names its shards (a set edit left
//!    unfinished finished first), a format whose files name their set's other members names
//!    them ([`Adapter::set_members`](crate::adapter::Adapter::set_members): GGUF split sets);
//! 3. **read each member through its adapter**, its format recognised once, an older wire
//!    version upgraded by the adapter ([`Adapter::upgrade`](crate::adapter::Adapter::upgrade));
//! 4. **join** the members: by the index's weight map, by the format's own rule, or in file
//!    order.

mod file;
pub(crate) mod read;
mod save;
mod tensor_ref;

pub use crate::local::is_url;
pub use crate::write::Progress;
pub use file::File;
pub use save::{WriteOptions, save, save_set, save_tensors, serialize_tensors};
pub use tensor_core::ReadOptions;
pub use tensor_ref::TensorRef;

use crate::error::{Error, Result};
use crate::local::map_local;
use file::Bytes;
use read::{Member, read_local, read_members};
use std::path::{Path, PathBuf};

/// Opens the file at `path`, the format told by its content, with default [`ReadOptions`].
pub fn open(path: impl AsRef<Path>) -> Result<File> {
    open_with(path, &ReadOptions::default())
}

/// Opens the file at `path` with `options` (limits, strictness, verification). A Hugging
/// Face shard index (`*.index.json`) opens its shards as one file (see [`crate::shards`]), and
/// a shard of a GGUF split set the whole set.
///
/// With the `remote` feature, `path` may be a URL: `https://`, `http://`, `s3://`, `gs://`,
/// `az://` objects are read through range requests (see `open_url_with`), `file://` URLs are
/// local files.
pub fn open_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<File> {
    let path = path.as_ref();
    if let Some(url) = path.to_str().filter(|s| is_url(s)) {
        #[cfg(feature = "remote")]
        return open_url_with(
            url,
            options,
            &crate::remote::RemoteOptions::process_defaults(),
        );
        #[cfg(not(feature = "remote"))]
        let _ = url;
    }
    if crate::shards::is_index(path) {
        // A set edit a killed process left unfinished is finished first, as each shard's
        // is by `map_local`.
        crate::edit::recover_shard_set(path, tensor_core::atomic::Durability::Cached)?;
    }
    read_local(path, options)
}

/// Opens the object at `url` with `options`, reaching it as `remote` says (credentials,
/// endpoint, time limits, retries). `file://` URLs open local files.
///
/// The header, index or footer is read in as few range requests as the format allows
/// (usually one to three), and each tensor's bytes only when its elements are asked for:
/// [`TensorRef::to_tensor`], [`TensorRef::read_into`] and everything built on them fetch
/// them; [`TensorRef::view`] is refused, as there is no mapped file to view.
#[cfg(feature = "remote")]
pub fn open_url_with(
    url: &str,
    options: &ReadOptions,
    remote: &crate::remote::RemoteOptions,
) -> Result<File> {
    if let Some(path) = crate::remote::file_url_path(url) {
        return open_with(path?, options);
    }
    from_opened(
        url,
        crate::remote::open_blocking(url, options, remote)?,
        options,
    )
}

/// [`open_url_with`] for callers inside an async runtime: the header is read on the
/// caller's runtime. (Tensors are fetched when asked for, as with a file opened from
/// synchronous code.)
#[cfg(feature = "remote")]
pub async fn open_url_async(
    url: &str,
    options: &ReadOptions,
    remote: &crate::remote::RemoteOptions,
) -> Result<File> {
    if let Some(path) = crate::remote::file_url_path(url) {
        return open_with(path?, options);
    }
    from_opened(
        url,
        crate::remote::open(url, options, remote).await?,
        options,
    )
}

/// Steps 3 and 4 for remote objects: those held whole are read as local files are, the
/// others come listed.
#[cfg(feature = "remote")]
fn from_opened(url: &str, opened: crate::remote::Opened, options: &ReadOptions) -> Result<File> {
    let crate::remote::Opened { joining, objects } = opened;
    let remote: Vec<_> = objects
        .iter()
        .map(|o| std::sync::Arc::clone(&o.object))
        .collect();
    let paths: Vec<PathBuf> = objects
        .iter()
        .map(|o| PathBuf::from(o.object.url()))
        .collect();
    let mut owners = Vec::with_capacity(objects.len());
    let mut formats = Vec::with_capacity(objects.len());
    for (o, p) in objects.iter().zip(&paths) {
        if let Some(b) = &o.whole {
            let m = Member::new(p, Bytes::Owned(b.to_vec()), &options.limits)?;
            formats.push(Some(m.format));
            owners.push(m.bytes);
        } else {
            formats.push(None);
            owners.push(Bytes::Owned(Vec::new()));
        }
    }
    let mut listed: Vec<Option<crate::TensorSet<'static>>> =
        objects.into_iter().map(|o| o.listed).collect();
    let parsed = file::Parsed::try_new(owners, |owned| {
        let sets = paths
            .iter()
            .zip(owned)
            .zip(&formats)
            .zip(listed.iter_mut())
            .map(|(((p, b), f), l)| match (l.take(), f) {
                (Some(set), _) => Ok(set),
                (None, Some(f)) => f.adapter().read(p, b, options),
                (None, None) => Err(Error::Remote {
                    url: p.display().to_string(),
                    what: "neither listed nor held whole".into(),
                }),
            })
            .collect::<Result<Vec<_>>>()?;
        crate::shards::join_as(&paths, sets, &joining)
    })?;
    Ok(File {
        parsed,
        path: PathBuf::from(url),
        remote,
        by_name: std::sync::OnceLock::new(),
    })
}

/// Opens several files as one: their tensors in file order, the first file's metadata. Names
/// must not repeat across the files.
pub fn open_many<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
    options: &ReadOptions,
) -> Result<File> {
    let paths: Vec<PathBuf> = paths
        .into_iter()
        .map(|p| p.as_ref().to_path_buf())
        .collect();
    let Some(first) = paths.first().cloned() else {
        return Err(Error::UnknownTarget {
            what: "open_many needs at least one file".into(),
        });
    };
    let members = paths
        .iter()
        .map(|p| Member::new(p, Bytes::Mapped(map_local(p)?), &options.limits))
        .collect::<Result<Vec<_>>>()?;
    read_members(
        &paths,
        members,
        &crate::shards::Joining::Files,
        first,
        options,
    )
}

/// Opens a whole file held in memory (copied, so the [`File`] owns what it reads), with
/// default [`ReadOptions`].
pub fn open_bytes(bytes: &[u8]) -> Result<File> {
    open_bytes_with(bytes, &ReadOptions::default())
}

/// Opens a whole file held in memory with `options` (limits, strictness, verification).
pub fn open_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<File> {
    let path = PathBuf::from("<bytes>");
    let member = Member::new(&path, Bytes::Owned(bytes.to_vec()), &options.limits)?;
    read_members(
        std::slice::from_ref(&path),
        vec![member],
        &crate::shards::Joining::Files,
        path.clone(),
        options,
    )
}
