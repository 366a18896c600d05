//! Unit tests of the CBOR codec.

use super::*;
use crate::error::Result;

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

#[test]
fn rfc_examples_decode() {
    let cases: [(&[u8], Value); 12] = [
        (&[0x00], Value::Uint(0)),
        (&[0x18, 0x64], Value::Uint(100)),
        (&[0x3a, 0x7f, 0xff, 0xff, 0xff], Value::Nint(0x7fff_ffff)),
        (&[0xf9, 0x3c, 0x00], Value::Float(1.0)),
        (&[0xfa, 0x47, 0xc3, 0x50, 0x00], Value::Float(100_000.0)),
        (
            &[0xfb, 0x3f, 0xf1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a],
            Value::Float(1.1),
        ),
        (&[0x64, 0x49, 0x45, 0x54, 0x46], text("IETF")),
        (
            &[0x83, 0x01, 0x02, 0x03],
            Value::Array(vec![Value::Uint(1), Value::Uint(2), Value::Uint(3)]),
        ),
        (
            &[0xbf, 0x61, 0x61, 0x01, 0xff],
            Value::Map(vec![(text("a"), Value::Uint(1))]),
        ),
        (&[0x7f, 0x62, 0x73, 0x74, 0x61, 0x72, 0xff], text("str")),
        (
            &[0xc1, 0x1a, 0x51, 0x4b, 0x67, 0xb0],
            Value::Tag(1, Box::new(Value::Uint(1_363_896_240))),
        ),
        (&[0xf6], Value::Null),
    ];
    for (bytes, want) in cases {
        assert_eq!(from_slice(bytes).unwrap(), want, "{bytes:02x?}");
    }
    assert_eq!(
        from_slice(&[0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
            .unwrap()
            .as_i128(),
        Some(-(1i128 << 64))
    );
}

#[test]
fn hostile_lengths_fail_before_allocating() {
    // An array claiming 2^64-1 items, a string claiming 2^40 bytes, a map of a million
    // entries in a few bytes: all refused without reserving memory.
    for bytes in [
        &[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff][..],
        &[0x5b, 0, 0, 1, 0, 0, 0, 0, 0],
        &[0xba, 0x00, 0x0f, 0x42, 0x40, 0x01],
        &[0x61],
        &[0xff],
        &[0x1c],
        &[0x62, 0xff, 0xfe],
    ] {
        assert!(from_slice(bytes).is_err(), "{bytes:02x?}");
    }
    let deep = vec![0x81u8; MAX_DEPTH + 2];
    assert!(
        from_slice(&deep)
            .unwrap_err()
            .to_string()
            .contains("nesting")
    );
    assert!(from_slice(&[0x01, 0x02]).is_err());
}

#[test]
fn spans_and_canonical_flags() {
    let bytes = [0xa2, 0x61, 0x62, 0x18, 0x2a, 0x61, 0x61, 0x82, 0x01, 0x02];
    let mut d = Decoder::new(&bytes);
    assert_eq!(
        d.head().unwrap(),
        Head {
            major: 5,
            arg: Some(2),
            info: 2
        }
    );
    d.value().unwrap();
    let (v, span) = d.value_with_span().unwrap();
    assert_eq!(v, Value::Uint(42));
    assert_eq!(span, &[0x18, 0x2a]);
    assert!(d.was_canonical());
    let mut d = Decoder::new(&[0x18, 0x05]);
    d.value().unwrap();
    assert!(!d.was_canonical());
}

#[test]
fn canonical_encoding_sorts_keys_and_shortens_numbers() {
    let v = Value::Map(vec![
        (
            text("shape"),
            Value::Array(vec![Value::Uint(100), Value::Uint(200)]),
        ),
        (text("dtype"), text("float32")),
        (Value::Uint(10), Value::Float(1.5)),
        (text("a"), Value::Float(0.1)),
        (text("n"), Value::Nint(0)),
        (text("x"), Value::Float(f64::NAN)),
        (text("y"), Value::Float(100_000.0)),
    ]);
    let bytes = to_canonical(&v);
    let back = from_slice(&bytes).unwrap();
    let keys: Vec<String> = back
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| format!("{k:?}"))
        .collect();
    assert_eq!(keys[0], "Uint(10)");
    assert_eq!(keys[1], "Text(\"a\")");
    assert_eq!(back.get("a"), Some(&Value::Float(0.1)));
    assert!(
        bytes.windows(3).any(|w| w == [0xf9, 0x3e, 0x00]),
        "1.5 as half"
    );
    assert!(
        bytes.windows(3).any(|w| w == [0xf9, 0x7e, 0x00]),
        "NaN as half"
    );
    assert!(
        bytes
            .windows(5)
            .any(|w| w == [0xfa, 0x47, 0xc3, 0x50, 0x00]),
        "1e5 as single"
    );
    let mut d = Decoder::new(&bytes);
    d.value().unwrap();
    assert!(d.was_canonical());
    let mut e = Encoder::new();
    e.indefinite_map();
    e.text("k");
    e.int(-7);
    e.brk();
    assert_eq!(e.out, [0xbf, 0x61, 0x6b, 0x26, 0xff]);
}

#[test]
fn skip_checks_what_value_checks_without_building() {
    let v = Value::Map(vec![
        (
            text("a"),
            Value::Array(vec![Value::Uint(1), Value::Nint(2)]),
        ),
        (
            text("b"),
            Value::Tag(24, Box::new(Value::Bytes(vec![1, 2, 3]))),
        ),
        (text("c"), Value::Float(0.5)),
    ]);
    let bytes = to_canonical(&v);
    let mut d = Decoder::new(&bytes);
    d.skip().unwrap();
    assert_eq!(d.remaining(), 0);
    assert!(d.was_canonical() && d.keys_were_sorted());
    // Every truncation fails in skip exactly when it fails in value.
    for cut in 0..bytes.len() {
        let (mut a, mut b) = (Decoder::new(&bytes[..cut]), Decoder::new(&bytes[..cut]));
        assert_eq!(a.skip().is_ok(), b.value().is_ok(), "cut at {cut}");
    }
    // Text that is not UTF-8 (named at the string's head), text that is UTF-8 but not
    // ASCII, and nesting past the limit.
    let bad = Decoder::new(&[0x81, 0x62, 0xff, 0xfe]).skip().unwrap_err();
    assert!(
        bad.to_string()
            .contains("offset 1: text string is not UTF-8"),
        "{bad}"
    );
    let mut d = Decoder::new(&[0x62, 0xc3, 0xa9, 0x00]);
    d.skip().unwrap();
    assert_eq!(d.remaining(), 1);
    let deep = [vec![0x81; MAX_DEPTH + 2], vec![0x00]].concat();
    assert!(Decoder::new(&deep).skip().is_err());
    assert!(Decoder::new(&deep).value().is_err());
}

#[test]
fn key_order_is_checked_on_the_encoded_bytes_at_every_depth() {
    let sorted = |bytes: &[u8]| {
        let (mut a, mut b) = (Decoder::new(bytes), Decoder::new(bytes));
        a.skip().unwrap();
        b.value().unwrap();
        assert_eq!(a.keys_were_sorted(), b.keys_were_sorted());
        a.keys_were_sorted()
    };
    let map = |entries: Vec<(Value, Value)>| {
        let mut e = Encoder::new();
        e.value(&Value::Map(entries));
        e.out
    };
    // Shorter keys first (their heads are smaller), then bytewise.
    assert!(sorted(&map(vec![
        (text("b"), Value::Null),
        (text("aa"), Value::Null)
    ])));
    assert!(!sorted(&map(vec![
        (text("aa"), Value::Null),
        (text("b"), Value::Null)
    ])));
    // No key twice.
    assert!(!sorted(&map(vec![
        (text("a"), Value::Null),
        (text("a"), Value::Null)
    ])));
    // Integers before text; a nested map out of order counts too.
    assert!(sorted(&map(vec![
        (Value::Uint(7), Value::Null),
        (text("a"), Value::Null)
    ])));
    let inner = Value::Map(vec![(text("z"), Value::Null), (text("y"), Value::Null)]);
    assert!(!sorted(&map(vec![(text("a"), inner)])));
}

#[test]
fn entries_and_items_are_walked_in_place() {
    let bytes = to_canonical(&Value::Map(vec![
        (
            text("k"),
            Value::Array(vec![Value::Uint(1), Value::Uint(2)]),
        ),
        (text("t"), text("v")),
    ]));
    let mut d = Decoder::new(&bytes);
    assert_eq!(d.peek().unwrap().major, 5);
    let mut seen = Vec::new();
    let is_map = d
        .for_each_entry(|d| -> Result<()> {
            let key = d.text()?.into_owned();
            let mut items = Vec::new();
            if !d.for_each_item(|d| -> Result<()> {
                items.push(d.uint()?);
                Ok(())
            })? {
                items.push(u64::from(d.text()? == "v"));
            }
            seen.push((key, items));
            Ok(())
        })
        .unwrap();
    assert!(is_map);
    assert_eq!(d.remaining(), 0);
    assert_eq!(
        seen,
        [("k".to_owned(), vec![1, 2]), ("t".to_owned(), vec![1])]
    );
    // Not a map: nothing is read.
    let mut d = Decoder::at(&[0x00, 0x01], 1);
    assert!(!d.for_each_entry(Decoder::skip).unwrap());
    assert_eq!(d.position(), 1);
    assert_eq!(d.uint().unwrap(), 1);
}

#[test]
fn maps_nested_as_keys_cost_a_pass_per_level_not_a_doubling() {
    // {{{...{0: 0}...: 0}: 0}: 0}, as deep as allowed: measuring each key for its order
    // must not walk the keys inside it twice at every level (2^64 walks). A fuzzer found it.
    let bytes = [
        vec![0xa1; MAX_DEPTH / 2],
        vec![0x00, 0x00],
        vec![0x00; MAX_DEPTH / 2 - 1],
    ]
    .concat();
    let started = std::time::Instant::now();
    let mut d = Decoder::new(&bytes);
    d.skip().unwrap();
    assert_eq!(d.remaining(), 0);
    let v = from_slice(&bytes).unwrap();
    assert!(matches!(v, Value::Map(_)));
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
}

#[test]
fn fields_are_text_keys_read_once_with_order_noted() {
    // What `for_each_field` sees and notes, against a walk of whole entries.
    let walk = |bytes: &[u8]| {
        let mut d = Decoder::new(bytes);
        let mut keys = Vec::new();
        let r = d.for_each_field(|key, d| -> Result<()> {
            keys.push(String::from_utf8(key.to_vec()).unwrap());
            d.skip()
        });
        let mut whole = Decoder::new(bytes);
        let v = whole.value();
        (
            r.map(|m| {
                (
                    m,
                    keys,
                    d.position(),
                    d.was_canonical(),
                    d.keys_were_sorted(),
                )
            }),
            v.map(|_| {
                (
                    whole.position(),
                    whole.was_canonical(),
                    whole.keys_were_sorted(),
                )
            }),
        )
    };
    let map = |entries: Vec<(Value, Value)>| {
        let mut e = Encoder::new();
        e.value(&Value::Map(entries));
        e.out
    };
    let long = "k".repeat(30);
    for (entries, want) in [
        // Short ASCII keys, a long one, a non-ASCII one, and keys that are not text.
        (
            vec![
                (text("b"), Value::Uint(1)),
                (text("aa"), Value::Uint(300)),
                (text(&long), text("v")),
            ],
            vec!["b", "aa", long.as_str()],
        ),
        (
            vec![
                (Value::Uint(7), Value::Null),
                (text("é"), Value::Array(vec![Value::Uint(1)])),
                (Value::Bytes(vec![1]), Value::Null),
            ],
            vec!["é"],
        ),
        // Out of order, and a key twice: read, and noted as not sorted.
        (
            vec![(text("aa"), Value::Null), (text("b"), Value::Null)],
            vec!["aa", "b"],
        ),
        (
            vec![(text("a"), Value::Null), (text("a"), Value::Null)],
            vec!["a", "a"],
        ),
    ] {
        let bytes = map(entries);
        let (fields, whole) = walk(&bytes);
        let (is_map, keys, end, canonical, sorted) = fields.unwrap();
        assert!(is_map);
        assert_eq!(keys, want);
        assert_eq!((end, canonical, sorted), whole.unwrap(), "{bytes:02x?}");
    }
    // An indefinite map, and a key that is text but not UTF-8: an error where the key is,
    // not a key skipped as if it were a value.
    let (fields, whole) = walk(&[0xbf, 0x61, b'a', 0x01, 0xff]);
    let (_, keys, end, canonical, _) = fields.unwrap();
    assert_eq!((keys, end, canonical), (vec!["a".to_owned()], 5, false));
    assert_eq!(whole.unwrap().0, 5);
    let (fields, _) = walk(&[0xa2, 0x61, 0xff, 0x01, 0x61, b'a', 0x02]);
    assert!(fields.unwrap_err().to_string().contains("UTF-8"));
    // Not a map: nothing is read.
    let mut d = Decoder::at(&[0x00, 0x01], 1);
    assert!(!d.for_each_field(|_, d| d.skip()).unwrap());
    assert_eq!(d.position(), 1);
}

#[test]
fn a_literal_is_read_past_whole_or_not_at_all() {
    let bytes = [0xa1, 0x61, b'a', 0x01];
    let mut d = Decoder::new(&bytes);
    assert!(!d.literal(&[0xa1, 0x61, b'b']));
    assert!(!d.literal(&[0xa1, 0x61, b'a', 0x01, 0x00]));
    assert_eq!(d.position(), 0);
    assert!(d.literal(&[0xa1, 0x61, b'a']));
    assert_eq!((d.uint().unwrap(), d.remaining()), (1, 0));
    assert!(d.literal(&[]) && !d.literal(&[0x00]));
    assert!(d.was_deterministic());
}
