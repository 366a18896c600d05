//! `tensorkit edit`: every writable format edited and read back with its tensors unchanged,
//! in place where the header fits, refused (the file untouched) where the format cannot
//! hold the edit, and killed at random instants — in place and while copying — without
//! ever leaving a file that reads as neither the old nor the new one.

use crate::support::{
    expect_error_contract, inspect_json, tensorkit, testdata, write_f32_safetensors,
};
use libtest_mimic::{Failed, Trial};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The demo's small files, one per writable format, in `dir`.
fn demo_files(dir: &Path) -> Result<Vec<PathBuf>, Failed> {
    let out = tensorkit(&["demo", "--small", "--out", &dir.to_string_lossy()]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.sort();
    Ok(files)
}

fn run(args: &[&str], file: &Path) -> std::process::Output {
    let mut all = vec!["edit", file.to_str().expect("UTF-8 path")];
    all.extend_from_slice(args);
    tensorkit(&all)
}

fn ok(args: &[&str], file: &Path) -> Result<Value, Failed> {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let out = run(&with_json, file);
    if !out.status.success() {
        return Err(format!(
            "edit {args:?} of {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Each tensor's digest of its values, by name.
fn digests(file: &Path) -> Result<std::collections::BTreeMap<String, Value>, Failed> {
    let v = inspect_json(file)?;
    Ok(v["tensors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                t["sha256_le"].clone(),
            )
        })
        .collect())
}

fn format_of(file: &Path) -> Result<String, Failed> {
    Ok(inspect_json(file)?["format"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// A refused edit: exit 2 with `kind`, and the file byte for byte as it was.
fn refused(args: &[&str], file: &Path, kind: &str) -> Result<(), Failed> {
    let before = std::fs::read(file)?;
    let out = run(args, file);
    let got = expect_error_contract(&out, false)?;
    if got != kind {
        return Err(format!("edit {args:?}: error kind {got}, expected {kind}").into());
    }
    if std::fs::read(file)? != before {
        return Err(format!("edit {args:?} failed but changed the file").into());
    }
    Ok(())
}

/// Metadata, names and attributes edited in every writable format; values unchanged.
fn every_format() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    for file in demo_files(dir.path())? {
        let format = format_of(&file)?;
        let before = digests(&file)?;
        if format == "ztensor-0.1" || format == "npz" {
            // No file metadata in zTensor 0.1 or NumPy's archives.
            refused(&["--set", "source=edited"], &file, "unsupported")?;
            ok(&["--rename", "dense.weight=dense.w"], &file)?;
        } else {
            let r = ok(
                &["--set", "source=edited", "--rename", "dense.weight=dense.w"],
                &file,
            )?;
            if r["changes"].as_array().map(Vec::len) != Some(2) {
                return Err(format!("{format}: report {r}").into());
            }
            // Headers with no room to spare are copied; zTensor 2's manifest, at the end of
            // the file, is rewritten in place, and safetensors leaves room by default.
            let expected = if ["safetensors", "ztensor-2"].contains(&format.as_str()) {
                "in-place"
            } else {
                "copy"
            };
            if r["method"] != expected {
                return Err(format!("{format}: method {}", r["method"]).into());
            }
            let v = inspect_json(&file)?;
            if v["metadata"]["source"] != "edited" {
                return Err(format!("{format}: metadata {}", v["metadata"]).into());
            }
            // Deleting it again leaves the rest; a shorter header is written in place.
            let deleted = ok(&["--delete", "source"], &file)?;
            if ["bintensors", "safetensors", "ztensor-2"].contains(&format.as_str())
                && deleted["method"] != "in-place"
            {
                return Err(format!("{format}: a shorter header was {}", deleted["method"]).into());
            }
            if inspect_json(&file)?["metadata"].get("source").is_some() {
                return Err(format!("{format}: source not deleted").into());
            }
        }
        let mut after = digests(&file)?;
        let renamed = after.remove("dense.w");
        if renamed.is_none() || renamed != before.get("dense.weight").cloned() {
            return Err(format!("{format}: dense.w is not dense.weight renamed").into());
        }
        for (name, digest) in &after {
            if before.get(name) != Some(digest) {
                return Err(format!("{format}: tensor {name} changed").into());
            }
        }
        let attrs = [
            "--attr",
            "dense.w:units=K",
            "--attr",
            "dense.w:scale:float=0.5",
        ];
        if ["ztensor-0.1", "ztensor-2", "tensogram", "netcdf"].contains(&format.as_str()) {
            ok(&attrs, &file)?;
            let v = inspect_json(&file)?;
            let t = v["tensors"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["name"] == "dense.w")
                .cloned()
                .unwrap_or_default();
            if t["attributes"]["units"] != "K" || t["attributes"]["scale"] != 0.5 {
                return Err(format!("{format}: attributes {}", t["attributes"]).into());
            }
        } else {
            refused(&attrs, &file, "unsupported")?;
        }
    }
    Ok(())
}

/// Two tensors' names swapped through a third: every format ends with each name on the
/// other tensor (zTensor 2 renames in its manifest, all at once).
fn swapped_names() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    for file in demo_files(dir.path())? {
        let before = digests(&file)?;
        ok(
            &[
                "--rename",
                "dense.weight=tmp",
                "--rename",
                "land_sea_mask=dense.weight",
                "--rename",
                "tmp=land_sea_mask",
            ],
            &file,
        )?;
        let after = digests(&file)?;
        if after.get("dense.weight") != before.get("land_sea_mask")
            || after.get("land_sea_mask") != before.get("dense.weight")
        {
            return Err(format!("{}: the names were not swapped", file.display()).into());
        }
    }
    Ok(())
}

/// safetensors: a header that fits is rewritten in place (the data bytes never written);
/// one that does not is copied; a dry run changes nothing.
fn safetensors_in_place() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let file = demo_files(dir.path())?
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "safetensors"))
        .ok_or("no safetensors demo file")?;
    let before = std::fs::read(&file)?;
    let header = 8 + u64::from_le_bytes(before[..8].try_into()?) as usize;
    let r = ok(
        &[
            "--set",
            "description=short",
            "--rename",
            "temperature_2m=t2m",
        ],
        &file,
    )?;
    if r["method"] != "in-place" {
        return Err(format!("expected in-place: {r}").into());
    }
    let after = std::fs::read(&file)?;
    if after.len() != before.len() || after[header..] != before[header..] {
        return Err("an in-place edit changed the data section".into());
    }
    // The slack left by the shorter value takes a longer one in place too.
    let longer = format!("description={}", "d".repeat(60));
    if ok(&["--set", &longer], &file)?["method"] != "in-place" {
        return Err("the slack was not used".into());
    }
    // More than the 4 KiB of room a safetensors file is written with.
    let huge = format!("description={}", "d".repeat(5000));
    let unchanged = std::fs::read(&file)?;
    let dry = ok(&["--set", &huge, "--dry-run"], &file)?;
    if dry["method"] != "copy" || dry["dry_run"] != true {
        return Err(format!("dry run: {dry}").into());
    }
    if std::fs::read(&file)? != unchanged {
        return Err("a dry run wrote the file".into());
    }
    if ok(&["--set", &huge], &file)?["method"] != "copy" {
        return Err("a header that does not fit was not copied".into());
    }
    if inspect_json(&file)?["metadata"]["description"]
        .as_str()
        .map(str::len)
        != Some(5000)
    {
        return Err("the copied file lacks the new value".into());
    }
    // The copy kept the data section's offset within a page (page-to-page kernel copies),
    // and left room: the next edit of a few hundred bytes fits in place.
    let copied = std::fs::read(&file)?;
    let start = 8 + u64::from_le_bytes(copied[..8].try_into()?) as usize;
    if start % 4096 != header % 4096 || copied[start..] != before[header..] {
        return Err(
            format!("the copy's data starts at {start}, the original's at {header}").into(),
        );
    }
    let grown = format!("licence={}", "l".repeat(900));
    if ok(&["--set", &grown], &file)?["method"] != "in-place" {
        return Err("a copy left no room for the next edit".into());
    }
    Ok(())
}

/// GGUF: a header of the same length is rewritten in place; text for a typed key keeps
/// its type; typed values; values GGUF cannot hold are refused.
fn gguf_in_place_and_typed() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("model.gguf");
    std::fs::copy(testdata().join("gguf/reference/model.gguf"), &file)?;
    let before = std::fs::read(&file)?;
    let r = ok(
        &["--rename", "blk.0.attn_q.weight=blk.0.attn_k.weight"],
        &file,
    )?;
    if r["method"] != "in-place" {
        return Err(format!("a same-length rename: {r}").into());
    }
    let after = std::fs::read(&file)?;
    let differing = before.iter().zip(&after).filter(|(a, b)| a != b).count();
    if after.len() != before.len() || differing != 1 {
        return Err(format!("{differing} bytes differ after renaming q to k").into());
    }
    ok(
        &[
            "--set",
            "tensorkit-test.context_length=4096",
            "--set",
            "general.ratio:FLOAT32=0.5",
            "--set",
            "general.tags:ARRAY[STRING]=[\"a\",\"b\"]",
        ],
        &file,
    )?;
    let v = inspect_json(&file)?;
    let types = &v["metadata_types"];
    if v["metadata"]["tensorkit-test.context_length"] != 4096
        || types["tensorkit-test.context_length"] != "UINT32"
        || types["general.ratio"] != "FLOAT32"
        || types["general.tags"] != "ARRAY[STRING]"
    {
        return Err(format!("typed values: {} {types}", v["metadata"]).into());
    }
    refused(&["--set", "x:json=null"], &file, "unsupported")?;
    refused(
        &["--attr", "output_norm.weight:units=K"],
        &file,
        "unsupported",
    )?;
    Ok(())
}

/// Edits that cannot be made as asked are refused, naming what is wrong.
fn refusals() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let file = demo_files(dir.path())?
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "safetensors"))
        .ok_or("no safetensors demo file")?;
    refused(&["--delete", "nope"], &file, "invalid_argument")?;
    refused(&["--rename", "nope=x"], &file, "invalid_argument")?;
    refused(
        &["--rename", "dense.weight=land_sea_mask"],
        &file,
        "invalid_argument",
    )?;
    refused(&["--set", "n:int=5"], &file, "unsupported")?;
    refused(&["--set", "novalue"], &file, "invalid_argument")?;
    refused(&[], &file, "invalid_argument")?;
    Ok(())
}

/// `--from-json` and the text report.
fn from_json_and_report() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("demo-ztensor-2.zt");
    demo_files(dir.path())?;
    let edits = dir.path().join("edits.json");
    std::fs::write(
        &edits,
        serde_json::to_vec(&json!({
            "metadata": {"licence": "CC-BY-4.0", "revision": 3},
            "rename": {"land_sea_mask": "lsm"},
            "attributes": {"lsm": {"units": "1"}},
        }))?,
    )?;
    let out = run(&["--from-json", &edits.to_string_lossy()], &file);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let text = String::from_utf8(out.stdout)?.replace(&dir.path().display().to_string(), "DIR");
    insta::assert_snapshot!("edit_report_ztensor2", text);
    let v = inspect_json(&file)?;
    if v["metadata"]["revision"] != 3 || v["metadata"]["licence"] != "CC-BY-4.0" {
        return Err(format!("metadata {}", v["metadata"]).into());
    }
    std::fs::write(&edits, br#"{"metadata": {"a": "b"}, "renames": {}}"#)?;
    refused(
        &["--from-json", &edits.to_string_lossy()],
        &file,
        "invalid_argument",
    )?;
    Ok(())
}

/// Files written with `--header-reserve` take edits far larger than their header in place:
/// safetensors in its padding, GGUF in its `tensorkit.padding` string, which reading hides.
fn header_reserve() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let sources = [
        demo_files(dir.path())?
            .into_iter()
            .find(|f| f.extension().is_some_and(|e| e == "safetensors"))
            .ok_or("no safetensors demo file")?,
        testdata().join("gguf/reference/model.gguf"),
    ];
    for source in sources {
        let ext = source
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        let file = dir.path().join(format!("reserved.{ext}"));
        let out = tensorkit(&[
            "convert",
            "--quiet",
            &source.to_string_lossy(),
            &file.to_string_lossy(),
            "--header-reserve",
            "4KiB",
        ]);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        let before = digests(&file)?;
        let long = format!("note={}", "n".repeat(3000));
        for args in [
            &["--set", long.as_str()][..],
            &["--delete", "note"],
            &["--set", "note=short"],
        ] {
            let r = ok(args, &file)?;
            if r["method"] != "in-place" {
                return Err(format!("{ext} {args:?}: {r}").into());
            }
        }
        let v = inspect_json(&file)?;
        if v["metadata"]["note"] != "short" || v["metadata"].get("tensorkit.padding").is_some() {
            return Err(format!("{ext}: metadata {}", v["metadata"]).into());
        }
        if digests(&file)? != before {
            return Err(format!("{ext}: the tensors changed").into());
        }
    }
    let zt = dir.path().join("x.zt");
    let out = tensorkit(&[
        "convert",
        &dir.path().join("demo-ztensor-2.zt").to_string_lossy(),
        &zt.to_string_lossy(),
        "--header-reserve",
        "1KiB",
    ]);
    if expect_error_contract(&out, false)? != "invalid_argument" || zt.exists() {
        return Err("a header reserve for zTensor 2 was not refused".into());
    }
    Ok(())
}

/// A shard set edited through its index: metadata in the index, renames in the shards and
/// the weight map, the values unchanged.
fn shard_set() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let source = demo_files(dir.path())?
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "safetensors"))
        .ok_or("no safetensors demo file")?;
    let set = dir.path().join("set");
    std::fs::create_dir(&set)?;
    let out = tensorkit(&[
        "convert",
        "--quiet",
        &source.to_string_lossy(),
        &set.join("model.safetensors").to_string_lossy(),
        "--max-shard-size",
        "1000",
    ]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let index = set.join("model.safetensors.index.json");
    let before = digests(&index)?;
    ok(
        &[
            "--set",
            "licence=mit",
            "--rename",
            "dense.weight=dw",
            "--rename",
            "dw=dense.w",
        ],
        &index,
    )?;
    let mut after = digests(&index)?;
    if after.remove("dense.w") != before.get("dense.weight").cloned()
        || after.len() + 1 != before.len()
    {
        return Err(format!("{before:?} became {after:?}").into());
    }
    let text: Value = serde_json::from_slice(&std::fs::read(&index)?)?;
    if text["metadata"]["licence"] != "mit" || text["weight_map"].get("dense.w").is_none() {
        return Err(format!("index {text}").into());
    }
    // The shard holding it names it so too.
    let shard = set.join(text["weight_map"]["dense.w"].as_str().unwrap_or_default());
    if !digests(&shard)?.contains_key("dense.w") {
        return Err("the shard was not renamed".into());
    }
    refused(
        &["--rename", "dense.w=temperature_2m"],
        &index,
        "invalid_argument",
    )?;
    Ok(())
}

/// A small deterministic generator for kill delays.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Edits killed at random instants, `runs` times: after each, the file (once tensorkit has
/// opened it, finishing an edit left half done) holds the old value or the new one with
/// the tensor unchanged, and nothing but the file (and, before that open, a journal) is
/// left in the directory.
fn killed(new_value: &str, n: usize, meta: usize, runs: usize) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let pristine = dir.path().join("pristine");
    write_f32_safetensors(&pristine, n, Some(&"x".repeat(meta)))?;
    let file = dir.path().join("model.safetensors");
    let set = format!("note={new_value}");
    let edit = |file: &Path| {
        Command::new(env!("CARGO_BIN_EXE_tensorkit"))
            .args(["edit", &file.to_string_lossy(), "--set", &set])
            .stdout(std::process::Stdio::null())
            .spawn()
    };
    // How long one whole edit takes, to spread the kills over it.
    std::fs::copy(&pristine, &file)?;
    let start = Instant::now();
    edit(&file)?.wait()?;
    let whole = start.elapsed().as_micros() as u64;
    let want = digests(&file)?;
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    let (mut old, mut new) = (0, 0);
    for run in 0..runs {
        std::fs::copy(&pristine, &file)?;
        let mut child = edit(&file)?;
        std::thread::sleep(Duration::from_micros(rng.below(whole + whole / 4)));
        let _ = child.kill();
        child.wait()?;
        let v = inspect_json(&file).map_err(|e| format!("run {run}: unreadable: {e}"))?;
        match v["metadata"]["note"].as_str() {
            Some(s) if s == new_value => new += 1,
            Some(s) if s.len() == meta && s.bytes().all(|b| b == b'x') => old += 1,
            other => return Err(format!("run {run}: note is {other:?}").into()),
        }
        if digests(&file)? != want {
            return Err(format!("run {run}: the tensor changed").into());
        }
        let litter = || -> std::io::Result<Vec<String>> {
            Ok(std::fs::read_dir(dir.path())?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "pristine" && n != "model.safetensors")
                .collect())
        };
        let left = litter()?;
        // Killed in the instant between linking its finished copy under a private name and
        // renaming it into place, a writer leaves that copy; the next write in the
        // directory removes it (docs: tensor_core::atomic).
        if left
            .iter()
            .all(|n| n.starts_with(".model.safetensors.tkw-"))
            && !left.is_empty()
        {
            edit(&file)?.wait()?;
        }
        let left = litter()?;
        if !left.is_empty() {
            return Err(format!("run {run}: left {left:?}").into());
        }
    }
    if old == 0 || new == 0 {
        return Err(
            format!("{old} runs kept the old file and {new} the new: the kills missed").into(),
        );
    }
    Ok(())
}

/// A shard set edited through its index (renames in three of its four shards, a metadata
/// key in the index), killed at random instants, `runs` times: after each, the set (once
/// tensorkit has opened it, finishing the edit a killed process left) reads wholly as it
/// was or wholly as the edit meant, each name on its own tensor, and nothing is left beside
/// it. Renames to longer names make each shard a copy, so the edit spans many milliseconds.
fn killed_shard_set(runs: usize) -> Result<(), Failed> {
    use std::fmt::Write as _;
    const N: usize = 1 << 20;
    let dir = tempfile::tempdir()?;
    let names = ["a", "b", "c", "d"];
    let mut header = String::from("{");
    let mut data = Vec::with_capacity(4 * N * names.len());
    for (i, name) in names.iter().enumerate() {
        let _ = write!(
            header,
            r#"{}"{name}":{{"dtype":"F32","shape":[{N}],"data_offsets":[{},{}]}}"#,
            if i == 0 { "" } else { "," },
            4 * N * i,
            4 * N * (i + 1)
        );
        data.extend((0..N).flat_map(|j| ((j * (i + 1)) as f32).to_le_bytes()));
    }
    header.push('}');
    let source = dir.path().join("source.safetensors");
    std::fs::write(&source, crate::support::safetensors_file(&header, &data))?;
    let pristine = dir.path().join("pristine");
    let set = dir.path().join("set");
    std::fs::create_dir_all(&pristine)?;
    let out = tensorkit(&[
        "convert",
        "--quiet",
        &source.to_string_lossy(),
        &pristine.join("model.safetensors").to_string_lossy(),
        "--max-shard-size",
        &(4 * N).to_string(),
    ]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let restore = || -> std::io::Result<()> {
        let _ = std::fs::remove_dir_all(&set);
        std::fs::create_dir(&set)?;
        for entry in std::fs::read_dir(&pristine)? {
            let entry = entry?;
            std::fs::copy(entry.path(), set.join(entry.file_name()))?;
        }
        Ok(())
    };
    let index = set.join("model.safetensors.index.json");
    let renames: Vec<(String, String)> = names[..3]
        .iter()
        .map(|n| ((*n).to_owned(), format!("{n}_renamed_to_a_longer_name")))
        .collect();
    let mut args = vec!["edit".to_owned(), index.to_string_lossy().into_owned()];
    for (from, to) in &renames {
        args.extend(["--rename".to_owned(), format!("{from}={to}")]);
    }
    args.extend(["--set".to_owned(), "licence=mit".to_owned()]);
    let edit = || {
        Command::new(env!("CARGO_BIN_EXE_tensorkit"))
            .args(&args)
            .stdout(std::process::Stdio::null())
            .spawn()
    };
    restore()?;
    let old_digests = digests(&index)?;
    let start = Instant::now();
    if !edit()?.wait()?.success() {
        return Err("the edit failed unkilled".into());
    }
    let whole = start.elapsed().as_micros() as u64;
    let new_digests = digests(&index)?;
    let new_name = |name: &str| {
        renames
            .iter()
            .find(|(from, _)| from == name)
            .map_or_else(|| name.to_owned(), |(_, to)| to.clone())
    };
    if new_digests
        != old_digests
            .iter()
            .map(|(k, v)| (new_name(k), v.clone()))
            .collect()
    {
        return Err(format!("{old_digests:?} became {new_digests:?}").into());
    }
    let journal = set.join(".model.safetensors.index.json.tkedit");
    let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
    let (mut old, mut new, mut pending) = (0, 0, 0);
    for run in 0..runs {
        restore()?;
        let mut child = edit()?;
        std::thread::sleep(Duration::from_micros(rng.below(whole + whole / 4)));
        let _ = child.kill();
        child.wait()?;
        pending += usize::from(journal.exists());
        let found = digests(&index).map_err(|e| format!("run {run}: unreadable: {e:?}"))?;
        let licence = inspect_json(&index)?["metadata"]["licence"].clone();
        if found == old_digests && licence.is_null() {
            old += 1;
        } else if found == new_digests && licence == "mit" {
            new += 1;
        } else {
            return Err(format!("run {run}: the set reads as {found:?}, licence {licence}").into());
        }
        // An edit after a kill goes through, and leaves nothing beside the set (its atomic
        // write removes a copy a killed writer had linked under a private name).
        let out = tensorkit(&["edit", &index.to_string_lossy(), "--set", "licence=swept"]);
        if !out.status.success() {
            return Err(format!(
                "run {run}: the edit after the kill failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let mut left: Vec<String> = std::fs::read_dir(&set)?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        left.sort();
        if !left.is_empty() {
            return Err(format!("run {run}: left {left:?}").into());
        }
    }
    if old == 0 || new == 0 || pending == 0 {
        return Err(format!(
            "{old} runs kept the old set, {new} the new, {pending} left a journal: the kills missed"
        )
        .into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("edit::every_format", every_format),
        Trial::test("edit::swapped_names", swapped_names),
        Trial::test("edit::safetensors_in_place", safetensors_in_place),
        Trial::test("edit::gguf_in_place_and_typed", gguf_in_place_and_typed),
        Trial::test("edit::refusals", refusals),
        Trial::test("edit::from_json_and_report", from_json_and_report),
        Trial::test("edit::shard_set", shard_set),
        Trial::test("edit::header_reserve", header_reserve),
        // A 1 MB header rewritten in place (a shorter value): killed before, during and
        // after the patch.
        Trial::test("edit::killed_in_place", || {
            killed("short", 1 << 10, 1 << 20, 150)
        }),
        // A longer value in a 64 MiB file: the file is copied, killed mid-copy.
        Trial::test("edit::killed_copying", || {
            killed(&"y".repeat(5000), 16 << 20, 16, 50)
        }),
        Trial::test("edit::killed_shard_set", || killed_shard_set(100)),
    ]
}
