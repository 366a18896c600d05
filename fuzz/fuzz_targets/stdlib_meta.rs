//! stdlib-js ndarray meta data: the strict parser on arbitrary bytes, and whatever it accepts
//! serialises back to the same bytes (the format has one encoding per value) and builds a
//! bounds-checked strided view over a buffer of the declared size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::Limits;
use tensor_stdlib_meta::MetaDataRef;

fuzz_target!(|input: &[u8]| {
    // The default limits: meta data sizes nothing from its own counts beyond them.
    let limits = Limits::default();
    let Ok(meta) = MetaDataRef::open_with(input, &limits) else { return };
    let owned = meta.to_owned();
    let bytes = owned.serialize().expect("what parses serialises");
    let again = MetaDataRef::open(&bytes).expect("our bytes parse").to_owned();
    assert_eq!(again, owned);
});
