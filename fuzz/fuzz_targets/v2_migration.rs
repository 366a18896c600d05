//! Tensogram wire version 2 files migrated to version 3, with the default limits: an error,
//! or a file that every version 3 reader opens and that validates without errors, with
//! every object decoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_frame::{DecodeOptions, Level, TgmFile, ValidateOptions, v2};

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default().with_max_total_bytes(64 << 20);
    // An empty input migrates to an empty file, which is no Tensogram file to validate.
    let Ok(m) = v2::migrate(input, &limits) else {
        return;
    };
    if m.bytes.is_empty() {
        return;
    }
    let file = TgmFile::new(&m.bytes[..], &limits.into());
    assert_eq!(file.unclaimed_bytes(), 0);
    for i in 0..file.len() {
        let msg = file.message(i).expect("a migrated message opens");
        for o in 0..msg.len() {
            let _ = msg.decode_object(o, DecodeOptions::default());
        }
    }
    let report = tensor_frame::validate(
        &m.bytes,
        ValidateOptions {
            level: Level::Default,
            canonical: false,
        },
        &limits,
    );
    assert!(report.is_ok(), "a migrated file fails validation: {:?}", report.issues);
});
