//! Interoperability with libaec through its `aec` command (Debian's `libaec-tools`): for
//! many widths, block sizes, RSIs, flags and data shapes, our encoder writes exactly libaec's
//! bytes, and each side decodes the other's stream. Skipped, saying so, when `aec` is not
//! installed, except under CI (`.ci/run` installs it).

use libtest_mimic::{Failed, Trial};
use std::process::Command;
use tensor_pipeline::szip::{
    self, MSB, PAD_RSI, PREPROCESS, Params, RESTRICTED, SIGNED, THREE_BYTE,
};

fn aec_available() -> bool {
    Command::new("aec").arg("-h").output().is_ok()
}

fn run_aec(args: &[String], input: &[u8]) -> Result<Vec<u8>, Failed> {
    let dir = tempfile::tempdir()?;
    let (src, dst) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&src, input)?;
    let out = Command::new("aec")
        .args(args)
        .arg(&src)
        .arg(&dst)
        .output()?;
    if !out.status.success() {
        return Err(format!("aec {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(std::fs::read(&dst)?)
}

fn aec_args(p: &Params, decode: bool) -> Vec<String> {
    let mut a = vec![
        "-n".into(),
        p.bits_per_sample.to_string(),
        "-j".into(),
        p.block_size.to_string(),
        "-r".into(),
        p.rsi.to_string(),
    ];
    if p.flags & PREPROCESS == 0 {
        a.push("-N".into());
    }
    if p.flags & MSB != 0 {
        a.push("-m".into());
    }
    if p.flags & SIGNED != 0 {
        a.push("-s".into());
    }
    if p.flags & THREE_BYTE != 0 {
        a.push("-3".into());
    }
    if p.flags & PAD_RSI != 0 {
        a.push("-p".into());
    }
    if p.flags & RESTRICTED != 0 {
        a.push("-t".into());
    }
    if decode {
        a.push("-d".into());
    }
    a
}

/// Samples of `n` bits in containers, shaped like real data: smooth, noisy, runs of zeros.
fn samples(p: &Params, count: usize, seed: u64) -> Vec<u8> {
    let n = p.bits_per_sample;
    let max = if n == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << n) - 1
    };
    let mut state = seed | 1;
    let bytes = p.sample_bytes();
    let mut out = Vec::with_capacity(count * bytes);
    for i in 0..count {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let smooth = ((i as f64 * 0.01).sin() * 0.4 + 0.5) * max as f64;
        let v = match (i / 200) % 4 {
            0 => smooth as u64,
            1 => (smooth as u64).wrapping_add(state % 16) & max,
            2 => 0,
            _ => state & max,
        };
        let be = v.to_be_bytes();
        let le = v.to_le_bytes();
        if p.flags & MSB != 0 {
            out.extend_from_slice(&be[8 - bytes..]);
        } else {
            out.extend_from_slice(&le[..bytes]);
        }
    }
    out
}

/// The low `bits_per_sample` bits of every container: libaec reads signed samples as raw
/// n-bit values but writes them back sign-extended, so decoded containers are compared on
/// those bits.
fn low_bits(p: &Params, data: &[u8]) -> Vec<u64> {
    let b = p.sample_bytes();
    let mask = if p.bits_per_sample == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << p.bits_per_sample) - 1
    };
    data.chunks_exact(b)
        .map(|c| {
            let mut v = 0u64;
            let big_endian_first: Vec<u8> = if p.flags & MSB != 0 {
                c.to_vec()
            } else {
                c.iter().rev().copied().collect()
            };
            for x in big_endian_first {
                v = (v << 8) | u64::from(x);
            }
            v & mask
        })
        .collect()
}

fn check_case(p: Params, count: usize) -> Result<(), Failed> {
    let data = samples(
        &p,
        count,
        u64::from(p.bits_per_sample) * 7919 + count as u64,
    );
    let ours = szip::encode(&p, &data)?.0;
    let theirs = run_aec(&aec_args(&p, false), &data)?;
    if ours != theirs {
        let at = ours
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        return Err(format!("{p:?}, {count} samples: our stream differs from libaec's at byte {at} ({} vs {} bytes)", ours.len(), theirs.len()).into());
    }
    let mut back = vec![0u8; data.len()];
    szip::decode_into(&p, &theirs, &mut back)?;
    if low_bits(&p, &back) != low_bits(&p, &data) {
        return Err(format!("{p:?}: decoding libaec's stream changed the data").into());
    }
    let decoded = run_aec(&aec_args(&p, true), &ours)?;
    if decoded.len() < data.len() || low_bits(&p, &decoded[..data.len()]) != low_bits(&p, &data) {
        return Err(format!("{p:?}: libaec decodes our stream to other data").into());
    }
    Ok(())
}

fn interop() -> Result<(), Failed> {
    if !aec_available() {
        if std::env::var_os("CI").is_some() {
            return Err("the `aec` command is missing; .ci/run installs libaec-tools".into());
        }
        eprintln!(
            "libaec interop skipped: the `aec` command (Debian package libaec-tools) is not installed"
        );
        return Ok(());
    }
    let mut cases = Vec::new();
    for n in [1u32, 3, 4, 7, 8, 9, 12, 16, 17, 20, 24, 25, 31, 32] {
        for (j, rsi) in [(8u32, 64u32), (16, 32), (32, 128), (64, 4)] {
            for flags in [PREPROCESS, 0, PREPROCESS | MSB, PREPROCESS | SIGNED] {
                let three = if (17..=24).contains(&n) && j == 16 {
                    THREE_BYTE
                } else {
                    0
                };
                cases.push(Params {
                    bits_per_sample: n,
                    block_size: j,
                    rsi,
                    flags: flags | three,
                });
            }
        }
    }
    for (i, p) in cases.into_iter().enumerate() {
        check_case(p, 1000 + (i * 37) % 3001)?;
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![Trial::test("szip::libaec_interop", interop)]
}
