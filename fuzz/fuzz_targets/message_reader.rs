//! `MessageReader` over arbitrary bytes with the default limits: messages of declared and
//! of unknown length, read from a stream. Its buffer grows with the bytes that arrive, so a
//! short input that declares a huge message fails without allocating for it; every message
//! it returns opens as it would from a file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_frame::{Message, MessageReader};

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default();
    for m in MessageReader::new(std::io::Cursor::new(input), &limits).take(64) {
        let Ok(bytes) = m else { break };
        assert!(bytes.len() <= input.len(), "a message longer than the input");
        let _ = Message::open_with(&bytes, &limits.into()).map(|m| m.verify_hashes());
    }
});
