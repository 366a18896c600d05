//! Helpers: fixture paths, hex, SHA-256 and value comparison.

use serde_json::Value;
use tensor_core::ByteOrder;
use tensor_dtype::{TensorView, scalar};

pub(crate) use tensor_core::hex::encode as hex;
pub(crate) use tensor_testkit::{files_with_extension as sorted_files, scalar_matches, sha256_hex};

/// Checks one tensor against a fixture entry: dtype spelling, shape, bytes, values.
pub(crate) fn check_tensor(view: &TensorView<'_>, expected: &Value) -> Result<(), String> {
    let name = &expected["name"];
    let dtype = tensor_bintensors::dtype::reference_name(view.dtype()).unwrap_or("?");
    if dtype != expected["dtype"] {
        return Err(format!("{name}: dtype {dtype} != {}", expected["dtype"]));
    }
    if serde_json::to_value(view.shape()).ok().as_ref() != Some(&expected["shape"]) {
        return Err(format!(
            "{name}: shape {:?} != {}",
            view.shape(),
            expected["shape"]
        ));
    }
    let raw = view.contiguous_bytes().ok_or("not contiguous")?;
    if let Some(sha) = expected["sha256"].as_str()
        && sha256_hex(raw) != sha
    {
        return Err(format!("{name}: sha256 differs"));
    }
    if let Some(h) = expected["raw_hex"].as_str()
        && hex(raw) != h
    {
        return Err(format!("{name}: raw bytes {} != {h}", hex(raw)));
    }
    let values = expected
        .get("values")
        .or_else(|| expected.get("first_values"));
    if let Some(Value::Array(values)) = values {
        let got = scalar::decode(view.dtype(), raw, ByteOrder::Little, 0, values.len());
        for (i, (s, v)) in got.iter().zip(values).enumerate() {
            if !scalar_matches(*s, v) {
                return Err(format!("{name}: value {i} is {s:?}, expected {v}"));
            }
        }
        if got.len() != values.len() {
            return Err(format!(
                "{name}: {} values, expected {}",
                got.len(),
                values.len()
            ));
        }
    }
    Ok(())
}
