//! Any file, through the front door (`tensorkit::open_bytes_with`): format detection from
//! content, then the format's reader (safetensors, BinTensors in both layouts, zTensor of every generation,
//! Tensogram, GRIB editions 1 and 2), then every tensor verified, decoded whole and decoded in runs into a buffer. With the default limits, so
//! that bombs within them show: under the fuzzer's 2 GiB allocation cap (ASan returns null
//! past it) a large claim must end in an error, never an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensorkit::ReadOptions;

fuzz_target!(|input: &[u8]| {
    let options = ReadOptions::default().limits(Limits::default());
    let Ok(file) = tensorkit::open_bytes_with(input, &options) else { return };
    for t in file.tensors() {
        let _ = t.verify();
        if let Ok(decoded) = t.to_tensor() {
            std::hint::black_box(decoded.view().to_le_bytes());
        }
        // Decoded in runs into a caller's buffer (one this harness can afford).
        if t.byte_len() <= 64 << 20 {
            let mut out = vec![0u8; t.byte_len() as usize];
            let _ = t.read_into(&mut out);
        }
    }
});
