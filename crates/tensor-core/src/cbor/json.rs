//! Converting between CBOR values and JSON (feature `json`): metadata shown by tools, and
//! metadata given as JSON written to CBOR-based formats.

use super::Value as Cbor;
use serde_json::Value as Json;

/// CBOR as JSON: byte strings as `{"bytes_hex": ...}`, non-text map keys as their JSON text,
/// non-finite floats as `"NaN"`, `"Infinity"`, `"-Infinity"`, tags dropped.
#[must_use]
pub fn to_json(v: &Cbor) -> Json {
    match v {
        Cbor::Uint(n) => Json::from(*n),
        Cbor::Nint(n) => {
            i64::try_from(*n).map_or_else(|_| Json::from(-1.0 - *n as f64), |n| Json::from(-1 - n))
        }
        Cbor::Bytes(b) => serde_json::json!({"bytes_hex": crate::hex::encode(b)}),
        Cbor::Text(s) => Json::from(s.as_str()),
        Cbor::Array(a) => Json::Array(a.iter().map(to_json).collect()),
        Cbor::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| {
                    (
                        k.as_text()
                            .map_or_else(|| to_json(k).to_string(), str::to_owned),
                        to_json(v),
                    )
                })
                .collect(),
        ),
        Cbor::Tag(_, inner) => to_json(inner),
        Cbor::Bool(b) => Json::from(*b),
        Cbor::Null | Cbor::Undefined | Cbor::Simple(_) => Json::Null,
        Cbor::Float(f) => float_json(*f),
    }
}

/// A float as JSON: non-finite values as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
#[must_use]
pub fn float_json(v: f64) -> Json {
    if v.is_nan() {
        Json::from("NaN")
    } else if v.is_infinite() {
        Json::from(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Json::from(v)
    }
}

/// JSON as CBOR: integers stay integers, other numbers become floats.
#[must_use]
pub fn to_cbor(v: &Json) -> Cbor {
    match v {
        Json::Null => Cbor::Null,
        Json::Bool(b) => Cbor::Bool(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Cbor::Uint(u),
            (None, Some(i)) => Cbor::Nint((-1 - i) as u64),
            _ => Cbor::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Cbor::Text(s.clone()),
        Json::Array(a) => Cbor::Array(a.iter().map(to_cbor).collect()),
        Json::Object(o) => Cbor::Map(
            o.iter()
                .map(|(k, v)| (Cbor::Text(k.clone()), to_cbor(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_survive_a_round_trip() {
        let j = serde_json::json!({"n": 3, "neg": -7, "x": 0.5, "s": "t", "a": [1, null, true], "m": {"k": "v"}});
        assert_eq!(to_json(&to_cbor(&j)), j);
        assert_eq!(
            to_json(&Cbor::Bytes(vec![1, 255])),
            serde_json::json!({"bytes_hex": "01ff"})
        );
    }
}
