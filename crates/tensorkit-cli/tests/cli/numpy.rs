//! NumPy files through the command: `.npz` and `.npy` converted to other formats and back
//! with the same arrays, files numpy writes that hold no tensors refused with exit status 2.

use crate::support::{expect_error_contract, tensorkit};
use libtest_mimic::{Failed, Trial};
use std::path::PathBuf;

fn dir(sub: &str) -> PathBuf {
    tensor_testkit::testdata().join("numpy").join(sub)
}

fn run(args: &[&str]) -> Result<(), Failed> {
    let out = tensorkit(args);
    if !out.status.success() {
        return Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn through_other_formats_and_back() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    for src in tensor_testkit::files_with_extension(&dir("reference"), "npz")
        .into_iter()
        .chain(tensor_testkit::files_with_extension(
            &dir("reference"),
            "npy",
        ))
    {
        let stem = tensor_testkit::stem(&src);
        let ext = src.extension().and_then(|e| e.to_str()).unwrap_or("npy");
        for via in ["safetensors", "tgm"] {
            let mid = tmp.path().join(format!("{stem}.{via}"));
            // A .npy file's array takes the file's name: the copy keeps it, in a folder.
            std::fs::create_dir_all(tmp.path().join(via))?;
            let back = tmp.path().join(via).join(format!("{stem}.{ext}"));
            let there = tensorkit(&[
                "convert",
                "--quiet",
                &src.to_string_lossy(),
                &mid.to_string_lossy(),
            ]);
            if String::from_utf8_lossy(&there.stderr).contains("error[unsupported]") {
                continue; // a dtype the other format does not hold (complex128 in safetensors)
            }
            if !there.status.success() {
                return Err(format!(
                    "{stem} to {via}: {}",
                    String::from_utf8_lossy(&there.stderr)
                )
                .into());
            }
            run(&[
                "convert",
                "--quiet",
                &mid.to_string_lossy(),
                &back.to_string_lossy(),
            ])?;
            let diff = tensorkit(&["diff", &src.to_string_lossy(), &back.to_string_lossy()]);
            if !diff.status.success() {
                return Err(format!(
                    "{stem} through {via}: {}",
                    String::from_utf8_lossy(&diff.stdout)
                )
                .into());
            }
        }
    }
    Ok(())
}

fn refused() -> Result<(), Failed> {
    for ext in ["npy", "npz"] {
        for path in tensor_testkit::files_with_extension(&dir("malicious"), ext) {
            let p = path.to_string_lossy();
            let kind = expect_error_contract(&tensorkit(&["inspect", "--json", &p]), true)?;
            if !matches!(kind.as_str(), "unsupported" | "truncated") {
                return Err(format!("{p}: {kind}").into());
            }
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "numpy::through_other_formats_and_back",
            through_other_formats_and_back,
        ),
        Trial::test("numpy::refused", refused),
    ]
}
