//! GRIB editions 1 and 2, every packing (simple, CCSDS, complex with and without spatial
//! differencing, second order, JPEG 2000, PNG, IEEE), with the default limits: a file opens
//! or is an error; every field's values decode or are an error, and the bitmap reads. Never
//! a panic, an abort, a hang or memory beyond what the file's data can back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_grib::Grib;

fuzz_target!(|input: &[u8]| {
    let limits = Limits::default();
    let Ok(g) = Grib::open_with(input, &limits.into()) else {
        return;
    };
    for (i, f) in g.fields().iter().enumerate() {
        if let Ok(values) = g.values(i, &limits) {
            assert_eq!(values.len() as u64, f.points);
        }
        if let Some(present) = f.present(input) {
            assert_eq!(present.len() as u64, f.points);
        }
    }
});
