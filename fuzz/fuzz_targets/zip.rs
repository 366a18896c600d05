//! The zip reader (tensor-zip) on any bytes: the directory read, every entry read and
//! verified within the default limits (deflated entries inflated: under the fuzzer's 2 GiB
//! allocation cap a large claim must be an error, never an abort).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default();
    let Ok(archive) = tensor_zip::Archive::open(input, &limits) else { return };
    for e in archive.entries() {
        let _ = archive.verify(e, &limits);
        if let Ok(bytes) = archive.read(e, &limits) {
            std::hint::black_box(bytes.len());
        }
    }
});
