//! One trial per conformance fixture: `inspect --json` must report what the sidecar records.

use crate::support::{canonical_dtype, files_with_extension, inspect_json, same_value, testdata};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

pub(crate) fn trials() -> Vec<Trial> {
    let dir = testdata().join("conformance/safetensors");
    let files = files_with_extension(&dir, "safetensors");
    assert!(
        !files.is_empty(),
        "no safetensors fixtures in {}",
        dir.display()
    );
    files
        .into_iter()
        .map(|file| {
            let name = file
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            Trial::test(format!("conformance::safetensors::{name}"), move || {
                check_fixture(&file)
            })
        })
        .collect()
}

fn check_fixture(file: &Path) -> Result<(), Failed> {
    let sidecar: Value = serde_json::from_slice(&std::fs::read(file.with_extension("json"))?)?;
    let got = inspect_json(file)?;
    if got["format"] != "safetensors" {
        return Err(format!("format {} ", got["format"]).into());
    }
    if got["metadata"] != sidecar["metadata"] {
        return Err(format!("metadata {} != {}", got["metadata"], sidecar["metadata"]).into());
    }
    let ours = got["tensors"].as_array().ok_or("no tensors array")?;
    let theirs = sidecar["tensors"]
        .as_array()
        .ok_or("sidecar has no tensors")?;
    if ours.len() != theirs.len() {
        return Err(format!("{} tensors, expected {}", ours.len(), theirs.len()).into());
    }
    let order: Vec<&Value> = ours.iter().map(|t| &t["name"]).collect();
    let expected_order: Vec<&Value> = sidecar["tensor_order"]
        .as_array()
        .ok_or("no tensor_order")?
        .iter()
        .collect();
    if order != expected_order {
        return Err(format!("stored order {order:?}, expected {expected_order:?}").into());
    }
    for expected in theirs {
        let name = &expected["name"];
        let t = ours
            .iter()
            .find(|t| &t["name"] == name)
            .ok_or_else(|| format!("tensor {name} missing"))?;
        let dtype = canonical_dtype(expected["dtype"].as_str().unwrap_or_default())
            .ok_or_else(|| format!("unknown fixture dtype {}", expected["dtype"]))?;
        if t["dtype"] != dtype {
            return Err(format!("{name}: dtype {} != {dtype}", t["dtype"]).into());
        }
        if t["shape"] != expected["shape"] {
            return Err(format!("{name}: shape {} != {}", t["shape"], expected["shape"]).into());
        }
        if t["sha256_le"] != expected["sha256"] {
            return Err(format!(
                "{name}: sha256 {} != {}",
                t["sha256_le"], expected["sha256"]
            )
            .into());
        }
        let values = expected
            .get("values")
            .or_else(|| expected.get("first_values"));
        if let Some(Value::Array(values)) = values {
            let first = t["first_values"].as_array().ok_or("no first_values")?;
            let n = first.len().min(values.len());
            if n == 0 && !values.is_empty() {
                return Err(format!("{name}: no first_values").into());
            }
            for (i, (a, b)) in first.iter().zip(values).take(n).enumerate() {
                if !same_value(a, b) {
                    return Err(format!("{name}: value {i} is {a}, expected {b}").into());
                }
            }
        }
    }
    Ok(())
}
