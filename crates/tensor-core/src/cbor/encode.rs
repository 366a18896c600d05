//! The encoder: [`Encoder`] writes exactly what it is told, and [`to_canonical`] the
//! deterministic encoding of a [`Value`].

use super::value::{Value, float_width};
use half::f16;

/// Appends CBOR to a byte vector.
#[derive(Debug, Default)]
pub struct Encoder {
    /// The bytes written so far.
    pub out: Vec<u8>,
    /// Write every NaN as `f9 7e00` (zTensor 2 manifests require it) instead of keeping its
    /// sign and payload.
    pub plain_nan: bool,
}

impl Encoder {
    /// An empty encoder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A head with the shortest argument form.
    pub fn head(&mut self, major: u8, arg: u64) {
        let m = major << 5;
        if arg < 24 {
            self.out.push(m | arg as u8);
        } else if arg <= 0xFF {
            self.out.extend_from_slice(&[m | 0x18, arg as u8]);
        } else if arg <= 0xFFFF {
            self.out.push(m | 0x19);
            self.out.extend_from_slice(&(arg as u16).to_be_bytes());
        } else if arg <= 0xFFFF_FFFF {
            self.out.push(m | 0x1a);
            self.out.extend_from_slice(&(arg as u32).to_be_bytes());
        } else {
            self.out.push(m | 0x1b);
            self.out.extend_from_slice(&arg.to_be_bytes());
        }
    }

    /// An unsigned integer.
    pub fn uint(&mut self, v: u64) {
        self.head(0, v);
    }

    /// A signed integer.
    pub fn int(&mut self, v: i64) {
        if v >= 0 {
            self.head(0, v as u64);
        } else {
            self.head(1, (-1 - v) as u64);
        }
    }

    /// A text string.
    pub fn text(&mut self, s: &str) {
        self.head(3, s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// A byte string.
    pub fn bytes(&mut self, b: &[u8]) {
        self.head(2, b.len() as u64);
        self.out.extend_from_slice(b);
    }

    /// The head of a definite array of `n` items.
    pub fn array(&mut self, n: usize) {
        self.head(4, n as u64);
    }

    /// The head of a definite map of `n` entries.
    pub fn map(&mut self, n: usize) {
        self.head(5, n as u64);
    }

    /// The head of an indefinite-length map; end it with [`brk`](Self::brk).
    pub fn indefinite_map(&mut self) {
        self.out.push(0xBF);
    }

    /// The "break" stop code.
    pub fn brk(&mut self) {
        self.out.push(0xFF);
    }

    /// Bytes that already hold encoded CBOR, copied as they are.
    pub fn raw(&mut self, encoded: &[u8]) {
        self.out.extend_from_slice(encoded);
    }

    /// A float in the shortest of half, single or double precision that widens back to the
    /// same bits — NaN payloads and signs included, as ciborium (and so Tensogram) writes
    /// them — or every NaN as `f9 7e00` with [`plain_nan`](Self::plain_nan).
    pub fn float(&mut self, v: f64) {
        if v.is_nan() && self.plain_nan {
            self.out.extend_from_slice(&[0xF9, 0x7E, 0x00]);
            return;
        }
        match float_width(v) {
            25 => {
                self.out.push(0xF9);
                self.out
                    .extend_from_slice(&f16::from_f64(v).to_bits().to_be_bytes());
            }
            26 => {
                self.out.push(0xFA);
                self.out
                    .extend_from_slice(&(v as f32).to_bits().to_be_bytes());
            }
            _ => {
                self.out.push(0xFB);
                self.out.extend_from_slice(&v.to_bits().to_be_bytes());
            }
        }
    }

    /// A value with definite lengths, map entries in the order given.
    pub fn value(&mut self, v: &Value) {
        self.value_with(v, false);
    }

    /// The deterministic encoding of `v` (RFC 8949 §4.2.1): definite lengths, shortest
    /// heads and floats, map keys sorted by their encoded bytes.
    pub fn canonical(&mut self, v: &Value) {
        self.value_with(v, true);
    }

    fn value_with(&mut self, v: &Value, sort: bool) {
        match v {
            Value::Uint(n) => self.head(0, *n),
            Value::Nint(n) => self.head(1, *n),
            Value::Bytes(b) => self.bytes(b),
            Value::Text(s) => self.text(s),
            Value::Array(a) => {
                self.array(a.len());
                for x in a {
                    self.value_with(x, sort);
                }
            }
            Value::Map(m) => {
                self.map(m.len());
                if sort {
                    let mut entries: Vec<(Vec<u8>, &Value)> = m
                        .iter()
                        .map(|(k, v)| {
                            let mut e = Encoder::new();
                            e.canonical(k);
                            (e.out, v)
                        })
                        .collect();
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                    for (k, v) in entries {
                        self.raw(&k);
                        self.value_with(v, sort);
                    }
                } else {
                    for (k, v) in m {
                        self.value_with(k, sort);
                        self.value_with(v, sort);
                    }
                }
            }
            Value::Tag(t, inner) => {
                self.head(6, *t);
                self.value_with(inner, sort);
            }
            Value::Bool(b) => self.out.push(if *b { 0xF5 } else { 0xF4 }),
            Value::Null => self.out.push(0xF6),
            Value::Undefined => self.out.push(0xF7),
            Value::Simple(s) => {
                if *s < 24 {
                    self.out.push(0xE0 | s);
                } else {
                    self.out.extend_from_slice(&[0xF8, *s]);
                }
            }
            Value::Float(f) => self.float(*f),
        }
    }
}

/// The deterministic encoding of `v` (floats keep their NaN payloads).
#[must_use]
pub fn to_canonical(v: &Value) -> Vec<u8> {
    let mut e = Encoder::new();
    e.canonical(v);
    e.out
}

/// The deterministic encoding of `v` with every NaN as `f9 7e00`, as zTensor 2 manifests
/// require.
#[must_use]
pub fn to_canonical_plain_nan(v: &Value) -> Vec<u8> {
    let mut e = Encoder {
        plain_nan: true,
        ..Encoder::default()
    };
    e.canonical(v);
    e.out
}
