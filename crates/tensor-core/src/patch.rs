//! Changing bytes of an existing file in place, so that a process killed at any instant
//! leaves the file either as it was or as it was meant to become.
//!
//! A [`Patch`] (byte ranges to overwrite, and the file's length after) is applied in three
//! steps, the way a database applies a redo log:
//!
//! 1. the whole patch, with a checksum, is written to a journal beside the file,
//!    `.<name>.tkpatch` (a journal cut short fails its checksum);
//! 2. the ranges are written into the file and its length set;
//! 3. the journal is removed.
//!
//! Killed before step 1 completes, the file is untouched, and a journal cut short is
//! dropped by the next [`recover`]. Killed
//! during step 2, the file may be half changed, but the journal says how to finish:
//! [`recover`] writes the ranges again (writing them twice does no harm) and removes the
//! journal. tensorkit's readers call [`recover`] before they open a local file, as `SQLite`'s
//! readers roll back a hot journal, so a file is never read half changed by them; other
//! programs see a half-changed file only while step 2 runs, a few system calls long.
//!
//! With [`Durability::Synced`] the journal and the file are also synced to disk before the
//! next step, so that the same holds across a power failure.

use crate::atomic::Durability;
use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"TKPATCH1";

/// Byte ranges of a file to overwrite, and the file's length afterwards (to shorten it or
/// to grow it past its end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Patch {
    /// `(offset, bytes)`: the bytes to write at `offset`.
    pub writes: Vec<(u64, Vec<u8>)>,
    /// The file's length once patched.
    pub len: u64,
}

/// A patch as journaled: with the length the file had before it, so that a journal left
/// beside a file that has since been replaced (another length) is not applied to it.
struct Journaled {
    patch: Patch,
    len_before: u64,
}

impl Patch {
    fn encode(&self, len_before: u64) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&len_before.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&(self.writes.len() as u64).to_le_bytes());
        for (offset, bytes) in &self.writes {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        seal(out)
    }

    fn decode(bytes: &[u8], journal: &Path) -> Result<Journaled> {
        let bad = |reason: &str| Error::Malformed {
            what: "patch journal",
            offset: 0,
            reason: format!("{}: {reason}", journal.display()),
        };
        if bytes.len() < 40 || !bytes.starts_with(MAGIC) {
            return Err(bad("not a tensorkit patch journal"));
        }
        let body = unseal(bytes).ok_or_else(|| bad("its checksum does not match"))?;
        let mut at = 8usize;
        let u64_at = |at: &mut usize| -> Result<u64> {
            let b = body
                .get(*at..*at + 8)
                .ok_or_else(|| bad("it ends inside a range"))?;
            *at += 8;
            Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
        };
        let len_before = u64_at(&mut at)?;
        let len = u64_at(&mut at)?;
        let count = u64_at(&mut at)?;
        let mut writes = Vec::new();
        for _ in 0..count {
            let offset = u64_at(&mut at)?;
            let n = usize::try_from(u64_at(&mut at)?).map_err(|_| bad("a range is too long"))?;
            let end = at
                .checked_add(n)
                .filter(|&e| e <= body.len())
                .ok_or_else(|| bad("it ends inside a range"))?;
            writes.push((offset, body[at..end].to_vec()));
            at = end;
        }
        if at != body.len() {
            return Err(bad("bytes follow its last range"));
        }
        Ok(Journaled {
            patch: Patch { writes, len },
            len_before,
        })
    }
}

/// `body` followed by its XXH3-64 checksum: a journal whose writer was killed before it was
/// whole fails [`unseal`].
#[must_use]
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let sum = crate::xxh3::xxh3_64(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    body
}

/// The body of a journal [`seal`] made, or `None` when it was cut short or damaged.
#[must_use]
pub fn unseal(bytes: &[u8]) -> Option<&[u8]> {
    let (body, sum) = bytes.split_at(bytes.len().checked_sub(8)?);
    (crate::xxh3::xxh3_64(body).to_le_bytes() == sum).then_some(body)
}

/// The journal of a patch of `path`: `.<name>.tkpatch` in the same directory.
#[must_use]
pub fn journal_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tkpatch"))
}

/// Whether a patch of `path` was left unfinished (its journal exists).
#[must_use]
pub fn is_pending(path: &Path) -> bool {
    journal_path(path).symlink_metadata().is_ok()
}

/// Applies `patch` to the file at `path` (see the module's description).
pub fn apply(path: &Path, edit: &Patch, durability: Durability) -> Result<()> {
    stage(path, edit, durability)?;
    write_ranges(path, edit, durability)?;
    remove_journal(&journal_path(path), durability)
}

/// The first step of [`apply`] alone: finishes any patch left unfinished, then writes the
/// journal of `patch` beside `path` without touching the file — the state a process
/// killed right after journaling leaves, which the next [`recover`] finishes.
pub fn stage(path: &Path, edit: &Patch, durability: Durability) -> Result<()> {
    recover(path, durability)?;
    let len_before = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("reading the length of {}", path.display()), e))?
        .len();
    write_journal(&journal_path(path), &edit.encode(len_before), durability)
}

/// Finishes a patch of `path` that a killed process left unfinished, if any: writes its
/// ranges and removes its journal. Returns whether there was one.
pub fn recover(path: &Path, durability: Durability) -> Result<bool> {
    let journal = journal_path(path);
    let Some(bytes) = read_journal(&journal)? else {
        return Ok(false);
    };
    let Ok(Journaled {
        patch: pending,
        len_before,
    }) = Patch::decode(&bytes, &journal)
    else {
        // Cut short or damaged: the process writing it stopped before it was whole, and so
        // before it touched the file.
        remove_journal(&journal, durability)?;
        return Ok(false);
    };
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("reading the length of {}", path.display()), e))?
        .len();
    if len != len_before && len != pending.len {
        return Err(Error::InvalidArgument(format!(
            "{} records an unfinished edit of a file {len_before} bytes long, but {} is {len} \
             bytes long: it was replaced since. Remove the journal if the file is as it \
             should be",
            journal.display(),
            path.display()
        )));
    }
    write_ranges(path, &pending, durability).map_err(|e| match e {
        Error::Io { context, source } => Error::io(
            format!(
                "{context}, finishing the unfinished edit that {} records",
                journal.display()
            ),
            source,
        ),
        other => other,
    })?;
    remove_journal(&journal, durability)?;
    Ok(true)
}

/// The journal at `journal`, `None` when there is none. A journal holds a header or two, so
/// one longer than twice the default header limit (and a mebibyte) is refused before it is
/// read: it is no journal of ours.
pub fn read_journal(journal: &Path) -> Result<Option<Vec<u8>>> {
    let io = |e| Error::io(format!("reading {}", journal.display()), e);
    let len = match std::fs::symlink_metadata(journal) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let most = crate::Limits::default()
        .max_header_bytes
        .saturating_mul(2)
        .saturating_add(1 << 20);
    if len > most {
        return Err(Error::Malformed {
            what: "edit journal",
            offset: 0,
            reason: format!(
                "{} is {len} bytes long, more than a journal of tensorkit's ({most} at most)",
                journal.display()
            ),
        });
    }
    match std::fs::read(journal) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(e)),
    }
}

/// Writes a journal (made by [`seal`]) under its name, which must not exist yet; with
/// [`Durability::Synced`] it is on disk when this returns. A process killed while writing
/// leaves it short, which [`unseal`] tells: [`recover`] then drops it, the file not yet
/// touched.
pub fn write_journal(journal: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let io = |e| Error::io(format!("writing {}", journal.display()), e);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(journal)
        .map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    if durability == Durability::Synced {
        f.sync_all().map_err(io)?;
        crate::atomic::sync_directory_of(journal);
    }
    Ok(())
}

fn write_ranges(path: &Path, edit: &Patch, durability: Durability) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let io = |what: &str, e| Error::io(format!("{what} {}", path.display()), e);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io("opening to patch", e))?;
    for (offset, bytes) in &edit.writes {
        file.seek(SeekFrom::Start(*offset))
            .and_then(|_| file.write_all(bytes))
            .map_err(|e| io("patching", e))?;
    }
    let len = file
        .metadata()
        .map_err(|e| io("reading the length of", e))?
        .len();
    if len != edit.len {
        file.set_len(edit.len)
            .map_err(|e| io("setting the length of", e))?;
    }
    if durability == Durability::Synced {
        file.sync_all().map_err(|e| io("syncing", e))?;
    }
    Ok(())
}

/// Removes a journal (one already gone is not an error: a reader finishing the same edit
/// may have removed it first).
pub fn remove_journal(journal: &Path, durability: Durability) -> Result<()> {
    match std::fs::remove_file(journal) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io(format!("removing {}", journal.display()), e));
        }
        _ => {}
    }
    if durability == Durability::Synced {
        crate::atomic::sync_directory_of(journal);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch() -> Patch {
        Patch {
            writes: vec![(2, b"XY".to_vec()), (10, b"tail".to_vec())],
            len: 14,
        }
    }

    #[test]
    fn applies_and_leaves_no_journal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"0123456789ab").unwrap();
        apply(&path, &patch(), Durability::Cached).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"01XY456789tail");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(!is_pending(&path));
    }

    #[test]
    fn a_journal_left_behind_is_finished_by_recover() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        // Killed after the journal and half the ranges: the file is half changed.
        std::fs::write(&path, b"01XY456789ab").unwrap();
        std::fs::write(journal_path(&path), patch().encode(12)).unwrap();
        assert!(is_pending(&path));
        assert!(recover(&path, Durability::Cached).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"01XY456789tail");
        assert!(!is_pending(&path));
        assert!(!recover(&path, Durability::Cached).unwrap());
    }

    #[test]
    fn a_journal_cut_short_or_damaged_is_dropped_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"0123456789ab").unwrap();
        let mut j = patch().encode(12);
        for cut in [0, 7, 20, j.len() - 1] {
            std::fs::write(journal_path(&path), &j[..cut]).unwrap();
            assert!(!recover(&path, Durability::Cached).unwrap());
            assert!(!is_pending(&path));
        }
        j[12] ^= 1;
        std::fs::write(journal_path(&path), &j).unwrap();
        assert!(!recover(&path, Durability::Cached).unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789ab");
        assert!(
            Patch::decode(&j, Path::new("j"))
                .err()
                .is_some_and(|e| e.to_string().contains("checksum"))
        );
    }

    #[test]
    fn journals_round_trip() {
        for (p, before) in [(patch(), 12), (Patch::default(), 0)] {
            let j = Patch::decode(&p.encode(before), Path::new("j"))
                .ok()
                .unwrap();
            assert_eq!((j.patch, j.len_before), (p, before));
        }
    }

    #[test]
    fn a_journal_too_long_to_be_ours_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"0123456789ab").unwrap();
        // Sparse: no disk is used, and nothing is read.
        let j = std::fs::File::create(journal_path(&path)).unwrap();
        j.set_len(crate::Limits::default().max_header_bytes * 2 + (1 << 20) + 1)
            .unwrap();
        let e = recover(&path, Durability::Cached).unwrap_err();
        assert!(e.to_string().contains("more than a journal"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789ab");
    }

    #[test]
    fn a_journal_beside_a_replaced_file_is_not_applied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"another file entirely").unwrap();
        std::fs::write(journal_path(&path), patch().encode(12)).unwrap();
        let e = recover(&path, Durability::Cached).unwrap_err();
        assert!(e.to_string().contains("replaced since"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"another file entirely");
        assert!(is_pending(&path));
    }
}
