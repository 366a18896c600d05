//! Writing a set in a format: the checks every format's writer gets first (choices it
//! offers, unique names, attributes it has no place for), the file written atomically, the
//! source's checksums verified on another core while the tensors are written.

use crate::adapter::Writing;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
#[cfg(feature = "frame")]
use crate::pipeline_spec::PipelineSpec;
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;
use tensor_core::atomic::WriteSeek;
use tensor_dtype::WriteChoice;

/// The largest header reserve ([`Choices::header_reserve`]): safetensors readers refuse
/// headers over 100 MB.
pub(crate) const MAX_HEADER_RESERVE: u64 = 64 << 20;

/// What a caller chose for a writer, beyond the tensors and their metadata; each is refused
/// by a format that does not offer it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Choices {
    /// Blobs at multiples of this many bytes
    /// ([`WriteOptions::alignment`](crate::WriteOptions::alignment)).
    pub alignment: Option<u64>,
    /// Room left in the header for later edits in place, in bytes
    /// ([`WriteOptions::header_reserve`](crate::WriteOptions::header_reserve)); `None`: the
    /// format's own default ([`FormatInfo::header_reserve`](tensor_dtype::FormatInfo)).
    pub header_reserve: Option<u64>,
    /// The encoding stages ([`WriteOptions::pipeline`](crate::WriteOptions::pipeline)).
    #[cfg(feature = "frame")]
    pub pipeline: PipelineSpec,
    /// How values are packed ([`WriteOptions::packing`](crate::WriteOptions::packing)).
    pub packing: Option<String>,
    /// How tensors are grouped into messages
    /// ([`WriteOptions::split_by`](crate::WriteOptions::split_by)).
    pub split_by: crate::SplitBy,
}

/// Writes `set` to `path` in `format`, atomically (a temporary file renamed into place, synced to
/// disk first if `durability` asks), with what the caller chose (`choices`). Returns what the target could
/// not hold and was left out (file metadata, per-tensor attributes), one note each; anything that
/// would change the tensors themselves is an error instead, and leaves no file.
///
/// `progress`, when given, is told the bytes written so far as the file grows.
pub(crate) fn write(
    format: Format,
    set: &TensorSet<'_>,
    path: &Path,
    choices: &Choices,
    durability: tensor_core::atomic::Durability,
    progress: Option<&Progress>,
) -> Result<Vec<String>> {
    let mut file = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
    let mut copying = file.copying_from(&set.mapped);
    let mut counting;
    let out: &mut dyn WriteSeek = match progress {
        None => &mut copying,
        Some(progress) => {
            counting = progress.counting(&mut copying);
            &mut counting
        }
    };
    let dropped = write_into(format, set, path, out, choices)?;
    file.commit()?;
    Ok(dropped)
}

/// [`write()`] into `out` (a file being written at `path`, which errors name): for callers
/// that manage the file themselves, e.g. to show progress through a wrapping writer. `out`
/// must be able to seek (a file, or an `io::Cursor` over memory): Tensogram's header hash
/// frame is filled in once the data after it has been written and hashed.
///
/// The checksums and hashes the tensors carry from their file are verified on another core
/// while the tensors are written (one after the other on a one-thread pool). On any error,
/// what went to `out` is to be discarded, as [`write()`] does.
pub(crate) fn write_into(
    format: Format,
    set: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
    choices: &Choices,
) -> Result<Vec<String>> {
    if set.tensors.iter().all(|t| t.check.is_none()) {
        return write_tensors(format, set, path, out, choices);
    }
    let unchecked = TensorSet {
        tensors: set
            .tensors
            .iter()
            .map(|t| NamedTensor {
                check: None,
                ..t.clone()
            })
            .collect(),
        ..set.clone()
    };
    let mut checked = Ok(());
    let written = tensor_core::tee::beside(
        || write_tensors(format, &unchecked, path, out, choices),
        || checked = set.tensors.iter().try_for_each(NamedTensor::verify),
    );
    // A damaged source is the cause whatever the writer made of it.
    checked?;
    written
}

fn write_tensors(
    format: Format,
    set: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
    choices: &Choices,
) -> Result<Vec<String>> {
    let info = format.info();
    let header_reserve = choices.header_reserve.unwrap_or(info.header_reserve);
    if header_reserve > MAX_HEADER_RESERVE {
        return Err(Error::UnknownTarget {
            what: format!(
                "a header reserve of {header_reserve} bytes (at most {MAX_HEADER_RESERVE}: safetensors readers refuse longer headers)",
            ),
        });
    }
    for (choice, asked) in [
        (WriteChoice::HeaderReserve, header_reserve > 0),
        (WriteChoice::Alignment, choices.alignment.is_some()),
        (WriteChoice::Packing, choices.packing.is_some()),
        (
            WriteChoice::Messages,
            choices.split_by != crate::SplitBy::File,
        ),
        #[cfg(feature = "frame")]
        (
            WriteChoice::Pipeline,
            choices.pipeline != PipelineSpec::default(),
        ),
    ] {
        if asked {
            format.offers(choice)?;
        }
    }
    // Checked before anything is written or handed to a third-party writer (names that are
    // metadata may repeat: Tensogram's).
    set.check_names_for(format)?;
    let mut dropped = unheld_attributes(format, set);
    // Attributes under a key the target keeps for itself are left out (and said so above).
    let kept;
    let set = if set
        .tensors
        .iter()
        .any(|t| t.attributes.iter().any(|(k, _)| info.reserves(k)))
    {
        let mut trimmed = set.clone();
        for t in &mut trimmed.tensors {
            t.attributes.retain(|(k, _)| !info.reserves(k));
        }
        kept = trimmed;
        &kept
    } else {
        set
    };
    let writing = Writing {
        header_reserve,
        alignment: choices.alignment,
        #[cfg(feature = "frame")]
        pipeline: &choices.pipeline,
        packing: choices.packing.as_deref(),
        ..Writing::defaults(info)
    };
    // One message per group, one after the other (one group unless a split is asked for).
    crate::split::each_group(set, choices.split_by, &mut |group| {
        for note in format.adapter().write(group, out, path, &writing)? {
            if !dropped.contains(&note) {
                dropped.push(note);
            }
        }
        Ok(())
    })?;
    Ok(dropped)
}

/// The file `bytes` (which `old` was read from, and `new` is an edit of, with the same
/// tensors' bytes) written anew to `out` with the edit: what [`write_into`] writes of
/// `new`, unless its format keeps something of the old file as it is
/// ([`Adapter::write_edited`](crate::adapter::Adapter::write_edited): Tensogram's encoded
/// payloads). Returns what the format left out.
pub(crate) fn write_edited(
    bytes: &[u8],
    old: &TensorSet<'_>,
    new: &TensorSet<'_>,
    path: &Path,
    out: &mut dyn WriteSeek,
) -> Result<Vec<String>> {
    if let Some(notes) = new
        .format
        .adapter()
        .write_edited(bytes, old, new, path, out)?
    {
        return Ok(notes);
    }
    write_into(new.format, new, path, out, &Choices::default())
}

/// The tensor attributes of `set` that `format` has no place for, one note each: all of
/// them in a format without attributes, those under a key the format reserves otherwise.
pub(crate) fn unheld_attributes(format: Format, set: &TensorSet<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    let attributes = set
        .tensors
        .iter()
        .filter(|t| !t.attributes.is_empty())
        .count();
    if attributes > 0 && !format.info().holds_attributes {
        notes.push(format!(
            "per-tensor attributes of {attributes} tensors ({} has no place for them)",
            format.id()
        ));
    }
    let info = format.info();
    for (t, name) in set.tensors.iter().zip(set.names()) {
        for (k, _) in t.attributes.iter().filter(|(k, _)| info.reserves(k)) {
            notes.push(format!(
                "attribute {k:?} of tensor {name:?} ({} reserves the key for itself)",
                info.name
            ));
        }
    }
    notes
}

/// A hook told how many bytes of a file have been written so far (the length the file has
/// reached), as it grows: what a progress bar follows. It is called from the writing
/// thread, often (once per write the format's writer makes), so it should be cheap.
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(u64) + Send + Sync>);

impl Progress {
    /// A hook calling `f` with the bytes written so far.
    pub fn new(f: impl Fn(u64) + Send + Sync + 'static) -> Self {
        Progress(Arc::new(f))
    }

    /// `out`, telling this hook of every byte written through it.
    pub(crate) fn counting<'w, W: Write + Seek + ?Sized>(
        &'w self,
        out: &'w mut W,
    ) -> Counting<'w, W> {
        Counting {
            out,
            progress: self,
            at: 0,
            written: 0,
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// A writer passing everything on to `out` and telling a [`Progress`] how far the file
/// reaches. The writes themselves go through unchanged, so a writer that copies mapped bytes
/// by range (`AtomicFile::copying_from`) still recognises them.
pub(crate) struct Counting<'w, W: ?Sized> {
    out: &'w mut W,
    progress: &'w Progress,
    /// Where the next write lands.
    at: u64,
    /// The end of the furthest write: the file's length so far.
    written: u64,
}

impl<W: Write + ?Sized> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.at += n as u64;
        if self.at > self.written {
            self.written = self.at;
            (self.progress.0)(self.written);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

impl<W: Seek + ?Sized> Seek for Counting<'_, W> {
    /// Seeking back (to fill in a header) and writing there rewrites bytes already counted:
    /// the count stays until a write goes past it.
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.at = self.out.seek(pos)?;
        Ok(self.at)
    }
}
