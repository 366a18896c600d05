//! Snapshots of human-readable output, the golden files, and the demo.

use crate::support::{files_with_extension, inspect_json, tensorkit, testdata};
use libtest_mimic::{Failed, Trial};

fn inspect_table_snapshot() -> Result<(), Failed> {
    for name in ["all_dtypes", "metadata_unicode", "empty_tensors"] {
        let file = testdata().join(format!("safetensors/conformance/{name}.safetensors"));
        let out = tensorkit(&["inspect", &file.to_string_lossy()]);
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
        }
        let text = String::from_utf8(out.stdout)?;
        insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("inspect_{name}"), text);
        });
    }
    Ok(())
}

fn inspect_json_snapshot() -> Result<(), Failed> {
    let file = testdata().join("safetensors/conformance/dtype_bf16.safetensors");
    let v = inspect_json(&file)?;
    insta::with_settings!({snapshot_path => "snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("inspect_json_dtype_bf16", v);
    });
    Ok(())
}

/// The committed golden files read back to the demo data set, tensor for tensor.
fn golden_files_read_back() -> Result<(), Failed> {
    let dir = testdata().join("golden");
    let mut files = Vec::new();
    for format in tensorkit_cli::demo::FORMATS {
        files.extend(files_with_extension(&dir, format.extension()));
    }
    files.sort();
    files.dedup();
    if files.len() < tensorkit_cli::demo::FORMATS.len() {
        return Err("no golden files; run `cargo xtask golden`".into());
    }
    let expected = tensorkit_cli::demo_data::tensors(tensorkit_cli::demo_data::Size::Small);
    for file in files {
        let got = inspect_json(&file)?;
        let tensors = got["tensors"].as_array().ok_or("no tensors")?;
        for (name, t) in &expected {
            let entry = tensors
                .iter()
                .find(|e| e["name"] == name.as_str())
                .ok_or_else(|| format!("{}: {name} missing", file.display()))?;
            // What inspect reports of the tensor itself, read back from memory.
            let bytes = tensorkit::serialize_tensors(
                [(name.clone(), t.view())],
                &tensorkit::WriteOptions::for_format(tensorkit::Format::SAFETENSORS),
            )?;
            let alone = tensorkit::open_bytes(&bytes)?;
            let want = tensorkit_cli::report::tensor_json(alone.get(name)?)?;
            // Where the tensor sits (Tensogram's message and object) is not part of it, nor
            // what a format's reader derives from its structure (NetCDF's dimensions).
            let mut entry = entry.clone();
            if let Some(o) = entry.as_object_mut() {
                o.remove("message");
                o.remove("object");
                let derived = tensorkit::Format::from_id(got["format"].as_str().unwrap_or(""))
                    .map_or(&[][..], |f| f.adapter().derived_attributes());
                if let Some(a) = o.get_mut("attributes").and_then(|a| a.as_object_mut()) {
                    a.retain(|k, _| !derived.contains(&k.as_str()));
                    if a.is_empty() {
                        o.remove("attributes");
                    }
                }
            }
            if entry != want {
                return Err(
                    format!("{}: {name} differs: {entry} vs {want}", file.display()).into(),
                );
            }
        }
    }
    Ok(())
}

fn demo_runs_and_keeps_files() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let out = tensorkit(&["demo", "--small", "--out", &dir.path().to_string_lossy()]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let text = String::from_utf8(out.stdout)?;
    if !text.contains("identical") || !dir.path().join("demo-bintensors.bt").exists() {
        return Err(format!("unexpected demo output:\n{text}").into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("output::inspect_table_snapshot", inspect_table_snapshot),
        Trial::test("output::inspect_json_snapshot", inspect_json_snapshot),
        Trial::test("output::golden_files_read_back", golden_files_read_back),
        Trial::test(
            "output::demo_runs_and_keeps_files",
            demo_runs_and_keeps_files,
        ),
    ]
}
