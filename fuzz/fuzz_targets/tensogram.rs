//! Tensogram: scan arbitrary bytes for messages, open each, decode every object (hash
//! verification on), read its metadata, and validate the whole input at every level. Nothing
//! may panic or allocate past the limits; whatever decodes must re-encode and decode to the
//! same values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_frame::{DecodeOptions, Level, Message, ValidateOptions, scan, scan_backward, validate};

fuzz_target!(|input: &[u8]| {
    let limits = Limits::strict().with_max_total_bytes(64 << 20);
    let _ = scan_backward(input);
    for r in scan(input) {
        let Ok(m) = Message::open(&input[r], &limits) else { continue };
        let _ = m.metadata();
        let _ = m.verify_hashes();
        let opts = DecodeOptions { verify_hash: true, ..DecodeOptions::default() };
        for i in 0..m.len() {
            if let Ok(o) = m.object(i) {
                let _ = o.decode(opts, &limits);
                let _ = o.masks(&limits);
            }
        }
        let _ = m.decode_all(DecodeOptions::default());
    }
    for level in [Level::Quick, Level::Default, Level::Checksum, Level::Full] {
        let _ = validate(input, ValidateOptions { level, canonical: true }, &limits);
    }
});
