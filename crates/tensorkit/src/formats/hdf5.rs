//! Plain HDF5 files of datasets (h5py's, Keras' `.h5` weights) and Keras archives, through
//! tensor-hdf5 and tensor-keras (see docs/formats/hdf5.md): read only. HDF5 files that
//! follow netCDF's conventions are NetCDF-4's, recognised first.

use crate::adapter::{Adapter, Checked};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NotRead, TensorSet};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo};
use tensor_hdf5::{Hdf5Format, Tensors, Values};
use tensor_keras::{Keras, KerasFormat};

/// Plain HDF5 files.
pub(crate) struct Hdf5Adapter;
/// Keras archives.
pub(crate) struct KerasAdapter;

/// The registry's entries.
pub(crate) static HDF5: Hdf5Adapter = Hdf5Adapter;
pub(crate) static KERAS: KerasAdapter = KerasAdapter;

fn wrap(path: &Path) -> impl Fn(tensor_hdf5::Error) -> Error + '_ {
    move |e| match e {
        tensor_hdf5::Error::Core(c) => c.into(),
        other => Error::format(path, Hdf5Format::INFO.id, other),
    }
}

impl Adapter for Hdf5Adapter {
    fn info(&self) -> &'static FormatInfo {
        &Hdf5Format::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        Hdf5Format::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let file = Tensors::open(bytes, options.limits).map_err(wrap(path))?;
        set_of(path, file, Format::HDF5, options.limits)
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Hdf5Format::header_ranges(held, limits).map_err(wrap(path))
    }
}

impl Adapter for KerasAdapter {
    fn info(&self) -> &'static FormatInfo {
        &KerasFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        tensor_keras::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let keras = Keras::open(bytes, &options.limits)
            .map_err(|e| Error::format(path, KerasFormat::INFO.id, e))?;
        let mut set = match keras.weights {
            std::borrow::Cow::Borrowed(weights) => {
                let file = Tensors::open(weights, options.limits).map_err(wrap(path))?;
                set_of(path, file, Format::KERAS, options.limits)?
            }
            std::borrow::Cow::Owned(weights) => {
                // Compressed in the archive: the weights are decoded now, and the set owns
                // them.
                let file = Tensors::open(&weights, options.limits).map_err(wrap(path))?;
                let borrowed = set_of(path, file, Format::KERAS, options.limits)?;
                owned(borrowed)?
            }
        };
        // The model's configuration and the archive's metadata, as the JSON they are (as
        // text where they do not parse).
        for (key, text) in [
            ("keras.config", keras.config),
            ("keras.metadata", keras.metadata),
        ] {
            if let Some(text) = text {
                let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
                set.metadata
                    .get_or_insert_with(Map::new)
                    .insert(key.into(), value);
                set.metadata_types.insert(key.into(), "json".into());
            }
        }
        Ok(set)
    }

    fn verify_checksums(&self, path: &Path, bytes: &[u8]) -> Result<Checked> {
        let limits = Limits::default();
        let verified = tensor_zip::Archive::open(bytes, &limits)
            .and_then(|archive| archive.verify_all(&limits))
            .map_err(|e| Error::format(path, KerasFormat::INFO.id, e))?;
        Ok(Checked {
            verified,
            tolerated: Vec::new(),
        })
    }
}

/// `set` with every tensor decoded into memory of its own.
fn owned(set: TensorSet<'_>) -> Result<TensorSet<'static>> {
    let mut out = TensorSet::new(set.format, set.limits);
    for (name, t) in set.names().into_iter().zip(&set.tensors) {
        let tensor = match t.load(&set.limits)? {
            crate::model::Loaded::View(v) => v.to_tensor(),
            crate::model::Loaded::Owned(t) => t,
        };
        out.push_owned(name, tensor);
    }
    out.metadata = set.metadata;
    out.metadata_types = set.metadata_types;
    out.not_read = set.not_read;
    Ok(out)
}

/// The tensors of `file` as a set: views of datasets stored as they are, others decoded a
/// window of chunk rows at a time when read; attributes as metadata.
fn set_of<'a>(
    path: &Path,
    file: Tensors<'a>,
    format: Format,
    limits: Limits,
) -> Result<TensorSet<'a>> {
    let mut set = TensorSet::new(format, limits);
    let file = Arc::new(file);
    for (i, t) in file.listing.tensors.iter().enumerate() {
        if let Some(view) = file.stored_view(i).map_err(wrap(path))? {
            set.push_view(&t.name, view);
            continue;
        }
        let read_rows = {
            let (file, path) = (file.clone(), path.to_path_buf());
            move |rows: std::ops::Range<u64>, out: &mut [u8]| {
                file.read_rows(i, rows, out).map_err(wrap(&path))
            }
        };
        set.tensors.push(crate::model::rows::decoded_in_rows(
            crate::model::rows::ByRows {
                name: t.name.clone(),
                dtype: t.dtype,
                shape: t.dataset.dataspace.dims.clone(),
                encoding: t.dataset.storage(),
                chunk_rows: t.dataset.chunk_rows(),
                read_rows: Arc::new(read_rows),
            },
        )?);
    }
    let (mut metadata, mut types) = (Map::new(), BTreeMap::new());
    for (name, values) in &file.listing.attributes {
        let (value, kind) = json(values);
        metadata.insert(name.clone(), value);
        types.insert(name.clone(), kind.into());
    }
    if !metadata.is_empty() {
        set.metadata = Some(metadata);
        set.metadata_types = types;
    }
    set.not_read = file
        .listing
        .left_out
        .iter()
        .map(|(name, why)| NotRead {
            name: name.clone(),
            why: why.clone(),
            strings: None,
        })
        .collect();
    Ok(set)
}

/// An attribute's values as JSON (one value alone, several as a list) and their type's name.
fn json(values: &Values) -> (Value, &'static str) {
    fn one_or_many(mut items: Vec<Value>) -> Value {
        if items.len() == 1 {
            items.swap_remove(0)
        } else {
            Value::Array(items)
        }
    }
    match values {
        Values::Ints(v) => (
            one_or_many(v.iter().map(|&x| Value::from(x)).collect()),
            "int",
        ),
        Values::Uints(v) => (
            one_or_many(v.iter().map(|&x| Value::from(x)).collect()),
            "uint",
        ),
        Values::Floats(v) => (
            one_or_many(
                v.iter()
                    .map(|&x| {
                        serde_json::Number::from_f64(x)
                            .map_or_else(|| Value::String(x.to_string()), Value::Number)
                    })
                    .collect(),
            ),
            "float",
        ),
        Values::Texts(v) => (
            one_or_many(v.iter().cloned().map(Value::String).collect()),
            "string",
        ),
    }
}
