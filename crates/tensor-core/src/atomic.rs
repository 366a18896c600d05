//! Files written under a temporary name and renamed into place.
//!
//! A crash, a full disk or a killed process never leaves a half-written file under the final
//! name: the data goes to a temporary file in the same directory, is flushed to disk, and only
//! then renamed over the target. A file that is dropped without [`AtomicFile::commit`] is
//! removed.

use crate::error::{Error, Result};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

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
    inner: BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
}

impl AtomicFile {
    /// Starts writing a file that will be named `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // Temporary files are private (0600) by default; the finished file should get the
        // usual permissions, 0666 less the process umask, like any file the user creates.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let tmp = builder
            .tempfile_in(&dir)
            .map_err(|e| Error::io(format!("creating a temporary file in {}", dir.display()), e))?;
        Ok(AtomicFile {
            inner: BufWriter::with_capacity(1 << 20, tmp),
            target,
        })
    }

    /// The name the file will have after [`commit`](Self::commit).
    #[must_use]
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, syncs to disk and renames the file into place.
    pub fn commit(self) -> Result<()> {
        let target = self.target;
        let tmp = self
            .inner
            .into_inner()
            .map_err(|e| Error::io(format!("flushing {}", target.display()), e.into_error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io(format!("syncing {}", target.display()), e))?;
        tmp.persist(&target)
            .map_err(|e| Error::io(format!("renaming into {}", target.display()), e.error))?;
        Ok(())
    }
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

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
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
        write(&path, b"again").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"again");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn finished_files_are_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        write(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_ne!(
            mode & 0o044,
            0,
            "mode {mode:o}: group/other read is missing"
        );
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_it() {
        let e = AtomicFile::create("/nonexistent-dir/x.bin").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir"));
    }
}
