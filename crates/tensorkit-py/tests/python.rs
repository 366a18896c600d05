//! The Python package's tests: builds the extension into a project-local virtual
//! environment with `maturin develop`, then runs pytest, in two suites:
//!
//! - `python::pytest`: `tests/py/` in `target/python-env` (from `tests/requirements.txt`);
//! - `python::torch`: `tests/torch/`, the torch, jax, safetensors-drop-in and anemoi-inference
//!   tests, in `target/torch-env` (from `tests/requirements-torch.txt`): torch from `PyPI` brings about
//!   5 GB of CUDA libraries, kept out of the first environment, and CI removes this one
//!   once the tests have run.
//!
//! An environment is created on first use and rebuilt when its requirements change.
//! Nothing is skipped: a machine that cannot create an environment fails its suite, saying
//! which step failed.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| crate_dir().join("../../target"), PathBuf::from)
}

fn run(what: &str, cmd: &mut Command) -> Result<(), Failed> {
    let status = cmd
        .status()
        .map_err(|e| format!("{what}: cannot start {}: {e}", cmd.get_program().display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})").into())
    }
}

/// A suite: its tests, its environment, and the requirements that fill it.
struct Suite {
    tests: &'static str,
    env: &'static str,
    requirements: &'static str,
}

const SUITES: [(&str, Suite); 2] = [
    (
        "python::pytest",
        Suite {
            tests: "tests/py",
            env: "python-env",
            requirements: "tests/requirements.txt",
        },
    ),
    (
        "python::torch",
        Suite {
            tests: "tests/torch",
            env: "torch-env",
            requirements: "tests/requirements-torch.txt",
        },
    ),
];

/// The suite's virtual environment, created and filled when missing or out of date by
/// `scripts/test-env.sh` (which `.ci/run` also calls, before anything builds).
fn environment(suite: &Suite) -> Result<PathBuf, Failed> {
    let env = target_dir().join(suite.env);
    run(
        "creating the test environment (scripts/test-env.sh)",
        Command::new("bash")
            .arg(crate_dir().join("scripts/test-env.sh"))
            .arg(&env)
            .arg(crate_dir().join(suite.requirements)),
    )?;
    Ok(env)
}

fn bin(env: &Path, name: &str) -> PathBuf {
    env.join("bin").join(name)
}

/// One `maturin develop` at a time: the suites share its target directory, and two builds
/// staging the same library at once race (one renames the file the other is moving).
static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn pytest(suite: &Suite) -> Result<(), Failed> {
    let env = environment(suite)?;
    let building = BUILD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // maturin builds in its own target directory: the outer cargo holds the workspace's.
    run(
        "building the extension (maturin develop)",
        Command::new(bin(&env, "maturin"))
            .args(["develop", "--quiet", "--manifest-path"])
            .arg(crate_dir().join("Cargo.toml"))
            .env("VIRTUAL_ENV", &env)
            .env("CARGO_TARGET_DIR", target_dir().join("python-build")),
    )?;
    drop(building);
    run(
        "pytest",
        Command::new(bin(&env, "python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(crate_dir().join(suite.tests))
            .env("TENSORKIT_TESTDATA", crate_dir().join("../../testdata")),
    )
}

fn main() {
    let args = Arguments::from_args();
    let trials = SUITES
        .iter()
        .map(|(name, suite)| Trial::test(*name, move || pytest(suite)))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
