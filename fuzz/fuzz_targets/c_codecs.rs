//! The codecs that run C and C++ libraries — blosc2 (C-Blosc2), zfp and SZ3 — on damaged
//! and arbitrary streams, modes and sizes: an error or exactly the values asked for, never a
//! crash, abort or hang. (SZ3 decodes in a child process: its crashes are errors.)
//!
//! Half the inputs are raw streams; the other half are values the codec compresses first,
//! whose stream then has up to three bytes changed where the input says, so that the
//! decoders are reached past their headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_pipeline::{blosc2, sz3, zfp};

fn mode(which: u8, param: u8) -> zfp::Mode {
    match which % 3 {
        0 => zfp::Mode::FixedRate(f64::from(param % 64 + 1)),
        1 => zfp::Mode::FixedPrecision(u32::from(param % 64 + 1)),
        _ => zfp::Mode::FixedAccuracy(f64::from(param) * 1e-3),
    }
}

fuzz_target!(|input: &[u8]| {
    let [which, count, param, flips @ .., rest] = input else {
        return;
    };
    let _ = rest;
    let [which, count, param] = [*which, *count, *param];
    let n = usize::from(count) * 4;
    let mut out = vec![0u8; n * 8];
    if which & 0x40 == 0 {
        let stream = &input[3..];
        match which % 3 {
            0 => drop(blosc2::decompress_into(stream, &mut out)),
            1 => drop(zfp::decompress_into(stream, mode(param, param), &mut out, false)),
            _ => drop(sz3::decompress_into(stream, &mut out, which & 0x80 != 0)),
        }
        return;
    }
    // Values from the input's bytes (finite ones only, as the writers take them).
    let values: Vec<u8> = (0..n)
        .flat_map(|i| {
            let b = flips.get(i % flips.len().max(1)).copied().unwrap_or(0);
            (f64::from(b) * 0.37 + i as f64 * 0.01).to_ne_bytes()
        })
        .collect();
    let compressed = match which % 3 {
        0 => blosc2::compress(&values, blosc2::Codec::Lz4, param % 10, 8),
        1 => zfp::compress(&values, mode(param, param)),
        _ => sz3::compress(&values, sz3::Bound::Absolute(1e-3)),
    };
    let Ok(mut stream) = compressed else {
        return;
    };
    if stream.is_empty() {
        return;
    }
    for pair in flips.chunks_exact(3).take(3) {
        let at = (usize::from(pair[0]) | usize::from(pair[1]) << 8) % stream.len();
        stream[at] ^= pair[2];
    }
    let decoded = match which % 3 {
        0 => blosc2::decompress_into(&stream, &mut out),
        1 => zfp::decompress_into(&stream, mode(param, param), &mut out, false),
        _ => sz3::decompress_into(&stream, &mut out, false),
    };
    let _ = decoded;
});
