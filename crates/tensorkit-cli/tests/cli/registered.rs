//! A format registered from outside tensorkit (the facade's test format, `toy`) goes through
//! the command's own code paths as a built-in format does: `inspect`, `ls`, `get`,
//! `convert` both ways (by extension and by `--to`), `validate` and `verify`, run in this
//! process (a registration lives in the process that makes it).

#[path = "../../../tensorkit/tests/facade/toy.rs"]
mod toy;

use clap::Parser as _;
use libtest_mimic::{Failed, Trial};
use std::path::Path;

/// Runs the command line `args` in this process: its status, output and errors.
fn run(args: &[&str]) -> (i32, String, String) {
    let cli = tensorkit_cli::cli::Cli::parse_from(
        std::iter::once("tensorkit").chain(args.iter().copied()),
    );
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = tensorkit_cli::run(&cli, &mut out, &mut err);
    (
        status,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

fn ok(args: &[&str]) -> Result<String, Failed> {
    let (status, out, err) = run(args);
    if status != 0 {
        return Err(format!("tensorkit {args:?} exited {status}: {err}").into());
    }
    Ok(out)
}

fn through_every_command() -> Result<(), Failed> {
    let toy = toy::format();
    let dir = tempfile::tempdir()?;
    let source = dir.path().join("w.toy");
    let w = tensorkit::Tensor::from_elements(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0])?;
    tensorkit::save_tensors(
        &source,
        [("w", w.view())],
        &tensorkit::WriteOptions::default(),
    )?;
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    let src = path(&source);

    let inspected: serde_json::Value = serde_json::from_str(&ok(&["inspect", "--json", &src])?)?;
    if inspected["format"] != "toy" || inspected["tensors"][0]["name"] != "w" {
        return Err(format!("inspect --json: {inspected}").into());
    }
    let listed = ok(&["ls", &src])?;
    if !listed.contains('w') || !listed.contains("float32") {
        return Err(format!("ls: {listed}").into());
    }

    // Out by the target's extension, and back by `--to` the registered id.
    let st = path(&dir.path().join("w.safetensors"));
    ok(&["convert", &src, &st])?;
    let back = path(&dir.path().join("back.bin"));
    ok(&["convert", &st, &back, "--to", "toy"])?;
    let read = tensorkit::open(&back)?;
    if read.format() != toy || read.get("w")?.to_tensor()? != w {
        return Err(format!("converted back: {read:?}").into());
    }

    let validated: serde_json::Value = serde_json::from_str(&ok(&["validate", "--json", &back])?)?;
    if validated["format"] != "toy" || validated["valid"] != true {
        return Err(format!("validate --json: {validated}").into());
    }
    // Nothing to verify: said so, with the exit status of a check that did not pass.
    let (status, _, err) = run(&["verify", &back]);
    if status == 0 || !err.contains("nothing was verified") {
        return Err(format!("verify exited {status}: {err}").into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "registered::a_format_from_outside_through_every_command",
        through_every_command,
    )]
}
