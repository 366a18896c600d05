//! The front door: open any tensor file, whatever its format, read its tensors, and save
//! tensors in any format.

use crate::error::{Error, Result};
use crate::formats;
use crate::model::{FormatId, NamedTensor, TensorData, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::path::{Path, PathBuf};
use tensor_core::{ByteOrder, MmapSource};
use tensor_dtype::{Dtype, Tensor, TensorView};

pub use crate::model::ReadOptions;

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
        return open_url_with(url, options, &crate::remote::RemoteOptions::default());
        #[cfg(not(feature = "remote"))]
        let _ = url;
    }
    if crate::shards::is_index(path) {
        let index = crate::shards::Index::read(path, &options.limits)?;
        let files = index.files();
        let maps = files
            .iter()
            .map(|f| current_wire(f, Bytes::Mapped(MmapSource::open(f)?), &options.limits))
            .collect::<Result<Vec<_>>>()?;
        let parsed = Parsed::try_new(maps, |maps| {
            let sets = read_all(&files, maps, options)?;
            index.select(sets)
        })?;
        return Ok(File::local(parsed, path.to_path_buf()));
    }
    let map = MmapSource::open(path)?;
    if let Some(paths) = formats::gguf::split_set(path, &map, options)? {
        // A shard of a GGUF split set opens the whole set.
        let maps = paths
            .iter()
            .map(|p| MmapSource::open(p).map(Bytes::Mapped))
            .collect::<tensor_core::Result<Vec<_>>>()?;
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
        .map(|p| MmapSource::open(p).map(Bytes::Mapped))
        .collect::<tensor_core::Result<Vec<_>>>()?;
    parse(maps, paths, options)
}

/// Opens a whole file held in memory (copied, so the [`File`] owns what it reads).
pub fn open_bytes(bytes: &[u8]) -> Result<File> {
    parse(
        vec![Bytes::Owned(bytes.to_vec())],
        vec![PathBuf::from("<bytes>")],
        &ReadOptions::default(),
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
        let set = self.set();
        set.tensors.iter().enumerate().map(move |(i, t)| TensorRef {
            tensor: t,
            index: i,
            set,
        })
    }

    /// The tensor called `name` (unnamed tensors are `tensor_<i>`).
    pub fn get(&self, name: &str) -> Result<TensorRef<'_>> {
        self.tensors()
            .find(|t| t.name() == name)
            .ok_or_else(|| Error::NoSuchTensor {
                file: self.path.display().to_string(),
                name: name.to_owned(),
                names: self
                    .set()
                    .names()
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
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

    /// The format-neutral tensor set, for the layers built on it (conversion, checks).
    #[must_use]
    pub fn tensor_set(&self) -> &TensorSet<'_> {
        self.set()
    }
}

/// One tensor of an open [`File`].
#[derive(Clone, Copy)]
pub struct TensorRef<'f> {
    tensor: &'f NamedTensor<'f>,
    index: usize,
    set: &'f TensorSet<'f>,
}

impl std::fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorRef")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .finish()
    }
}

impl<'f> TensorRef<'f> {
    /// The name (`tensor_<i>` for a tensor the file does not name).
    #[must_use]
    pub fn name(&self) -> std::borrow::Cow<'f, str> {
        match &self.tensor.name {
            Some(n) => std::borrow::Cow::Borrowed(n.as_str()),
            None => std::borrow::Cow::Owned(format!("tensor_{}", self.index)),
        }
    }

    /// The element type.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        self.tensor.dtype()
    }

    /// The dimensions.
    #[must_use]
    pub fn shape(&self) -> &'f [u64] {
        self.tensor.shape()
    }

    /// Per-tensor attributes (zTensor object attributes, Tensogram `base` entries).
    #[must_use]
    pub fn attributes(&self) -> &'f [(String, tensor_core::cbor::Value)] {
        &self.tensor.attributes
    }

    /// How the elements are stored when they need decoding (`simple_packing+szip`, `zstd`,
    /// `sparse_csr`...); `None` when they are stored as they are.
    #[must_use]
    pub fn encoding(&self) -> Option<&'f str> {
        match &self.tensor.data {
            TensorData::Encoded(l) => Some(&l.encoding),
            TensorData::View(_) | TensorData::Owned(_) => None,
        }
    }

    /// A quantized tensor's blocks as its GGUF file stores them, its ggml type, and the
    /// shape of those bytes (its element shape with the last dimension in bytes:
    /// `[4, 1024]` of `Q4_K` is `[4, 576]`); `None` for every other tensor.
    #[must_use]
    pub fn blocks(&self) -> Option<(crate::model::Blocks<'f>, Vec<u64>)> {
        self.tensor.blocks()
    }

    /// Where the tensor sits in formats with nested structure (Tensogram: `message`,
    /// `object`; shard sets: `shard`).
    #[must_use]
    pub fn location(&self) -> &'f [(&'static str, u64)] {
        &self.tensor.location
    }

    /// Bytes the elements occupy.
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        self.tensor.byte_len()
    }

    /// A zero-copy view of the stored elements, when the file stores them as they are
    /// (raw, in any byte order); an error saying how they are stored otherwise.
    pub fn view(&self) -> Result<TensorView<'f>> {
        match &self.tensor.data {
            TensorData::View(v) => Ok(v.clone()),
            TensorData::Owned(t) => Ok(t.view()),
            TensorData::Encoded(_) => Err(Error::NotAView {
                tensor: self.name().into_owned(),
                why: "encoded (compressed or packed)".into(),
            }),
        }
    }

    /// Checks the tensor against the checksum or digest its file keeps for it (zTensor),
    /// when the file was opened to verify (the default). Copying the elements out
    /// ([`to_tensor`](Self::to_tensor), [`read_into`](Self::read_into)) checks them too,
    /// on another core while it copies when the tensor is large, and fails if they are
    /// damaged; a zero-copy [`view`](Self::view) does not, so that it costs nothing however
    /// large the tensor: call this to check what a view shows.
    pub fn verify(&self) -> Result<()> {
        self.tensor.verify()
    }

    /// The elements as they are held (in the file, or decoded already), when they are the
    /// elements as the machine holds them — raw, C order, native byte order, whole bytes per
    /// element: what copies go straight from and what zero-copy arrays show. Like a
    /// [`view`](Self::view), unchecked ([`verify`](Self::verify)).
    #[must_use]
    pub fn native_bytes(&self) -> Option<&'f [u8]> {
        let v = self.view().ok()?;
        if self.dtype().is_packed()
            || !v.byte_order().is_native()
            || v.contiguous_order() != Some(tensor_dtype::Order::C)
        {
            return None;
        }
        v.contiguous_bytes()
    }

    /// Where the stored elements lie in a local file the tensor was mapped from, when they
    /// are held there as the machine holds them ([`native_bytes`](Self::native_bytes)) or,
    /// for packed dtypes, packed in C order: the file's number (for
    /// [`File::read_stored`] and [`File::private_map`]) and the offset of the first byte.
    /// `None` for encoded tensors, foreign byte orders and files not mapped (remote, in
    /// memory, migrated).
    #[must_use]
    pub fn stored_at(&self) -> Option<(usize, u64)> {
        let bytes = match self.native_bytes() {
            Some(bytes) => bytes,
            None if self.dtype().is_packed() => {
                let v = self.view().ok()?;
                if v.contiguous_order() != Some(tensor_dtype::Order::C) {
                    return None;
                }
                v.contiguous_bytes()?
            }
            None => return None,
        };
        self.set
            .mapped
            .iter()
            .enumerate()
            .find_map(|(i, m)| Some((i, m.locate(bytes)?.1)))
    }

    /// Runs `copy` (of `bytes`, the tensor's stored elements) while the tensor is checked
    /// against its checksum or digest ([`verify`](Self::verify)) on another core, when it
    /// has one and is large enough to share (see [`tensor_core::tee::beside`]): the two
    /// passes over the bytes then take the time of the slower. A failed check is the error,
    /// whatever the copy made.
    fn checked_while<T>(&self, bytes: &[u8], copy: impl FnOnce() -> Result<T>) -> Result<T> {
        if self.tensor.check.is_none() || bytes.len() < tensor_core::tee::BESIDE_FROM {
            self.tensor.verify()?;
            return copy();
        }
        let mut checked = Ok(());
        let copied = tensor_core::tee::beside(copy, || checked = self.tensor.verify());
        checked?;
        copied
    }

    /// The elements decoded into a new tensor, in the machine's byte order. Large tensors
    /// land on huge pages, copied on every core (feature `parallel`).
    pub fn to_tensor(&self) -> Result<Tensor> {
        if let Some(bytes) = self.native_bytes() {
            let data = self.checked_while(bytes, || {
                Ok(tensor_core::buffer::try_copied(bytes, "a tensor")?)
            })?;
            return Ok(Tensor::new(
                data,
                self.dtype(),
                self.shape(),
                ByteOrder::NATIVE,
            )?);
        }
        let t = match self.tensor.load(&self.set.limits)? {
            crate::model::Loaded::View(v) => v.to_tensor(),
            crate::model::Loaded::Owned(t) => t,
        };
        Ok(if t.byte_order().is_native() {
            t
        } else {
            t.view().to_tensor()
        })
    }

    /// Decodes the elements into `out`, which must be exactly [`byte_len`](Self::byte_len)
    /// bytes: C order, the machine's byte order. Memory stays within one run of decoding
    /// beyond `out`.
    pub fn read_into(&self, out: &mut [u8]) -> Result<()> {
        let want = self.byte_len();
        if out.len() as u64 != want {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?} needs a buffer of {want} bytes, not {}",
                self.name(),
                out.len()
            ))
            .into());
        }
        if let TensorData::Encoded(crate::model::Lazy {
            decode_into: Some(decode),
            ..
        }) = &self.tensor.data
        {
            self.tensor.verify()?;
            return decode(&self.set.limits, out);
        }
        if let Some(bytes) = self.native_bytes() {
            self.checked_while(bytes, || {
                tensor_core::buffer::copy(out, bytes);
                Ok(())
            })?;
            return Ok(());
        }
        let what = format!("tensor {:?}", self.name());
        let mut fill = tensor_core::buffer::Filler::new(out, &what);
        self.tensor
            .stream(&self.set.limits, &mut |c| Ok(fill.put(c)?))?;
        fill.finish()?;
        if !ByteOrder::Little.is_native() {
            tensor_core::byte_order::swap_in_place(out, self.dtype().swap_width())?;
        }
        Ok(())
    }
}

/// How to write a file, for every format.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// The format; `None` follows the output's extension (`.safetensors`, `.bt`, `.zt` for
    /// zTensor 2, `.tgm`).
    pub format: Option<FormatId>,
    /// File-level metadata to write instead of the source's (`save`) or at all
    /// (`save_tensors`).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// Tensogram output only: the encoding stages, chosen per tensor.
    pub pipeline: PipelineSpec,
    /// Write a shard set instead of one file: shards of at most this many bytes of tensor
    /// data beside `path`, and `<path>.index.json` (the Hugging Face layout; see
    /// [`crate::shards::write_sharded`]).
    pub max_shard_size: Option<u64>,
    /// Where the format lets the writer choose it — zTensor 2 — blobs start at multiples of
    /// this many bytes: a power of two, at least 4096. `None` writes the canonical 64 KiB,
    /// byte-identical to the reference's canonical writer. Every other format fixes its own
    /// layout (safetensors and BinTensors pack tensors after an 8-byte-padded header,
    /// zTensor 0.1 aligns to 64, Tensogram frames to 8), and refuses a value.
    pub alignment: Option<u64>,
    /// Whether a written file is also synced to disk before it is renamed into place, to
    /// survive a power failure once `save` returns ([`Durability::Synced`](crate::Durability),
    /// fsync). The default leaves writing back to the kernel, as `cp` does; either way the
    /// file appears under its name only when complete.
    pub durability: crate::Durability,
    /// GGUF output only: quantize the weight matrices to this ggml type
    /// ([`formats::gguf::quantize`](crate::formats::gguf::quantize)).
    pub quantize: Option<tensor_gguf::GgmlType>,
    /// What a GGUF quantized tensor becomes when written (float32 when `None`;
    /// [`formats::gguf::Dequantize`](crate::formats::gguf::Dequantize)).
    pub dequantize: Option<formats::gguf::Dequantize>,
}

impl WriteOptions {
    /// Options writing `format`.
    #[must_use]
    pub fn for_format(format: FormatId) -> Self {
        WriteOptions {
            format: Some(format),
            ..WriteOptions::default()
        }
    }

    fn format_for(&self, path: &Path) -> Result<FormatId> {
        self.format
            .or_else(|| FormatId::from_extension(path))
            .ok_or_else(|| Error::UnknownTarget {
                what: format!(
                    "{}: no format given and none known for its extension",
                    path.display()
                ),
            })
    }
}

/// Writes every tensor of `file` to `path` atomically (nothing is left behind on error), or
/// a shard set with [`WriteOptions::max_shard_size`]. Returns what the target format could
/// not hold and left out (one note each).
pub fn save(path: impl AsRef<Path>, file: &File, options: &WriteOptions) -> Result<Vec<String>> {
    let path = path.as_ref();
    let format = options.format_for(path)?;
    let source = file.tensor_set();
    let set = TensorSet {
        format,
        metadata: options.metadata.clone().or_else(|| source.metadata.clone()),
        metadata_types: source.metadata_types.clone(),
        tensors: source.tensors.clone(),
        limits: source.limits,
        mapped: source.mapped.clone(),
    };
    write_set(format, &set, path, options)
}

fn write_set(
    format: FormatId,
    set: &TensorSet<'_>,
    path: &Path,
    options: &WriteOptions,
) -> Result<Vec<String>> {
    let dequantized;
    let set = match options.dequantize {
        Some(how) => {
            dequantized = formats::gguf::dequantize_as(set, how)?;
            &dequantized
        }
        None => set,
    };
    let quantized;
    let mut notes = Vec::new();
    let set = match options.quantize {
        None => set,
        Some(t) if format == FormatId::Gguf => {
            let (q, kept) = formats::gguf::quantize(set, t)?;
            quantized = q;
            notes = kept;
            &quantized
        }
        Some(_) => {
            return Err(Error::UnknownTarget {
                what: format!("quantize applies to gguf output, not {}", format.id()),
            });
        }
    };
    let written = match options.max_shard_size {
        Some(max) => Ok(crate::shards::write_sharded(
            format,
            set,
            path,
            max,
            &options.pipeline,
            options.alignment,
            options.durability,
        )?
        .left_out),
        None => formats::write(
            format,
            set,
            path,
            &options.pipeline,
            options.alignment,
            options.durability,
        ),
    }?;
    notes.extend(written);
    Ok(notes)
}

/// Writes `tensors` — any `(name, view)` pairs — to `path` atomically, in the format the
/// options or the extension name. Returns what the target format left out.
pub fn save_tensors<'a, N: Into<String>>(
    path: impl AsRef<Path>,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> Result<Vec<String>> {
    let path = path.as_ref();
    let format = options.format_for(path)?;
    let set = named_set(format, tensors, options);
    write_set(format, &set, path, options)
}

/// The bytes of a file holding `tensors` — any `(name, view)` pairs — in the format the
/// options name (required: there is no extension to follow). Shard sets are files of their
/// own: [`WriteOptions::max_shard_size`] is refused here.
pub fn serialize_tensors<'a, N: Into<String>>(
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> Result<Vec<u8>> {
    let format = options.format.ok_or_else(|| Error::UnknownTarget {
        what: "serializing needs a format (WriteOptions::format)".into(),
    })?;
    if options.max_shard_size.is_some() {
        return Err(Error::UnknownTarget {
            what: "a shard set is several files; serializing makes one".into(),
        });
    }
    let set = named_set(format, tensors, options);
    let mut out = std::io::Cursor::new(Vec::new());
    formats::write_into(
        format,
        &set,
        Path::new("<bytes>"),
        &mut out,
        &options.pipeline,
        options.alignment,
    )?;
    Ok(out.into_inner())
}

fn named_set<'a, N: Into<String>>(
    format: FormatId,
    tensors: impl IntoIterator<Item = (N, TensorView<'a>)>,
    options: &WriteOptions,
) -> TensorSet<'a> {
    TensorSet {
        format,
        metadata: options.metadata.clone(),
        metadata_types: std::collections::BTreeMap::new(),
        tensors: tensors
            .into_iter()
            .map(|(n, v)| NamedTensor::borrowed(n.into(), v))
            .collect(),
        limits: tensor_core::Limits::default(),
        mapped: Vec::new(),
    }
}
