//! A decoded CBOR item, and the deepest nesting the decoder follows.

use half::f16;

/// The deepest nesting the decoder follows.
pub const MAX_DEPTH: usize = 64;

/// A decoded CBOR item.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An unsigned integer (major type 0).
    Uint(u64),
    /// A negative integer `-1 - n` (major type 1), holding `n`.
    Nint(u64),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A text string.
    Text(String),
    /// An array.
    Array(Vec<Value>),
    /// A map, entries in encoded order.
    Map(Vec<(Value, Value)>),
    /// A tagged item.
    Tag(u64, Box<Value>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// `undefined`.
    Undefined,
    /// Another simple value.
    Simple(u8),
    /// A float of any width, widened.
    Float(f64),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Uint(n)
    }
}

impl From<i64> for Value {
    /// Non-negative values become [`Value::Uint`], negative ones [`Value::Nint`].
    fn from(n: i64) -> Self {
        if n < 0 {
            Value::Nint(n.unsigned_abs() - 1)
        } else {
            Value::Uint(n.unsigned_abs())
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl Value {
    /// The text, if this is a text string.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The value, if this is an unsigned integer.
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Uint(n) => Some(*n),
            _ => None,
        }
    }

    /// The value as `i128`, if this is an integer of either sign.
    #[must_use]
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Value::Uint(n) => Some(i128::from(*n)),
            Value::Nint(n) => Some(-1 - i128::from(*n)),
            _ => None,
        }
    }

    /// The entries, if this is a map.
    #[must_use]
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is an array.
    #[must_use]
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The value stored under text key `key`, if this is a map that has one.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_text() == Some(key))
            .map(|(_, v)| v)
    }
}

/// The additional information of the narrowest float that holds `v` bit for bit: 25 (half),
/// 26 (single) or 27 (double).
pub(super) fn float_width(v: f64) -> u8 {
    let bits = v.to_bits();
    if f64::from(f16::from_f64(v)).to_bits() == bits {
        25
    } else if f64::from(v as f32).to_bits() == bits {
        26
    } else {
        27
    }
}

impl From<&Value> for ciborium::Value {
    /// The same item as a `ciborium::Value` (simple values other than booleans, null and
    /// undefined, which ciborium's `Value` cannot hold, become null).
    fn from(v: &Value) -> Self {
        use ciborium::Value as C;
        match v {
            Value::Uint(n) => C::Integer((*n).into()),
            Value::Nint(n) => C::Integer((-1 - i128::from(*n)).try_into().unwrap_or(0u8.into())),
            Value::Bytes(b) => C::Bytes(b.clone()),
            Value::Text(t) => C::Text(t.clone()),
            Value::Array(a) => C::Array(a.iter().map(Into::into).collect()),
            Value::Map(m) => C::Map(m.iter().map(|(k, v)| (k.into(), v.into())).collect()),
            Value::Tag(t, inner) => C::Tag(*t, Box::new(inner.as_ref().into())),
            Value::Bool(b) => C::Bool(*b),
            Value::Null | Value::Undefined | Value::Simple(_) => C::Null,
            Value::Float(f) => C::Float(*f),
        }
    }
}

impl From<&ciborium::Value> for Value {
    /// The same item as one of ours (entries in the given order).
    fn from(v: &ciborium::Value) -> Self {
        use ciborium::Value as C;
        match v {
            C::Integer(i) => {
                let n = i128::from(*i);
                match u64::try_from(n) {
                    Ok(u) => Value::Uint(u),
                    Err(_) => Value::Nint(u64::try_from(-1 - n).unwrap_or(u64::MAX)),
                }
            }
            C::Bytes(b) => Value::Bytes(b.clone()),
            C::Text(t) => Value::Text(t.clone()),
            C::Array(a) => Value::Array(a.iter().map(Into::into).collect()),
            C::Map(m) => Value::Map(m.iter().map(|(k, v)| (k.into(), v.into())).collect()),
            C::Tag(t, inner) => Value::Tag(*t, Box::new(inner.as_ref().into())),
            C::Bool(b) => Value::Bool(*b),
            C::Float(f) => Value::Float(*f),
            _ => Value::Null,
        }
    }
}
