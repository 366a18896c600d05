//! Helpers: fixture paths, hex, SHA-256 and value comparison.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tensor_core::ByteOrder;
use tensor_dtype::{Scalar, TensorView, scalar};

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance")
}

pub(crate) fn sorted_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    tensor_core::hex::encode(&Sha256::digest(bytes))
}

pub(crate) use tensor_core::hex::encode as hex;

/// Whether a decoded element equals a fixture value (`"nan"`, `"inf"`, `"-inf"` for
/// non-finite floats; `-0.0` kept).
pub(crate) fn scalar_matches(s: Scalar, v: &Value) -> bool {
    match (s, v) {
        (Scalar::Bool(b), Value::Bool(x)) => b == *x,
        (Scalar::Int(i), Value::Number(n)) => n.as_i64() == Some(i),
        (Scalar::Uint(u), Value::Number(n)) => n.as_u64() == Some(u),
        (Scalar::Float(f), Value::String(s)) => match s.as_str() {
            "nan" => f.is_nan(),
            "inf" => f == f64::INFINITY,
            "-inf" => f == f64::NEG_INFINITY,
            _ => false,
        },
        (Scalar::Float(f), Value::Number(n)) => {
            n.as_f64().is_some_and(|x| x.to_bits() == f.to_bits())
        }
        _ => false,
    }
}

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
