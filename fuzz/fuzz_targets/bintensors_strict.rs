//! BinTensors in strict mode (what a conforming writer produces, nothing more) and lenient
//! mode on the same bytes: strict never accepts what lenient refuses, and both agree on the
//! tensors of a file both read in the same layout. (The two layouts carry no marker: some
//! bytes are a valid file in both. Lenient mode reads the release layout first, as the
//! reference does; strict mode reads the layout whose reading is canonical, so the two may
//! read such bytes as different layouts.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_bintensors::{BinTensors, ReadOptions};
use tensor_core::Limits;

fuzz_target!(|input: &[u8]| {
    // The default limits (the reference's 100 MB header cap and decode budget).
    let limits = Limits::default();
    let lenient = BinTensors::open_with(input, &ReadOptions::default().limits(limits));
    let strict = BinTensors::open_with(input, &ReadOptions::default().limits(limits).strict(true));
    match (&lenient, &strict) {
        (Err(_), Ok(_)) => panic!("strict mode accepted what lenient mode refused"),
        (Ok(l), Ok(s)) if l.layout() == s.layout() => {
            let names = |f: &BinTensors<'_>| f.tensors().map(|t| t.name.to_owned()).collect::<Vec<_>>();
            assert_eq!(names(l), names(s));
            for t in s.tensors() {
                std::hint::black_box(t.view.to_le_bytes());
            }
        }
        _ => {}
    }
});
