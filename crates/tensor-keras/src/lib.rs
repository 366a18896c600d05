//! Keras 3 model archives (`model.save("m.keras")`): a zip archive of `metadata.json` (the
//! Keras version, the date), `config.json` (the model's architecture) and `model.weights.h5`
//! (its variables, an HDF5 file: `layers/<layer>/vars/<i>`). The weights are read through
//! tensor-hdf5 — in place, as Keras stores the archive's entries as they are — and the two
//! JSON documents are kept as text. See `docs/formats/hdf5.md`.
#![forbid(unsafe_code)]

use std::borrow::Cow;
use tensor_core::{ErrorKind, Kinded, Limits};
use tensor_zip::Archive;

/// The entry holding the weights.
pub const WEIGHTS: &str = "model.weights.h5";

/// Everything that can go wrong reading a Keras archive.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The zip archive.
    #[error(transparent)]
    Zip(#[from] tensor_zip::Error),
    /// The weights file inside it.
    #[error("{WEIGHTS}: {0}")]
    Hdf5(#[from] tensor_hdf5::Error),
    /// An archive with no weights file.
    #[error("a Keras archive with no {WEIGHTS} (entries: {0})")]
    NoWeights(String),
}

impl Kinded for Error {
    fn kind(&self) -> ErrorKind {
        match self {
            Error::Zip(e) => e.kind(),
            Error::Hdf5(e) => e.kind(),
            Error::NoWeights(_) => ErrorKind::Malformed,
        }
    }
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;

/// A Keras archive read: its weights file's bytes and its JSON documents.
#[derive(Clone, Debug)]
pub struct Keras<'a> {
    /// `model.weights.h5`: borrowed from the archive when stored, inflated otherwise.
    pub weights: Cow<'a, [u8]>,
    /// `config.json`, when present.
    pub config: Option<String>,
    /// `metadata.json`, when present.
    pub metadata: Option<String>,
}

impl<'a> Keras<'a> {
    /// Reads the archive's directory and its entries, within `limits`.
    pub fn open(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        let archive = Archive::open(bytes, limits)?;
        let Some(weights) = archive.find(WEIGHTS) else {
            let names: Vec<&str> = archive.entries().iter().map(|e| e.name.as_str()).collect();
            return Err(Error::NoWeights(names.join(", ")));
        };
        let text = |name: &str| -> Result<Option<String>> {
            let Some(e) = archive.find(name) else {
                return Ok(None);
            };
            limits
                .check_header_bytes(e.size)
                .map_err(tensor_zip::Error::from)?;
            Ok(Some(
                String::from_utf8_lossy(&archive.read_verified(e, limits)?).into_owned(),
            ))
        };
        Ok(Keras {
            weights: archive.read(weights, limits)?,
            config: text("config.json")?,
            metadata: text("metadata.json")?,
        })
    }
}

/// Whether `head` is a zip archive whose first entry is one Keras writes first
/// (`metadata.json`, or `config.json` in earlier versions).
#[must_use]
pub fn recognise(head: &[u8]) -> bool {
    matches!(
        tensor_zip::first_entry_name(head),
        Some(b"metadata.json" | b"config.json")
    )
}

/// Keras archives, as the format contract describes them: read only.
#[derive(Clone, Copy, Debug)]
pub struct KerasFormat;

/// The weights of an archive, as tensors (they borrow the archive's bytes when stored).
pub type Reader<'a> = tensor_hdf5::Tensors<'a>;

impl KerasFormat {
    /// The format's description.
    pub const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "keras",
        name: "Keras archive",
        extensions: &["keras"],
        writes: false,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };
}
