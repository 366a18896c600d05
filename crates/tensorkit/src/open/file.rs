//! [`File`]: an open tensor file of any format — the bytes it reads from (memory maps, or
//! memory), the tensors parsed from them, and where they came from.

use crate::error::Result;
use crate::model::TensorSet;
use crate::open::TensorRef;
use std::path::{Path, PathBuf};
use tensor_core::MmapSource;

/// The bytes a [`File`] reads from: a memory map of a file, or a copy of caller bytes.
pub(crate) enum Bytes {
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
    pub(crate) struct Parsed {
        owner: Vec<Bytes>,
        #[covariant]
        dependent: TensorSet,
    }
);

/// An open tensor file of any format: its tensors are parsed (headers only), their bytes stay
/// in the file's memory map until asked for.
pub struct File {
    pub(crate) parsed: Parsed,
    pub(crate) path: PathBuf,
    /// The remote objects the tensors are fetched from (none for local files).
    #[cfg(feature = "remote")]
    pub(crate) remote: Vec<std::sync::Arc<crate::remote::Object>>,
    /// Each name's first tensor, made the first time a tensor is looked up by name.
    pub(crate) by_name: std::sync::OnceLock<std::collections::HashMap<String, usize>>,
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

impl File {
    /// A file read from local bytes (mapped or in memory), known by `path`.
    pub(crate) fn local(parsed: Parsed, path: PathBuf) -> Self {
        File {
            parsed,
            path,
            #[cfg(feature = "remote")]
            remote: Vec::new(),
            by_name: std::sync::OnceLock::new(),
        }
    }

    fn set(&self) -> &TensorSet<'_> {
        self.parsed.borrow_dependent()
    }

    /// The format the content was read as.
    #[must_use]
    pub fn format(&self) -> crate::Format {
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

    /// Where the file was opened from (`<bytes>` for [`open_bytes`](crate::open_bytes); the index of a shard set,
    /// the first file of [`open_many`](crate::open_many)'s).
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
        let by_name = self.by_name.get_or_init(|| {
            let mut map = std::collections::HashMap::with_capacity(self.len());
            for (i, t) in self.tensors().enumerate() {
                map.entry(t.name().into_owned()).or_insert(i);
            }
            map
        });
        let set = self.set();
        by_name
            .get(name)
            .map(|&index| TensorRef {
                tensor: &set.tensors[index],
                index,
                set,
            })
            .ok_or_else(|| set.no_such_tensor(&self.path, name))
    }

    /// What the file holds that no tensor can, left out of [`tensors`](Self::tensors): each
    /// by name, with why (a NetCDF-4 string, compound, enum or variable-length variable).
    /// [`get`](Self::get) of one of these names is an `unsupported` error saying why.
    #[must_use]
    pub fn not_read(&self) -> &[crate::NotRead] {
        self.set().not_read()
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
