//! `tgm_encode`: arrays under descriptors, encoded into one message.

use super::errors::tgm_err;
use super::values::{descriptor, global_metadata};
use crate::buffer::Borrowed;
use crate::errors::invalid;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tensorkit::frame::{self, EncodeOptions, MaskMethod};

/// Encodes one message; its bytes.
/// One object to encode: descriptor dict, an object exporting the bytes, and whether the
/// bytes of a bitmask are one per element (a bool array) rather than packed.
type Input<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, bool);

#[pyfunction]
#[pyo3(signature = (metadata, objects, *, hash=true, allow_nan=false, allow_inf=false, mask_method=None, small_mask_threshold=None))]
pub(crate) fn tgm_encode<'py>(
    py: Python<'py>,
    metadata: &Bound<'py, PyAny>,
    objects: Vec<Input<'py>>,
    hash: bool,
    allow_nan: bool,
    allow_inf: bool,
    mask_method: Option<&str>,
    small_mask_threshold: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let meta = global_metadata(metadata)?;
    let mut descs = Vec::with_capacity(objects.len());
    let mut borrowed = Vec::with_capacity(objects.len());
    let mut packed = Vec::with_capacity(objects.len());
    for (i, (d, data, one_per_element)) in objects.iter().enumerate() {
        let desc = descriptor(d, i)?;
        let b = Borrowed::get(data, false, &format!("object {i}'s data"))?;
        packed.push(if *one_per_element && desc.dtype.is_packed() {
            Some(
                tensor_dtype::minifloat::pack_codes(desc.dtype, b.bytes())
                    .ok_or_else(|| invalid(format!("object {i}: cannot pack {}", desc.dtype)))?,
            )
        } else {
            None
        });
        descs.push(desc);
        borrowed.push(b);
    }
    let mut opts = EncodeOptions {
        hashing: hash,
        allow_nan,
        allow_inf,
        ..EncodeOptions::default()
    };
    if let Some(name) = mask_method {
        opts.mask_method = MaskMethod::from_name(name).ok_or_else(|| {
            let names: Vec<String> = MaskMethod::ALL
                .iter()
                .map(|m| format!("{:?}", m.name()))
                .collect();
            invalid(format!(
                "unknown mask method {name:?}; one of {}",
                names.join(", ")
            ))
        })?;
    }
    if let Some(t) = small_mask_threshold {
        opts.small_mask_threshold = t;
    }
    let data: Vec<&[u8]> = borrowed
        .iter()
        .zip(&packed)
        .map(|(b, p)| p.as_deref().unwrap_or_else(|| b.bytes()))
        .collect();
    let bytes = py
        .detach(|| frame::serialize(&meta, &descs, &data, &opts))
        .map_err(tgm_err)?;
    Ok(PyBytes::new(py, &bytes))
}
