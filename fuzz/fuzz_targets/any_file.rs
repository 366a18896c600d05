//! Any file, as the `tensorkit` command sees it: format detection from content, then the
//! format's reader (safetensors, BinTensors in both layouts, zTensor of every generation,
//! stdlib meta data), then every tensor's bytes. Under tight limits, so an allocation past
//! them is a failure.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tensor_core::Limits;
use tensorkit_cli::formats;

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default()
        .with_max_total_bytes(64 << 20)
        .with_max_header_bytes(1 << 20);
    let path = Path::new("input");
    if formats::detect(path, input).is_err() {
        return;
    }
    if let Ok(set) = formats::read(path, input, &limits) {
        for t in &set.tensors {
            let view = t.view();
            std::hint::black_box(view.to_le_bytes());
        }
    }
});
