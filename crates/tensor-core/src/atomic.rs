//! Files written out of sight and linked into place only when complete.
//!
//! A crash, a full disk or a killed process never leaves a half-written file under the final
//! name, and never leaves litter under any other name:
//!
//! - on Linux the data goes to an *unnamed* file in the target's directory (`O_TMPFILE`);
//!   a writer killed at any moment leaves nothing, since the kernel frees a file without a
//!   name when its last descriptor closes. [`AtomicFile::commit`] links it in under a
//!   private name (`linkat`) and renames that over the target;
//! - where unnamed files are not available (other systems, file systems without
//!   `O_TMPFILE`) the data goes to a named temporary file, `.<name>.tkw-<pid>-<random>.tmp`.
//!   Every new [`AtomicFile`] first removes such files left in its directory by writers
//!   whose process is gone (on Linux; elsewhere the pid cannot be checked and they stay).
//!
//! A file that is dropped without [`AtomicFile::commit`] is removed.
//!
//! Whether [`AtomicFile::commit`] also waits for the disk is the writer's choice, its
//! [`Durability`]. By default it does not, as `cp`, `rsync` and the formats' own writers do
//! not: the file is whole under its name for every process at once, and the kernel writes
//! it back in its own time. [`Durability::Synced`] syncs the file before the rename and the
//! directory after it (fsync), so that a committed file also survives a power failure; such
//! files are written back while they are written: after every [`WRITEBACK_EVERY`] bytes a
//! helper thread syncs what has been written so far, so the sync in the commit waits only
//! for the last stretch rather than the whole file (the disk works while the writer fills
//! the page cache, instead of after it). docs/decisions/0008 says why syncing is the
//! exception.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The tag in the names of our temporary files: `.<name>.tkw-<pid>-<random>.tmp`.
const TAG: &str = ".tkw-";

/// What [`AtomicFile::commit`] waits for besides the rename.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Nothing more: the committed file is whole under its name for every process, and the
    /// kernel writes it to disk in its own time, as `cp` leaves a copy. A power failure or a
    /// kernel crash within the next seconds may leave the name missing, or a new file short
    /// or empty (which every reader refuses); a file it replaced is kept or replaced whole
    /// on file systems that flush a file renamed over another (ext4 with its default
    /// `auto_da_alloc`, btrfs).
    #[default]
    Cached,
    /// The file is synced to disk before it is renamed into place, and its directory after
    /// (fsync): once the commit returns, the file survives a power failure. Writing a
    /// large file takes as long as the disk needs for it, often twice the cached write.
    Synced,
}

impl Durability {
    /// [`Synced`](Self::Synced) when `fsync` is asked for (`--fsync`, `fsync=True`),
    /// [`Cached`](Self::Cached) otherwise.
    #[must_use]
    pub fn synced_if(fsync: bool) -> Self {
        if fsync { Self::Synced } else { Self::Cached }
    }
}

/// A buffered writer for a file that appears under its final name only on
/// [`commit`](Self::commit).
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out.bin");
/// let mut f = tensor_core::atomic::AtomicFile::create(&path)?;
/// f.write_all(b"hello")?;
/// assert!(!path.exists());
/// f.commit()?;
/// assert_eq!(std::fs::read(&path)?, b"hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    inner: BufWriter<Staged>,
    target: PathBuf,
    dir: PathBuf,
    /// The temporary's name when it has one (the fallback); `None` for an unnamed file.
    named: Option<PathBuf>,
}

impl AtomicFile {
    /// Starts writing a file that will be named `path`, [`Durability::Cached`].
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        Self::create_with(path, Durability::Cached)
    }

    /// Starts writing a file that will be named `path`, committed with `durability`.
    pub fn create_with(path: impl AsRef<Path>, durability: Durability) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let dir = directory_of(&target);
        sweep_stale(&dir);
        let (file, named) = if let Some(file) = unnamed_in(&dir) {
            (file, None)
        } else {
            let (file, name) = named_in(&dir, &target)?;
            (file, Some(name))
        };
        Ok(AtomicFile {
            inner: BufWriter::with_capacity(1 << 20, Staged::new(file, durability)),
            target,
            dir,
            named,
        })
    }

    /// Tells the file system that `len` bytes will be written, so that it sets their blocks
    /// aside now (`fallocate` with `FALLOC_FL_KEEP_SIZE`: the file's length still grows only
    /// as it is written). For a file that replaces one of the same size, whose length is
    /// known before it is written (an edit's copy): ext4 otherwise allocates the blocks of
    /// everything written, synchronously, in the rename that puts the file in place (its
    /// `auto_da_alloc` for files replaced by rename), about 0.4 s a GiB on this machine. A
    /// file system without it, or one that refuses, is left to allocate as it writes.
    pub fn allocate(&self, len: u64) {
        #[cfg(target_os = "linux")]
        if len > 0 {
            use std::os::fd::AsFd as _;
            // A hint: refused, the writes allocate as they go.
            let _ = rustix::fs::fallocate(
                self.inner.get_ref().file.as_fd(),
                rustix::fs::FallocateFlags::KEEP_SIZE,
                0,
                len,
            );
        }
        #[cfg(not(target_os = "linux"))]
        let _ = len;
    }

    /// The name the file will have after [`commit`](Self::commit).
    #[must_use]
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the data is going to a file without a name (nothing is left behind even if
    /// the process is killed).
    #[must_use]
    pub fn is_unnamed(&self) -> bool {
        self.named.is_none()
    }

    /// Flushes, moves the file into place (an unnamed file linked under the name when nothing
    /// has it yet, else renamed over what does) and, [`Durability::Synced`], syncs it to disk
    /// before and the directory after.
    pub fn commit(mut self) -> Result<()> {
        let target = self.target.clone();
        self.inner
            .flush()
            .map_err(|e| Error::io(format!("flushing {}", target.display()), e))?;
        let durability = self.inner.get_ref().durability;
        if durability == Durability::Synced {
            self.inner
                .get_mut()
                .sync()
                .map_err(|e| Error::io(format!("syncing {}", target.display()), e))?;
        }
        let staged = if let Some(name) = self.named.take() {
            name
        } else {
            // Where nothing has the name yet, the unnamed file is linked under it directly:
            // one step, after which the file is there whole, with no name of ours to leave
            // behind if the process dies. Over an existing file, it is linked under a
            // temporary name and renamed over it.
            match link_unnamed(&self.inner.get_ref().file, &target) {
                Ok(()) => {
                    if durability == Durability::Synced {
                        sync_directory(&self.dir);
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("linking {} into place", target.display()),
                        e,
                    ));
                }
            }
            let name = temp_name(&self.dir, &target);
            link_unnamed(&self.inner.get_ref().file, &name)
                .map_err(|e| Error::io(format!("linking {} into place", target.display()), e))?;
            name
        };
        if let Err(e) = std::fs::rename(&staged, &target) {
            let _ = std::fs::remove_file(&staged);
            return Err(Error::io(format!("renaming into {}", target.display()), e));
        }
        // The rename is durable only once the directory is.
        if durability == Durability::Synced {
            sync_directory(&self.dir);
        }
        Ok(())
    }
}

/// The directory a file named `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Syncs `dir` to disk, so that the names made or changed in it survive a power failure
/// (best effort: where a directory cannot be opened, nothing is done).
fn sync_directory(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Syncs the directory that holds `path` to disk, so that a file just created under that
/// name survives a power failure once its data is synced too (best effort, as
/// [`AtomicFile::commit`] does for the files it renames into place).
pub fn sync_directory_of(path: &Path) {
    sync_directory(&directory_of(path));
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some(name) = self.named.take() {
            let _ = std::fs::remove_file(name);
        }
    }
}

/// How many bytes a [`Durability::Synced`] [`AtomicFile`] writes between asking for what it
/// wrote to be synced to disk in the background.
pub const WRITEBACK_EVERY: u64 = 64 << 20;

/// The stretch the helper is woken after: [`WRITEBACK_EVERY`], or 4 MiB in this crate's unit
/// tests so that they exercise the helper without writing hundreds of megabytes to a disk that
/// CI machines do not always have free.
const STRETCH: u64 = if cfg!(test) { 4 << 20 } else { WRITEBACK_EVERY };

/// The most one `write` system call is handed, 256 KiB as `cp` uses, so that the writeback
/// helper is woken between pieces of a large buffer rather than after all of it. Measured on
/// the benchmark machine: one `write` of a whole mapped gigabyte took 1.6 s against about
/// 0.4 s in pieces. (Writes into new page-cache pages there also depend on the piece size,
/// since the kernel sizes folios by it, but not consistently from one run to the next.)
pub const WRITE_PIECE: usize = 256 << 10;

/// The file under an [`AtomicFile`]'s buffer: when it is to be synced, counts what is
/// written and, every [`WRITEBACK_EVERY`] bytes, wakes a helper thread (started on the first
/// such stretch) that syncs the file while writing goes on.
#[derive(Debug)]
struct Staged {
    file: File,
    durability: Durability,
    unsynced: u64,
    writeback: Option<Writeback>,
}

/// The helper thread and the way to wake it. It keeps the first error it meets (a sync
/// error is reported once per open file, so the final sync might not see it again).
#[derive(Debug)]
struct Writeback {
    wake: mpsc::SyncSender<()>,
    thread: JoinHandle<io::Result<()>>,
}

impl Staged {
    fn new(file: File, durability: Durability) -> Self {
        Staged {
            file,
            durability,
            unsynced: 0,
            writeback: None,
        }
    }

    /// Counts `n` bytes written; wakes the helper (starting it if need be) every
    /// [`WRITEBACK_EVERY`] bytes of a file to be synced. Without a thread, the whole sync is
    /// left to [`sync`](Self::sync).
    fn wrote(&mut self, n: usize) {
        if self.durability == Durability::Cached {
            return;
        }
        self.unsynced += n as u64;
        if self.unsynced < STRETCH {
            return;
        }
        self.unsynced = 0;
        if self.writeback.is_none() {
            let Ok(file) = self.file.try_clone() else {
                return;
            };
            let (wake, woken) = mpsc::sync_channel::<()>(1);
            let thread = std::thread::Builder::new()
                .name("tensorkit-writeback".into())
                .spawn(move || -> io::Result<()> {
                    while woken.recv().is_ok() {
                        file.sync_data()?;
                    }
                    Ok(())
                });
            let Ok(thread) = thread else { return };
            self.writeback = Some(Writeback { wake, thread });
        }
        if let Some(w) = &self.writeback {
            // Full means a sync is already asked for: it will cover these bytes too.
            let _ = w.wake.try_send(());
        }
    }

    /// Stops the helper, if one runs, once its current sync is done; returns its error.
    fn stop_writeback(&mut self) -> io::Result<()> {
        let Some(Writeback { wake, thread }) = self.writeback.take() else {
            return Ok(());
        };
        drop(wake);
        thread
            .join()
            .map_err(|_| io::Error::other("the writeback thread panicked"))?
    }

    /// Stops the helper (reporting its error, if it met one) and syncs the whole file.
    fn sync(&mut self) -> io::Result<()> {
        self.stop_writeback()?;
        self.file.sync_all()
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = self.stop_writeback();
    }
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(&buf[..buf.len().min(WRITE_PIECE)])?;
        self.wrote(n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Staged {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// `.<name>.tkw-<pid>-<random>.tmp` beside `target`.
fn temp_name(dir: &Path, target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Keep the whole name within the usual 255-byte limit.
    let name: String = name.chars().take(160).collect();
    let random: u64 =
        std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now());
    dir.join(format!(
        ".{name}{TAG}{}-{random:016x}.tmp",
        std::process::id()
    ))
}

use std::hash::BuildHasher;

/// A named temporary file, created exclusively, with the permissions of an ordinary file.
fn named_in(dir: &Path, target: &Path) -> Result<(File, PathBuf)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    // The finished file should get the usual permissions, 0666 less the process umask.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o666);
    let mut last = None;
    for _ in 0..16 {
        let name = temp_name(dir, target);
        match options.open(&name) {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Error::io(
                    format!("creating a temporary file in {}", dir.display()),
                    e,
                ));
            }
        }
    }
    Err(Error::io(
        format!("creating a temporary file in {}", dir.display()),
        last.unwrap_or_else(|| io::Error::other("no free name")),
    ))
}

#[cfg(target_os = "linux")]
fn unnamed_in(dir: &Path) -> Option<File> {
    use rustix::fs::{CWD, Mode, OFlags};
    let fd = rustix::fs::openat(
        CWD,
        dir,
        OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )
    .ok()?;
    Some(File::from(fd))
}

#[cfg(not(target_os = "linux"))]
fn unnamed_in(_dir: &Path) -> Option<File> {
    None
}

#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, name: &Path) -> io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    use std::os::fd::AsRawFd;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    rustix::fs::linkat(CWD, proc_path.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW)
        .or_else(|_| rustix::fs::linkat(file, "", CWD, name, AtFlags::EMPTY_PATH))
        .map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _name: &Path) -> io::Result<()> {
    Err(io::Error::other("unnamed files are not supported here"))
}

/// Removes temporaries in `dir` whose writer process no longer exists (best effort).
fn sweep_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(pid) = stale_writer(name)
            && !process_alive(pid)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The writer's pid in a name of ours (`.<name>.tkw-<pid>-<16 hex>.tmp`).
fn stale_writer(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = rest.rsplit_once(TAG)?;
    let (pid, random) = tail.split_once('-')?;
    (random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| pid.parse().ok())
        .flatten()
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_alive(_pid: u32) -> bool {
    true
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes of at least this many bytes found in a mapped source are copied by the kernel;
/// smaller ones cost less written from memory.
const COPY_AT_LEAST: usize = 64 << 10;

/// The most one kernel copy is asked for when the file is synced as it is written, so that
/// the writeback helper is woken as it is for writes. Otherwise a range is asked for whole,
/// as `cp` asks: the kernel copies it in one call.
const COPY_PIECE: usize = 8 << 20;

/// An [`AtomicFile`] being written, where bytes that lie in one of some memory-mapped files
/// are copied from that file by the kernel (`copy_file_range`: no pass through memory, and a
/// shared extent on file systems that have them) rather than written from memory. What ends
/// up in the file is the same either way; only how it got there differs. From
/// [`AtomicFile::copying_from`].
#[derive(Debug)]
pub struct CopyingFrom<'a> {
    file: &'a mut AtomicFile,
    sources: &'a [&'a crate::MmapSource],
    /// Set once the kernel declines a copy (another file system, no support): everything
    /// after is written from memory.
    declined: bool,
    copied: u64,
}

impl CopyingFrom<'_> {
    /// How many bytes the kernel has copied so far (the rest was written from memory).
    #[must_use]
    pub fn kernel_copied(&self) -> u64 {
        self.copied
    }
}

impl AtomicFile {
    /// A writer into this file that has the kernel copy every large write whose bytes lie
    /// in one of `sources` (on Linux; elsewhere the bytes are written as usual). A converter
    /// whose tensors borrow from mapped files writes them through this and copies the
    /// files' ranges as `cp` would.
    pub fn copying_from<'a>(&'a mut self, sources: &'a [&'a crate::MmapSource]) -> CopyingFrom<'a> {
        CopyingFrom {
            file: self,
            sources,
            declined: false,
            copied: 0,
        }
    }

    /// Has the kernel append `len` bytes of `from` at `offset` to what is written. Returns
    /// how many it copied before it declined (0 if at once); the caller writes the rest.
    #[cfg(target_os = "linux")]
    fn copy_range(&mut self, from: &File, mut offset: u64, len: usize) -> io::Result<usize> {
        self.inner.flush()?;
        let staged = self.inner.get_mut();
        let mut copied = 0;
        while copied < len {
            let piece = match staged.durability {
                Durability::Synced => (len - copied).min(COPY_PIECE),
                Durability::Cached => len - copied,
            };
            match rustix::fs::copy_file_range(from, Some(&mut offset), &staged.file, None, piece) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the source file ends at offset {offset}, {} bytes short of the \
                             range being copied (did it shrink while open?)",
                            len - copied
                        ),
                    ));
                }
                Ok(n) => {
                    copied += n;
                    staged.wrote(n);
                }
                Err(rustix::io::Errno::INTR) => {}
                // Whatever the reason (another file system, a kernel without it), the
                // bytes are at hand: they are written from memory instead.
                Err(_) => break,
            }
        }
        Ok(copied)
    }
}

impl Write for CopyingFrom<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        #[cfg(target_os = "linux")]
        if !self.declined
            && buf.len() >= COPY_AT_LEAST
            && let Some((from, offset)) = self.sources.iter().find_map(|s| s.locate(buf))
        {
            let copied = self.file.copy_range(from, offset, buf.len())?;
            self.copied += copied as u64;
            if copied == buf.len() {
                return Ok(copied);
            }
            self.declined = true;
            if copied > 0 {
                return Ok(copied);
            }
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

impl Seek for CopyingFrom<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

/// A writer that can also go back: what writers of formats whose header holds something
/// known only at the end (Tensogram's header hash frame) write to, patching it in place
/// instead of reading the data twice. Files and `io::Cursor`s can; pipes cannot.
pub trait WriteSeek: Write + Seek {}

impl<T: Write + Seek + ?Sized> WriteSeek for T {}

/// Writes `bytes` to `path` atomically, committed with `durability`.
pub fn write(path: impl AsRef<Path>, bytes: &[u8], durability: Durability) -> Result<()> {
    let mut f = AtomicFile::create_with(path, durability)?;
    f.write_all(bytes)
        .map_err(|e| Error::io(format!("writing {}", f.target().display()), e))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_files_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        {
            let mut f = AtomicFile::create(&path).unwrap();
            f.write_all(&[1; 100]).unwrap();
            #[cfg(target_os = "linux")]
            assert!(
                f.is_unnamed(),
                "ordinary Linux file systems offer O_TMPFILE"
            );
            // Nothing is visible while the file is written.
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn commit_replaces_an_existing_file_and_seek_works() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, b"old contents").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"0000new").unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(b"1").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"1000new");
        write(&path, b"again", Durability::Synced).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"again");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn allocating_ahead_leaves_the_length_to_what_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, b"old").unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.allocate(1 << 20);
        f.write_all(&[7; 5000]).unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [7; 5000]);
        // More written than was set aside.
        let mut f = AtomicFile::create(&path).unwrap();
        f.allocate(10);
        f.write_all(&[8; 3000]).unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [8; 3000]);
    }

    #[test]
    fn named_temporaries_are_removed_on_drop_and_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let (file, name) = named_in(dir.path(), &path).unwrap();
        let f = AtomicFile {
            inner: BufWriter::new(Staged::new(file, Durability::Synced)),
            target: path.clone(),
            dir: dir.path().to_path_buf(),
            named: Some(name.clone()),
        };
        assert!(name.exists());
        drop(f);
        assert!(!name.exists());
        let (file, name) = named_in(dir.path(), &path).unwrap();
        let mut f = AtomicFile {
            inner: BufWriter::new(Staged::new(file, Durability::Synced)),
            target: path.clone(),
            dir: dir.path().to_path_buf(),
            named: Some(name),
        };
        f.write_all(b"named").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"named");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn temporaries_of_dead_writers_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        // A pid far above any pid_max is never alive.
        let dead = dir
            .path()
            .join(".x.bin.tkw-4294967295-0123456789abcdef.tmp");
        let mine = temp_name(dir.path(), &dir.path().join("y.bin"));
        let other = dir.path().join(".x.bin.tkw-1-notours.tmp");
        for p in [&dead, &mine, &other] {
            std::fs::write(p, b"partial").unwrap();
        }
        assert_eq!(
            stale_writer(dead.file_name().unwrap().to_str().unwrap()),
            Some(u32::MAX)
        );
        let f = AtomicFile::create(dir.path().join("z.bin")).unwrap();
        #[cfg(target_os = "linux")]
        assert!(!dead.exists(), "a dead writer's temporary is removed");
        assert!(mine.exists(), "a live writer's temporary is kept");
        assert!(other.exists(), "files that only look similar are kept");
        drop(f);
    }

    #[cfg(unix)]
    #[test]
    fn finished_files_are_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        write(&path, b"x", Durability::Cached).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_ne!(
            mode & 0o044,
            0,
            "mode {mode:o}: group/other read is missing"
        );
    }

    #[test]
    fn fsync_asks_for_synced_commits() {
        assert_eq!(Durability::synced_if(true), Durability::Synced);
        assert_eq!(Durability::synced_if(false), Durability::Cached);
        assert_eq!(Durability::default(), Durability::Cached);
    }

    #[test]
    fn large_files_are_synced_while_written_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        let mut f = AtomicFile::create_with(&path, Durability::Synced).unwrap();
        let chunk: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let n = (STRETCH >> 20) * 2 + 3;
        for _ in 0..n {
            f.write_all(&chunk).unwrap();
        }
        assert!(
            f.inner.get_ref().writeback.is_some(),
            "the helper starts after the first stretch"
        );
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(b"head").unwrap();
        f.commit().unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!(back.len() as u64, n << 20);
        assert_eq!(&back[..4], b"head");
        assert_eq!(&back[4..1 << 20], &chunk[4..]);
        assert!(back[1 << 20..].chunks(1 << 20).all(|c| c == &chunk[..]));
        // A small file never starts the helper, nor does a large one left to the kernel.
        let mut small =
            AtomicFile::create_with(dir.path().join("small.bin"), Durability::Synced).unwrap();
        small.write_all(&chunk).unwrap();
        assert!(small.inner.get_ref().writeback.is_none());
        drop(small);
        let cached = dir.path().join("cached.bin");
        let mut large = AtomicFile::create(&cached).unwrap();
        for _ in 0..n {
            large.write_all(&chunk).unwrap();
        }
        assert!(large.inner.get_ref().writeback.is_none());
        large.commit().unwrap();
        let cached = std::fs::read(&cached).unwrap();
        assert_eq!(cached.len() as u64, n << 20);
        assert!(cached.chunks(1 << 20).all(|c| c == &chunk[..]));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn bytes_from_a_mapped_source_are_copied_by_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let source: Vec<u8> = (0..(3 << 20) + 17).map(|i: u32| (i % 253) as u8).collect();
        std::fs::write(dir.path().join("src.bin"), &source).unwrap();
        let map = crate::MmapSource::open(dir.path().join("src.bin")).unwrap();
        let elsewhere = vec![9u8; 1 << 20];
        let path = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&path).unwrap();
        let sources = [&map];
        let mut w = f.copying_from(&sources);
        w.write_all(b"hdr").unwrap();
        // Unaligned, larger than a copy piece would be at this scale, and straddling pages.
        w.write_all(&map[5..=5 + (2 << 20)]).unwrap();
        w.write_all(&map[100..200]).unwrap();
        w.write_all(&elsewhere).unwrap();
        w.write_all(&map[map.len() - (64 << 10)..]).unwrap();
        #[cfg(target_os = "linux")]
        assert_eq!(w.kernel_copied(), (2 << 20) + 1 + (64 << 10));
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(b"HDR").unwrap();
        f.commit().unwrap();
        let mut want = b"HDR".to_vec();
        want.extend_from_slice(&source[5..=5 + (2 << 20)]);
        want.extend_from_slice(&source[100..200]);
        want.extend_from_slice(&elsewhere);
        want.extend_from_slice(&source[source.len() - (64 << 10)..]);
        assert!(std::fs::read(&path).unwrap() == want);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_source_that_shrank_is_an_error_not_a_short_file() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src.bin");
        std::fs::write(&src, vec![1u8; 1 << 20]).unwrap();
        let map = crate::MmapSource::open(&src).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&src)
            .unwrap()
            .set_len(1000)
            .unwrap();
        let path = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&path).unwrap();
        let sources = [&map];
        // Only where the bytes are is looked at, never the bytes (which are gone).
        let e = f
            .copying_from(&sources)
            .write_all(&map[500_000..600_000])
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("did it shrink"), "{e}");
        drop(f);
        assert!(!path.exists());
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_it() {
        let e = AtomicFile::create("/nonexistent-dir/x.bin").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir"));
    }
}
