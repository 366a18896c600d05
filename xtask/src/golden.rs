//! Golden files: the bytes our writers produce for the small demo data set.
//!
//! Only this command writes `testdata/golden/`. The files are produced by the `tensorkit`
//! binary itself (`tensorkit demo --small --out DIR`), so they are exactly what users get.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn read_dir_files(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(files);
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            files.insert(name, bytes);
        }
    }
    Ok(files)
}

/// The differences between two sets of files, one line each.
pub(crate) fn differences(
    committed: &BTreeMap<String, Vec<u8>>,
    fresh: &BTreeMap<String, Vec<u8>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, bytes) in fresh {
        match committed.get(name) {
            None => out.push(format!("{name}: missing from testdata/golden")),
            Some(old) if old != bytes => out.push(format!(
                "{name}: would change ({} bytes committed, {} regenerated)",
                old.len(),
                bytes.len()
            )),
            Some(_) => {}
        }
    }
    for name in committed.keys().filter(|n| !fresh.contains_key(*n)) {
        out.push(format!("{name}: no longer generated"));
    }
    out
}

pub(crate) fn run(root: &Path, check: bool) -> Result<String, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args([
            "run",
            "--quiet",
            "--package",
            "tensorkit-cli",
            "--bin",
            "tensorkit",
            "--",
        ])
        .args(["demo", "--small", "--out"])
        // Tensogram records when it was written: pin that so the files are reproducible.
        .env("SOURCE_DATE_EPOCH", "1795305600")
        .arg(tmp.path())
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running tensorkit demo: {e}"))?;
    if !status.success() {
        return Err(format!("tensorkit demo failed: {status}"));
    }
    let fresh = read_dir_files(tmp.path())?;
    let golden_dir = root.join("testdata/golden");
    let committed = read_dir_files(&golden_dir)?;
    let diffs = differences(&committed, &fresh);
    if check {
        return if diffs.is_empty() {
            Ok(format!("golden: {} files up to date", fresh.len()))
        } else {
            Err(format!(
                "golden files are out of date (run `cargo xtask golden`):\n  {}",
                diffs.join("\n  ")
            ))
        };
    }
    std::fs::create_dir_all(&golden_dir).map_err(|e| e.to_string())?;
    for name in committed.keys().filter(|n| !fresh.contains_key(*n)) {
        std::fs::remove_file(golden_dir.join(name)).map_err(|e| e.to_string())?;
    }
    for (name, bytes) in &fresh {
        std::fs::write(golden_dir.join(name), bytes).map_err(|e| e.to_string())?;
    }
    Ok(format!(
        "golden: wrote {} files ({} changed)",
        fresh.len(),
        diffs.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_difference_is_reported() {
        let a: BTreeMap<String, Vec<u8>> = [
            ("same".into(), vec![1]),
            ("changed".into(), vec![1]),
            ("stale".into(), vec![]),
        ]
        .into();
        let b: BTreeMap<String, Vec<u8>> = [
            ("same".into(), vec![1]),
            ("changed".into(), vec![2]),
            ("new".into(), vec![]),
        ]
        .into();
        let d = differences(&a, &b);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d.iter().any(|l| l.starts_with("changed: would change")));
        assert!(d.iter().any(|l| l.starts_with("new: missing")));
        assert!(
            d.iter()
                .any(|l| l.starts_with("stale: no longer generated"))
        );
        assert!(differences(&a, &a).is_empty());
    }
}
