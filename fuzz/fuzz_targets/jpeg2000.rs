//! The JPEG 2000 decoder on its own (ours, and hayro-jpeg2000 for what ours does not follow):
//! any codestream and sample count gives an error or exactly that many samples.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let [a, b, c, codestream @ ..] = input else {
        return;
    };
    let samples = usize::from(*a) | (usize::from(*b) << 8) | (usize::from(*c & 0x0f) << 16);
    if let Ok(x) = tensor_grib::decode_jpeg2000(codestream, samples) {
        assert_eq!(x.len(), samples);
    }
});
