//! One trial per fixture.

use crate::support::{check_tensor, sha256_hex, sorted_files};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tensor_bintensors::{BinTensors, Layout, LayoutChoice, ReadOptions, serialize};

fn metadata_json(f: &BinTensors<'_>) -> Value {
    f.metadata().map_or(Value::Null, |m| {
        m.iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect()
    })
}

fn check_contents(f: &BinTensors<'_>, j: &Value) -> Result<(), Failed> {
    if metadata_json(f) != j["metadata"] {
        return Err(format!("metadata {} != {}", metadata_json(f), j["metadata"]).into());
    }
    let expected = j["tensors"].as_array().ok_or("no tensors")?;
    if f.len() != expected.len() {
        return Err(format!("{} tensors, expected {}", f.len(), expected.len()).into());
    }
    for (t, e) in f.tensors().zip(expected) {
        if t.name != e["name"] {
            return Err(format!(
                "stored order: {:?} where {} was expected",
                t.name, e["name"]
            )
            .into());
        }
        check_tensor(&t.view, e)?;
    }
    Ok(())
}

fn good(file: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(file)?;
    let j = tensor_testkit::sidecar(file)?;
    let f = BinTensors::open(&bytes)?;
    if f.layout() != Layout::Release
        || Some(f.header_len()) != j["sofm"].as_u64()
        || Some(f.data_start()) != j["data_start"].as_u64()
    {
        return Err("layout, sofm or data_start differ".into());
    }
    check_contents(&f, &j)?;
    BinTensors::open_with(&bytes, &ReadOptions::default().strict(true))?;
    if j["writer_reproducible"] == true && sha256_hex(&rewrite(&f)?) != j["file_sha256"] {
        return Err("rewriting the file does not reproduce the reference's bytes".into());
    }
    Ok(())
}

fn rewrite(f: &BinTensors<'_>) -> Result<Vec<u8>, Failed> {
    let tensors: Vec<(&str, tensor_dtype::TensorView<'_>)> =
        f.tensors().map(|t| (t.name, t.view)).collect();
    let metadata: Option<BTreeMap<String, String>> = f.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    });
    Ok(serialize(
        tensors.iter().cloned(),
        metadata.as_ref(),
        Layout::Release,
    )?)
}

/// Accepted by default; the strict reader accepts exactly those a conforming writer would
/// have produced byte for byte.
fn lenient(file: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(file)?;
    let j = tensor_testkit::sidecar(file)?;
    let f = BinTensors::open_layout(&bytes, &ReadOptions::default(), LayoutChoice::Release)?;
    check_contents(&f, &j)?;
    let canonical = rewrite(&f)? == bytes;
    match (
        BinTensors::open_with(&bytes, &ReadOptions::default().strict(true)),
        canonical,
    ) {
        (Ok(_), true) => Ok(()),
        (Ok(_), false) => {
            Err("the strict reader accepted a file no conforming writer produces".into())
        }
        (Err(e), false) if e.class() == "NotCanonical" => Ok(()),
        (Err(e), _) => Err(format!(
            "strict reader failed with {} ({e}); canonical: {canonical}",
            e.class()
        )
        .into()),
    }
}

fn bad(file: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(file)?;
    let j = tensor_testkit::sidecar(file)?;
    let expected = j["expected_error"].as_str().ok_or("expected_error")?;
    match BinTensors::open_layout(&bytes, &ReadOptions::default(), LayoutChoice::Release) {
        Ok(_) => return Err("accepted".into()),
        Err(e) if e.class() != expected => {
            return Err(format!("{} ({e}), expected {expected}", e.class()).into());
        }
        Err(_) => {}
    }
    // Detecting the layout may only turn a file into a valid pre-release one.
    match BinTensors::open(&bytes) {
        Ok(f)
            if f.layout() == Layout::Legacy
                && j["file"].as_str().is_some_and(|n| n.contains("legacy")) =>
        {
            Ok(())
        }
        Ok(f) => Err(format!("accepted as {:?}", f.layout()).into()),
        Err(e) if e.class() == expected => Ok(()),
        Err(e) => Err(format!("layout detection changed the error to {} ({e})", e.class()).into()),
    }
}

/// The safetensors twin holds the same tensors, bytes and metadata.
fn twin(file: &Path) -> Result<(), Failed> {
    let st_bytes = std::fs::read(file)?;
    let j = tensor_testkit::sidecar(file)?;
    // `twin_of` is as the suite was delivered, one folder per format side by side
    // (`../bintensors/NAME.bt`); here each format's suite is `testdata/<format>/conformance`.
    let twin = j["twin_of"].as_str().ok_or("twin_of")?;
    let (format, name) = twin
        .strip_prefix("../")
        .and_then(|t| t.split_once('/'))
        .ok_or_else(|| format!("twin_of {twin:?} is not ../FORMAT/FILE"))?;
    let bt_path = tensor_testkit::conformance(format).join(name);
    let bt_bytes = std::fs::read(&bt_path)?;
    let bt = BinTensors::open(&bt_bytes)?;
    let st = safetensors::SafeTensors::deserialize(&st_bytes)?;
    if st.len() != bt.len() {
        return Err("tensor counts differ".into());
    }
    for t in bt.tensors() {
        let s = st.tensor(t.name)?;
        if s.data() != t.view.contiguous_bytes().unwrap_or_default()
            || s.shape()
                .iter()
                .map(|&d| d as u64)
                .ne(t.view.shape().iter().copied())
        {
            return Err(format!("tensor {:?} differs between the twins", t.name).into());
        }
    }
    Ok(())
}

/// A check run on one fixture file.
type Check = fn(&Path) -> Result<(), Failed>;

pub(crate) fn trials() -> Vec<Trial> {
    let bt = tensor_testkit::conformance("bintensors");
    let groups: [(&str, PathBuf, &str, Check); 4] = [
        ("good", bt.clone(), "bt", good),
        ("lenient", bt.join("lenient"), "bt", lenient),
        ("bad", bt.join("bad"), "bt", bad),
        (
            "twin",
            tensor_testkit::conformance("safetensors"),
            "safetensors",
            twin,
        ),
    ];
    let mut trials = Vec::new();
    for (group, dir, ext, check) in groups {
        let files = sorted_files(&dir, ext);
        assert!(!files.is_empty(), "no fixtures in {}", dir.display());
        for file in files {
            let name = tensor_testkit::stem(&file);
            trials.push(Trial::test(
                format!("conformance::{group}::{name}"),
                move || check(&file),
            ));
        }
    }
    trials
}
