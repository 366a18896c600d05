//! PyTorch checkpoints through the command: listed and converted as torch.load gives them
//! (to safetensors, the bytes safetensors' own writer gives, tied weights as `save_model`
//! leaves them), CRCs verified, hostile files refused with exit status 2 and nothing run.

use crate::support::{expect_error_contract, inspect_json, tensorkit};
use libtest_mimic::{Failed, Trial};
use std::path::PathBuf;

fn dir(sub: &str) -> PathBuf {
    tensor_testkit::testdata().join("pytorch").join(sub)
}

fn ok(args: &[&str]) -> Result<String, Failed> {
    let out = tensorkit(args);
    if !out.status.success() {
        return Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

fn listed_as_torch_loads_them() -> Result<(), Failed> {
    for path in tensor_testkit::files_with_extension(&dir("reference"), "json") {
        let pt = path.with_extension("pt");
        let side = tensor_testkit::sidecar(&pt)?;
        let v = inspect_json(&pt)?;
        if v["format"] != "pytorch" {
            return Err(format!("{}: format {}", pt.display(), v["format"]).into());
        }
        let ours: std::collections::BTreeSet<String> = v["tensors"]
            .as_array()
            .ok_or("no tensors")?
            .iter()
            .filter_map(|t| Some(t["name"].as_str()?.to_owned()))
            .collect();
        let theirs: std::collections::BTreeSet<String> = side["tensors"]
            .as_object()
            .ok_or("sidecar")?
            .keys()
            .cloned()
            .collect();
        if ours != theirs {
            return Err(format!("{}: {ours:?}, torch.load gives {theirs:?}", pt.display()).into());
        }
        ok(&["validate", &pt.to_string_lossy()])?;
    }
    Ok(())
}

fn converted_as_safetensors_writes() -> Result<(), Failed> {
    let out = tempfile::tempdir()?;
    for want in tensor_testkit::files_with_extension(&dir("reference"), "safetensors") {
        let pt = want.with_extension("pt");
        let ours = out.path().join(want.file_name().ok_or("name")?);
        ok(&[
            "convert",
            "--quiet",
            "--header-reserve",
            "0",
            &pt.to_string_lossy(),
            &ours.to_string_lossy(),
        ])?;
        if std::fs::read(&ours)? != std::fs::read(&want)? {
            return Err(format!("{}: not the bytes safetensors writes", pt.display()).into());
        }
    }
    Ok(())
}

fn crcs_verified() -> Result<(), Failed> {
    let text = ok(&[
        "verify",
        &dir("reference").join("state_dict.pt").to_string_lossy(),
    ])?;
    if !text.contains("verified") {
        return Err(text.into());
    }
    // A storage's byte changed: its CRC-32 no longer matches.
    let mut bytes = std::fs::read(dir("reference").join("tensor.pt"))?;
    let at = bytes
        .windows(10)
        .position(|w| w == [0, 0, 1, 0, 2, 0, 3, 0, 4, 0])
        .ok_or("data")?;
    bytes[at + 2] = 9;
    let tmp = tempfile::tempdir()?;
    let bad = tmp.path().join("bad.pt");
    std::fs::write(&bad, &bytes)?;
    let run = tensorkit(&["verify", &bad.to_string_lossy()]);
    if run.status.code() != Some(2)
        || !String::from_utf8_lossy(&run.stderr).contains("checksum_mismatch")
    {
        return Err(format!(
            "{:?}: {}",
            run.status.code(),
            String::from_utf8_lossy(&run.stderr)
        )
        .into());
    }
    Ok(())
}

fn hostile_refused() -> Result<(), Failed> {
    for path in tensor_testkit::files_with_extension(&dir("malicious"), "pt")
        .into_iter()
        .chain([dir("reference").join("whole_module.pt")])
    {
        let p = path.to_string_lossy();
        for json in [false, true] {
            let mut args = vec!["ls", &*p];
            if json {
                args = vec!["inspect", "--json", &*p];
            }
            let run = tensorkit(&args);
            let kind = expect_error_contract(&run, json)?;
            if !matches!(
                kind.as_str(),
                "unsupported" | "malformed" | "limit_exceeded"
            ) {
                return Err(format!("{p}: {kind}").into());
            }
        }
    }
    if std::path::Path::new("/tmp/tensorkit-pickle-ran").exists() {
        return Err("a pickle ran".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "pytorch::listed_as_torch_loads_them",
            listed_as_torch_loads_them,
        ),
        Trial::test(
            "pytorch::converted_as_safetensors_writes",
            converted_as_safetensors_writes,
        ),
        Trial::test("pytorch::crcs_verified", crcs_verified),
        Trial::test("pytorch::hostile_refused", hostile_refused),
    ]
}
