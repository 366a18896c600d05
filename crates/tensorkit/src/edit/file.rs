//! Editing one local file: in place where its format's adapter gives a header that fits,
//! by an atomic copy otherwise, then read back.

use crate::adapter::EditedHeader;
use crate::error::{Error, Result};
use crate::model::TensorSet;
use std::path::Path;
use tensor_core::atomic::Durability;
use tensor_core::patch;

use super::spec::{EditOptions, EditReport, Edits, Expected, Method, apply};

/// Edits the local file at `path` (not a shard index): see [`edit`](super::edit).
pub(super) fn edit_file(path: &Path, edits: &Edits, options: &EditOptions) -> Result<EditReport> {
    let recovered = if options.dry_run {
        false
    } else {
        patch::recover(path, options.durability)?
    };
    let file = crate::open::read::read_local(path, &options.read_options())?;
    let old = file.tensor_set();
    let mut new = old.clone();
    let changes = apply(&mut new, edits, path)?;
    let format = old.format;
    let mut report = EditReport {
        path: path.to_path_buf(),
        format,
        changes,
        method: Method::Unchanged,
        dry_run: options.dry_run,
        recovered,
    };
    if report.changes.is_empty() {
        return Ok(report);
    }
    refuse_left_out(path, &new, &crate::write::unheld_attributes(format, &new))?;
    let bytes = old.mapped.first().map(|m| m.bytes()).unwrap_or_default();
    let header = format.adapter().header_for_edit(bytes, old, &new, path)?;
    report.method = if matches!(header, Some(EditedHeader::InPlace(_))) {
        Method::InPlace
    } else {
        Method::Copy
    };
    if options.dry_run {
        return Ok(report);
    }
    let expected = Expected::of(&new);
    match header {
        Some(EditedHeader::InPlace(change)) => {
            drop(new);
            drop(file);
            patch::apply(path, &change, options.durability)?;
        }
        Some(EditedHeader::Moved { header, data_start }) => {
            copy_moved(path, bytes, &header, data_start, &new, options.durability)?;
        }
        None => copy(path, bytes, old, &new, options.durability)?,
    }
    read_back(path, &expected, options)?;
    Ok(report)
}

/// Writes `set`, an edit of `old` (read from `bytes`), over `path` through an atomic file, refusing (and leaving the file as it
/// was) if the format would leave anything out.
fn copy(
    path: &Path,
    bytes: &[u8],
    old: &TensorSet<'_>,
    set: &TensorSet<'_>,
    durability: Durability,
) -> Result<()> {
    let mut out = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
    let left_out =
        crate::write::write_edited(bytes, old, set, path, &mut out.copying_from(&set.mapped))?;
    refuse_left_out(path, set, &left_out)?;
    Ok(out.commit()?)
}

/// Writes a copy of the file `bytes` over `path` through an atomic file: `header`, then the
/// old file from `data_start` on, copied by the kernel as `cp` copies (one range).
fn copy_moved(
    path: &Path,
    bytes: &[u8],
    header: &[u8],
    data_start: u64,
    set: &TensorSet<'_>,
    durability: Durability,
) -> Result<()> {
    use std::io::Write as _;
    let data = usize::try_from(data_start)
        .ok()
        .and_then(|start| bytes.get(start..))
        .ok_or_else(|| Error::Edit {
            path: path.to_path_buf(),
            what: format!("the data section starts at {data_start}, past the file's end"),
        })?;
    let mut out = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
    out.allocate(header.len() as u64 + data.len() as u64);
    let io = |e| tensor_core::Error::io(format!("writing {}", path.display()), e);
    let mut copying = out.copying_from(&set.mapped);
    copying.write_all(header).map_err(io)?;
    copying.write_all(data).map_err(io)?;
    copying.flush().map_err(io)?;
    Ok(out.commit()?)
}

/// An error when the format would leave out something the edited set holds.
fn refuse_left_out(path: &Path, set: &TensorSet<'_>, left_out: &[String]) -> Result<()> {
    if left_out.is_empty() {
        return Ok(());
    }
    Err(Error::CannotRepresent {
        format: set.format.id(),
        what: format!(
            "this edit of {} (the file is left as it was): {}",
            path.display(),
            left_out.join("; ")
        ),
    })
}

/// Reads the edited file back and checks that it holds what the edit meant it to.
fn read_back(path: &Path, expected: &Expected, options: &EditOptions) -> Result<()> {
    let file = crate::open::read::read_local(path, &options.read_options())?;
    let found = Expected::of(file.tensor_set());
    if found == *expected {
        return Ok(());
    }
    let what = if found.metadata == expected.metadata {
        "tensor names, dtypes, shapes or attributes"
    } else {
        "metadata"
    };
    Err(Error::VerifyFailed {
        path: path.to_path_buf(),
        kind: tensor_core::ErrorKind::Malformed,
        detail: format!("the edited file, read back, does not hold the {what} the edit wrote"),
    })
}
