//! One trial per conformance fixture: `inspect --json` must report what the sidecar records.

use crate::support::{canonical_dtype, files_with_extension, inspect_json, same_value, testdata};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

/// Every set of readable fixtures: the format `inspect` must report, the folder under
/// `testdata/`, and the file extension.
pub(crate) const FIXTURE_SETS: [(&str, &str, &str); 5] = [
    ("safetensors", "safetensors/conformance", "safetensors"),
    ("bintensors", "bintensors/conformance", "bt"),
    ("ztensor-0.1", "ztensor/conformance/v0.1", "zt"),
    ("ztensor-1", "ztensor/conformance/v1", "zt"),
    ("ztensor-2", "ztensor/conformance/v2", "zt"),
];

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (format, dir, ext) in FIXTURE_SETS {
        let dir = testdata().join(dir);
        let files = files_with_extension(&dir, ext);
        assert!(
            !files.is_empty(),
            "no {format} fixtures in {}",
            dir.display()
        );
        for file in files {
            let name = tensor_testkit::stem(&file);
            trials.push(Trial::test(
                format!("conformance::{format}::{name}"),
                move || check_fixture(&file, format),
            ));
        }
    }
    trials
}

fn check_fixture(file: &Path, format: &str) -> Result<(), Failed> {
    let sidecar: Value = tensor_testkit::sidecar(file)?;
    let got = inspect_json(file)?;
    if got["format"] != format {
        return Err(format!("format {}, expected {format}", got["format"]).into());
    }
    // zTensor 1.x/2 sidecars record file attributes inside the manifest.
    let metadata = sidecar
        .get("metadata")
        .unwrap_or(&sidecar["manifest"]["attributes"]);
    if got["metadata"] != *metadata {
        return Err(format!("metadata {} != {metadata}", got["metadata"]).into());
    }
    let ours = got["tensors"].as_array().ok_or("no tensors array")?;
    let theirs = sidecar["tensors"]
        .as_array()
        .ok_or("sidecar has no tensors")?;
    if ours.len() != theirs.len() {
        return Err(format!("{} tensors, expected {}", ours.len(), theirs.len()).into());
    }
    if let Some(order) = sidecar["tensor_order"].as_array() {
        let stored: Vec<&Value> = ours.iter().map(|t| &t["name"]).collect();
        if stored != order.iter().collect::<Vec<_>>() {
            return Err(format!("stored order {stored:?}, expected {order:?}").into());
        }
    }
    for expected in theirs {
        let name = &expected["name"];
        let t = ours
            .iter()
            .find(|t| &t["name"] == name)
            .ok_or_else(|| format!("tensor {name} missing"))?;
        // zTensor 2 sidecars describe parts; a dense object's `data` part is the tensor.
        let data_part = &expected["parts"]["data"];
        if let Some(d) = expected["dtype"].as_str() {
            let dtype = canonical_dtype(d).ok_or_else(|| format!("unknown fixture dtype {d}"))?;
            if t["dtype"] != dtype {
                return Err(format!("{name}: dtype {} != {dtype}", t["dtype"]).into());
            }
        }
        if t["shape"] != expected["shape"] {
            return Err(format!("{name}: shape {} != {}", t["shape"], expected["shape"]).into());
        }
        let sha = if expected["sha256"].is_null() && expected["layout"] == "dense" {
            &data_part["sha256"]
        } else {
            &expected["sha256"]
        };
        if sha.is_null() && expected["dense_values"].is_null() {
            return Err(
                format!("{name}: the sidecar records neither a digest nor dense values").into(),
            );
        }
        if !sha.is_null() && t["sha256_le"] != *sha {
            return Err(format!("{name}: sha256 {} != {sha}", t["sha256_le"]).into());
        }
        let values = [
            expected.get("values"),
            expected.get("dense_values"),
            expected.get("first_values"),
            data_part.get("values"),
            data_part.get("first_values"),
        ]
        .into_iter()
        .flatten()
        .next();
        if let Some(Value::Array(values)) = values {
            let first = t["first_values"].as_array().ok_or("no first_values")?;
            if first.is_empty() && !values.is_empty() {
                return Err(format!("{name}: no first_values").into());
            }
            for (i, (a, b)) in first.iter().zip(values).enumerate() {
                if !same_value(a, b) {
                    return Err(format!("{name}: value {i} is {a}, expected {b}").into());
                }
            }
        }
    }
    Ok(())
}
