//! GGUF, versions 2 and 3 in either byte order, with the default limits: a file opens or is
//! an error; every tensor's view builds, its dequantized values fill exactly its elements or
//! are an error; the header a remote reader would fetch needs nothing more; the file
//! written again reads back and writes the same bytes. Never a panic, an abort, a hang or
//! memory beyond what the file's bytes can back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::{Limits, ReadOptions};
use tensor_dtype::Format;
use tensor_gguf::{Gguf, GgufFormat, Writer};

/// The file as our writer writes what it holds.
fn rewrite(file: &Gguf<'_>) -> Option<Vec<u8>> {
    let mut w = Writer::new();
    for (k, v) in file.metadata() {
        w.metadata(k.clone(), v.clone());
    }
    for (i, t) in file.tensors().iter().enumerate() {
        match file.view(i).expect("a checked tensor's view builds") {
            Some(v) => {
                w.dense(t.name, &t.shape, v.dtype(), v.to_le_bytes().into_owned())
                    .ok()?;
            }
            None => {
                w.quantized(t.name, &t.shape, t.ggml_type, file.stored(i));
            }
        }
    }
    w.to_vec().ok()
}

fuzz_target!(|input: &[u8]| {
    let options = ReadOptions::default().limits(Limits::default());
    let whole = tensor_core::held::Whole(input);
    let Ok(file) = Gguf::open_with(input, &options) else {
        let _ = GgufFormat::header_ranges(&whole, &options.limits);
        return;
    };
    assert!(GgufFormat::header_ranges(&whole, &options.limits).is_ok_and(|r| r.is_empty()));
    for (i, t) in file.tensors().iter().enumerate() {
        // Bounded: a stored tensor's elements are backed by its bytes (at most 256 elements
        // per byte of a block).
        if t.elements() <= 1 << 20 {
            let mut values = vec![0f32; t.elements() as usize];
            let _ = file.dequantize_into(i, &mut values);
        }
    }
    if let Some(bytes) = rewrite(&file) {
        let back = Gguf::open(&bytes).expect("what we write reads back");
        assert_eq!(back.tensors().len(), file.tensors().len());
        assert_eq!(rewrite(&back).as_deref(), Some(&bytes[..]), "written twice, the same bytes");
    }
});
