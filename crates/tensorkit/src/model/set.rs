//! [`TensorSet`]: a file's tensors and metadata, as every command works on them.

use super::stored::TensorData;
use super::tensor::NamedTensor;
use crate::error::Result;
use crate::format::Format;
use serde_json::{Map, Value};
use tensor_core::Limits;
use tensor_dtype::{Tensor, TensorView};

/// Tensors to write: those of an open file ([`File::tensor_set`](crate::File::tensor_set)),
/// or put together from several ([`TensorSet::new`], [`TensorSet::push`]), with file-level
/// metadata. Nothing is decoded or copied until the set is saved
/// ([`save_set`](crate::save_set)): its tensors stay where their files hold them.
#[derive(Clone, Debug)]
pub struct TensorSet<'a> {
    /// The format the file was read as.
    pub(crate) format: Format,
    /// File-level metadata, when the format stores any.
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The type each metadata value has in its file, for formats whose values are typed
    /// beyond what JSON tells apart (GGUF: `UINT32`, `FLOAT32`, `ARRAY[STRING]`); empty for
    /// the others. A writer of such a format gives a value its recorded type when the value
    /// still fits it.
    pub(crate) metadata_types: std::collections::BTreeMap<String, String>,
    /// The tensors, in the order the file stores them.
    pub(crate) tensors: Vec<NamedTensor<'a>>,
    /// The limits the file was read with; tensors are decoded within them.
    pub(crate) limits: Limits,
    /// The memory-mapped files the tensors borrow from, if any (filled in by
    /// [`open`](crate::open)): writers have the kernel copy a stored tensor's bytes from
    /// them rather than write them through memory
    /// ([`AtomicFile::copying_from`](tensor_core::atomic::AtomicFile::copying_from)).
    pub(crate) mapped: Vec<&'a tensor_core::MmapSource>,
    /// What the file holds that no tensor can (a NetCDF string or compound variable): each
    /// by name, and why it is not read.
    pub(crate) not_read: Vec<NotRead>,
}

/// Something a file holds that no tensor can (a NetCDF-4 string, compound, enum or
/// variable-length variable), left out of its tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotRead {
    /// Its name (a variable's path in a subgroup: `group/var`).
    pub name: String,
    /// Why no tensor holds it, in words: its type.
    pub why: String,
    /// A string variable's shape and values (C order), when it is one and its file was read
    /// whole (a remote listing reads no data).
    pub strings: Option<(Vec<u64>, Vec<String>)>,
}

impl<'a> TensorSet<'a> {
    /// An empty set, to put tensors of open files into ([`push`](Self::push)); `format` is
    /// what [`format`](Self::format) reports, `limits` those its tensors are decoded within.
    #[must_use]
    pub fn new(format: Format, limits: Limits) -> Self {
        TensorSet {
            format,
            metadata: None,
            metadata_types: std::collections::BTreeMap::new(),
            tensors: Vec::new(),
            limits,
            mapped: Vec::new(),
            not_read: Vec::new(),
        }
    }

    /// What the file holds that no tensor can (a NetCDF-4 string, compound, enum or
    /// variable-length variable), left out of the tensors: each by name, with why.
    #[must_use]
    pub fn not_read(&self) -> &[NotRead] {
        &self.not_read
    }

    /// The format the file was read as (for a set put together, the one it was made with).
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Adds `view` under `name`, at the end: how a format read outside tensorkit
    /// ([`Adapter::read`](crate::adapter::Adapter::read)) lists a tensor its file stores as
    /// it is, borrowing its bytes.
    pub fn push_view(&mut self, name: impl Into<String>, view: TensorView<'a>) {
        self.tensors.push(NamedTensor::borrowed(name, view));
    }

    /// Adds `tensor`, decoded, under `name`, at the end (a format read outside tensorkit
    /// whose file stores the tensor otherwise than as it is).
    pub fn push_owned(&mut self, name: impl Into<String>, tensor: Tensor) {
        self.tensors.push(NamedTensor {
            name: Some(name.into()),
            data: TensorData::Owned(tensor),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        });
    }

    /// File-level metadata, when the format stores any.
    #[must_use]
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        self.metadata.as_ref()
    }

    /// The metadata to write, to change in place.
    pub fn metadata_mut(&mut self) -> &mut Option<Map<String, Value>> {
        &mut self.metadata
    }

    /// The type each metadata value has in its file, for formats whose values are typed
    /// beyond what JSON tells apart (GGUF: `UINT32`, `FLOAT32`, `ARRAY[STRING]`); empty for
    /// the others.
    #[must_use]
    pub fn metadata_types(&self) -> &std::collections::BTreeMap<String, String> {
        &self.metadata_types
    }

    /// The recorded metadata types, to change in place: a writer of a typed format gives a
    /// value its recorded type when the value still fits it.
    pub fn metadata_types_mut(&mut self) -> &mut std::collections::BTreeMap<String, String> {
        &mut self.metadata_types
    }

    /// The limits its tensors are decoded within.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// How many tensors it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether it holds no tensors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}

impl TensorSet<'_> {
    /// Decodes every tensor in bounded runs, within the set's limits, discarding the
    /// values: what `verify` and `validate` do for data no checksum covers.
    pub fn decode_every_tensor(&self) -> Result<()> {
        self.tensors
            .iter()
            .try_for_each(|t| t.stream(&self.limits, &mut |_| Ok(())))
    }

    /// [`check_unique_names`](Self::check_unique_names) where `format` requires names to be
    /// unique ([`FormatInfo::unique_names`](tensor_dtype::FormatInfo)); nothing where names
    /// are metadata that may repeat (Tensogram).
    pub(crate) fn check_names_for(&self, format: Format) -> Result<()> {
        if format.info().unique_names {
            self.check_unique_names(format.id())?;
        }
        Ok(())
    }

    /// Fails, naming the tensor and both positions, when two tensors share a name (as every
    /// format whose names must be unique requires).
    pub fn check_unique_names(&self, format: &'static str) -> Result<()> {
        let names = self.names();
        let mut first = std::collections::HashMap::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            if let Some(j) = first.insert(n.as_str(), i) {
                return Err(crate::error::Error::RepeatedName {
                    format,
                    name: n.clone(),
                    first: j,
                    second: i,
                });
            }
        }
        Ok(())
    }

    /// Renames every repeat of a name: `<name>~m<message>` for tensors located in a
    /// Tensogram message, `<name>~<n>` for the n-th repeat otherwise (and `_` appended
    /// until the name is free). The first tensor of each name keeps it.
    pub fn disambiguate(&mut self) {
        let names = self.names();
        let mut taken: std::collections::HashSet<String> = names.iter().cloned().collect();
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (t, name) in self.tensors.iter_mut().zip(&names) {
            let count = seen.entry(name.as_str()).or_insert(0);
            *count += 1;
            if *count == 1 {
                continue;
            }
            let message = t
                .location
                .iter()
                .find(|(k, _)| *k == "message")
                .map(|l| l.1);
            let mut new = match message {
                Some(m) => format!("{name}~m{m}"),
                None => format!("{name}~{}", *count - 1),
            };
            while taken.contains(&new) {
                new.push('_');
            }
            taken.insert(new.clone());
            t.name = Some(new);
        }
    }

    /// Every tensor's name, with `tensor_<i>` for tensors that have none (formats that
    /// require names get these when writing).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.tensors
            .iter()
            .enumerate()
            .map(|(i, t)| t.name.clone().unwrap_or_else(|| format!("tensor_{i}")))
            .collect()
    }

    /// The error for asking `file` (this set) for `name`, one of the things it holds that
    /// no tensor can ([`not_read`](Self::not_read)): `unsupported`, saying why.
    #[must_use]
    pub fn not_read_error(&self, file: &std::path::Path, name: &str) -> Option<crate::Error> {
        let why = &self.not_read.iter().find(|n| n.name == name)?.why;
        Some(crate::Error::Format {
            path: file.to_path_buf(),
            format: self.format.id(),
            at: Some(format!("variable {name:?}")),
            kind: tensor_core::ErrorKind::Unsupported,
            source: format!("not read: {why}").into(),
        })
    }

    /// The error for a tensor `name` that `file` (this set) does not hold, naming the first
    /// few it does.
    pub(crate) fn no_such_tensor(&self, file: &std::path::Path, name: &str) -> crate::Error {
        if let Some(e) = self.not_read_error(file, name) {
            return e;
        }
        crate::Error::NoSuchTensor {
            file: file.display().to_string(),
            name: name.to_owned(),
            names: self
                .names()
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}
