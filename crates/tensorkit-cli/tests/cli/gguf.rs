//! GGUF files written by gguf-py 0.19.0 (`testdata/gguf/reference`): every command reads
//! them (quantized tensors as float32, the hashes of gguf-py's dequantized values), `get`
//! writes values or `--raw` blocks, conversion keeps quantized blocks into GGUF and
//! dequantizes them elsewhere, damaged files are errors of their kind, and the readable
//! `inspect` output is a snapshot.

use crate::support::{expect_error_contract, inspect_json, tensorkit, testdata};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    testdata().join("gguf/reference")
}

/// `inspect --json` gives every tensor the hash of the float32 values gguf-py dequantizes
/// (or the elements it reads), and the metadata with its GGUF types.
fn inspect_matches_gguf_py(file: &Path) -> Result<(), Failed> {
    let side = tensor_testkit::sidecar(file)?;
    let ours = inspect_json(file)?;
    if ours["format"] != "gguf" {
        return Err(format!("read as {}", ours["format"]).into());
    }
    for m in side["metadata"].as_array().ok_or("sidecar: metadata")? {
        let key = m["key"].as_str().ok_or("sidecar: key")?;
        let ty = &ours["metadata_types"][key];
        let expected = match m["item_types"].as_array() {
            Some(items) => items
                .iter()
                .filter_map(Value::as_str)
                .fold(String::new(), |acc, t| format!("{acc}[{t}")),
            None => String::new(),
        };
        let expected = format!(
            "{}{expected}{}",
            m["type"].as_str().unwrap_or_default(),
            "]".repeat(m["item_types"].as_array().map_or(0, Vec::len))
        );
        if ty.as_str() != Some(expected.as_str()) {
            return Err(format!("{key}: type {ty}, gguf-py {expected}").into());
        }
    }
    let tensors = ours["tensors"].as_array().ok_or("no tensors")?;
    for t in side["tensors"].as_array().ok_or("sidecar: tensors")? {
        let name = &t["name"];
        let mine = tensors
            .iter()
            .find(|x| x["name"] == *name)
            .ok_or_else(|| format!("no tensor {name}"))?;
        if mine["shape"] != t["shape"] {
            return Err(format!("{name}: shape {} vs {}", mine["shape"], t["shape"]).into());
        }
        let quantized = !matches!(
            t["type"].as_str(),
            Some("F32" | "F16" | "BF16" | "F64" | "I8" | "I16" | "I32" | "I64")
        );
        if quantized && (mine["dtype"] != "float32" || mine["sha256_le"] != t["float32_sha256"]) {
            return Err(format!("{name} ({}): not gguf-py's float32 values", t["type"]).into());
        }
        // A quantized tensor says how it is stored: its ggml type, block layout and bytes.
        let stored = &mine["stored"];
        if quantized
            && (mine["stored_as"] != t["type"]
                || stored["ggml_type"] != t["type"]
                || stored["bytes"] != t["n_bytes"]
                || stored["block_bytes"].as_u64().is_none_or(|b| b == 0)
                || stored["shape_in_bytes"].as_array().map(Vec::len)
                    != t["shape"].as_array().map(Vec::len))
        {
            return Err(format!("{name} ({}): stored as {mine}", t["type"]).into());
        }
        if !quantized && (mine.get("stored").is_some() || mine.get("stored_as").is_some()) {
            return Err(format!("{name} ({}): a dense tensor said {mine}", t["type"]).into());
        }
    }
    Ok(())
}

fn get_writes_values_or_blocks() -> Result<(), Failed> {
    let file = dir().join("quantized.gguf");
    let side = tensor_testkit::sidecar(&file)?;
    let out = tempfile::tempdir()?;
    let f = file.to_string_lossy();
    for t in side["tensors"].as_array().ok_or("sidecar: tensors")? {
        let name = t["name"].as_str().ok_or("name")?;
        let values = out.path().join("v.npy");
        let blocks = out.path().join("b.npy");
        for (path, raw) in [(&values, false), (&blocks, true)] {
            let p = path.to_string_lossy();
            let mut args = vec!["get", &f, name, "-o", &p];
            if raw {
                args.push("--raw");
            }
            let run = tensorkit(&args);
            if !run.status.success() {
                return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
            }
        }
        // The .npy data after its header: float32 values, or the stored blocks.
        let npy_data = |path: &Path| -> Result<Vec<u8>, Failed> {
            let b = std::fs::read(path)?;
            let header = usize::from(u16::from_le_bytes([b[8], b[9]]));
            Ok(b[10 + header..].to_vec())
        };
        if tensor_testkit::sha256_hex(&npy_data(&values)?)
            != t["float32_sha256"].as_str().unwrap_or("")
        {
            return Err(format!("{name}: -o wrote other values than gguf-py's").into());
        }
        if tensor_testkit::sha256_hex(&npy_data(&blocks)?) != t["raw_sha256"].as_str().unwrap_or("")
        {
            return Err(format!("{name}: --raw wrote other bytes than the stored blocks").into());
        }
    }
    // --raw of a tensor encoded otherwise is refused, of a dense one gives its elements.
    let tgm = testdata().join("tensogram/reference/codecs/blosc2_codecs.tgm");
    let refused = tensorkit(&["get", &tgm.to_string_lossy(), "#0", "--raw"]);
    expect_error_contract(&refused, false)?;
    let dense = tensorkit(&[
        "get",
        &dir().join("dense.gguf").to_string_lossy(),
        "f32",
        "--raw",
    ]);
    if !dense.status.success() {
        return Err("--raw of a dense tensor failed".into());
    }
    Ok(())
}

fn conversions_keep_blocks_or_values() -> Result<(), Failed> {
    let src = dir().join("model.gguf");
    let out = tempfile::tempdir()?;
    let again = out.path().join("again.gguf");
    let run = tensorkit(&["convert", &src.to_string_lossy(), &again.to_string_lossy()]);
    if !run.status.success() || std::fs::read(&again)? != std::fs::read(&src)? {
        return Err("GGUF to GGUF is not the same bytes".into());
    }
    let st = out.path().join("model.safetensors");
    let run = tensorkit(&["convert", &src.to_string_lossy(), &st.to_string_lossy()]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    let (a, b) = (inspect_json(&src)?, inspect_json(&st)?);
    for t in a["tensors"].as_array().ok_or("tensors")? {
        let other = b["tensors"]
            .as_array()
            .and_then(|v| v.iter().find(|x| x["name"] == t["name"]))
            .ok_or("a tensor went missing")?;
        if other["sha256_le"] != t["sha256_le"] || other["dtype"] != t["dtype"] {
            return Err(format!("{}: changed in safetensors", t["name"]).into());
        }
    }
    if b["metadata"]["general.file_type"] != "15" {
        return Err("numeric metadata is not kept as JSON text".into());
    }
    // Back into GGUF: the values come back (as float32 tensors), the metadata as strings.
    let back = out.path().join("back.gguf");
    let run = tensorkit(&["convert", &st.to_string_lossy(), &back.to_string_lossy()]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    // As raw blocks and back: the same blocks of the same types.
    let raw = out.path().join("raw.safetensors");
    let again = out.path().join("from_raw.gguf");
    for args in [
        vec![
            "convert",
            &*src.to_string_lossy(),
            &*raw.to_string_lossy(),
            "--dequantize",
            "raw",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>(),
        vec![
            "convert".to_owned(),
            raw.to_string_lossy().into_owned(),
            again.to_string_lossy().into_owned(),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = tensorkit(&args);
        if !run.status.success() {
            return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
        }
    }
    let (x, y) = (inspect_json(&src)?, inspect_json(&again)?);
    for t in x["tensors"].as_array().ok_or("tensors")? {
        let other = y["tensors"]
            .as_array()
            .and_then(|v| v.iter().find(|o| o["name"] == t["name"]))
            .ok_or("a tensor went missing through raw blocks")?;
        if other["sha256_le"] != t["sha256_le"] {
            return Err(format!("{}: changed through raw blocks", t["name"]).into());
        }
    }
    // A dtype GGUF has no type for (bool) is refused, naming the tensor.
    let u8_file = testdata().join("safetensors/reference/mixed.safetensors");
    let refused = tensorkit(&[
        "convert",
        &u8_file.to_string_lossy(),
        &out.path().join("x.gguf").to_string_lossy(),
    ]);
    let kind = expect_error_contract(&refused, false)?;
    if kind != "unsupported" || out.path().join("x.gguf").exists() {
        return Err(format!("a bool tensor into GGUF: {kind}").into());
    }
    Ok(())
}

/// `split --max-tensors 3` of the model gives gguf-py's split set byte for byte; any shard
/// opens the whole set; `merge` of it gives the model again with gguf-split's merge keys;
/// a missing or extra shard is an error naming it.
fn split_sets() -> Result<(), Failed> {
    let out = tempfile::tempdir()?;
    let model = dir().join("model.gguf");
    let run = tensorkit(&[
        "split",
        &model.to_string_lossy(),
        "--max-tensors",
        "3",
        "-o",
        &out.path().to_string_lossy(),
    ]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    for i in 1..=3 {
        let ours = std::fs::read(out.path().join(format!("model-0000{i}-of-00003.gguf")))?;
        let theirs = std::fs::read(dir().join(format!("split-0000{i}-of-00003.gguf")))?;
        if ours != theirs {
            return Err(format!("shard {i} differs from gguf-py's").into());
        }
    }
    let whole = inspect_json(&model)?;
    let shard2 = out.path().join("model-00002-of-00003.gguf");
    let set = inspect_json(&shard2)?;
    let sums = |v: &Value| -> Vec<Value> {
        v["tensors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["sha256_le"].clone())
            .collect()
    };
    if sums(&set) != sums(&whole) || set["metadata"]["split.count"] != 0 {
        return Err("a shard does not open its whole set".into());
    }
    let merged = out.path().join("merged.gguf");
    let run = tensorkit(&[
        "merge",
        &shard2.to_string_lossy(),
        "-o",
        &merged.to_string_lossy(),
    ]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    let m = inspect_json(&merged)?;
    let mut expected = whole["metadata"].as_object().cloned().unwrap_or_default();
    for (k, v) in [
        ("split.no", 0),
        ("split.count", 0),
        ("split.tensors.count", 8),
    ] {
        expected.insert(k.into(), v.into());
    }
    if m["metadata"] != Value::Object(expected) || sums(&m) != sums(&whole) {
        return Err(format!("merged: {}", m["metadata"]).into());
    }
    std::fs::remove_file(out.path().join("model-00003-of-00003.gguf"))?;
    let missing = tensorkit(&["inspect", &shard2.to_string_lossy()]);
    let text = String::from_utf8_lossy(&missing.stderr).into_owned();
    expect_error_contract(&missing, false)?;
    if !text.contains("model-00003-of-00003.gguf") {
        return Err(format!("the missing shard is not named: {text}").into());
    }
    Ok(())
}

fn damaged(file: &Path) -> Result<(), Failed> {
    let side = tensor_testkit::sidecar(file)?;
    let expected = match side["kind"].as_str().ok_or("kind")? {
        "unknown format" | "Malformed" => "malformed",
        "Truncated" => "truncated",
        "Unsupported" => "unsupported",
        "LimitExceeded" => "limit_exceeded",
        other => return Err(format!("sidecar kind {other}").into()),
    };
    let kind = expect_error_contract(&tensorkit(&["inspect", &file.to_string_lossy()]), false)?;
    // A file that does not start with the magic is simply not GGUF: whatever else it is
    // taken for, it is an error.
    if kind == expected || side["kind"] == "unknown format" {
        Ok(())
    } else {
        Err(format!("kind {kind}, expected {expected}").into())
    }
}

fn inspect_snapshot() -> Result<(), Failed> {
    let out = tensorkit(&["inspect", &dir().join("model.gguf").to_string_lossy()]);
    let text = String::from_utf8(out.stdout)?;
    insta::assert_snapshot!("inspect_gguf_model", text);
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut v: Vec<Trial> = tensor_testkit::files_with_extension(&dir(), "gguf")
        .into_iter()
        .map(|f| {
            let name = format!("gguf::inspect::{}", tensor_testkit::stem(&f));
            Trial::test(name, move || inspect_matches_gguf_py(&f))
        })
        .collect();
    v.extend(
        tensor_testkit::files_with_extension(&dir().join("malformed"), "gguf")
            .into_iter()
            .map(|f| {
                let name = format!("gguf::damaged::{}", tensor_testkit::stem(&f));
                Trial::test(name, move || damaged(&f))
            }),
    );
    v.push(Trial::test(
        "gguf::get_values_or_blocks",
        get_writes_values_or_blocks,
    ));
    v.push(Trial::test(
        "gguf::conversions",
        conversions_keep_blocks_or_values,
    ));
    v.push(Trial::test("gguf::inspect_snapshot", inspect_snapshot));
    v.push(Trial::test("gguf::split_sets", split_sets));
    v
}
