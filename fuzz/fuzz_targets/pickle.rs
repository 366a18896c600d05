//! The restricted pickle machine (tensor-pytorch) on any bytes, as the pickle of a
//! checkpoint: in an archive of its own (its storages whatever the persistent ids name, each
//! of the bytes that follow the pickle in the input) and as the legacy layout. Nothing may
//! panic, hang or allocate past the input's size; a list holding itself must drop.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::ReadOptions;

fuzz_target!(|input: &[u8]| {
    // The legacy layout reads the input as it is.
    if let Ok(c) = tensor_pytorch::Checkpoint::open(input, &ReadOptions::default()) {
        for t in &c.tensors {
            if let Ok(v) = c.view_of(t) {
                std::hint::black_box(v.to_le_bytes());
            }
        }
    }
    // The same bytes as data.pkl of a zip, with storages "0" to "3" of 64 bytes each.
    let mut w = tensor_zip::Writer::new(std::io::Cursor::new(Vec::new())).unwrap();
    w.stored("archive/data.pkl", input.len() as u64, |o| o.write_all(input)).unwrap();
    for key in 0..4 {
        let data: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(key + 1)).collect();
        w.stored(&format!("archive/data/{key}"), 64, |o| o.write_all(&data)).unwrap();
    }
    let zip = w.finish().unwrap().into_inner();
    if let Ok(c) = tensor_pytorch::Checkpoint::open(&zip, &ReadOptions::default()) {
        for t in &c.tensors {
            if let Ok(v) = c.view_of(t) {
                std::hint::black_box(v.to_le_bytes());
            }
        }
    }
});
