//! `cargo xtask`: repository chores that need more than a shell line.
//!
//! - `cargo xtask golden [--check]` — regenerates `testdata/golden/` from our own writers
//!   (through `tensorkit demo --small`); `--check` fails if that would change anything.
//! - `cargo xtask layering` — fails when a dependency between our crates points the wrong way,
//!   or a module of a crate or of the Python package imports one that imports it back.
//! - `cargo xtask unsafe` — fails when `unsafe` code is outside the modules listed for it, or
//!   a block has no `// SAFETY:` comment, or a crate root neither forbids nor denies it.
//! - `cargo xtask bench [--quick] [--with-python VENV] [--peer-script PATH] [--out FILE]` —
//!   runs the side-by-side benchmarks and writes `docs/benchmarks.md`.
#![forbid(unsafe_code)]

mod architecture;
mod bench;
mod cycles;
mod golden;
mod layering;
mod unsafe_code;

use std::path::PathBuf;
use std::process::ExitCode;

/// The repository root (the parent of this crate).
fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

const USAGE: &str = "usage: cargo xtask <golden [--check] | layering | unsafe | bench [--quick] [--with-python VENV] [--peer-script PATH] [--out FILE]>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["golden"] => golden::run(&root(), false),
        ["golden", "--check"] => golden::run(&root(), true),
        ["layering"] => layering::run(&root()),
        ["unsafe"] => unsafe_code::run(&root()),
        ["bench", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|s| (*s).to_owned()).collect();
            bench::run(&root(), &rest)
        }
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(msg) => {
            println!("{msg}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}
