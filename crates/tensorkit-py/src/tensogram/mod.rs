//! Tensogram messages for Python: encode arrays under descriptors, decode whole messages or
//! single objects, read metadata and descriptors alone, find messages in a buffer, validate,
//! and `.tgm` files mapped from disk. `tensorkit/tensogram.py` builds tensogram's own Python
//! API (names, arguments, result shapes) on these.
//!
//! Metadata and descriptors cross as Python values (see [`crate::cbor`]); decoded objects
//! cross as owned buffers numpy wraps without copying. The GIL is released while encoding,
//! decoding and validating; the objects of a message decode in parallel.

mod decode;
mod doctor;
mod encode;
mod errors;
mod file;
mod messages;
mod remote;
mod validate;
mod values;

use decode::{tgm_decode, tgm_decode_frame, tgm_decode_payload, tgm_decode_range};
use doctor::tgm_doctor;
use encode::{TgmStreamingEncoder, tgm_encode, tgm_encode_pre_encoded};
pub(crate) use file::TgmFile;
use messages::{
    tgm_append, tgm_describe, tgm_hash, tgm_layout, tgm_packing_params, tgm_regroup, tgm_scan,
};
use pyo3::prelude::*;
use remote::RemoteTgm;
use validate::{tgm_validate, tgm_validate_file};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TgmFile>()?;
    m.add_class::<RemoteTgm>()?;
    m.add_class::<TgmStreamingEncoder>()?;
    for f in [
        wrap_pyfunction!(tgm_encode, m)?,
        wrap_pyfunction!(tgm_doctor, m)?,
        wrap_pyfunction!(tgm_encode_pre_encoded, m)?,
        wrap_pyfunction!(tgm_decode, m)?,
        wrap_pyfunction!(tgm_decode_range, m)?,
        wrap_pyfunction!(tgm_describe, m)?,
        wrap_pyfunction!(tgm_scan, m)?,
        wrap_pyfunction!(tgm_hash, m)?,
        wrap_pyfunction!(tgm_packing_params, m)?,
        wrap_pyfunction!(tgm_append, m)?,
        wrap_pyfunction!(tgm_regroup, m)?,
        wrap_pyfunction!(tgm_validate, m)?,
        wrap_pyfunction!(tgm_validate_file, m)?,
        wrap_pyfunction!(tgm_layout, m)?,
        wrap_pyfunction!(tgm_decode_frame, m)?,
        wrap_pyfunction!(tgm_decode_payload, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
