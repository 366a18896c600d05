//! Metadata values to and from JSON (feature `json`): gguf-py's type names (`UINT32`,
//! `ARRAY[STRING]`), the JSON form of each value, and the type gguf-py gives a plain value.
//! What a tool that shows GGUF metadata as JSON, and takes edits of it, needs.

use crate::value::{Array, Value, ValueType};
use serde_json::{Number, Value as Json};

/// A value as JSON: numbers, strings, booleans, arrays (non-finite floats as the strings
/// `NaN`, `Infinity`, `-Infinity`).
#[must_use]
pub fn to_json(v: &Value<'_>) -> Json {
    let float =
        |f: f64| Number::from_f64(f).map_or_else(|| Json::from(non_finite(f)), Json::Number);
    match v {
        Value::U8(x) => Json::from(*x),
        Value::I8(x) => Json::from(*x),
        Value::U16(x) => Json::from(*x),
        Value::I16(x) => Json::from(*x),
        Value::U32(x) => Json::from(*x),
        Value::I32(x) => Json::from(*x),
        Value::U64(x) => Json::from(*x),
        Value::I64(x) => Json::from(*x),
        Value::F32(x) => float(f64::from(*x)),
        Value::F64(x) => float(*x),
        Value::Bool(x) => Json::from(*x),
        Value::String(s) => Json::from(s.as_ref()),
        Value::Array(a) => Json::Array(a.items.iter().map(to_json).collect()),
    }
}

fn non_finite(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// `UINT32`, `STRING`, `ARRAY[FLOAT32]`, `ARRAY[ARRAY[INT32]]`: a value's type, in
/// gguf-py's names, its arrays' item types spelled out.
#[must_use]
pub fn type_label(v: &Value<'_>) -> String {
    match v {
        Value::Array(a) => match a.items.first() {
            Some(first) if a.item_type == ValueType::Array => {
                format!("ARRAY[{}]", type_label(first))
            }
            _ => format!("ARRAY[{}]", a.item_type.name()),
        },
        other => other.value_type().name().to_owned(),
    }
}

/// Whether `label` names a GGUF type as [`type_label`] writes them — `UINT32`,
/// `ARRAY[STRING]`, `ARRAY[ARRAY[INT8]]`.
#[must_use]
pub fn is_type_label(label: &str) -> bool {
    match label
        .strip_prefix("ARRAY[")
        .and_then(|l| l.strip_suffix(']'))
    {
        Some(item) => is_type_label(item),
        None => ValueType::from_name(label).is_some(),
    }
}

/// A JSON value as a GGUF value: of type `label` (as [`type_label`] writes it) when given and
/// the value fits it, else of the type gguf-py gives a Python value like it (`INT32` for
/// integers, `INT64` or `UINT64` beyond it, `FLOAT32` for floats, `FLOAT64` where float32
/// would round, `BOOL`, `STRING`, arrays typed by their first item). `None` for what GGUF
/// cannot hold: null, objects, empty or mixed arrays.
#[must_use]
pub fn from_json(v: &Json, label: Option<&str>) -> Option<Value<'static>> {
    label.and_then(|l| typed(v, l)).or_else(|| inferred(v))
}

/// Text given for a key of type `label` (`tensorkit edit --set KEY=VALUE`), as JSON that is
/// a value of that type when the text spells one — `"8192"` for a `UINT32`, `"[1, 2]"` for
/// an `ARRAY[INT32]` — as gguf-py's `gguf_set_metadata` reads its argument; `None` for a
/// `STRING` (the text is the value) and for text that spells no value of the type.
#[must_use]
pub fn text_as_type(text: &str, label: &str) -> Option<Json> {
    if label == "STRING" {
        return None;
    }
    let v: Json = serde_json::from_str(text).ok()?;
    typed(&v, label).map(|_| v)
}

/// `v` as a value of type `label` (as [`type_label`] writes it), if it fits.
fn typed(v: &Json, label: &str) -> Option<Value<'static>> {
    if let Some(item) = label
        .strip_prefix("ARRAY[")
        .and_then(|l| l.strip_suffix(']'))
    {
        let items = v.as_array()?;
        let item_type = match item.split('[').next()? {
            "ARRAY" => ValueType::Array,
            name => ValueType::from_name(name)?,
        };
        return Some(Value::Array(Array {
            item_type,
            items: items
                .iter()
                .map(|x| typed(x, item))
                .collect::<Option<_>>()?,
        }));
    }
    let float = |v: &Json| -> Option<f64> {
        match v {
            Json::String(s) => match s.as_str() {
                "NaN" => Some(f64::NAN),
                "Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            other => other.as_f64(),
        }
    };
    Some(match ValueType::from_name(label)? {
        ValueType::U8 => Value::U8(v.as_u64()?.try_into().ok()?),
        ValueType::I8 => Value::I8(v.as_i64()?.try_into().ok()?),
        ValueType::U16 => Value::U16(v.as_u64()?.try_into().ok()?),
        ValueType::I16 => Value::I16(v.as_i64()?.try_into().ok()?),
        ValueType::U32 => Value::U32(v.as_u64()?.try_into().ok()?),
        ValueType::I32 => Value::I32(v.as_i64()?.try_into().ok()?),
        ValueType::U64 => Value::U64(v.as_u64()?),
        ValueType::I64 => Value::I64(v.as_i64()?),
        ValueType::F32 => {
            let f = float(v)?;
            #[allow(clippy::cast_possible_truncation)] // Checked to be exact just below.
            let narrow = f as f32;
            (f64::from(narrow) == f || f.is_nan()).then_some(Value::F32(narrow))?
        }
        ValueType::F64 => Value::F64(float(v)?),
        ValueType::Bool => Value::Bool(v.as_bool()?),
        ValueType::String => Value::String(v.as_str()?.to_owned().into()),
        ValueType::Array => return None,
    })
}

/// The type gguf-py gives a Python value like `v` (see [`from_json`]).
fn inferred(v: &Json) -> Option<Value<'static>> {
    Some(match v {
        Json::Bool(b) => Value::Bool(*b),
        Json::String(s) => Value::String(s.clone().into()),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                match i32::try_from(i) {
                    Ok(small) => Value::I32(small),
                    Err(_) => Value::I64(i),
                }
            } else if let Some(u) = n.as_u64() {
                Value::U64(u)
            } else {
                let f = n.as_f64()?;
                #[allow(clippy::cast_possible_truncation)] // Kept only when exact.
                let narrow = f as f32;
                if f64::from(narrow) == f {
                    Value::F32(narrow)
                } else {
                    Value::F64(f)
                }
            }
        }
        Json::Array(items) => {
            let first = inferred(items.first()?)?;
            let label = type_label(&first);
            let items = items
                .iter()
                .map(|x| typed(x, &label))
                .collect::<Option<Vec<_>>>()?;
            Value::Array(Array {
                item_type: first.value_type(),
                items,
            })
        }
        Json::Null | Json::Object(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_keep_their_type_through_json() {
        let values = [
            Value::U32(8192),
            Value::I64(-5),
            Value::F32(0.5),
            Value::F64(f64::NAN),
            Value::Bool(true),
            Value::String("llama".into()),
            Value::Array(Array {
                item_type: ValueType::Array,
                items: vec![Value::Array(Array {
                    item_type: ValueType::I8,
                    items: vec![Value::I8(1), Value::I8(-1)],
                })],
            }),
        ];
        for v in values {
            let label = type_label(&v);
            assert!(is_type_label(&label), "{label}");
            let back = from_json(&to_json(&v), Some(&label)).unwrap();
            assert_eq!(type_label(&back), label);
            assert_eq!(to_json(&back), to_json(&v));
        }
        assert_eq!(type_label(&from_json(&json!(3), None).unwrap()), "INT32");
        assert_eq!(
            type_label(&from_json(&json!(1u64 << 40), None).unwrap()),
            "INT64"
        );
        assert_eq!(
            type_label(&from_json(&json!(0.1), None).unwrap()),
            "FLOAT64"
        );
        assert_eq!(
            type_label(&from_json(&json!(["a"]), None).unwrap()),
            "ARRAY[STRING]"
        );
        assert!(
            from_json(&json!(null), None).is_none() && from_json(&json!([1, "a"]), None).is_none()
        );
        // A value that does not fit its label gets gguf-py's type instead.
        assert_eq!(
            type_label(&from_json(&json!(-1), Some("UINT32")).unwrap()),
            "INT32"
        );
        assert_eq!(text_as_type("8192", "UINT32"), Some(json!(8192)));
        assert_eq!(text_as_type("[1, 2]", "ARRAY[INT32]"), Some(json!([1, 2])));
        assert_eq!(
            (text_as_type("x", "UINT32"), text_as_type("1", "STRING")),
            (None, None)
        );
        assert!(!is_type_label("ARRAY[NOPE]") && !is_type_label("uint32"));
    }

    #[test]
    fn recorded_types_come_back_and_others_are_chosen_as_gguf_py_chooses() {
        assert_eq!(
            from_json(&json!(32), Some("UINT32")).unwrap(),
            Value::U32(32)
        );
        assert_eq!(from_json(&json!(32), None).unwrap(), Value::I32(32));
        assert_eq!(
            from_json(&json!(5_000_000_000u64), None).unwrap(),
            Value::I64(5_000_000_000)
        );
        assert_eq!(from_json(&json!(0.5), None).unwrap(), Value::F32(0.5));
        assert_eq!(from_json(&json!(0.1), None).unwrap(), Value::F64(0.1));
        // A recorded type the value no longer fits gives way to the chosen one.
        assert_eq!(
            from_json(&json!(-1), Some("UINT8")).unwrap(),
            Value::I32(-1)
        );
        let nested = from_json(&json!([[1, 2], [3]]), Some("ARRAY[ARRAY[UINT8]]")).unwrap();
        assert_eq!(type_label(&nested), "ARRAY[ARRAY[UINT8]]");
        assert_eq!(
            from_json(&json!(["a", "b"]), None)
                .map(|v| type_label(&v))
                .unwrap(),
            "ARRAY[STRING]"
        );
        assert!(from_json(&json!({"a": 1}), None).is_none());
        assert!(from_json(&json!([1, "a"]), None).is_none());
    }
}
