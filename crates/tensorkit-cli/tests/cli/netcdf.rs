//! NetCDF through the command: `inspect` ends with the file in CDL as `ncdump -h` printed
//! it, a file taken through Tensogram and zTensor comes back byte for byte, and `--unpack`
//! gives CF's unpacked floats with fill values as NaN.

use crate::support::{inspect_json, tensorkit};
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
    ]
}
