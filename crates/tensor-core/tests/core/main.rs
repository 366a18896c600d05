//! Integration tests of tensor-core: every byte source agrees with every other on random
//! ranges, and checked ranges never admit a read past the end.

use proptest::prelude::*;
use std::io::Write;
use tensor_core::{ByteSource, FileSource, MmapSource, checked};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sources_agree_on_every_range(
        data in proptest::collection::vec(any::<u8>(), 0..512),
        ranges in proptest::collection::vec((0u64..600, 0u64..600), 1..16),
    ) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(&data).unwrap();
        tmp.flush().unwrap();
        let mapped = MmapSource::open(tmp.path()).unwrap();
        let file = FileSource::open(tmp.path()).unwrap();
        let sources: [&dyn ByteSource; 3] = [&data, &mapped, &file];
        for (offset, len) in ranges {
            let fits = offset + len <= data.len() as u64;
            for s in sources {
                match s.bytes_at(offset, len, "range") {
                    Ok(b) => {
                        prop_assert!(fits);
                        prop_assert_eq!(&*b, &data[offset as usize..(offset + len) as usize]);
                    }
                    Err(_) => prop_assert!(!fits),
                }
            }
        }
    }

    #[test]
    fn checked_range_matches_plain_arithmetic(offset: u64, len: u64, total: u64) {
        let ok = offset.checked_add(len).is_some_and(|end| end <= total);
        prop_assert_eq!(checked::range(offset, len, total, "x").is_ok(), ok);
    }
}

/// ciborium is the oracle for our bounded CBOR codec (docs/decisions/0003).
mod cbor_oracle {
    use proptest::prelude::*;
    use tensor_core::cbor::{self, Value};

    /// Any item ciborium's `Value` can hold, floats by their bits (NaN payloads included).
    fn item() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<u64>().prop_map(Value::Uint),
            any::<u64>().prop_map(Value::Nint),
            prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
            "[a-c\u{e9}]{0,4}".prop_map(Value::Text),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
            any::<u64>().prop_map(|b| Value::Float(f64::from_bits(b))),
            prop_oneof![
                Just(f64::NAN),
                Just(-f64::NAN),
                Just(1.5),
                Just(-0.0),
                Just(65504.0)
            ]
            .prop_map(Value::Float),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Value::Map),
                (0u64..100_000, inner).prop_map(|(t, v)| Value::Tag(t, Box::new(v))),
            ]
        })
    }

    fn ciborium_bytes(v: &ciborium::Value) -> Vec<u8> {
        let mut out = Vec::new();
        ciborium::into_writer(v, &mut out).unwrap();
        out
    }

    /// The deterministic form the reference writes: ciborium's shortest heads and floats,
    /// every map's entries sorted by their encoded key bytes.
    fn sorted(v: &ciborium::Value) -> ciborium::Value {
        use ciborium::Value as C;
        match v {
            C::Array(a) => C::Array(a.iter().map(sorted).collect()),
            C::Map(m) => {
                let mut m: Vec<(C, C)> = m.iter().map(|(k, v)| (sorted(k), sorted(v))).collect();
                m.sort_by_cached_key(|(k, _)| ciborium_bytes(k));
                C::Map(m)
            }
            C::Tag(t, inner) => C::Tag(*t, Box::new(sorted(inner))),
            other => other.clone(),
        }
    }

    /// Whether some map of `v` has two keys that encode alike (the deterministic form has
    /// no such map; re-encoding would not show it).
    fn repeats_a_key(v: &Value) -> bool {
        match v {
            Value::Array(a) => a.iter().any(repeats_a_key),
            Value::Map(m) => {
                let mut keys: Vec<Vec<u8>> = m.iter().map(|(k, _)| cbor::to_canonical(k)).collect();
                keys.sort();
                keys.windows(2).any(|w| w[0] == w[1])
                    || m.iter().any(|(k, v)| repeats_a_key(k) || repeats_a_key(v))
            }
            Value::Tag(_, inner) => repeats_a_key(inner),
            _ => false,
        }
    }

    /// `bytes` (one item in definite lengths) with every float written as a double.
    fn widen_floats(bytes: &[u8]) -> Vec<u8> {
        let mut d = cbor::Decoder::new(bytes);
        let mut out = Vec::new();
        widen(bytes, &mut d, &mut out);
        out
    }

    fn widen<'a>(bytes: &'a [u8], d: &mut cbor::Decoder<'a>, out: &mut Vec<u8>) {
        let start = d.position();
        let h = d.head().unwrap();
        match (h.major, h.info) {
            (7, 25..=27) => {
                let Value::Float(f) = cbor::Decoder::at(bytes, start).value().unwrap() else {
                    unreachable!()
                };
                out.push(0xFB);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            (4..=6, _) => {
                out.extend_from_slice(&bytes[start..d.position()]);
                let n = match h.major {
                    4 => h.arg.unwrap(),
                    5 => 2 * h.arg.unwrap(),
                    _ => 1,
                };
                for _ in 0..n {
                    widen(bytes, d, out);
                }
            }
            _ => {
                *d = cbor::Decoder::at(bytes, start);
                d.skip().unwrap();
                out.extend_from_slice(&bytes[start..d.position()]);
            }
        }
    }

    fn same_bits(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_bits(a, b))
            }
            (Value::Map(x), Value::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|(a, b)| same_bits(&a.0, &b.0) && same_bits(&a.1, &b.1))
            }
            (Value::Tag(tag_a, x), Value::Tag(tag_b, y)) => tag_a == tag_b && same_bits(x, y),
            _ => a == b,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// What ciborium writes, we decode to the same values, bit for bit.
        #[test]
        fn we_decode_what_ciborium_writes(v in item()) {
            let bytes = ciborium_bytes(&ciborium::Value::from(&v));
            let ours = cbor::from_slice(&bytes).unwrap();
            prop_assert!(same_bits(&ours, &v), "{ours:?} != {v:?}");
        }

        /// Our deterministic encoding is ciborium's bytes with keys sorted by their encoded
        /// bytes, NaN payloads kept; and it decodes back to the same bits.
        #[test]
        fn canonical_bytes_match_the_reference(v in item()) {
            let ours = cbor::to_canonical(&v);
            let theirs = ciborium_bytes(&sorted(&ciborium::Value::from(&v)));
            prop_assert_eq!(&ours, &theirs);
            let back: ciborium::Value = ciborium::from_reader(&ours[..]).unwrap();
            prop_assert!(same_bits(&Value::from(&back), &cbor::from_slice(&ours).unwrap()));
        }

        /// The decoder's notes on the encoding (shortest heads and floats, sorted keys) say
        /// whether the bytes are the deterministic encoding, without re-encoding: for the
        /// bytes of our encoder (keys in the order given) and of ciborium (its floats), and
        /// for the same with every float written eight bytes wide.
        #[test]
        fn the_decoders_notes_tell_deterministic_bytes(v in item()) {
            prop_assume!(!repeats_a_key(&v));
            let mut given = cbor::Encoder::new();
            given.value(&v);
            let wide = widen_floats(&given.out);
            for bytes in [given.out, ciborium_bytes(&ciborium::Value::from(&v)), wide] {
                let mut d = cbor::Decoder::new(&bytes);
                let back = d.value().unwrap();
                prop_assert_eq!(d.was_deterministic(), cbor::to_canonical(&back) == bytes, "{:02x?}", bytes);
            }
        }

        /// Every float survives our encoder and decoder with its bits; zTensor's form writes
        /// any NaN as f9 7e00.
        #[test]
        fn floats_keep_their_bits(bits: u64) {
            let f = f64::from_bits(bits);
            let bytes = cbor::to_canonical(&Value::Float(f));
            let Value::Float(back) = cbor::from_slice(&bytes).unwrap() else { panic!() };
            prop_assert_eq!(back.to_bits(), bits);
            let plain = cbor::to_canonical_plain_nan(&Value::Float(f));
            if f.is_nan() {
                prop_assert_eq!(plain, vec![0xf9, 0x7e, 0x00]);
            } else {
                prop_assert_eq!(plain, bytes);
            }
        }
    }
}
