//! Any file, as the `tensorkit` command sees it: format detection from content, then the
//! format's reader (safetensors, BinTensors in both layouts, zTensor of every generation,
//! Tensogram, GRIB editions 1 and 2), then every tensor decoded whole and streamed. With the default limits, so
//! that bombs within them show: under the fuzzer's 2 GiB allocation cap (ASan returns null
//! past it) a large claim must end in an error, never an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tensor_core::Limits;
use tensorkit::formats;

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default();
    let path = Path::new("input");
    if formats::detect(path, input).is_err() {
        return;
    }
    if let Ok(set) = formats::read(path, input, &limits) {
        for t in &set.tensors {
            let mut streamed = 0u64;
            let _ = t.stream(&limits, &mut |c| {
                streamed += c.len() as u64;
                Ok(())
            });
            if let Ok(loaded) = t.load(&limits) {
                std::hint::black_box(loaded.view().to_le_bytes());
            }
        }
    }
});
