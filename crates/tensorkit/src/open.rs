//! The front door: open any tensor file, whatever its format, read its tensors, and save
//! tensors in any format.

use crate::error::{Error, Result};
use crate::formats;
use crate::model::{FormatId, TensorSet};
use std::path::{Path, PathBuf};
use tensor_core::MmapSource;

pub use tensor_core::ReadOptions;

mod save;
mod tensor_ref;

pub use save::{Progress, WriteOptions, save, save_set, save_tensors, serialize_tensors};
pub use tensor_ref::TensorRef;

/// The bytes a [`File`] reads from: a memory map of a file, or a copy of caller bytes.
enum Bytes {
    Mapped(MmapSource),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

self_cell::self_cell!(
    /// The bytes of every file, and the tensors parsed from (and borrowing) them.
    struct Parsed {
        owner: Vec<Bytes>,
        #[covariant]
        dependent: TensorSet,
    }
);

/// An open tensor file of any format: its tensors are parsed (headers only), their bytes stay
/// in the file's memory map until asked for.
pub struct File {
    parsed: Parsed,
    path: PathBuf,
    /// The remote objects the tensors are fetched from (none for local files).
    #[cfg(feature = "remote")]
    remote: Vec<std::sync::Arc<crate::remote::Object>>,
}

impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("File")
            .field("path", &self.path)
            .field("format", &self.format())
            .field("tensors", &self.len())
            .finish_non_exhaustive()
    }
}

/// Opens the file at `path`, the format told by its content, with default [`ReadOptions`].
pub fn open(path: impl AsRef<Path>) -> Result<File> {
    open_with(path, &ReadOptions::default())
}

/// Opens the file at `path` with `options` (limits, strictness, verification). A Hugging
/// Face shard index (`*.index.json`) opens its shards as one file (see [`crate::shards`]).
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
        let index = crate::shards::Index::read(path, &options.limits)?;
        let files = index.files();
        let maps = files
            .iter()
            .map(|f| current_wire(f, Bytes::Mapped(map_local(f)?), &options.limits))
            .collect::<Result<Vec<_>>>()?;
        let parsed = Parsed::try_new(maps, |maps| {
            let sets = read_all(&files, maps, options)?;
            index.select(sets)
        })?;
        return Ok(File::local(parsed, path.to_path_buf()));
    }
    let map = map_local(path)?;
    if let Some(paths) = formats::gguf::split_set(path, &map, options)? {
        // A shard of a GGUF split set opens the whole set.
        let maps = paths
            .iter()
            .map(|p| map_local(p).map(Bytes::Mapped))
            .collect::<Result<Vec<_>>>()?;
        let parsed = Parsed::try_new(maps, |maps| {
            formats::gguf::join_split(&paths, read_all(&paths, maps, options)?)
        })?;
        return Ok(File::local(parsed, path.to_path_buf()));
    }
    parse(vec![Bytes::Mapped(map)], vec![path.to_path_buf()], options)
}

/// Whether `path` is a URL that [`open`] reads remotely (with the `remote` feature) rather
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

#[cfg(feature = "remote")]
fn from_opened(url: &str, opened: crate::remote::Opened, options: &ReadOptions) -> Result<File> {
    let crate::remote::Opened { index, objects } = opened;
    let remote: Vec<_> = objects
        .iter()
        .map(|o| std::sync::Arc::clone(&o.object))
        .collect();
    let paths: Vec<PathBuf> = objects
        .iter()
        .map(|o| PathBuf::from(o.object.url()))
        .collect();
    // Objects held whole are read as local files are; the others come listed.
    let owners: Vec<Bytes> = objects
        .iter()
        .zip(&paths)
        .map(|(o, p)| {
            let whole = Bytes::Owned(o.whole.as_ref().map(|b| b.to_vec()).unwrap_or_default());
            current_wire(p, whole, &options.limits)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut listed: Vec<Option<TensorSet<'static>>> =
        objects.into_iter().map(|o| o.listed).collect();
    let parsed = Parsed::try_new(owners, |owned| {
        let sets = paths
            .iter()
            .zip(owned)
            .zip(listed.iter_mut())
            .map(|((p, b), l)| match l.take() {
                Some(set) => Ok(set),
                None => formats::read_with(p, b, options),
            })
            .collect::<Result<Vec<_>>>()?;
        match &index {
            Some(index) => index.select(sets),
            None => crate::shards::join(&paths, sets),
        }
    })?;
    Ok(File {
        parsed,
        path: PathBuf::from(url),
        remote,
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
    if paths.is_empty() {
        return Err(Error::UnknownTarget {
            what: "open_many needs at least one file".into(),
        });
    }
    let maps = paths
        .iter()
        .map(|p| map_local(p).map(Bytes::Mapped))
        .collect::<Result<Vec<_>>>()?;
    parse(maps, paths, options)
}

/// A local file mapped for reading: the one way every local path maps a file — a file
/// opened alone, each shard of a shard set or GGUF split set, each file of a list, a file
/// validated or verified. An edit in place that a killed process left unfinished is
/// finished first, as a database rolls a hot journal forward ([`crate::edit()`]): no file is
/// read half edited, however it is reached.
pub(crate) fn map_local(path: &Path) -> Result<MmapSource> {
    tensor_core::patch::recover(path, tensor_core::atomic::Durability::Cached)?;
    Ok(MmapSource::open(path)?)
}

/// Opens a whole file held in memory (copied, so the [`File`] owns what it reads), with
/// default [`ReadOptions`].
pub fn open_bytes(bytes: &[u8]) -> Result<File> {
    open_bytes_with(bytes, &ReadOptions::default())
}

/// Opens a whole file held in memory with `options` (limits, strictness, verification).
pub fn open_bytes_with(bytes: &[u8], options: &ReadOptions) -> Result<File> {
    parse(
        vec![Bytes::Owned(bytes.to_vec())],
        vec![PathBuf::from("<bytes>")],
        options,
    )
}

/// Reads each of `maps` (the files at `paths`); a set read from a mapped file names its
/// mapping ([`TensorSet::mapped`]).
fn read_all<'a>(
    paths: &[PathBuf],
    maps: &'a [Bytes],
    options: &ReadOptions,
) -> Result<Vec<TensorSet<'a>>> {
    paths
        .iter()
        .zip(maps)
        .map(|(p, b)| {
            let mut set = formats::read_with(p, b, options)?;
            if let Bytes::Mapped(m) = b {
                set.mapped.push(m);
            }
            Ok(set)
        })
        .collect()
}

/// `bytes` in a wire version the readers read: a Tensogram file holding wire version 2
/// messages (tensogram 0.14 to 0.16) is migrated to version 3 in memory, every version 2
/// hash checked on the way; anything else is returned as it is.
fn current_wire(path: &Path, bytes: Bytes, limits: &tensor_core::Limits) -> Result<Bytes> {
    if !tensor_frame::v2::holds_v2(&bytes) {
        return Ok(bytes);
    }
    let migrated =
        tensor_frame::v2::migrate(&bytes, limits).map_err(formats::tensogram::wrap(path))?;
    Ok(Bytes::Owned(migrated.bytes))
}

fn parse(bytes: Vec<Bytes>, paths: Vec<PathBuf>, options: &ReadOptions) -> Result<File> {
    let bytes = bytes
        .into_iter()
        .zip(&paths)
        .map(|(b, p)| current_wire(p, b, &options.limits))
        .collect::<Result<Vec<_>>>()?;
    let parsed = Parsed::try_new(bytes, |maps| {
        let sets = read_all(&paths, maps, options)?;
        crate::shards::join(&paths, sets)
    })?;
    let path = paths.into_iter().next().unwrap_or_default();
    Ok(File::local(parsed, path))
}

impl File {
    /// A file read from local bytes (mapped or in memory), known by `path`.
    fn local(parsed: Parsed, path: PathBuf) -> Self {
        File {
            parsed,
            path,
            #[cfg(feature = "remote")]
            remote: Vec::new(),
        }
    }

    fn set(&self) -> &TensorSet<'_> {
        self.parsed.borrow_dependent()
    }

    /// The format the content was read as.
    #[must_use]
    pub fn format(&self) -> FormatId {
        self.set().format
    }

    /// File-level metadata, when the format stores any.
    #[must_use]
    pub fn metadata(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.set().metadata.as_ref()
    }

    /// How many tensors the file holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.set().tensors.len()
    }

    /// Whether the file holds no tensor.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the file was opened from (`<bytes>` for [`open_bytes`]; the index of a shard set,
    /// the first file of [`open_many`]'s).
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tensors, in the order the file stores them.
    #[must_use]
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = TensorRef<'_>> {
        self.set().tensors()
    }

    /// The tensor called `name` (unnamed tensors are `tensor_<i>`).
    pub fn get(&self, name: &str) -> Result<TensorRef<'_>> {
        self.tensors()
            .find(|t| t.name() == name)
            .ok_or_else(|| self.set().no_such_tensor(&self.path, name))
    }

    /// For a file opened from a URL, what reading it has cost so far: requests made and
    /// bytes received (its header and every tensor fetched). `None` for local files.
    #[cfg(feature = "remote")]
    #[must_use]
    pub fn transfer(&self) -> Option<crate::remote::Transfer> {
        (!self.remote.is_empty()).then(|| crate::remote::totals(&self.remote))
    }

    /// Checks every tensor against the checksum or digest the file keeps for it (see
    /// [`TensorRef::verify`]); the first mismatch is the error.
    pub fn verify(&self) -> Result<()> {
        self.tensors().try_for_each(|t| t.verify())
    }

    /// Reads `out.len()` bytes at `offset` of the `file`th mapped file (numbered as
    /// [`TensorRef::stored_at`] numbers them) with positioned reads rather than through the
    /// mapping: for loaders that fill buffers of their own (pinned staging memory, memory
    /// on network file systems where page-by-page faults are slow).
    pub fn read_stored(&self, file: usize, offset: u64, out: &mut [u8]) -> Result<()> {
        Ok(self.mapped_file(file)?.read_at(offset, out)?)
    }

    /// Asks the system to start reading `len` bytes at `offset` of the `file`th mapped file
    /// into memory without waiting for them ([`tensor_core::MmapSource::will_need`]): what a
    /// loader does for the range it reads next.
    pub fn prefetch(&self, file: usize, offset: u64, len: u64) -> Result<()> {
        self.mapped_file(file)?.will_need(offset, len);
        Ok(())
    }

    /// Hands the pages of the file's mappings that this process has read back to the system
    /// ([`tensor_core::MmapSource::release`]): they no longer count toward its memory and are
    /// read again, from the page cache, when touched. What a reader does once it holds what
    /// it decoded in memory of its own (the xarray engine, after each GRIB field), so that a
    /// file read once through does not stay resident beside the values. Views and tensors
    /// borrowed from the file stay valid. Nothing happens for remote and in-memory files.
    pub fn release_pages(&self) {
        for map in &self.set().mapped {
            map.release();
        }
    }

    /// A private, writable copy-on-write mapping of the `file`th mapped file (see
    /// [`tensor_core::PrivateMap`]): tensors over it are writable without a copy, and
    /// nothing written reaches the file.
    pub fn private_map(&self, file: usize) -> Result<tensor_core::PrivateMap> {
        let map = self.mapped_file(file)?;
        match map.private_map() {
            Some(private) => Ok(private?),
            None => Err(tensor_core::Error::InvalidArgument(format!(
                "{}: the mapped file's handle was not kept",
                self.path.display()
            ))
            .into()),
        }
    }

    fn mapped_file(&self, file: usize) -> Result<&tensor_core::MmapSource> {
        self.set().mapped.get(file).copied().ok_or_else(|| {
            tensor_core::Error::InvalidArgument(format!(
                "{}: no mapped file number {file} ({} mapped)",
                self.path.display(),
                self.set().mapped.len()
            ))
            .into()
        })
    }

    /// How many local files the tensors are mapped from (a shard set's shards; 0 for remote
    /// and in-memory files): the file numbers [`read_stored`](Self::read_stored),
    /// [`prefetch`](Self::prefetch) and [`private_map`](Self::private_map) take run below it.
    #[must_use]
    pub fn mapped_files(&self) -> usize {
        self.set().mapped.len()
    }

    /// Its tensors as a set to save, change (rename, new metadata) or put together with other
    /// files' ([`TensorSet`], [`save_set`](crate::save_set)).
    #[must_use]
    pub fn tensor_set(&self) -> &TensorSet<'_> {
        self.set()
    }
}
