//! `tensorkit convert` round trips between every pair of formats, on the conformance
//! fixtures: what comes back has the same names, dtypes, shapes, values and metadata, and a
//! BinTensors file that went through safetensors comes back byte for byte.

use crate::support::{
    expect_error_contract, files_with_extension, inspect_json, tensorkit, testdata,
};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

fn convert(input: &Path, output: &Path, to: Option<&str>) -> Result<(), Failed> {
    let (i, o) = (input.to_string_lossy(), output.to_string_lossy());
    let mut args = vec!["convert", &*i, &*o];
    if let Some(t) = to {
        args.extend(["--to", t]);
    }
    let out = tensorkit(&args);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    Ok(())
}

/// The parts of `inspect --json` that a lossless conversion keeps, tensors by name. Writers
/// store bools as 0/1, so a bool tensor holding other non-zero bytes keeps its values but not
/// its bytes: for bools the values are compared, not the digest.
fn contents(v: &Value) -> Value {
    let mut tensors: Vec<Value> = v["tensors"].as_array().cloned().unwrap_or_default();
    for t in &mut tensors {
        if t["dtype"] == "bool"
            && let Some(o) = t.as_object_mut()
        {
            o.remove("sha256_le");
        }
    }
    tensors.sort_by_key(|t| t["name"].to_string());
    serde_json::json!({"metadata": v["metadata"], "tensors": tensors})
}

fn round_trip(file: &Path) -> Result<(), Failed> {
    let original = inspect_json(file)?;
    let dir = tempfile::tempdir()?;
    for (ext, to) in [
        ("safetensors", None),
        ("bt", None),
        ("legacy", Some("bintensors-legacy")),
    ] {
        let out = dir.path().join(format!("converted.{ext}"));
        convert(file, &out, to)?;
        let got = inspect_json(&out)?;
        if contents(&got) != contents(&original) {
            return Err(format!(
                "through {ext}: {} != {}",
                contents(&got),
                contents(&original)
            )
            .into());
        }
        // And back to the original format.
        let back = dir.path().join(format!(
            "back.{}",
            file.extension().unwrap_or_default().to_string_lossy()
        ));
        convert(&out, &back, None)?;
        if contents(&inspect_json(&back)?) != contents(&original) {
            return Err(format!("back from {ext}: contents changed").into());
        }
        if file.extension().is_some_and(|e| e == "bt") {
            let sidecar: Value =
                serde_json::from_slice(&std::fs::read(file.with_extension("json"))?)?;
            if sidecar["writer_reproducible"] == true
                && std::fs::read(&back)? != std::fs::read(file)?
            {
                return Err(format!("back from {ext}: the BinTensors bytes changed").into());
            }
        }
    }
    Ok(())
}

fn refuses_unknown_targets() -> Result<(), Failed> {
    let file = testdata().join("conformance/safetensors/scalar_f32.safetensors");
    let dir = tempfile::tempdir()?;
    for (out, to) in [("x.unknown", None), ("x.bt", Some("npy"))] {
        let o = dir.path().join(out);
        let (f, o) = (file.to_string_lossy(), o.to_string_lossy());
        let mut args = vec!["convert", &*f, &*o];
        if let Some(t) = to {
            args.extend(["--to", t]);
        }
        let kind = expect_error_contract(&tensorkit(&args), false)?;
        if kind != "invalid_argument" {
            return Err(format!("kind {kind}").into());
        }
    }
    if std::fs::read_dir(dir.path())?.count() != 0 {
        return Err("a failed conversion left a file behind".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (format, dir, ext) in [
        ("safetensors", "safetensors", "safetensors"),
        ("bintensors", "bintensors", "bt"),
        ("ztensor", "ztensor/v0.1", "zt"),
    ] {
        for file in files_with_extension(&testdata().join("conformance").join(dir), ext) {
            let name = file
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            trials.push(Trial::test(
                format!("convert::{format}::{name}"),
                move || round_trip(&file),
            ));
        }
    }
    trials.push(Trial::test(
        "convert::refuses_unknown_targets",
        refuses_unknown_targets,
    ));
    trials
}
