//! [`Adapter`]: everything the front door does with one format, as one object-safe trait.
//! Each format crate's adapter lives in `formats/`; the registry holds
//! them, and the facade, the command line and the Python package reach formats only through
//! it. A format defined outside tensorkit implements it and joins with
//! [`register`](crate::register).
//!
//! A format implements what it has: every method but [`info`](Adapter::info),
//! [`recognise`](Adapter::recognise) and [`read`](Adapter::read) has a default that is right
//! for a format without the capability (read only, no checksums, no header edited in place,
//! no set of several files, fetched whole when remote).

mod edited;
#[cfg(feature = "remote")]
pub(crate) mod listing;

pub use edited::EditedHeader;
#[cfg(feature = "remote")]
pub use listing::Opening;

use crate::check::report::{Validation, Verification};
use crate::error::{Error, Result};
use crate::model::TensorSet;
use std::ops::Range;
use std::path::{Path, PathBuf};
use tensor_core::atomic::WriteSeek;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{FormatInfo, ValidateOptions};

/// One format, as the front door uses it.
pub trait Adapter: Send + Sync + 'static {
    /// What the format is: id, name, extensions, what it holds and what its writer offers.
    fn info(&self) -> &'static FormatInfo;

    /// Whether `head`, a file's first bytes (at least 16 when the file has them), begin like
    /// this format. A file cut short after its magic still counts, so that its reader reports
    /// it as truncated rather than unknown.
    fn recognise(&self, head: &[u8]) -> bool;

    /// Reads every tensor of `bytes`, a whole file known by `path`, borrowing from it.
    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>>;

    /// Writes `set` to `out` (a file being written at `path`, which errors name) with the
    /// choices in `writing` (each one only asked where [`FormatInfo::write_choices`] offers
    /// it). Returns what the format left out, one note each. The default: read only.
    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        path: &Path,
        writing: &Writing<'_>,
    ) -> Result<Vec<String>> {
        let _ = (set, out, path, writing);
        Err(Error::UnknownTarget {
            what: format!(
                "{} is read only; convert it to another format",
                self.info().name
            ),
        })
    }

    /// The file's structure in the format's own notation, for `inspect`: NetCDF's CDL, as
    /// `ncdump -h` prints it, from `set` (read from a file whose name, without extension,
    /// is `name`). `None` (the default): the table says it all.
    fn outline(&self, set: &TensorSet<'_>, name: &str) -> Option<String> {
        let _ = (set, name);
        None
    }

    /// Per-tensor attribute keys whose values the reader derives from the file's structure
    /// and the writer writes anew from the set (NetCDF's `netcdf` map, which repeats the
    /// file's dimensions and attributes): an edit's read-back does not compare them. The
    /// default: none.
    fn derived_attributes(&self) -> &'static [&'static str] {
        &[]
    }

    /// The byte ranges still needed of a file, given what `held` holds, before its tensors
    /// can be listed ([`tensor_dtype::Format::header_ranges`]). The default: the whole file.
    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<Range<u64>>> {
        let _ = (path, limits);
        Ok(held.missing(0..held.len()).into_iter().collect())
    }

    /// Lists the tensors of `bytes` — a remote file's length, of which only what `held` says
    /// is held holds the file's bytes — touching no tensor's bytes, with the header kept
    /// parsed to read each tensor from its own bytes. The default asks for the whole file,
    /// which is then read as a local one is.
    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        held: &dyn Fn(Range<u64>) -> bool,
    ) -> Result<Opening<'a>> {
        let _ = (path, options, held);
        let whole = 0..bytes.len() as u64;
        Ok(Opening::needs(std::iter::once(whole).collect()))
    }

    /// Names of files beside a remote file of this format (suffixes appended to its name)
    /// that say where its headers are: GRIB's wgrib2 `.idx` and ECMWF `.index` inventories.
    /// The default: none.
    fn sidecars(&self) -> &'static [&'static str] {
        &[]
    }

    /// The byte ranges of a `len`-byte file's headers as `sidecar`'s text lists them, reading
    /// `ahead` bytes of each: fetched all at once, they save a round trip per header. `None`
    /// (the default) for a text that does not read as one.
    fn header_ranges_from_sidecar(
        &self,
        sidecar: &[u8],
        len: u64,
        ahead: u64,
    ) -> Option<Vec<Range<u64>>> {
        let _ = (sidecar, len, ahead);
        None
    }

    /// The header of `new`, an edit of `old` (read from `bytes`, the file at `path`) with the
    /// same tensors' bytes, when it can be written without rewriting the tensors: in the old
    /// one's place, or before the old data section. `None` (the default): the file is
    /// written anew.
    fn header_for_edit(
        &self,
        bytes: &[u8],
        old: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
    ) -> Result<Option<EditedHeader>> {
        let _ = (bytes, old, new, path);
        Ok(None)
    }

    /// Writes `new`, an edit of `old` (read from `bytes`), anew to `out` where the format
    /// keeps something of the old file that writing `new` would lose (Tensogram's encoded
    /// payloads, kept as they are). `None` (the default): `new` is written as any set is.
    fn write_edited(
        &self,
        bytes: &[u8],
        old: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
        out: &mut dyn WriteSeek,
    ) -> Result<Option<Vec<String>>> {
        let _ = (bytes, old, new, path, out);
        Ok(None)
    }

    /// Verifies every checksum and digest the file carries, not only those a read checks:
    /// how many, and what the reader tolerated that a conforming writer never produces. A
    /// mismatch is an error. The default: none to verify.
    fn verify_checksums(&self, path: &Path, bytes: &[u8]) -> Result<Checked> {
        let _ = (path, bytes);
        Ok(Checked::default())
    }

    /// The format's own validation of `bytes`, for a format that reports every problem it
    /// finds at each level (Tensogram). `None` (the default): the file is read whole, every
    /// checksum verified and every tensor decoded, and the first problem reported.
    fn validate(
        &self,
        path: &Path,
        bytes: &[u8],
        options: ValidateOptions,
        limits: &Limits,
    ) -> Option<Validation> {
        let _ = (path, bytes, options, limits);
        None
    }

    /// The format's own `verify`, for a format whose checks are part of its validation
    /// (Tensogram). `None` (the default): [`verify_checksums`](Adapter::verify_checksums),
    /// then every tensor decoded.
    fn verify(&self, path: &Path, bytes: &[u8], limits: &Limits) -> Option<Result<Verification>> {
        let _ = (path, bytes, limits);
        None
    }

    /// `bytes` rewritten in the wire version current readers read, with what was done, when
    /// they hold an older one (Tensogram wire version 2); `None` (the default) when they are
    /// current.
    fn upgrade(&self, path: &Path, bytes: &[u8], limits: &Limits) -> Result<Option<Upgraded>> {
        let _ = (path, bytes, limits);
        Ok(None)
    }

    /// The value `text` spells in the metadata type `recorded` (as the format names its types
    /// in [`TensorSet::metadata_types`]: GGUF's `UINT32`, `ARRAY[INT32]`), for a format whose
    /// metadata is typed beyond JSON: an edit that sets a typed key to text keeps the key's
    /// type when the text spells a value of it. `None` (the default): the text stays text.
    fn typed_metadata(&self, text: &str, recorded: &str) -> Option<serde_json::Value> {
        let _ = (text, recorded);
        None
    }

    /// The files of the set that the file at `path` (`bytes`) is one of, in order, for a
    /// format whose sets name their members themselves (GGUF split sets); `None` (the
    /// default) for a file that stands alone.
    fn set_members(
        &self,
        path: &Path,
        bytes: &[u8],
        options: &ReadOptions,
    ) -> Result<Option<Vec<PathBuf>>> {
        let _ = (path, bytes, options);
        Ok(None)
    }

    /// The members of a set ([`set_members`](Adapter::set_members)), read, as one set.
    fn join_members<'a>(
        &self,
        paths: &[PathBuf],
        sets: Vec<TensorSet<'a>>,
    ) -> Result<TensorSet<'a>> {
        crate::shards::join(paths, sets)
    }
}

/// What a writer is asked for beyond the tensors and their metadata; each choice is asked
/// only of a format that offers it ([`FormatInfo::write_choices`]).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Writing<'o> {
    /// Room left in the header for later edits in place, in bytes
    /// ([`WriteChoice::HeaderReserve`](tensor_dtype::WriteChoice)).
    pub header_reserve: u64,
    /// Tensor data at multiples of this many bytes
    /// ([`WriteChoice::Alignment`](tensor_dtype::WriteChoice)).
    pub alignment: Option<u64>,
    /// The encoding stages of each tensor ([`WriteChoice::Pipeline`](tensor_dtype::WriteChoice)).
    #[cfg(feature = "frame")]
    pub pipeline: &'o crate::pipeline_spec::PipelineSpec,
    #[cfg(not(feature = "frame"))]
    #[doc(hidden)]
    pub pipeline: std::marker::PhantomData<&'o ()>,
    /// How values are packed, by name ([`WriteChoice::Packing`](tensor_dtype::WriteChoice)).
    pub packing: Option<&'o str>,
}

impl Writing<'_> {
    /// Nothing chosen: the format's defaults.
    #[must_use]
    pub fn defaults(info: &FormatInfo) -> Writing<'static> {
        Writing {
            header_reserve: info.header_reserve,
            alignment: None,
            #[cfg(feature = "frame")]
            pipeline: &crate::pipeline_spec::PipelineSpec::KEEP,
            #[cfg(not(feature = "frame"))]
            pipeline: std::marker::PhantomData,
            packing: None,
        }
    }
}

/// What [`Adapter::verify_checksums`] verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Checksums and digests verified.
    pub verified: usize,
    /// What the reader tolerated but a conforming writer never produces.
    pub tolerated: Vec<String>,
}

/// A file rewritten in the current wire version ([`Adapter::upgrade`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upgraded {
    /// The file, rewritten.
    pub bytes: Vec<u8>,
    /// What was done, as [`crate::migrate`] reports it.
    pub report: Migrated,
}

/// What [`crate::migrate`] did (and [`Adapter::upgrade`], in memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migrated {
    /// Version 2 messages rewritten as version 3.
    pub v2_messages: usize,
    /// Version 3 messages copied as they were.
    pub v3_messages: usize,
    /// Objects in the version 2 messages (their payloads moved untouched).
    pub objects: usize,
    /// Version 2 hashes checked on the way.
    pub hashes_verified: usize,
    /// Bytes written.
    pub bytes: u64,
    /// What the version 2 writer did that a conforming writer would not (read anyway).
    pub notes: Vec<String>,
}
