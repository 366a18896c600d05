//! ONNX models and HDF5 weights through the command: initializers listed and converted as
//! onnx's `numpy_helper` gives them (external data beside the model included), weights of
//! Keras and h5py files likewise; models whose data lies outside their folder refused.

use crate::support::{expect_error_contract, tensorkit};
use libtest_mimic::{Failed, Trial};

fn converted_with_the_same_elements() -> Result<(), Failed> {
    let tmp = tempfile::tempdir()?;
    let data = tensor_testkit::testdata();
    for (src, sidecar) in [
        (data.join("onnx/reference/raw.onnx"), "tensors"),
        (data.join("onnx/reference/typed.onnx"), "tensors"),
        (data.join("onnx/reference/external/model.onnx"), "tensors"),
        (data.join("hdf5/weights/plain.h5"), "tensors"),
        (data.join("hdf5/weights/model.keras"), "tensors"),
    ] {
        let side = tensor_testkit::sidecar(&src)?;
        let out = tmp
            .path()
            .join(format!("{}.npz", tensor_testkit::stem(&src)));
        let run = tensorkit(&[
            "convert",
            "--quiet",
            &src.to_string_lossy(),
            &out.to_string_lossy(),
        ]);
        if !run.status.success() {
            return Err(format!(
                "{}: {}",
                src.display(),
                String::from_utf8_lossy(&run.stderr)
            )
            .into());
        }
        let npz = std::fs::read(&out)?;
        let members = tensor_numpy_members(&npz)?;
        let want = side[sidecar].as_object().ok_or("sidecar")?;
        if members.len() != want.len() {
            return Err(format!(
                "{}: {} arrays, {} expected",
                src.display(),
                members.len(),
                want.len()
            )
            .into());
        }
        for (name, elements) in members {
            let w = want
                .get(&name)
                .ok_or_else(|| format!("{name}: not expected"))?;
            if w["sha256"] != tensor_testkit::sha256_hex(&elements) {
                return Err(format!("{}: {name}: other elements", src.display()).into());
            }
        }
    }
    Ok(())
}

/// The arrays of an `.npz` written by tensorkit (stored members, version 1.0 headers): name
/// and elements.
fn tensor_numpy_members(npz: &[u8]) -> Result<Vec<(String, Vec<u8>)>, Failed> {
    let run = tensorkit;
    let tmp = tempfile::tempdir()?;
    let path = tmp.path().join("a.npz");
    std::fs::write(&path, npz)?;
    let listing = run(&["inspect", "--json", &path.to_string_lossy()]);
    let v: serde_json::Value = serde_json::from_slice(&listing.stdout)?;
    let mut out = Vec::new();
    for t in v["tensors"].as_array().ok_or("tensors")? {
        let name = t["name"].as_str().ok_or("name")?.to_owned();
        let npy = tmp.path().join("t.npy");
        let got = run(&[
            "get",
            &path.to_string_lossy(),
            &name,
            "-o",
            &npy.to_string_lossy(),
        ]);
        if !got.status.success() {
            return Err(String::from_utf8_lossy(&got.stderr).into_owned().into());
        }
        let bytes = std::fs::read(&npy)?;
        let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]])) + 10;
        out.push((name, bytes[header..].to_vec()));
    }
    Ok(out)
}

fn refused() -> Result<(), Failed> {
    let bad = tensor_testkit::testdata().join("onnx/malicious");
    for p in [
        "traversal/model.onnx",
        "absolute/model.onnx",
        "past_end/model.onnx",
        "raw_too_short.onnx",
    ] {
        let path = bad.join(p);
        let kind = expect_error_contract(&tensorkit(&["ls", &path.to_string_lossy()]), false)?;
        if kind != "malformed" {
            return Err(format!("{p}: {kind}").into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "onnx::converted_with_the_same_elements",
            converted_with_the_same_elements,
        ),
        Trial::test("onnx::refused", refused),
    ]
}
