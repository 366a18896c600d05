//! Tensogram through the command: `inspect --json` reports one entry per object with its
//! message and object indices and the reference's decoded values, `validate` passes every
//! fixture and fails every malformed one, and conversions to every format come back intact.

use crate::support::{
    expect_error_contract, files_with_extension, inspect_json, tensorkit, testdata,
};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

fn unsupported_codec(sidecar: &Value) -> Option<&'static str> {
    let requires = sidecar["requires"].to_string();
    tensorkit::frame::UNSUPPORTED_CODECS
        .into_iter()
        .find(|c| requires.contains(c))
}

fn check_fixture(file: &Path) -> Result<(), Failed> {
    let sidecar = tensor_testkit::sidecar(file)?;
    let path = file.to_string_lossy();
    if let Some(codec) = unsupported_codec(&sidecar) {
        let out = tensorkit(&["inspect", "--json", &path]);
        let kind = expect_error_contract(&out, true)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if kind != "unsupported" || !stderr.contains(codec) {
            return Err(format!("expected an unsupported error naming {codec}: {stderr}").into());
        }
        return Ok(());
    }
    let got = inspect_json(file)?;
    if got["format"] != "tensogram" {
        return Err(format!("format {}", got["format"]).into());
    }
    let ours = got["tensors"].as_array().ok_or("no tensors")?;
    let mut k = 0;
    for (mi, m) in sidecar["messages"]
        .as_array()
        .ok_or("messages")?
        .iter()
        .enumerate()
    {
        for (j, o) in m["objects"].as_array().ok_or("objects")?.iter().enumerate() {
            let t = ours.get(k).ok_or("too few tensors")?;
            k += 1;
            if t["message"] != mi || t["object"] != j {
                return Err(format!("tensor {k}: location {t}").into());
            }
            if t["sha256_le"] != o["decoded"]["sha256_le"] {
                return Err(format!("message {mi} object {j}: values differ").into());
            }
            let name = m["metadata"]["base"][j]["name"].clone();
            if t["name"] != name {
                return Err(format!("name {} != {name}", t["name"]).into());
            }
        }
    }
    if k != ours.len() {
        return Err(format!("{} tensors, the reference has {k}", ours.len()).into());
    }
    let out = tensorkit(&["validate", &path]);
    if !out.status.success() {
        return Err(format!("validate fails: {}", String::from_utf8_lossy(&out.stdout)).into());
    }
    Ok(())
}

fn check_bad(file: &Path) -> Result<(), Failed> {
    let sidecar = tensor_testkit::sidecar(file)?;
    let path = file.to_string_lossy();
    let out = tensorkit(&["validate", "--json", &path]);
    let report: Value = serde_json::from_slice(&out.stdout)?;
    let only_on_verify = sidecar["expected_error_class"] == "MissingHash";
    if only_on_verify {
        // A valid message without hashes: valid, with a warning that nothing is verified.
        if !out.status.success() || report["problems"][0]["code"] != "no_hash_available" {
            return Err(format!("expected a warning only: {report}").into());
        }
        return Ok(());
    }
    if out.status.code() != Some(2) || report["valid"] != false {
        return Err(format!("validate should fail with exit 2: {report}").into());
    }
    // Reading its data fails too, even where only the hashes tell (reads verify them as
    // well), and leaves no output behind. (`inspect` reads the header frames alone, so a
    // damaged data frame is for the commands that read data to find.)
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("out.safetensors");
    let convert = tensorkit(&["convert", &path, &out.to_string_lossy()]);
    expect_error_contract(&convert, false)?;
    if out.exists() {
        return Err("a failed conversion left its output behind".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let dir = testdata().join("tensogram/conformance");
    let mut trials = Vec::new();
    for file in files_with_extension(&dir, "tgm") {
        let name = tensor_testkit::stem(&file);
        let f = file.clone();
        trials.push(Trial::test(format!("tensogram::{name}"), move || {
            check_fixture(&f)
        }));
        if unsupported_codec(&tensor_testkit::sidecar(&file).unwrap_or_default()).is_none() {
            trials.push(Trial::test(
                format!("convert::tensogram::{name}"),
                move || crate::convert::round_trip(&file),
            ));
        }
    }
    for file in files_with_extension(&dir.join("bad"), "tgm") {
        let name = tensor_testkit::stem(&file);
        trials.push(Trial::test(format!("tensogram::bad::{name}"), move || {
            check_bad(&file)
        }));
    }
    trials
}
