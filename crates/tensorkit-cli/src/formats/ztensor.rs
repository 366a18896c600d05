//! zTensor, through tensor-ztensor (see docs/formats/ztensor.md).

use crate::error::{Error, Result};
use crate::model::{FormatId, NamedTensor, TensorData, TensorSet};
use std::borrow::Cow;
use std::path::Path;
use tensor_core::Limits;
use tensor_core::cbor::Encoder;
use tensor_dtype::TensorView;
use tensor_ztensor::{ChecksumKind, ReadOptions, TensorOptions, ZTensor};

/// zTensor 0.1 files start with `ZTEN0001` (a shorter file that starts like it is a
/// truncated one).
pub(super) fn looks_like(bytes: &[u8]) -> bool {
    let n = bytes.len().min(8);
    n >= 4 && bytes[..n] == tensor_ztensor::MAGIC_V0_1[..n]
}

fn wrap(path: &Path) -> impl Fn(tensor_ztensor::Error) -> Error + '_ {
    move |source| Error::Ztensor {
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn read<'a>(path: &Path, bytes: &'a [u8], limits: &Limits) -> Result<TensorSet<'a>> {
    let file =
        ZTensor::open_with(bytes, &ReadOptions::default().limits(*limits)).map_err(wrap(path))?;
    let mut tensors = Vec::with_capacity(file.entries().len());
    for (i, e) in file.entries().iter().enumerate() {
        let decoded = file.read(i).map_err(wrap(path))?;
        let data = match decoded.data {
            Cow::Borrowed(b) => TensorData::View(TensorView::new(
                b,
                decoded.dtype,
                &decoded.shape,
                decoded.byte_order,
            )?),
            Cow::Owned(v) => TensorData::Owned(tensor_dtype::Tensor::new(
                v,
                decoded.dtype,
                &decoded.shape,
                decoded.byte_order,
            )?),
        };
        tensors.push(NamedTensor {
            name: Some(e.name.to_string()),
            data,
            location: Vec::new(),
            attributes: e
                .custom
                .iter()
                .map(|c| (c.key.clone(), c.value.clone()))
                .collect(),
        });
    }
    Ok(TensorSet {
        format: FormatId::Ztensor01,
        metadata: None,
        tensors,
    })
}

/// Writes raw tensors with CRC-32C checksums, per-tensor attributes as custom keys.
pub(super) fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
) -> Result<Vec<String>> {
    let mut dropped = Vec::new();
    if set.metadata.as_ref().is_some_and(|m| !m.is_empty()) {
        dropped.push("file-level metadata (zTensor 0.1 has none)".to_owned());
    }
    let names: Vec<String> = set
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| t.name.clone().unwrap_or_else(|| format!("tensor_{i}")))
        .collect();
    let items: Vec<(&str, TensorView<'_>, TensorOptions)> = names
        .iter()
        .zip(&set.tensors)
        .map(|(n, t)| {
            let custom = t
                .attributes
                .iter()
                .filter(|(k, _)| !RESERVED.contains(&k.as_str()))
                .map(|(k, v)| {
                    let mut e = Encoder::new();
                    e.value(v);
                    (k.clone(), e.out)
                })
                .collect();
            (
                n.as_str(),
                t.view(),
                TensorOptions {
                    checksum: ChecksumKind::Crc32c,
                    custom,
                    ..TensorOptions::default()
                },
            )
        })
        .collect();
    let mut w = tensor_ztensor::Writer::new(out).map_err(wrap(path))?;
    for (name, view, options) in &items {
        w.add(name, view, options).map_err(wrap(path))?;
    }
    w.finish().map_err(wrap(path))?;
    Ok(dropped)
}

/// Keys the writer sets itself; attributes with these names cannot be kept.
const RESERVED: [&str; 9] = [
    "name",
    "offset",
    "size",
    "dtype",
    "layout",
    "shape",
    "encoding",
    "data_endianness",
    "checksum",
];
