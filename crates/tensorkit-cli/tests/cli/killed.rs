//! Nothing is lost: a `convert` killed at any moment leaves either no file or a complete one
//! under the output name, never a partial file — and no temporary file under any other name.

use crate::support::{inspect_json, write_f32_safetensors};
use libtest_mimic::{Failed, Trial};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

fn killed_mid_write(format: &'static str) -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("in.safetensors");
    let n = 16 << 20; // 64 MiB of data: long enough to be caught while writing
    write_f32_safetensors(&input, n, None)?;
    let mut kills = 0;
    for delay_ms in [1u64, 3, 10, 30, 60, 100, 200] {
        // Each run in a directory of its own, which must hold nothing but the output after.
        let run = dir.path().join(format!("run-{delay_ms}"));
        std::fs::create_dir(&run)?;
        let output = run.join("out");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tensorkit"))
            .args(["convert", "--quiet", "--to", format])
            .arg(&input)
            .arg(&output)
            .spawn()?;
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let status = child.wait()?;
        kills += usize::from(status.signal() == Some(9));
        if output.exists() {
            let report = inspect_json(&output).map_err(|e| {
                format!("{format}, killed after {delay_ms} ms: a partial file: {e}")
            })?;
            let shape = &report["tensors"][0]["shape"];
            if shape != &serde_json::json!([n]) {
                return Err(format!("{format}, killed after {delay_ms} ms: shape {shape}").into());
            }
        }
        let litter: Vec<_> = std::fs::read_dir(&run)?
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "out")
            .collect();
        if !litter.is_empty() {
            return Err(format!("{format}, killed after {delay_ms} ms: left {litter:?}").into());
        }
        std::fs::remove_dir_all(&run)?;
    }
    if kills == 0 {
        return Err(
            "every convert finished before it could be killed; the input is too small".into(),
        );
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    [
        "bintensors",
        "ztensor-2",
        "ztensor-0.1",
        "safetensors",
        "tensogram",
    ]
    .into_iter()
    .map(|f| {
        Trial::test(format!("atomic::killed_mid_write::{f}"), move || {
            killed_mid_write(f)
        })
    })
    .collect()
}
