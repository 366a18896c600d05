//! szip: arbitrary streams under arbitrary parameters decode (and scan for their reference
//! sample intervals) to an error or to samples, never a panic; arbitrary samples round-trip,
//! range decoding agrees with decoding everything, and the scan finds the encoder's offsets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_pipeline::szip::{self, Params};

fuzz_target!(|input: &[u8]| {
    let [a, b, c, d, e, rest @ ..] = input else {
        return;
    };
    let p = Params {
        bits_per_sample: u32::from(a % 33),
        block_size: [8, 16, 32, 64][usize::from(b % 4)],
        rsi: u32::from(*c) + 1,
        flags: u32::from(*d) & !szip::RESTRICTED,
    };
    if p.check().is_err() {
        return;
    }
    let sb = p.sample_bytes();
    let count = usize::from(*e) * 7;
    // The rest as a stream to decode.
    let mut out = vec![0u8; count * sb];
    let _ = szip::decode_into(&p, rest, &mut out);
    let _ = szip::rsi_offsets(&p, rest, count);
    // The rest as samples to round-trip.
    let data = &rest[..rest.len() / sb * sb];
    let (stream, offsets) = szip::encode(&p, data).expect("whole samples encode");
    let mut back = vec![0u8; data.len()];
    szip::decode_into(&p, &stream, &mut back).expect("our own stream decodes");
    let mut again = vec![0u8; data.len()];
    szip::decode_into(&p, &stream, &mut again).expect("decoding is repeatable");
    assert_eq!(back, again);
    let samples = data.len() / sb;
    if samples > 0 {
        let scanned = szip::rsi_offsets(&p, &stream, samples).expect("our own stream scans");
        assert_eq!(scanned, offsets);
    }
    if data.len() >= 2 * sb {
        let first = data.len() / sb / 2;
        let mut part = vec![0u8; (data.len() / sb - first) * sb];
        szip::decode_range(&p, &stream, &offsets, first as u64, &mut part)
            .expect("a range of our own stream decodes");
        assert_eq!(part, back[first * sb..]);
    }
});
