//! BinTensors, through tensor-bintensors (see docs/formats/bintensors.md).

use crate::error::{Error, Result};
use crate::model::{FormatId, NamedTensor, TensorSet};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use tensor_bintensors::{BinTensors, Layout, ReadOptions};
use tensor_core::Limits;
use tensor_dtype::TensorView;

/// A BinTensors file starts with a length and then a 0/1 Option tag for the metadata.
/// (safetensors has `{` there, every other format a magic number at offset 0.)
pub(super) fn looks_like(bytes: &[u8]) -> bool {
    bytes.len() >= 9 && bytes[8] <= 1
}

pub(super) fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    let file = BinTensors::read_with(bytes, &ReadOptions::default().limits(*limits)).map_err(
        |source| Error::Bintensors {
            path: path.to_path_buf(),
            source,
        },
    )?;
    let format = match file.layout() {
        Layout::Release => FormatId::Bintensors,
        Layout::Legacy => FormatId::BintensorsLegacy,
    };
    let metadata = file.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect::<Map<_, _>>()
    });
    let tensors = file
        .tensors()
        .map(|t| NamedTensor::borrowed(t.name, t.view))
        .collect();
    Ok(TensorSet {
        format,
        metadata,
        tensors,
        limits: *limits,
    })
}

pub(super) fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    layout: Layout,
) -> Result<()> {
    let format = if layout == Layout::Legacy {
        "bintensors-legacy"
    } else {
        "bintensors"
    };
    let names = set.names();
    let loaded = set
        .tensors
        .iter()
        .map(|t| t.load(&set.limits))
        .collect::<Result<Vec<_>>>()?;
    let tensors: Vec<(&str, TensorView<'_>)> = names
        .iter()
        .zip(&loaded)
        .map(|(n, l)| (n.as_str(), l.view()))
        .collect();
    let metadata = set
        .metadata
        .as_ref()
        .map(|m| super::string_metadata(m, format))
        .transpose()?
        .map(|m| m.into_iter().collect::<BTreeMap<_, _>>());
    tensor_bintensors::write(&mut &mut *out, &tensors, metadata.as_ref(), layout).map_err(
        |source| Error::Bintensors {
            path: path.to_path_buf(),
            source,
        },
    )?;
    Ok(())
}
