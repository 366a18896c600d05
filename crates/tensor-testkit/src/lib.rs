//! Helpers shared by the integration tests of every tensorkit crate: where the conformance
//! fixtures are, listing them in a stable order, digests, and comparing decoded values with
//! the values a fixture's JSON sidecar records.
#![forbid(unsafe_code)]

pub mod grib;
pub mod http;
mod prefix;

pub use prefix::Prefix;

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tensor_dtype::Scalar;

/// The repository's `testdata/` folder.
#[must_use]
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Every format's folder under `testdata/`, each with what it holds of `conformance/`
/// (the suite as delivered), `reference/` (files the reference packages wrote) and
/// `malicious/`.
pub const FORMATS: [&str; 7] = [
    "safetensors",
    "ztensor",
    "bintensors",
    "tensogram",
    "stdlib",
    "grib",
    "gguf",
];

/// `testdata/<format>/conformance`: the conformance fixtures of one format.
#[must_use]
pub fn conformance(format: &str) -> PathBuf {
    testdata().join(format).join("conformance")
}

/// `testdata/<format>/reference`: files the reference package of one format wrote.
#[must_use]
pub fn reference(format: &str) -> PathBuf {
    testdata().join(format).join("reference")
}

/// Every file in `dir` whose extension is `ext`, sorted by path (empty if `dir` is missing).
#[must_use]
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
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

/// The file's stem, for naming a trial after its fixture.
#[must_use]
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Lower-case hex SHA-256.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    tensor_core::hex::encode(&Sha256::digest(bytes))
}

/// The sidecar JSON next to `file` (same stem, `.json`).
pub fn sidecar(file: &Path) -> Result<Value, String> {
    let text = std::fs::read(file.with_extension("json"))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Whether a decoded element equals a sidecar value: bools and integers exactly, floats bit
/// for bit (`-0.0` kept), non-finite floats spelled `"nan"`, `"inf"`, `"-inf"` (or `"NaN"`,
/// `"Infinity"`, `"-Infinity"`), complex numbers as `[re, im]`.
#[must_use]
pub fn scalar_matches(s: Scalar, v: &Value) -> bool {
    fn float(f: f64, v: &Value) -> bool {
        match v {
            Value::String(s) => match s.as_str() {
                "nan" | "NaN" => f.is_nan(),
                "inf" | "Infinity" => f == f64::INFINITY,
                "-inf" | "-Infinity" => f == f64::NEG_INFINITY,
                _ => false,
            },
            Value::Number(n) => n.as_f64().is_some_and(|x| x.to_bits() == f.to_bits()),
            _ => false,
        }
    }
    match (s, v) {
        (Scalar::Bool(b), Value::Bool(x)) => b == *x,
        (Scalar::Int(i), Value::Number(n)) => n.as_i64() == Some(i),
        (Scalar::Uint(u), Value::Number(n)) => n.as_u64() == Some(u),
        (Scalar::Float(f), v) => float(f, v),
        (Scalar::Complex(re, im), Value::Array(a)) => {
            a.len() == 2 && float(re, &a[0]) && float(im, &a[1])
        }
        _ => false,
    }
}

/// Whether two JSON values (one from `inspect --json`, one from a sidecar) hold the same
/// value: integers exactly, floats by value, non-finite spellings mapped onto each other.
#[must_use]
pub fn same_json_value(ours: &Value, theirs: &Value) -> bool {
    let norm = |v: &Value| -> Value {
        match v.as_str() {
            Some("nan" | "NaN") => Value::from("NaN"),
            Some("inf" | "Infinity") => Value::from("Infinity"),
            Some("-inf" | "-Infinity") => Value::from("-Infinity"),
            _ => v.clone(),
        }
    };
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => a.as_f64() == b.as_f64(),
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_json_value(x, y))
        }
        _ => norm(ours) == norm(theirs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn comparisons_follow_the_sidecar_spellings() {
        assert!(scalar_matches(Scalar::Float(f64::NAN), &json!("nan")));
        assert!(scalar_matches(Scalar::Float(-0.0), &json!(-0.0)));
        assert!(!scalar_matches(Scalar::Float(0.0), &json!(-0.0)));
        assert!(scalar_matches(Scalar::Uint(u64::MAX), &json!(u64::MAX)));
        assert!(!scalar_matches(Scalar::Int(1), &json!(true)));
        assert!(same_json_value(&json!("NaN"), &json!("nan")));
        assert!(same_json_value(&json!([1, "Infinity"]), &json!([1, "inf"])));
        assert!(!same_json_value(&json!(1), &json!(2)));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
