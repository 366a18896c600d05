//! `tensorkit stdlib-meta`: every valid fixture decodes to its recorded fields and encodes back
//! from its own JSON to the exact bytes; every bad fixture fails with the error contract.

use crate::support::{expect_error_contract, files_with_extension, tensorkit, testdata};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

const KEYS: [&str; 9] = [
    "dtype",
    "shape",
    "strides_bytes",
    "offset_bytes",
    "order",
    "mode",
    "submodes",
    "flags",
    "endianness",
];

fn check_valid(bin: &Path) -> Result<(), Failed> {
    let sidecar: Value = tensor_testkit::sidecar(bin)?;
    let out = tensorkit(&["stdlib-meta", "decode", "--json", &bin.to_string_lossy()]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let got: Value = serde_json::from_slice(&out.stdout)?;
    for key in KEYS {
        if got[key] != sidecar[key] {
            return Err(format!("{key}: {} != {}", got[key], sidecar[key]).into());
        }
    }
    let dir = tempfile::tempdir()?;
    let written = dir.path().join("out.bin");
    let out = tensorkit(&[
        "stdlib-meta",
        "encode",
        "--from-json",
        &bin.with_extension("json").to_string_lossy(),
        "-o",
        &written.to_string_lossy(),
    ]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    if std::fs::read(&written)? != std::fs::read(bin)? {
        return Err("encode --from-json did not reproduce the fixture's bytes".into());
    }
    Ok(())
}

fn check_bad(bin: &Path) -> Result<(), Failed> {
    for json in [false, true] {
        let p = bin.to_string_lossy();
        let args: Vec<&str> = if json {
            vec!["stdlib-meta", "decode", "--json", &p]
        } else {
            vec!["stdlib-meta", "decode", &p]
        };
        expect_error_contract(&tensorkit(&args), json)?;
    }
    Ok(())
}

fn table_snapshot() -> Result<(), Failed> {
    let file = testdata().join("stdlib/conformance/dtype_float32_1d_negstride_clamp_readonly.bin");
    let out = tensorkit(&["stdlib-meta", "decode", &file.to_string_lossy()]);
    let text = String::from_utf8(out.stdout)?;
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("stdlib_meta_decode_table", text);
    });
    Ok(())
}

/// A specification in stdlib's own property names (`strides` and `offset` in elements,
/// `submode`, `flags.READONLY`, a 0-d array's `strides: [0]`) encodes to the bytes
/// @stdlib/ndarray's serializer wrote for that ndarray (`scripts/reference/stdlib_json.js`).
fn stdlib_names(spec: &Path) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("meta.bin");
    let o = tensorkit(&[
        "stdlib-meta",
        "encode",
        "--from-json",
        &spec.to_string_lossy(),
        "-o",
        &out.to_string_lossy(),
    ]);
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
    }
    if std::fs::read(&out)? != std::fs::read(spec.with_extension("bin"))? {
        return Err("the bytes differ from stdlib's".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let dir = testdata().join("stdlib/conformance");
    let mut trials = Vec::new();
    for spec in files_with_extension(&testdata().join("stdlib/reference"), "json") {
        let name = tensor_testkit::stem(&spec);
        trials.push(Trial::test(
            format!("stdlib_meta::stdlib_names::{name}"),
            move || stdlib_names(&spec),
        ));
    }
    for (sub, bad) in [("", false), ("derived_be", false), ("bad", true)] {
        for bin in files_with_extension(&dir.join(sub), "bin") {
            let name = tensor_testkit::stem(&bin);
            let label = format!(
                "stdlib_meta::{}{name}",
                if sub.is_empty() {
                    String::new()
                } else {
                    format!("{sub}::")
                }
            );
            trials.push(Trial::test(label, move || {
                if bad {
                    check_bad(&bin)
                } else {
                    check_valid(&bin)
                }
            }));
        }
    }
    assert!(trials.len() > 20, "stdlib fixtures missing");
    trials.push(Trial::test("stdlib_meta::table_snapshot", table_snapshot));
    trials
}
