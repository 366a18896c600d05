//! Byte sources: where a decoder's bytes come from.
//!
//! Three kinds cover every use:
//! - a byte slice already in memory (`[u8]`, `Vec<u8>`),
//! - [`MmapSource`], a memory-mapped file: zero-copy, the fastest way to read local files,
//! - [`FileSource`], positioned reads from an open file, for files that should not be mapped
//!   (network filesystems, where mapping is many times slower than reading).
//!
//! Decoders are written against [`ByteSource`]. When [`ByteSource::as_slice`] returns the
//! whole input they borrow from it; otherwise they read only the ranges they need.

use crate::checked;
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::fs::File;
use std::path::Path;

/// Random access to a fixed-length run of bytes.
pub trait ByteSource {
    /// Total length in bytes.
    fn len(&self) -> u64;

    /// Whether the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole input, when it is resident in memory (a slice or a mapped file).
    fn as_slice(&self) -> Option<&[u8]>;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// The `len` bytes at `offset`: borrowed when the source is in memory, read into a new
    /// buffer otherwise. The range is checked against [`len`](Self::len) before anything is
    /// allocated, so a hostile length cannot allocate more than the source holds.
    fn bytes_at(&self, offset: u64, len: u64, what: &'static str) -> Result<Cow<'_, [u8]>> {
        let range = checked::range(offset, len, self.len(), what)?;
        if let Some(all) = self.as_slice() {
            return Ok(Cow::Borrowed(&all[range]));
        }
        let mut buf = vec![0; range.len()];
        self.read_exact_at(offset, &mut buf)?;
        Ok(Cow::Owned(buf))
    }
}

impl ByteSource for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let range = checked::range(offset, buf.len() as u64, ByteSource::len(self), "read")?;
        buf.copy_from_slice(&self[range]);
        Ok(())
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        <[u8] as ByteSource>::read_exact_at(self, offset, buf)
    }
}

impl<T: ByteSource + ?Sized> ByteSource for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        (**self).read_exact_at(offset, buf)
    }
}

/// A file mapped read-only into memory.
#[derive(Debug)]
pub struct MmapSource {
    map: memmap2::Mmap,
    /// The mapped file, kept so that writers can have the kernel copy ranges of it
    /// ([`AtomicFile::copying_from`](crate::atomic::AtomicFile::copying_from)); `None` where
    /// the handle could not be duplicated.
    file: Option<File>,
    /// How much one read-ahead hint reads on the file's device, found when first needed.
    window: std::sync::OnceLock<u64>,
}

impl MmapSource {
    /// Maps the file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file =
            File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let mut mapped = Self::map_only(&file).map_err(|e| match e {
            Error::Io { source, .. } => Error::io(format!("mapping {}", path.display()), source),
            other => other,
        })?;
        mapped.file = Some(file);
        Ok(mapped)
    }

    /// Maps an open file.
    pub fn map(file: &File) -> Result<Self> {
        let mut mapped = Self::map_only(file)?;
        mapped.file = file.try_clone().ok();
        Ok(mapped)
    }

    fn map_only(file: &File) -> Result<Self> {
        // SAFETY: memmap2 requires that the file is not truncated or modified while mapped,
        // which no Rust code can guarantee about a file other processes may write. We map
        // read-only and treat the bytes as untrusted input: every decoder validates what it
        // reads, so concurrent modification can produce wrong values or decode errors, but
        // no unsoundness in our code (a truncation by another process may still raise
        // SIGBUS, as with every memory-mapped reader). This is the workspace's only `unsafe`.
        #[allow(unsafe_code)]
        let map =
            unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io("mapping a file", e))?;
        Ok(MmapSource {
            map,
            file: None,
            window: std::sync::OnceLock::new(),
        })
    }

    /// The mapped bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The mapped file and where `bytes` begin in it, when `bytes` lie within this mapping
    /// (borrowed from [`bytes`](Self::bytes)) and the file's handle was kept: what a writer
    /// needs to have the kernel copy them from the file rather than through memory.
    #[must_use]
    pub fn locate(&self, bytes: &[u8]) -> Option<(&File, u64)> {
        let offset = offset_within(&self.map, bytes)?;
        Some((self.file.as_ref()?, offset as u64))
    }
}

/// Where `inner` begins in `outer`, when `inner` lies wholly within it (borrowed from it):
/// a view's place in the file it was read from.
#[must_use]
pub fn offset_within(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let offset = inner.as_ptr().addr().checked_sub(outer.as_ptr().addr())?;
    (offset.checked_add(inner.len())? <= outer.len()).then_some(offset)
}

impl MmapSource {
    /// Reads `out.len()` bytes at `offset` of the mapped file with positioned reads, not
    /// through the mapping: for callers that want the bytes in memory of their own without
    /// faulting the mapping's pages in one by one (network file systems, pinned staging
    /// buffers). Copies from the mapping when the file's handle was not kept.
    pub fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let range = checked::range(offset, out.len() as u64, self.map.len() as u64, "a read")?;
        #[cfg(unix)]
        if let Some(file) = &self.file {
            return pread(file, offset, out);
        }
        out.copy_from_slice(&self.map[range]);
        Ok(())
    }

    /// Asks the kernel to start reading `len` bytes at `offset` into the page cache, without
    /// waiting for them (`madvise(MADV_WILLNEED)`): a loader that will read the range next
    /// keeps the disk busy while it works on the range before. The kernel reads at most one
    /// read-ahead window per hint (the device's `read_ahead_kb`, 8 MiB on some disks and
    /// 128 KiB on others) and drops the rest, so the range is hinted a window at a time; the
    /// call may wait while the device's queue is full. The range is clamped to the file; a
    /// hint the system refuses, or a system without it, changes nothing.
    pub fn will_need(&self, offset: u64, len: u64) {
        #[cfg(unix)]
        {
            let size = self.map.len() as u64;
            let start = offset.min(size);
            let end = start + len.min(size - start);
            let window = *self.window.get_or_init(|| {
                self.file
                    .as_ref()
                    .map_or(crate::readahead::DEFAULT_WINDOW, crate::readahead::window)
            });
            let mut at = start;
            while at < end {
                let n = window.min(end - at);
                // A refused hint is not an error: the reads that follow still read.
                if self
                    .map
                    .advise_range(memmap2::Advice::WillNeed, at as usize, n as usize)
                    .is_err()
                {
                    break;
                }
                at += n;
            }
        }
        #[cfg(not(unix))]
        let _ = (offset, len);
    }

    /// Hands the pages of the mapping this process has touched back to the system
    /// (`madvise(MADV_DONTNEED)`): they stop counting toward the process's resident memory,
    /// stay in the page cache, and are mapped again from there when next touched, with the
    /// same bytes. For a reader that is done with what it read (a field decoded into memory
    /// of its own), so that the mapping does not add to its memory. Borrowed bytes stay
    /// valid. A system without the call, or one that refuses it, changes nothing.
    pub fn release(&self) {
        #[cfg(unix)]
        if !self.map.is_empty() {
            // SAFETY: `MADV_DONTNEED` is unchecked because it discards a private mapping's
            // written pages. This mapping is the file's, shared and read-only: nothing was
            // ever written to it, so the pages it drops are read again from the file (the
            // page cache) when touched, with the same bytes; every slice borrowed from it
            // stays valid. The range is the whole mapping.
            #[allow(unsafe_code)]
            let _ = unsafe {
                self.map
                    .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
            };
        }
    }

    /// A private, writable copy-on-write mapping of the same file (see [`PrivateMap`]);
    /// `None` when the file's handle was not kept.
    pub fn private_map(&self) -> Option<Result<PrivateMap>> {
        self.file.as_ref().map(PrivateMap::of)
    }
}

/// A file mapped privately and writable: pages are read from the file when first touched,
/// and a page written to becomes the mapping's own copy (copy-on-write). Nothing written
/// ever reaches the file, so the bytes can be handed out as writable memory (torch tensors
/// over a checkpoint) without copying and without risk to the file.
#[derive(Debug)]
pub struct PrivateMap {
    map: memmap2::MmapMut,
}

impl PrivateMap {
    /// Maps `file` privately.
    pub fn of(file: &File) -> Result<Self> {
        // SAFETY: as for `MmapSource::map_only`: the bytes are untrusted input read by code
        // that validates them, a concurrent writer of the file can change what unwritten
        // pages show but cannot make our code unsound, and a truncation may raise SIGBUS as
        // with every mapped reader. Writes go to private copies of pages (MAP_PRIVATE),
        // never to the file.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::MmapOptions::new().map_copy(file) }
            .map_err(|e| Error::io("mapping a file privately", e))?;
        Ok(PrivateMap { map })
    }

    /// The mapped bytes, to write.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }
}

impl AsRef<[u8]> for MmapSource {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

impl std::ops::Deref for MmapSource {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl ByteSource for MmapSource {
    fn len(&self) -> u64 {
        self.map.len() as u64
    }

    fn as_slice(&self) -> Option<&[u8]> {
        Some(&self.map)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        <[u8] as ByteSource>::read_exact_at(&self.map, offset, buf)
    }
}

/// Fills `buf` from `file` at `offset` with positioned reads (no shared file position).
#[cfg(unix)]
fn pread(file: &File, offset: u64, buf: &mut [u8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
        .map_err(|e| Error::io(format!("reading {} bytes at offset {offset}", buf.len()), e))
}

/// Positioned reads from an open file, without mapping it.
#[derive(Debug)]
pub struct FileSource {
    #[cfg(unix)]
    file: File,
    #[cfg(not(unix))]
    file: std::sync::Mutex<File>,
    len: u64,
}

impl FileSource {
    /// Opens the file at `path` for positioned reads.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file =
            File::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        Self::new(file)
    }

    /// Wraps an open file; its length is read once, now.
    pub fn new(file: File) -> Result<Self> {
        let len = file
            .metadata()
            .map_err(|e| Error::io("reading file metadata", e))?
            .len();
        Ok(FileSource {
            #[cfg(unix)]
            file,
            #[cfg(not(unix))]
            file: std::sync::Mutex::new(file),
            len,
        })
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        checked::range(offset, buf.len() as u64, self.len, "read")?;
        #[cfg(unix)]
        {
            pread(&self.file, offset, buf)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = self
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            file.seek(SeekFrom::Start(offset))
                .and_then(|_| file.read_exact(buf))
                .map_err(|e| {
                    Error::io(format!("reading {} bytes at offset {offset}", buf.len()), e)
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Kinded};
    use std::io::Write;

    #[test]
    fn offset_within_finds_borrowed_slices_only() {
        let outer = [0u8; 16];
        let other = [0u8; 16];
        assert_eq!(offset_within(&outer, &outer[3..7]), Some(3));
        assert_eq!(offset_within(&outer, &outer[16..]), Some(16));
        assert_eq!(offset_within(&outer[4..], &outer[..8]), None);
        assert_eq!(offset_within(&outer[..8], &outer[4..12]), None);
        let far = if other.as_ptr() > outer.as_ptr() {
            &other[..]
        } else {
            &outer[..]
        };
        let near = if other.as_ptr() > outer.as_ptr() {
            &outer[..]
        } else {
            &other[..]
        };
        assert_eq!(offset_within(near, &far[..1]), None);
    }

    fn check_source(src: &dyn ByteSource, expected: &[u8]) {
        assert_eq!(src.len(), expected.len() as u64);
        let mut buf = [0u8; 3];
        src.read_exact_at(2, &mut buf).unwrap();
        assert_eq!(buf, expected[2..5]);
        assert_eq!(&*src.bytes_at(1, 4, "x").unwrap(), &expected[1..5]);
        let e = src.bytes_at(8, 100, "tensor data").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert!(src.bytes_at(u64::MAX, 2, "x").is_err());
        assert!(src.read_exact_at(9, &mut buf).is_err());
        assert_eq!(src.bytes_at(10, 0, "x").unwrap().len(), 0);
    }

    #[test]
    fn every_source_reads_the_same_bytes() {
        let data: Vec<u8> = (0..10).collect();
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        tmp.flush().unwrap();

        check_source(&data, &data);
        check_source(&data.as_slice(), &data);
        let mapped = MmapSource::open(tmp.path()).unwrap();
        assert!(mapped.as_slice().is_some());
        check_source(&mapped, &data);
        let file = FileSource::open(tmp.path()).unwrap();
        assert!(file.as_slice().is_none());
        assert!(matches!(file.bytes_at(0, 2, "x").unwrap(), Cow::Owned(_)));
        check_source(&file, &data);
    }

    #[test]
    fn only_bytes_within_a_mapping_are_located_in_its_file() {
        let data: Vec<u8> = (0..100).collect();
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        tmp.flush().unwrap();
        let mapped = MmapSource::open(tmp.path()).unwrap();
        assert_eq!(mapped.locate(&mapped[10..20]).map(|(_, at)| at), Some(10));
        assert_eq!(mapped.locate(&mapped[..]).map(|(_, at)| at), Some(0));
        assert_eq!(mapped.locate(&mapped[100..]).map(|(_, at)| at), Some(100));
        assert!(mapped.locate(&data[10..20]).is_none());
        let by_handle = MmapSource::map(tmp.as_file()).unwrap();
        assert!(
            by_handle.locate(&mapped[10..20]).is_none(),
            "another mapping"
        );
        assert_eq!(
            by_handle.locate(&by_handle[3..4]).map(|(_, at)| at),
            Some(3)
        );
    }

    #[test]
    fn released_pages_read_back_the_same_bytes() {
        let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i % 251) as u8).collect();
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        tmp.flush().unwrap();
        let mapped = MmapSource::open(tmp.path()).unwrap();
        let held = &mapped[4096..8192];
        assert_eq!(&mapped[..], &data[..]);
        mapped.release();
        assert_eq!(held, &data[4096..8192], "a slice borrowed before");
        assert_eq!(&mapped[..], &data[..]);
        MmapSource::open(tempfile::NamedTempFile::new().unwrap().path())
            .unwrap()
            .release();
    }

    #[test]
    fn empty_files_map_and_missing_files_say_which() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let mapped = MmapSource::open(tmp.path()).unwrap();
        assert!(mapped.is_empty());
        let e = MmapSource::open("/nonexistent/file.tgm").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io);
        assert!(e.to_string().contains("/nonexistent/file.tgm"));
        assert!(FileSource::open("/nonexistent/file.tgm").is_err());
    }
}
