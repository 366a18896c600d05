//! The codecs that run C and C++ libraries — blosc2 (C-Blosc2), zfp and SZ3 — on arbitrary
//! streams, modes and sizes: an error or exactly the values asked for, never a crash,
//! abort or hang. (SZ3 decodes in a child process: its crashes are errors.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_pipeline::{blosc2, sz3, zfp};

fuzz_target!(|input: &[u8]| {
    let [which, count, param, stream @ ..] = input else {
        return;
    };
    let n = usize::from(*count) * 4;
    let mut out = vec![0u8; n * 8];
    match which % 5 {
        0 => drop(blosc2::decompress_into(stream, &mut out)),
        1 => drop(zfp::decompress_into(
            stream,
            zfp::Mode::FixedRate(f64::from(*param) / 2.0),
            &mut out,
            false,
        )),
        2 => drop(zfp::decompress_into(
            stream,
            zfp::Mode::FixedPrecision(u32::from(*param)),
            &mut out,
            which & 0x80 != 0,
        )),
        3 => drop(zfp::decompress_into(
            stream,
            zfp::Mode::FixedAccuracy(f64::from(*param) * 1e-3),
            &mut out,
            false,
        )),
        _ => drop(sz3::decompress_into(stream, &mut out, which & 0x80 != 0)),
    }
});
