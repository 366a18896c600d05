//! `cargo xtask bench [--quick] [--with-python VENV] [--peer-script PATH] [--out FILE]`:
//! runs the benchmark suite (`tensorkit-bench`, release build) and, with `--with-python`,
//! the Python peers (`peer_bench.py` in that virtual environment, into which the pinned
//! peers it lacks are installed first: numpy, safetensors, ztensor, bintensors, tensogram,
//! eccodes, torch) and the Python package against them (`crates/tensorkit-py/bench/bench_python.py`, on a release build installed
//! into the same environment), and writes
//! `docs/benchmarks.md`: medians, min–max, ratios to the peers, fractions of the machine's
//! limits, and every speed target with "met" or the shortfall.

mod python;
mod report;
mod scaling;
mod stats;
mod tables;
mod targets;
#[cfg(test)]
mod tests;

use python::{install_peers, python_package};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Options {
    quick: bool,
    python: Option<PathBuf>,
    peer_script: PathBuf,
    out: PathBuf,
}

fn parse(root: &Path, args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        python: None,
        peer_script: root.join("../shared/tools/peer_bench.py"),
        out: root.join("docs/benchmarks.md"),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().cloned().ok_or(format!("{a} needs {what}"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--with-python" => o.python = Some(PathBuf::from(value("a virtual environment")?)),
            "--peer-script" => o.peer_script = PathBuf::from(value("a path")?),
            "--out" => o.out = PathBuf::from(value("a path")?),
            other => return Err(format!("bench: unknown option {other}")),
        }
    }
    Ok(o)
}

fn run_json(cmd: &mut Command, what: &str) -> Result<Value, String> {
    let out = cmd.output().map_err(|e| format!("running {what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{what} printed no JSON: {e}"))
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<String, String> {
    let o = parse(root, args)?;
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Group (i) runs the CLI binary built beside the suite's.
    let built = Command::new(&cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--release",
            "--package",
            "tensorkit-cli",
        ])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !built.success() {
        return Err(format!("building the tensorkit CLI failed: {built}"));
    }
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "tensorkit-bench",
        "--",
    ]);
    if o.quick {
        cmd.arg("--quick");
    }
    let ours = run_json(&mut cmd, "the benchmark suite")?;
    let peer = match &o.python {
        None => None,
        Some(venv) => {
            install_peers(venv)?;
            if !o.peer_script.exists() {
                return Err(format!(
                    "{} not found; give --peer-script",
                    o.peer_script.display()
                ));
            }
            let json = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
            let scale: [&str; 10] = if o.quick {
                [
                    "--runs",
                    "3",
                    "--big-mib",
                    "128",
                    "--small-n",
                    "2000",
                    "--small-mib",
                    "32",
                    "--tg-elems",
                    "10000000",
                ]
            } else {
                [
                    "--runs",
                    "3",
                    "--big-mib",
                    "1024",
                    "--small-n",
                    "2000",
                    "--small-mib",
                    "256",
                    "--tg-elems",
                    "100000000",
                ]
            };
            let status = Command::new(venv.join("bin/python"))
                .arg(&o.peer_script)
                .args(["--sections", "big,small,tg"])
                .args(scale)
                .arg("--json")
                .arg(json.path())
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("running the Python peers: {e}"))?;
            if !status.success() {
                return Err(format!("the Python peers failed: {status}"));
            }
            let text = std::fs::read(json.path()).map_err(|e| e.to_string())?;
            Some(serde_json::from_slice::<Value>(&text).map_err(|e| e.to_string())?)
        }
    };
    let package = match &o.python {
        None => None,
        Some(venv) => Some(python_package(root, venv, o.quick)?),
    };
    let md = report::render(&report::Run {
        quick: o.quick,
        with_python: o.python.is_some(),
        seconds: started.elapsed().as_secs_f64(),
        ours: &ours,
        peer: peer.as_ref(),
        package: package.as_ref(),
    });
    std::fs::write(&o.out, &md).map_err(|e| format!("writing {}: {e}", o.out.display()))?;
    Ok(format!(
        "bench: wrote {} in {:.0} s",
        o.out.display(),
        started.elapsed().as_secs_f64()
    ))
}
