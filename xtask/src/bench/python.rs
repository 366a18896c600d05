//! The Python side of a run: the pinned peers installed into the given virtual
//! environment, and the package's own benchmark against them.

use super::run_json;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The peers every Python row is measured against, and maturin to build the package, as pip
/// names them (module, requirement): the versions the reference fixtures were written with.
pub(super) const PYTHON_PEERS: [(&str, &str); 16] = [
    ("numpy", "numpy"),
    ("safetensors", "safetensors==0.8.0"),
    ("ztensor", "ztensor==2.1.2"),
    ("bintensors", "bintensors==0.2.0"),
    ("tensogram", "tensogram==0.24.0"),
    ("eccodes", "eccodes==2.50.0"),
    ("xarray", "xarray==2026.9.0"),
    ("cfgrib", "cfgrib==0.9.15.1"),
    ("virtualizarr", "virtualizarr==2.5.1"),
    ("zarr", "zarr==3.1.6"),
    ("obstore", "obstore==0.12.1"),
    ("kerchunk", "kerchunk==0.2.10"),
    ("torch", "torch==2.15.0"),
    ("gguf", "gguf==0.19.0"),
    ("netCDF4", "netCDF4==1.7.5.1.post1"),
    ("maturin", "maturin>=1.9.4,<2"),
];

/// Installs into `venv`, from `PyPI`, whichever of [`PYTHON_PEERS`] it lacks, so that no row
/// goes missing from a run for want of its peer.
pub(super) fn install_peers(venv: &Path) -> Result<(), String> {
    let python = venv.join("bin/python");
    let missing: Vec<&str> = PYTHON_PEERS
        .iter()
        .filter(|(module, _)| {
            !Command::new(&python)
                .args(["-c", &format!("import {module}")])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(|&(_, requirement)| requirement)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let ok = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .args(&missing)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "installing {} into {}",
            missing.join(", "),
            venv.display()
        ))
    }
}

/// Installs a release build of the Python package into `venv` (with maturin) and runs its
/// benchmark against the peers there.
pub(super) fn python_package(root: &Path, venv: &Path, quick: bool) -> Result<Value, String> {
    let python = venv.join("bin/python");
    let built = Command::new(&python)
        .current_dir(root)
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", root.join("target/python-release"))
        .args(["-m", "maturin", "develop", "--release", "--quiet"])
        .args(["-m", "crates/tensorkit-py/Cargo.toml"])
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running maturin: {e}"))?;
    if !built.success() {
        return Err(format!("maturin develop --release failed: {built}"));
    }
    let scale: &[&str] = if quick {
        &[
            "--runs",
            "3",
            "--big-mib",
            "128",
            "--small-mib",
            "32",
            "--tg-mib",
            "64",
            "--torch-mib",
            "256",
            "--gguf-mib",
            "64",
            "--nc-mib",
            "64",
        ]
    } else {
        &[
            "--runs",
            "5",
            "--big-mib",
            "1024",
            "--small-mib",
            "64",
            "--tg-mib",
            "256",
        ]
    };
    let mut cmd = Command::new(&python);
    cmd.current_dir(root)
        .arg("crates/tensorkit-py/bench/bench_python.py")
        .args(scale);
    run_json(&mut cmd, "the Python package's benchmark")
}
