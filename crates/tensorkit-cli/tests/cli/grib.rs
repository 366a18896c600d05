//! GRIB files written by ecCodes 2.50 (`testdata/grib/reference`): every command reads them,
//! each field's values are ecCodes' bit for bit (missing points NaN), the keys users search
//! by are its attributes, conversion keeps values and keys (`mars` included), and a cut file
//! is an error.

use crate::support::{expect_error_contract, inspect_json, tensorkit};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tensor_testkit::testdata;

fn fixtures() -> Vec<PathBuf> {
    let dir = testdata().join("grib/reference");
    let mut v: Vec<PathBuf> = ["grib", "grib1", "grib2"]
        .iter()
        .flat_map(|e| tensor_testkit::files_with_extension(&dir, e))
        .collect();
    v.sort();
    v
}

/// Each listed tensor against the sidecar (fields in file order; `names` are the tensors'
/// names in that order, for targets that reorder them): values, shape, keys and MARS keys.
fn same_as_eccodes(
    listed: &[Value],
    names: &[Value],
    sidecar: &Value,
    what: &str,
) -> Result<(), Failed> {
    let messages = sidecar["messages"].as_array().ok_or("sidecar: messages")?;
    if listed.len() != messages.len() {
        return Err(format!(
            "{what}: {} tensors, {} fields",
            listed.len(),
            messages.len()
        )
        .into());
    }
    for (name, m) in names.iter().zip(messages) {
        let t = listed
            .iter()
            .find(|t| t["name"] == *name)
            .ok_or_else(|| format!("{what}: no tensor {name}"))?;
        if t["sha256_le"] != m["sha256_nan"] || t["shape"] != m["shape"] || t["dtype"] != "float64"
        {
            return Err(format!("{what}: {name} differs from ecCodes' values").into());
        }
        let a = &t["attributes"];
        for k in [
            "shortName",
            "paramId",
            "typeOfLevel",
            "level",
            "dataDate",
            "dataTime",
            "stepRange",
            "Ni",
            "Nj",
        ] {
            if a[k] != m["keys"][k] {
                return Err(
                    format!("{what}: {name}: {k} is {}, ecCodes {}", a[k], m["keys"][k]).into(),
                );
            }
        }
        if a["mars"] != m["mars"] {
            return Err(format!(
                "{what}: {name}: mars {} vs ecCodes {}",
                a["mars"], m["mars"]
            )
            .into());
        }
    }
    Ok(())
}

fn commands_read_it(file: &Path) -> Result<(), Failed> {
    let sidecar = tensor_testkit::sidecar(file)?;
    let ours = inspect_json(file)?;
    if ours["format"] != "grib" {
        return Err(format!("read as {}", ours["format"]).into());
    }
    let listed = ours["tensors"].as_array().ok_or("no tensors")?;
    let names: Vec<Value> = listed.iter().map(|t| t["name"].clone()).collect();
    same_as_eccodes(listed, &names, &sidecar, "inspect")?;
    let path = file.to_string_lossy();
    for args in [vec!["validate", &*path], vec!["diff", &*path, &*path]] {
        let out = tensorkit(&args);
        if !out.status.success() {
            return Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
    }
    let dir = tempfile::tempdir()?;
    for (ext, extra) in [
        ("tgm", None),
        ("safetensors", None),
        ("zt", None),
        ("tgm", Some("keep")),
    ] {
        let out = dir
            .path()
            .join(format!("x{}.{ext}", extra.map_or("", |_| "_kept")));
        let out_s = out.to_string_lossy();
        let mut args = vec!["convert", &*path, &*out_s];
        if let Some(p) = extra {
            args.extend(["--pipeline", p]);
        }
        let converted = tensorkit(&args);
        if !converted.status.success() {
            return Err(format!(
                "convert to {ext}: {}",
                String::from_utf8_lossy(&converted.stderr)
            )
            .into());
        }
        let back = inspect_json(&out)?;
        let tensors = back["tensors"].as_array().ok_or("no tensors")?;
        for (name, m) in names
            .iter()
            .zip(sidecar["messages"].as_array().ok_or("messages")?)
        {
            let t = tensors
                .iter()
                .find(|t| t["name"] == *name)
                .ok_or("a tensor is missing")?;
            if t["sha256_le"] != m["sha256_nan"] {
                return Err(format!("{ext}: {name} changed on conversion").into());
            }
        }
        if ext != "safetensors" {
            // Formats with per-tensor metadata keep the keys, `mars` included.
            same_as_eccodes(tensors, &names, &sidecar, ext)?;
        }
    }
    Ok(())
}

/// Every cut through the middle of a message is an error that says so; GRIB written from the
/// file gives each GRIB 2 field back (its sections kept), and refuses GRIB 1's, which keep none.
fn cuts_are_refused_and_fields_written_again(file: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(file)?;
    let dir = tempfile::tempdir()?;
    let cut = dir.path().join("cut.grib2");
    for at in [bytes.len() / 3, bytes.len() - 1] {
        std::fs::write(&cut, &bytes[..at])?;
        let out = tensorkit(&["inspect", &cut.to_string_lossy()]);
        expect_error_contract(&out, false)?;
        if !String::from_utf8_lossy(&out.stderr).contains("GRIB message #") {
            return Err(format!(
                "the error does not say where: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
    }
    let again = dir.path().join("x.bin");
    let out = tensorkit(&[
        "convert",
        &file.to_string_lossy(),
        &again.to_string_lossy(),
        "--to",
        "grib",
    ]);
    let edition_1 = inspect_json(file)?["tensors"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["attributes"]["edition"] == 1));
    if edition_1 {
        expect_error_contract(&out, false)?;
        return Ok(());
    }
    if !out.status.success() {
        return Err(format!(
            "GRIB 2 written again: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let (a, b) = (inspect_json(file)?, inspect_json(&again)?);
    let sums = |doc: &Value| -> Vec<Value> {
        doc["tensors"]
            .as_array()
            .map(|t| t.iter().map(|t| t["sha256_le"].clone()).collect())
            .unwrap_or_default()
    };
    if sums(&a) != sums(&b) || sums(&a).is_empty() {
        return Err("the fields written again have other values".into());
    }
    Ok(())
}
/// GRIB 2 → Tensogram → GRIB 2 gives every reference file back byte for byte — simple, CCSDS,
/// IEEE and complex packing, a bitmap — whether the Tensogram file keeps the packing (the
/// default) or holds float64 (`--pipeline none`); through zTensor, the same messages; with
/// `--pipeline ccsds` the fields are CCSDS-packed.
fn through_tensogram_and_back() -> Result<(), Failed> {
    let reference = testdata().join("grib/reference");
    let dir = tempfile::tempdir()?;
    let (tgm, back) = (dir.path().join("x.tgm"), dir.path().join("back.grib2"));
    let run = |args: &[&str]| -> Result<(), Failed> {
        let out = tensorkit(args);
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into())
        }
    };
    let (tgm_s, back_s) = (tgm.to_string_lossy(), back.to_string_lossy());
    for name in [
        "simple.grib2",
        "ccsds.grib2",
        "ieee.grib2",
        "complex.grib2",
        "bitmap.grib2",
        "gaussian.grib2",
    ] {
        let input = reference.join(name);
        let original = std::fs::read(&input)?;
        for to_tgm in [None, Some("none")] {
            let mut args = vec!["convert", input.to_str().unwrap_or_default(), &*tgm_s];
            args.extend(to_tgm.iter().flat_map(|p| ["--pipeline", p]));
            run(&args)?;
            run(&["convert", &tgm_s, &back_s])?;
            if std::fs::read(&back)? != original {
                return Err(
                    format!("{name} through Tensogram ({to_tgm:?}) came back otherwise").into(),
                );
            }
        }
        // zTensor keeps the attributes too (its objects in an order of its own).
        let zt = dir.path().join("x.zt");
        let zt_s = zt.to_string_lossy();
        run(&["convert", input.to_str().unwrap_or_default(), &zt_s])?;
        run(&["convert", &zt_s, &back_s])?;
        let (mut ours, mut theirs) = (messages(&std::fs::read(&back)?), messages(&original));
        ours.sort();
        theirs.sort();
        if ours != theirs {
            return Err(format!("{name} through zTensor came back otherwise").into());
        }
        run(&["convert", &tgm_s, &back_s, "--pipeline", "ccsds"])?;
        let json = inspect_json(&back)?;
        let packed = json["tensors"]
            .as_array()
            .ok_or("no tensors")?
            .iter()
            .all(|t| t["attributes"]["packingType"] == "grid_ccsds");
        if !packed {
            return Err(format!("{name}: --pipeline ccsds did not pack as CCSDS").into());
        }
    }
    Ok(())
}

/// The messages of a GRIB file, each its bytes.
fn messages(file: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 16 <= file.len() {
        let mut len = [0u8; 8];
        len.copy_from_slice(&file[at + 8..at + 16]);
        let n = usize::try_from(u64::from_be_bytes(len)).unwrap_or(usize::MAX);
        let end = at.saturating_add(n).min(file.len());
        out.push(file[at..end].to_vec());
        at = end.max(at + 16);
    }
    out
}

/// `convert in.grib2 out.grib2 --pipeline P` writes what ecCodes' `grib_set -r` writes for the
/// same packing (`testdata/grib/reference/repack.json`); GRIB from another format, and a
/// packing GRIB has not, are refused.
fn repacking_is_ecodes_own() -> Result<(), Failed> {
    let reference = testdata().join("grib/reference");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(reference.join("repack.json"))?)?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("out.grib2");
    let mut checked = 0;
    for e in doc["repacked"].as_array().ok_or("no entries")? {
        let packing = e["packing"].as_str().ok_or("no packing")?;
        if e["grib_set"]
            .as_array()
            .is_none_or(|steps| steps.len() != 1)
        {
            continue;
        }
        let spec = match packing {
            "ieee32" => "ieee",
            other => other,
        };
        let input = reference.join(e["file"].as_str().ok_or("no file")?);
        let run = tensorkit(&[
            "convert",
            &input.to_string_lossy(),
            &out.to_string_lossy(),
            "--pipeline",
            spec,
        ]);
        if !run.status.success() {
            return Err(format!("{packing}: {}", String::from_utf8_lossy(&run.stderr)).into());
        }
        let sha = tensor_testkit::sha256_hex(&std::fs::read(&out)?);
        if e["sha256"] != sha.as_str() {
            return Err(format!("{} as {packing}: not ecCodes' bytes", input.display()).into());
        }
        checked += 1;
    }
    if checked < 60 {
        return Err(format!("only {checked} repackings checked").into());
    }
    let tgm = dir.path().join("x.tgm");
    let simple = reference.join("simple.grib2");
    let made = tensorkit(&["convert", &simple.to_string_lossy(), &tgm.to_string_lossy()]);
    if !made.status.success() {
        return Err("the GRIB file did not convert to Tensogram".into());
    }
    for args in [
        vec![
            "convert",
            simple.to_str().unwrap_or_default(),
            out.to_str().unwrap_or_default(),
            "--pipeline",
            "zfp",
        ],
        vec![
            "convert",
            simple.to_str().unwrap_or_default(),
            out.to_str().unwrap_or_default(),
            "--pipeline",
            "simple:64",
        ],
    ] {
        expect_error_contract(&tensorkit(&args), false)?;
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for f in fixtures() {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let g = f.clone();
        trials.push(Trial::test(format!("grib::read::{name}"), move || {
            commands_read_it(&g)
        }));
        trials.push(Trial::test(format!("grib::cut::{name}"), move || {
            cuts_are_refused_and_fields_written_again(&f)
        }));
    }
    trials.push(Trial::test("grib::repack", repacking_is_ecodes_own));
    trials.push(Trial::test(
        "grib::through_tensogram",
        through_tensogram_and_back,
    ));
    assert!(trials.len() >= 16, "GRIB fixtures missing");
    trials
}
