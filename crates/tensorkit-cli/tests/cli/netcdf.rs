//! NetCDF through the command: `inspect` ends with the file in CDL as `ncdump -h` printed
//! it, a file taken through Tensogram and zTensor comes back byte for byte, and `--unpack`
//! gives CF's unpacked floats with fill values as NaN.

use crate::support::{expect_error_contract, inspect_json, tensorkit};
use libtest_mimic::{Failed, Trial};
use std::path::Path;

fn reference() -> Vec<std::path::PathBuf> {
    tensor_testkit::files_with_extension(&tensor_testkit::testdata().join("netcdf/reference"), "nc")
}

fn ok(args: &[&str]) -> Result<(), Failed> {
    let out = tensorkit(args);
    if !out.status.success() {
        return Err(format!("{args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(())
}

fn outlines_are_ncdump_h() -> Result<(), Failed> {
    for path in reference() {
        let p = path.to_string_lossy();
        let v = inspect_json(&path)?;
        let want = std::fs::read_to_string(path.with_extension("cdl"))?;
        if v["outline"] != want.as_str() {
            return Err(format!("{p}: outline {}", v["outline"]).into());
        }
        let text = String::from_utf8(tensorkit(&["inspect", &p]).stdout)?;
        if !text.ends_with(&want) {
            return Err(format!("{p}: the table does not end with the CDL:\n{text}").into());
        }
    }
    Ok(())
}

fn through_other_formats_byte_for_byte() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    for path in reference() {
        let stem = tensor_testkit::stem(&path);
        for via in ["tgm", "zt"] {
            let middle = dir.path().join(format!("{stem}.{via}"));
            let back = dir.path().join(format!("{stem}_{via}.nc"));
            ok(&[
                "convert",
                &path.to_string_lossy(),
                &middle.to_string_lossy(),
            ])?;
            ok(&[
                "convert",
                &middle.to_string_lossy(),
                &back.to_string_lossy(),
            ])?;
            let (ours, theirs) = (std::fs::read(&back)?, std::fs::read(&path)?);
            // netCDF-C may leave a lone record variable's last record padded (zeros).
            let tail = theirs.get(ours.len()..).unwrap_or_default();
            if ours != theirs
                && !(theirs.starts_with(&ours) && tail.len() < 4 && tail.iter().all(|&b| b == 0))
            {
                return Err(format!("{stem} through {via}: other bytes").into());
            }
        }
    }
    Ok(())
}

fn unpacked_on_request(dir: &Path) -> Result<(), Failed> {
    let src = tensor_testkit::testdata().join("netcdf/reference/cf_packed.nc");
    let out = dir.join("unpacked.nc");
    ok(&[
        "convert",
        &src.to_string_lossy(),
        &out.to_string_lossy(),
        "--unpack",
    ])?;
    let v = inspect_json(&out)?;
    let t2m = v["tensors"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "t2m")
        .ok_or("no t2m")?;
    // The first packed values are -12000 and -11000; scale 0.0015, offset 270.
    let first = &t2m["first_values"];
    if t2m["dtype"] != "float64" || first[0] != 252.0 || first[1] != 253.5 {
        return Err(format!("unpacked t2m: {t2m}").into());
    }
    let outline = v["outline"].as_str().unwrap_or_default();
    if outline.contains("scale_factor")
        || outline.contains("_FillValue")
        || !outline.contains("double t2m")
    {
        return Err(format!("unpacked: {outline}").into());
    }
    let kept = dir.join("kept.nc");
    ok(&["convert", &src.to_string_lossy(), &kept.to_string_lossy()])?;
    if std::fs::read(&kept)? != std::fs::read(&src)? {
        return Err("without --unpack, NetCDF to NetCDF changes the file".into());
    }
    Ok(())
}

/// `--pipeline` names NetCDF-4 and its filters: every reference file written so lists as
/// the same CDL and the same values; a filter with a classic format is refused, naming it.
fn written_as_netcdf4_on_request(dir: &Path) -> Result<(), Failed> {
    let body = |cdl: &str| {
        cdl.split_once('\n')
            .map(|(_, b)| b.to_owned())
            .unwrap_or_default()
    };
    for path in reference() {
        let stem = tensor_testkit::stem(&path);
        let out = dir.join(format!("{stem}.nc"));
        let p = path.to_string_lossy();
        ok(&[
            "convert",
            &p,
            &out.to_string_lossy(),
            "--pipeline",
            "netcdf4,shuffle,deflate:4",
        ])?;
        if std::fs::read(&out)?.get(..8) != Some(b"\x89HDF\r\n\x1a\n".as_slice()) {
            return Err(format!("{stem}: not an HDF5 file").into());
        }
        let (ours, theirs) = (inspect_json(&out)?, inspect_json(&path)?);
        let want = std::fs::read_to_string(path.with_extension("cdl"))?;
        if body(ours["outline"].as_str().unwrap_or_default()) != body(&want) {
            return Err(format!("{stem}: outline {}", ours["outline"]).into());
        }
        for (a, b) in ours["tensors"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(theirs["tensors"].as_array().into_iter().flatten())
        {
            if (&a["name"], &a["dtype"], &a["shape"], &a["first_values"])
                != (&b["name"], &b["dtype"], &b["shape"], &b["first_values"])
            {
                return Err(format!("{stem}: {a} where the source has {b}").into());
            }
        }
    }
    let src = reference().into_iter().next().ok_or("no reference file")?;
    let out = tensorkit(&[
        "convert",
        &src.to_string_lossy(),
        &dir.join("refused.nc").to_string_lossy(),
        "--pipeline",
        "classic,shuffle",
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    if out.status.success() || !said.contains("filters need NetCDF-4") {
        return Err(format!("classic with a filter: {said}").into());
    }
    Ok(())
}

/// `--split-by` groups a NetCDF file's variables into Tensogram messages as tensogram's
/// `convert-netcdf` does: one per variable, or one per record — each record variable's
/// record (its `_dims` without the record dimension) with every static variable.
fn split_into_messages(dir: &Path) -> Result<(), Failed> {
    let src = tensor_testkit::testdata().join("netcdf/reference/records_classic.nc");
    let source = inspect_json(&src)?;
    let out = dir.join("records.tgm");
    let s = src.to_string_lossy();
    ok(&[
        "convert",
        &s,
        &out.to_string_lossy(),
        "--split-by",
        "record",
    ])?;
    let v = inspect_json(&out)?;
    let tensors = v["tensors"].as_array().ok_or("tensors")?;
    // 5 records of 7 variables, `lat` and `lon` static.
    if tensors.len() != 35 {
        return Err(format!("{} tensors in the record messages", tensors.len()).into());
    }
    for (i, t) in tensors.iter().enumerate() {
        let (message, object) = (i / 7, i % 7);
        let whole = &source["tensors"][object];
        if t["message"] != message || t["object"] != object || t["name"] != whole["name"] {
            return Err(format!("tensor {i}: {t}").into());
        }
        let static_variable = ["lat", "lon"].contains(&whole["name"].as_str().unwrap_or_default());
        let shape: Vec<u64> = serde_json::from_value(whole["shape"].clone())?;
        let want = if static_variable {
            shape
        } else {
            shape[1..].to_vec()
        };
        if t["shape"] != serde_json::json!(want) {
            return Err(format!("tensor {i}: shape {} where {want:?}", t["shape"]).into());
        }
    }
    // Record 0 of `temp` is the variable's first slab; record 1 is another.
    let (first, second) = (&tensors[3]["first_values"], &tensors[7 + 3]["first_values"]);
    if first != &source["tensors"][3]["first_values"] || first == second {
        return Err(format!("temp's records start {first} and {second}").into());
    }
    let out = dir.join("variables.tgm");
    ok(&[
        "convert",
        &s,
        &out.to_string_lossy(),
        "--split-by",
        "variable",
    ])?;
    let v = inspect_json(&out)?;
    for (i, t) in v["tensors"].as_array().into_iter().flatten().enumerate() {
        if t["message"] != i || t["object"] != 0 {
            return Err(format!("variable split: tensor {i} {t}").into());
        }
    }
    for (args, said) in [
        (
            vec!["--split-by", "record", "--to", "ztensor-2"],
            "a split into messages applies to tensogram output",
        ),
        (vec!["--split-by", "month"], "one of file, variable, record"),
    ] {
        let target = dir.join("refused.tgm");
        let mut all = vec!["convert", &s, target.to_str().unwrap_or_default()];
        all.extend(args);
        let out = tensorkit(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() || !stderr.contains(said) {
            return Err(format!("{all:?}: {stderr}").into());
        }
    }
    let fixed = tensor_testkit::testdata().join("netcdf/reference/classic_types.nc");
    let out = tensorkit(&[
        "convert",
        &fixed.to_string_lossy(),
        &dir.join("no.tgm").to_string_lossy(),
        "--split-by",
        "record",
    ]);
    if out.status.success() || !String::from_utf8_lossy(&out.stderr).contains("unlimited dimension")
    {
        return Err("a file without records split by record".into());
    }
    Ok(())
}

/// A variable no tensor holds (netCDF4-python's compound, enum, variable-length and string
/// variables): `inspect` lists the file's other variables and says which is not read and
/// why, `get` of it is an `unsupported` error naming it, and `convert` says it left it out.
fn variables_not_read_are_named(dir: &Path) -> Result<(), Failed> {
    let files = tensor_testkit::testdata().join("netcdf/unsupported");
    for (file, name, kind) in [
        ("compound_variable.nc", "pairs", "compound"),
        ("enum_variable.nc", "sky", "enum"),
        ("vlen_variable.nc", "rows", "variable-length sequence"),
        ("string_variable.nc", "station", "string"),
    ] {
        let path = files.join(file);
        let p = path.to_string_lossy();
        let v = inspect_json(&path)?;
        let names: Vec<&str> = v["tensors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        let said = &v["not_read"][0];
        if names != ["plain"]
            || said["name"] != name
            || !said["why"].as_str().is_some_and(|w| w.contains(kind))
        {
            return Err(format!("{file}: tensors {names:?}, not read {}", v["not_read"]).into());
        }
        let table = String::from_utf8(tensorkit(&["inspect", &p]).stdout)?;
        if !table.contains(&format!("not read  {name}: ")) {
            return Err(format!("{file}: the table does not say it:\n{table}").into());
        }
        let out = tensorkit(&["get", &p, name]);
        let error = String::from_utf8_lossy(&out.stderr).into_owned();
        if expect_error_contract(&out, false)? != "unsupported" || !error.contains(name) {
            return Err(format!("{file}: get {name}: {error}").into());
        }
        let target = dir.join(format!("{name}.tgm"));
        let out = tensorkit(&["convert", &p, &target.to_string_lossy()]);
        let said = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !said.contains(&format!("{name:?} not read")) {
            return Err(format!("{file}: convert said {said}").into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("netcdf::outlines_are_ncdump_h", outlines_are_ncdump_h),
        Trial::test(
            "netcdf::through_other_formats_byte_for_byte",
            through_other_formats_byte_for_byte,
        ),
        Trial::test("netcdf::unpacked_on_request", || {
            unpacked_on_request(tempfile::tempdir()?.path())
        }),
        Trial::test("netcdf::split_into_messages", || {
            split_into_messages(tempfile::tempdir()?.path())
        }),
        Trial::test("netcdf::written_as_netcdf4_on_request", || {
            written_as_netcdf4_on_request(tempfile::tempdir()?.path())
        }),
        Trial::test("netcdf::variables_not_read_are_named", || {
            variables_not_read_are_named(tempfile::tempdir()?.path())
        }),
    ]
}
