//! The JPEG 2000 decoder on its own (ours, and hayro-jpeg2000 for what ours does not follow,
//! once the codestream's header is cleared): any codestream gives an error or exactly the
//! samples asked for. The count asked for is what the codestream's SIZ says (so that the
//! decoders are reached), bounded to 4 Mi samples, or that count plus one for inputs whose
//! length is a multiple of 7 (a count the image cannot fill).
#![no_main]

use libfuzzer_sys::fuzz_target;

fn be32(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 4)
        .map_or(0, |x| u64::from(u32::from_be_bytes([x[0], x[1], x[2], x[3]])))
}

fuzz_target!(|input: &[u8]| {
    // SOC, then SIZ: Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz.
    let (x1, y1, x0, y0) = (be32(input, 8), be32(input, 12), be32(input, 16), be32(input, 20));
    let mut samples = x1.saturating_sub(x0).saturating_mul(y1.saturating_sub(y0));
    if samples > 1 << 22 {
        return;
    }
    if input.len().is_multiple_of(7) {
        samples += 1;
    }
    let samples = samples as usize;
    if let Ok(x) = tensor_grib::decode_jpeg2000(input, samples) {
        assert_eq!(x.len(), samples);
    }
});
