//! Our bounded CBOR decoder against ciborium, the oracle: whatever we decode, ciborium
//! decodes to the same values (floats by their bits), and our deterministic encoding of it
//! is ciborium's bytes with map keys sorted by their encoded bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tensor_core::cbor::{self, Value};

/// Whether ciborium's `Value` holds `v` as we do: it has no undefined or other simple values,
/// and it folds bignums (tags 2 and 3) into integers where they fit.
fn representable(v: &Value) -> bool {
    match v {
        Value::Undefined | Value::Simple(_) | Value::Tag(2 | 3, _) => false,
        Value::Array(a) => a.iter().all(representable),
        Value::Map(m) => m.iter().all(|(k, v)| representable(k) && representable(v)),
        Value::Tag(_, inner) => representable(inner),
        _ => true,
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
                && x.iter().zip(y).all(|(a, b)| same_bits(&a.0, &b.0) && same_bits(&a.1, &b.1))
        }
        (Value::Tag(s, x), Value::Tag(t, y)) => s == t && same_bits(x, y),
        _ => a == b,
    }
}

fn sorted(v: &ciborium::Value) -> ciborium::Value {
    use ciborium::Value as C;
    match v {
        C::Array(a) => C::Array(a.iter().map(sorted).collect()),
        C::Map(m) => {
            let mut m: Vec<(C, C)> = m.iter().map(|(k, v)| (sorted(k), sorted(v))).collect();
            m.sort_by_cached_key(|(k, _)| {
                let mut b = Vec::new();
                ciborium::into_writer(k, &mut b).expect("encodes");
                b
            });
            C::Map(m)
        }
        C::Tag(t, inner) => C::Tag(*t, Box::new(sorted(inner))),
        other => other.clone(),
    }
}

fuzz_target!(|input: &[u8]| {
    let Ok(ours) = cbor::from_slice(input) else {
        return;
    };
    if !representable(&ours) {
        return;
    }
    let theirs: ciborium::Value = ciborium::from_reader(input).expect("ciborium decodes what we decode");
    assert!(same_bits(&Value::from(&theirs), &ours), "{ours:?} != {theirs:?}");
    let mut expected = Vec::new();
    ciborium::into_writer(&sorted(&theirs), &mut expected).expect("encodes");
    assert_eq!(cbor::to_canonical(&ours), expected);
});
