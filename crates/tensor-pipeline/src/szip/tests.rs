//! Unit tests of the szip coder.

use super::*;

fn p(n: u32, j: u32, rsi: u32, flags: u32) -> Params {
    Params {
        bits_per_sample: n,
        block_size: j,
        rsi,
        flags,
    }
}

#[test]
fn round_trips_with_and_without_preprocessing() {
    let values: Vec<u16> = (0..5000u32)
        .map(|i| (i * 7 + (i / 13) * 3) as u16 & 0x3FFF)
        .collect();
    for flags in [0, PREPROCESS, PREPROCESS | MSB, PREPROCESS | PAD_RSI] {
        let params = p(14, 16, 32, flags);
        let data: Vec<u8> = values
            .iter()
            .flat_map(|v| {
                if flags & MSB != 0 {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                }
            })
            .collect();
        let (enc, offsets) = encode(&params, &data).unwrap();
        let mut out = vec![0u8; data.len()];
        decode_into(&params, &enc, &mut out).unwrap();
        assert!(out == data, "flags {flags}: decoded data differs");
        let mut part = vec![0u8; 200];
        decode_range(&params, &enc, &offsets, 700, &mut part).unwrap();
        assert!(part == data[1400..1600], "flags {flags}: range differs");
    }
}

#[test]
fn zero_runs_and_constant_data() {
    let data = vec![0u8; 8 * 64 * 3 + 40];
    let params = p(8, 8, 100, PREPROCESS);
    let (enc, _) = encode(&params, &data).unwrap();
    assert!(enc.len() < 20, "{} bytes", enc.len());
    let mut out = vec![1u8; data.len()];
    decode_into(&params, &enc, &mut out).unwrap();
    assert_eq!(out, data);
}

#[test]
fn bad_parameters_and_streams_are_errors() {
    assert!(p(0, 16, 32, 0).check().is_err());
    assert!(p(33, 16, 32, 0).check().is_err());
    assert!(p(8, 12, 32, 0).check().is_err());
    assert!(p(8, 12, 32, NOT_ENFORCE).check().is_ok());
    assert!(p(8, 0, 32, NOT_ENFORCE).check().is_err());
    assert!(p(8, 0, 32, 0).check().is_err());
    assert!(p(8, 16, 0, 0).check().is_err());
    // Wider samples ignore the restricted flag, as tensogram does.
    let data: Vec<u8> = (0..200u8).map(|i| i % 3).collect();
    let restricted = encode(&p(8, 16, 32, RESTRICTED | PREPROCESS), &data).unwrap();
    assert_eq!(
        restricted,
        encode(&p(8, 16, 32, PREPROCESS), &data).unwrap()
    );
    let params = p(16, 16, 32, PREPROCESS);
    let data: Vec<u8> = (0..1000u16).flat_map(u16::to_le_bytes).collect();
    let (enc, _) = encode(&params, &data).unwrap();
    let mut out = vec![0u8; data.len()];
    assert!(decode_into(&params, &enc[..enc.len() / 2], &mut out).is_err());
    assert!(encode(&params, &data[..3]).is_err());
}

proptest::proptest! {
    #[test]
    fn any_samples_round_trip_and_range_decode(
        n in 1u32..=32,
        j in proptest::sample::select(vec![8u32, 16, 32, 64]),
        rsi in 1u32..8,
        flag_bits in 0u32..64,
        raw in proptest::collection::vec(proptest::num::u32::ANY, 1..700),
        smooth in proptest::bool::ANY,
    ) {
        let flags = flag_bits & (PREPROCESS | MSB | SIGNED | THREE_BYTE | PAD_RSI);
        let params = p(n, j, rsi, flags);
        let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        let sb = params.sample_bytes();
        let values: Vec<u32> = if smooth {
            raw.iter().scan(0u32, |acc, &v| { *acc = acc.wrapping_add(v % 5); Some(*acc & mask) }).collect()
        } else {
            raw.iter().map(|v| v & mask).collect()
        };
        let mut data = vec![0u8; values.len() * sb];
        for (c, &v) in data.chunks_exact_mut(sb).zip(&values) {
            let be = v.to_be_bytes();
            let le = v.to_le_bytes();
            c.copy_from_slice(if flags & MSB != 0 { &be[4 - sb..] } else { &le[..sb] });
        }
        let (enc, offsets) = encode(&params, &data).unwrap();
        let mut out = vec![0u8; data.len()];
        decode_into(&params, &enc, &mut out).unwrap();
        let low = |b: &[u8]| -> Vec<u32> {
            let mut v = vec![0u32; b.len() / sb];
            params.read_samples(b, &mut v);
            v
        };
        proptest::prop_assert_eq!(low(&out), values.clone());
        let first = values.len() / 3;
        let count = (values.len() - first).min(97);
        let mut part = vec![0u8; count * sb];
        decode_range(&params, &enc, &offsets, first as u64, &mut part).unwrap();
        proptest::prop_assert_eq!(low(&part), values[first..first + count].to_vec());
        // The scan finds the encoder's offsets, and each interval decodes from its own.
        let scanned = rsi_offsets(&params, &enc, values.len()).unwrap();
        proptest::prop_assert_eq!(&scanned, &offsets);
        let rsi_len = (j * rsi) as usize;
        let mut pieces = vec![0u32; values.len()];
        for (r, &bit) in scanned.iter().enumerate() {
            let start = r * rsi_len;
            let count = rsi_len.min(values.len() - start);
            decode_each_at(&params, &enc, bit, count, |at, run| {
                pieces[start + at..start + at + run.len()].copy_from_slice(run);
            }).unwrap();
        }
        proptest::prop_assert_eq!(pieces, values);
    }

    #[test]
    fn garbage_streams_never_panic(
        stream in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
        n in 1u32..=32,
        len in 0usize..2000,
    ) {
        let params = p(n, 16, 4, PREPROCESS);
        let mut out = vec![0u8; len * params.sample_bytes()];
        let _ = decode_into(&params, &stream, &mut out);
        let _ = rsi_offsets(&params, &stream, len);
    }
}
