//! `ls`, `get`, `verify`, `diff`, `merge` and `split`: snapshots of their output on real
//! fixtures, exit statuses, `.npy` files, and round trips through merge and split.

use crate::support::{expect_error_contract, tensorkit, testdata};
use libtest_mimic::{Failed, Trial};
use std::path::Path;

/// `FORMAT/FILE`: the conformance fixture FILE of FORMAT.
fn fixture(rel: &str) -> String {
    let (format, file) = rel.split_once('/').expect("FORMAT/FILE");
    tensor_testkit::conformance(format)
        .join(file)
        .to_string_lossy()
        .into_owned()
}

/// Runs the command; returns (exit status, stdout with the testdata path shortened).
fn run(args: &[&str]) -> (i32, String) {
    let out = tensorkit(args);
    let root = testdata().to_string_lossy().into_owned();
    let text = String::from_utf8_lossy(&out.stdout).replace(&root, "testdata");
    (out.status.code().unwrap_or(-1), text)
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

fn ls_and_get() -> Result<(), Failed> {
    let mixed = fixture("tensogram/multi_object_mixed.tgm");
    let (code, text) = run(&["ls", &mixed]);
    if code != 0 || text.lines().count() != 4 {
        return Err(format!("ls: exit {code}, {text}").into());
    }
    snapshot("ls_multi_object_mixed", &text);
    let (code, text) = run(&["get", &fixture("tensogram/dtype_complex64.tgm"), "#0"]);
    if code != 0 {
        return Err(format!("get: exit {code}").into());
    }
    snapshot("get_dtype_complex64", &text);
    let (_, text) = run(&[
        "get",
        &fixture("tensogram/masks_default_small.tgm"),
        "masks_default_small",
    ]);
    if !text.contains("NaN") || !text.contains("-Infinity") {
        return Err(format!("non-finite values not shown: {text}").into());
    }
    expect_error_contract(&tensorkit(&["get", &mixed, "nope"]), false)?;
    Ok(())
}

fn get_writes_npy() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("t2m.npy");
    let (code, _) = run(&[
        "get",
        &fixture("tensogram/multi_object_mixed.tgm"),
        "t2m",
        "-o",
        &out.to_string_lossy(),
    ]);
    let bytes = std::fs::read(&out)?;
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = String::from_utf8_lossy(&bytes[10..10 + header_len]);
    if code != 0
        || &bytes[..8] != b"\x93NUMPY\x01\x00"
        || !(10 + header_len).is_multiple_of(64)
        || !header.contains("'descr': '<f4'")
        || !header.contains("'shape': (4, 64)")
        || bytes.len() != 10 + header_len + 1024
    {
        return Err(format!("bad .npy: {header}").into());
    }
    // A dtype NumPy lacks is an error that names it, and leaves no file.
    let bad = dir.path().join("valid.npy");
    let o = tensorkit(&[
        "get",
        &fixture("tensogram/multi_object_mixed.tgm"),
        "valid",
        "-o",
        &bad.to_string_lossy(),
    ]);
    expect_error_contract(&o, false)?;
    if !String::from_utf8_lossy(&o.stderr).contains("bitmask") || bad.exists() {
        return Err("bitmask into .npy should fail and leave nothing".into());
    }
    Ok(())
}

fn verify_reports_mismatches() -> Result<(), Failed> {
    let (code, text) = run(&["verify", &fixture("tensogram/multi_object_mixed.tgm")]);
    if code != 0 || !text.contains("7 hashes verified") {
        return Err(format!("verify: exit {code}: {text}").into());
    }
    snapshot("verify_multi_object_mixed", &text);
    let (code, text) = run(&[
        "verify",
        &fixture("tensogram/bad/flipped_metadata_byte_hashed.tgm"),
    ]);
    if code != 2 || !text.contains("hash_mismatch") {
        return Err(format!("a flipped metadata bit: exit {code}: {text}").into());
    }
    let zt = std::fs::read_dir(testdata().join("ztensor/conformance/bad"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy().contains("checksum_mismatch")
                && p.extension().is_some_and(|e| e == "zt")
        })
        .ok_or("no zTensor checksum fixture")?;
    let (code, text) = run(&["verify", &zt.to_string_lossy()]);
    if code != 2 {
        return Err(format!("{}: exit {code}: {text}", zt.display()).into());
    }
    // Nothing to verify is its own status, with the error contract on stderr.
    let out = tensorkit(&["verify", &fixture("safetensors/scalar_f32.safetensors")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(3)
        || !stderr.starts_with("error[missing_hash]: ")
        || !stderr.contains("nothing was verified")
    {
        return Err(format!("safetensors: exit {:?}: {stderr}", out.status.code()).into());
    }
    let out = tensorkit(&["verify", &zt.to_string_lossy()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stderr.starts_with("error[checksum_mismatch]: ") {
        return Err("a mismatch is reported as error[checksum_mismatch] on stderr".into());
    }
    // The file is named once (it once said `F: F: ...`), on stderr and on stdout.
    let name = zt.to_string_lossy();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stderr.matches(&*name).count() != 1 || stdout.matches(&*name).count() != 1 {
        return Err(format!("the path twice: {stdout}{stderr}").into());
    }
    Ok(())
}

fn diff_merge_split() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let mixed = fixture("tensogram/multi_object_mixed.tgm");
    // Lossless through zstd: identical; lossy through 8-bit packing (float32 too, an
    // extension): within a tolerance.
    for (out, pipeline) in [
        ("z.tgm", "shuffle,zstd:3"),
        ("p.tgm", "simple_packing:8,szip"),
    ] {
        let o = tensorkit(&[
            "convert",
            &mixed,
            &d(out),
            "--pipeline",
            pipeline,
            "--allow-extensions",
            "-q",
        ]);
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
        }
    }
    let (code, _) = run(&["diff", &mixed, &d("z.tgm")]);
    if code != 0 {
        return Err("a lossless pipeline differs".into());
    }
    let (code, text) = run(&["diff", &mixed, &d("p.tgm")]);
    if code != 1 || !text.contains("! t2m") {
        return Err(format!("8-bit packing should differ: {text}").into());
    }
    let (code, text) = run(&["diff", &mixed, &d("p.tgm"), "--tolerance", "0.25"]);
    if code != 0 || !text.contains("~ t2m: within tolerance") {
        return Err(format!("within 0.25: exit {code}: {text}").into());
    }
    snapshot("diff_lossy_within_tolerance", &text.replace(&d(""), "OUT/"));
    // Split, merge back, and compare across formats.
    let (code, text) = run(&["split", &mixed, "-o", &d("parts")]);
    // Four files and their Hugging Face index, which keeps the real names.
    if code != 0 || std::fs::read_dir(d("parts"))?.count() != 5 {
        return Err(format!("split: {text}").into());
    }
    let mut parts: Vec<String> = std::fs::read_dir(d("parts"))?
        .filter_map(|e| Some(e.ok()?.path().to_string_lossy().into_owned()))
        .filter(|p| !p.ends_with(".index.json"))
        .collect();
    // The index of the parts opens as the whole set again.
    let index: Vec<_> = std::fs::read_dir(d("parts"))?
        .filter_map(|e| Some(e.ok()?.path().to_string_lossy().into_owned()))
        .filter(|p| p.ends_with(".index.json"))
        .collect();
    let [index] = &index[..] else {
        return Err(format!("split wrote no single index: {index:?}").into());
    };
    let (code, text) = run(&["diff", &mixed, index]);
    if code != 0 {
        return Err(format!("the split's index opens as something else: {text}").into());
    }
    parts.sort();
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(String::as_str));
    let merged = d("merged.tgm");
    args.extend(["-o", &merged]);
    let (code, text) = run(&args);
    if code != 0 {
        return Err(format!("merge: {text}").into());
    }
    let (code, text) = run(&["diff", &mixed, &merged]);
    if code != 0 {
        return Err(format!("split then merge changed something: {text}").into());
    }
    // The directory (its index) merges the same way.
    let from_dir = d("from_dir.tgm");
    let (code, text) = run(&["merge", &d("parts"), "-o", &from_dir]);
    if code != 0 || run(&["diff", &mixed, &from_dir]).0 != 0 {
        return Err(format!("merge of the split directory: {text}").into());
    }
    // `parts/*` as a shell expands it names the index and every part it lists: each file
    // is read once, under the index's names.
    let mut everything: Vec<String> = std::fs::read_dir(d("parts"))?
        .filter_map(|e| Some(e.ok()?.path().to_string_lossy().into_owned()))
        .collect();
    everything.sort();
    let globbed = d("globbed.tgm");
    let mut args = vec!["merge"];
    args.extend(everything.iter().map(String::as_str));
    args.extend(["-o", &globbed]);
    let (code, text) = run(&args);
    if code != 0 || run(&["diff", &mixed, &globbed]).0 != 0 {
        return Err(format!("merge parts/*: {text}").into());
    }
    // A directory an earlier version split, with its `tensorkit-split.json` manifest of
    // real names instead of an index, still merges in order.
    let text = std::fs::read_to_string(index)?;
    let weight_map: serde_json::Value = serde_json::from_str(&text)?;
    let listed: Vec<serde_json::Value> = weight_map["weight_map"]
        .as_object()
        .ok_or("no weight map")?
        .iter()
        .map(|(name, file)| serde_json::json!({"name": name, "file": file}))
        .collect();
    std::fs::remove_file(index)?;
    std::fs::write(
        d("parts/tensorkit-split.json"),
        serde_json::json!({"format": "tensogram", "tensors": listed}).to_string(),
    )?;
    let old = d("from_old_manifest.tgm");
    let (code, text) = run(&["merge", &d("parts"), "-o", &old]);
    if code != 0 || run(&["diff", &mixed, &old]).0 != 0 {
        return Err(format!("merge of a directory with the old manifest: {text}").into());
    }
    // A file named twice is one file.
    let twice = d("twice.tgm");
    let (code, text) = run(&["merge", &mixed, &mixed, "-o", &twice]);
    if code != 0 || run(&["diff", &mixed, &twice]).0 != 0 {
        return Err(format!("merge of a file with itself: {text}").into());
    }
    // Two files holding the same names: an error, and no output file.
    let copy = d("copy.tgm");
    std::fs::copy(&mixed, &copy)?;
    let again = d("again.tgm");
    expect_error_contract(&tensorkit(&["merge", &mixed, &copy, "-o", &again]), false)?;
    if Path::new(&again).exists() {
        return Err("a failed merge left a file".into());
    }
    Ok(())
}

/// Names are data: a 300-character name, one with a tab and newline, one with a slash and
/// two that differ only in case split into short, distinct file names, and merge restores
/// every name from the manifest.
fn split_keeps_odd_names() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let long = "w".repeat(300);
    let names = [long.as_str(), "a\tb\nc", "layers/0/weight", "Bias", "bias"];
    let mut header = String::from("{");
    for (i, n) in names.iter().enumerate() {
        let key = serde_json::to_string(n)?;
        if i > 0 {
            header.push(',');
        }
        header.push_str(&key);
        let info = serde_json::json!({"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]});
        header.push(':');
        header.push_str(&info.to_string());
    }
    header.push('}');
    let bytes = crate::support::safetensors_file(&header, &[1, 2, 3, 4, 5]);
    let src = d("odd.safetensors");
    std::fs::write(&src, bytes)?;
    let (code, text) = run(&["split", &src, "-o", &d("parts")]);
    if code != 0 {
        return Err(format!("split: {text}").into());
    }
    let files: Vec<String> = std::fs::read_dir(d("parts"))?
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .collect();
    let lower: std::collections::HashSet<String> = files.iter().map(|f| f.to_lowercase()).collect();
    if files.len() != 6 || lower.len() != 6 || files.iter().any(|f| f.len() > 120) {
        return Err(format!("split wrote {files:?}").into());
    }
    let merged = d("merged.safetensors");
    let (code, text) = run(&["merge", &d("parts"), "-o", &merged]);
    if code != 0 {
        return Err(format!("merge: {text}").into());
    }
    let (code, text) = run(&["diff", &src, &merged]);
    if code != 0 {
        return Err(format!("names or values changed: {text}").into());
    }
    Ok(())
}

/// `doctor`: the build, every format of the registry, every codec (each on in this build)
/// and a self-test in which every round trip passes; `--json` the same as data.
fn doctor_reports_the_build_and_passes_its_self_test() -> Result<(), Failed> {
    let out = tensorkit(&["doctor", "--json"]);
    if !out.status.success() {
        return Err(format!(
            "doctor exited {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let d: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(d["build"]["wire_version"], 3);
    let formats: Vec<&str> = d["formats"]
        .as_array()
        .ok_or("formats")?
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    for id in ["safetensors", "tensogram", "grib", "gguf", "ztensor-2"] {
        assert!(formats.contains(&id), "{formats:?}");
    }
    let codecs = d["codecs"].as_array().ok_or("codecs")?;
    assert!(codecs.iter().all(|c| c["built"] == true), "{codecs:?}");
    let tests = d["self_test"].as_array().ok_or("self_test")?;
    assert!(
        tests.len() >= 8 && tests.iter().all(|t| t["outcome"] == "ok"),
        "{tests:?}"
    );
    let text = tensorkit(&["doctor"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("self-test:") && text.contains("none/none/sz3"),
        "{text}"
    );
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "tools::doctor_reports_the_build_and_passes_its_self_test",
            doctor_reports_the_build_and_passes_its_self_test,
        ),
        Trial::test("tools::ls_and_get", ls_and_get),
        Trial::test("tools::get_writes_npy", get_writes_npy),
        Trial::test(
            "tools::verify_reports_mismatches",
            verify_reports_mismatches,
        ),
        Trial::test("tools::diff_merge_split", diff_merge_split),
        Trial::test("tools::split_keeps_odd_names", split_keeps_odd_names),
    ]
}
