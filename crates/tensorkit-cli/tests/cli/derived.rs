//! Hostile files derived from every conformance fixture — bit flips, cuts, inflated fields,
//! repeated names — and decompression bombs built here, run through every command under a
//! 4 GiB address-space limit: each command ends with exit 0, 2 (or 3, `verify` with nothing
//! to verify), never a panic, an abort or a signal. Files that legitimately decode to far
//! more than they store are hashed and copied by `inspect --json` and `get -o` within a
//! 256 MiB address-space limit.

use crate::support::testdata;
use libtest_mimic::{Failed, Trial};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `tensorkit args` with the address space capped at `cap_mib` MiB (`ulimit -v`).
fn capped(cap_mib: u64, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", cap_mib * 1024))
        .arg(env!("CARGO_BIN_EXE_tensorkit"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// A tiny deterministic generator (xorshift), so that every run derives the same files.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// The hostile variants of one good file.
fn derive(bytes: &[u8], seed: u64) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(seed | 1);
    let mut out = Vec::new();
    let n = bytes.len();
    if n < 8 {
        return vec![("as_is".into(), bytes.to_vec())];
    }
    for k in 0..3 {
        let mut b = bytes.to_vec();
        let at = rng.below(n);
        b[at] ^= 1 << rng.below(8);
        out.push((format!("flip{k}@{at}"), b));
    }
    for cut in [
        n / 2,
        n.saturating_sub(1),
        n.saturating_sub(8),
        rng.below(n),
    ] {
        out.push((format!("cut@{cut}"), bytes[..cut].to_vec()));
    }
    // Inflated fields: eight bytes overwritten with a huge count or offset, little- and
    // big-endian, where a length, a count or an offset may sit.
    for k in 0..3 {
        let mut b = bytes.to_vec();
        let at = rng.below(n.saturating_sub(8));
        let v = if k % 2 == 0 { 1u64 << 40 } else { u64::MAX / 3 };
        let field = if k == 1 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        let end = (at + 8).min(n);
        b[at..end].copy_from_slice(&field[..end - at]);
        out.push((format!("inflate{k}@{at}"), b));
    }
    // The file twice: repeated names (and, for most formats, trailing garbage).
    out.push(("twice".into(), [bytes, bytes].concat()));
    out
}

/// Every command a user runs on a file, on `path`, under the 4 GiB cap.
fn every_command(path: &Path, scratch: &Path) -> Result<(), String> {
    let p = path.to_string_lossy();
    let npy = scratch.join("out.npy");
    let st = scratch.join("out.safetensors");
    let tgm = scratch.join("out.tgm");
    let runs: Vec<Vec<&str>> = vec![
        vec!["inspect", &p],
        vec!["inspect", "--json", &p],
        vec!["ls", &p],
        vec!["get", &p, "#0", "-o", npy.to_str().unwrap_or("out.npy")],
        vec!["verify", &p],
        vec!["validate", &p],
        vec![
            "convert",
            "--quiet",
            "--duplicates",
            "suffix",
            &p,
            st.to_str().unwrap_or("o"),
        ],
        vec![
            "convert",
            "--quiet",
            &p,
            tgm.to_str().unwrap_or("o"),
            "--pipeline",
            "zstd",
        ],
        vec!["diff", &p, &p],
    ];
    for args in runs {
        let out = capped(4096, &args);
        let ok = match out.status.code() {
            Some(0 | 2) => true,
            Some(3) => args[0] == "verify",
            Some(1) => args[0] == "diff",
            _ => false,
        };
        if !ok {
            return Err(format!(
                "{args:?}: exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(())
}

fn fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = tensor_testkit::FORMATS
        .iter()
        .map(|f| tensor_testkit::conformance(f))
        .chain([
            tensor_testkit::reference("pytorch"),
            tensor_testkit::reference("numpy"),
        ])
        .collect();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| {
                matches!(
                    x.to_str(),
                    Some(
                        "tgm" | "zt" | "bt" | "safetensors" | "pt" | "npy" | "npz" | "h5" | "keras"
                    )
                )
            }) && std::fs::metadata(&p).is_ok_and(|m| m.len() <= 64 << 10)
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn fixture_trial(file: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(file)?;
    let dir = tempfile::tempdir()?;
    let seed = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    for (name, derived) in derive(&bytes, seed) {
        let path = dir.path().join(format!("{name}.bin"));
        std::fs::write(&path, &derived)?;
        every_command(&path, dir.path()).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

/// Runs `tensorkit args` within 256 MiB of address space; it must succeed.
fn succeeds_within_256_mib(args: &[&str]) -> Result<(), Failed> {
    let out = capped(256, args);
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{args:?} within 256 MiB: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    )
    .into())
}

/// A Tensogram message of one float32 object whose zstd payload decodes to `bytes` zeros.
fn zstd_bomb(bytes: u64, shape: &[u64]) -> Result<Vec<u8>, Failed> {
    let mut enc = zstd::stream::read::Encoder::new(std::io::repeat(0).take(bytes), 3)?;
    let mut payload = Vec::new();
    enc.read_to_end(&mut payload)?;
    let mut d = tensorkit::frame::descriptor::DataObjectDescriptor::new(
        tensor_dtype::Dtype::Float32,
        shape,
        tensor_core::ByteOrder::Little,
    );
    tensorkit_cli::pipeline_spec::PipelineSpec::parse("zstd")?.apply(&mut d);
    let meta = tensorkit::frame::GlobalMetadata::default();
    Ok(tensorkit::frame::serialize_pre_encoded(
        &meta,
        &[d],
        &[&payload],
        &tensorkit::frame::EncodeOptions::default(),
    )?)
}

/// 1 GiB of zeros stored in about 33 KB: a legitimate file that decodes to 32 000 times its
/// size. `inspect --json` (a digest), `get -o` (a copy), `verify`, `validate`, `diff` and
/// `convert` to safetensors stream it within 256 MiB of address space; a shape rewritten to
/// claim 16 GiB over the same payload is refused up front by every command. A zTensor 0.1
/// file with a zstd tensor of 512 MiB of zeros streams the same way.
fn bombs() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let legit = dir.path().join("zeros.tgm");
    std::fs::write(&legit, zstd_bomb(1 << 30, &[1 << 28])?)?;
    let p = legit.to_string_lossy();
    let npy = dir.path().join("zeros.npy");
    let st = dir.path().join("zeros.safetensors");
    for args in [
        vec!["inspect", "--json", &p],
        vec!["get", &p, "#0", "-o", npy.to_str().unwrap_or("x.npy")],
        vec!["verify", &p],
        vec!["validate", &p],
        vec!["diff", &p, &p],
        vec![
            "convert",
            "--quiet",
            &p,
            st.to_str().unwrap_or("x.safetensors"),
        ],
    ] {
        succeeds_within_256_mib(&args)?;
    }
    if std::fs::metadata(&npy)?.len() != (1 << 30) + 128 {
        return Err("the .npy file is not the whole tensor".into());
    }
    std::fs::remove_file(&npy)?;
    std::fs::remove_file(&st)?;
    // The same through zTensor 0.1's zstd encoding: 512 MiB of zeros.
    let zt = dir.path().join("zeros.zt");
    let zeros = tensor_dtype::Tensor::new(
        vec![0u8; 512 << 20],
        tensor_dtype::Dtype::Float32,
        &[128 << 20],
        tensor_core::ByteOrder::Little,
    )?;
    let mut bytes = Vec::new();
    let mut w = tensorkit::ztensor::v0_1::Writer::new(&mut bytes)?;
    w.add(
        "zeros",
        &zeros.view(),
        &tensorkit::ztensor::v0_1::TensorOptions {
            encoding: tensorkit::ztensor::v0_1::WriteEncoding::Zstd(3),
            ..tensorkit::ztensor::v0_1::TensorOptions::default()
        },
    )?;
    w.finish()?;
    drop(zeros);
    std::fs::write(&zt, &bytes)?;
    let z = zt.to_string_lossy();
    for args in [
        vec!["inspect", "--json", &z],
        vec!["get", &z, "zeros", "-o", npy.to_str().unwrap_or("x.npy")],
        vec!["validate", &z],
        vec![
            "convert",
            "--quiet",
            &z,
            st.to_str().unwrap_or("x.safetensors"),
        ],
    ] {
        succeeds_within_256_mib(&args)?;
    }
    let claim = dir.path().join("claim.tgm");
    std::fs::write(&claim, zstd_bomb(1 << 20, &[1 << 32])?)?;
    every_command(&claim, dir.path())?;
    let out = capped(4096, &["inspect", "--json", &claim.to_string_lossy()]);
    if out.status.code() != Some(2)
        || !String::from_utf8_lossy(&out.stderr).contains("limit_exceeded")
    {
        return Err(format!(
            "a 16 GiB claim over 1 MiB of zeros: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = fixtures()
        .into_iter()
        .map(|f| {
            // Named FORMAT/FILE, as the fixture is under FORMAT/conformance.
            let rel = f
                .strip_prefix(testdata())
                .unwrap_or(&f)
                .to_string_lossy()
                .replacen("/conformance", "", 1);
            Trial::test(format!("derived::{rel}"), move || fixture_trial(&f))
        })
        .collect();
    trials.push(Trial::test("derived::bombs", bombs));
    trials
}
