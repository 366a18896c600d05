//! Meta data as JSON (feature `json`): the keys of the conformance fixtures' sidecars.
//!
//! [`to_json`] writes every field, names and enum values both. [`from_json`] builds meta
//! data from a specification with `dtype` (a stdlib name, or `dtype_enum`) and `shape`
//! required, and optional `strides_bytes` / `strides_elements` / `strides` (stdlib's own,
//! in elements), `offset_bytes` / `offset_elements` / `offset`, `order`, `mode`,
//! `submodes`, `flags` (a number, or stdlib's `{"READONLY": true}`), `readonly` and
//! `endianness` (1 or `"little"`, 0 or `"big"`). What is left out is computed as stdlib's
//! serializer computes it from an ndarray.

use crate::{Error, IndexMode, MetaData, Order, Result, StdlibDtype};
use serde_json::{Map, Value, json};
use tensor_core::ByteOrder;

/// The fields of `meta` as JSON.
#[must_use]
pub fn to_json(meta: &MetaData) -> Value {
    json!({
        "dtype": meta.dtype.name(),
        "dtype_enum": meta.dtype.to_enum(),
        "bytes_per_element": meta.dtype.bytes_per_element(),
        "ndims": meta.shape.len(),
        "shape": meta.shape,
        "strides_bytes": meta.strides,
        "offset_bytes": meta.offset,
        "order": meta.order.name(),
        "order_enum": meta.order.to_enum(),
        "mode": meta.mode.name(),
        "mode_enum": meta.mode.to_enum(),
        "nsubmodes": meta.submodes.len(),
        "submodes": meta.submodes.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "submodes_enum": meta.submodes.iter().map(|m| m.to_enum()).collect::<Vec<_>>(),
        "readonly": meta.is_readonly(),
        "flags": meta.flags,
        "endianness": u8::from(meta.byte_order == ByteOrder::Little),
        "byte_length": meta.byte_length(),
    })
}

fn spec_error(message: impl Into<String>) -> Error {
    Error::InvalidSpec(message.into())
}

fn int_list(spec: &Map<String, Value>, key: &str) -> Result<Option<Vec<i64>>> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| spec_error(format!("{key}: {v} is not a 64-bit integer")))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        Some(other) => Err(spec_error(format!(
            "{key} must be a list of integers, not {other}"
        ))),
    }
}

fn name_field<T>(
    spec: &Map<String, Value>,
    key: &str,
    parse: fn(&str) -> Option<T>,
    default: T,
) -> Result<T> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => {
            parse(s).ok_or_else(|| spec_error(format!("{key}: unknown name {s:?}")))
        }
        Some(other) => Err(spec_error(format!("{key} must be a name, not {other}"))),
    }
}

/// Builds meta data from a JSON specification (see the [module](self) for its keys), as stdlib's serializer would from an ndarray:
/// byte strides and offset are taken as given, or computed from `strides_elements` /
/// `offset_elements` (or contiguous strides for `order`) times the bytes per element — which
/// gives 0 for types with no byte size, exactly as stdlib does.
pub fn from_json(spec: &Value) -> Result<MetaData> {
    let spec = spec
        .as_object()
        .ok_or_else(|| spec_error("the specification must be a JSON object"))?;
    let dtype = match (spec.get("dtype"), spec.get("dtype_enum")) {
        (Some(Value::String(name)), _) => StdlibDtype::from_name(name)
            .ok_or_else(|| spec_error(format!("dtype: unknown stdlib data type {name:?}")))?,
        (None, Some(v)) => v
            .as_i64()
            .and_then(|e| i16::try_from(e).ok())
            .and_then(StdlibDtype::from_enum)
            .ok_or_else(|| spec_error(format!("dtype_enum: {v} is not an assigned data type")))?,
        _ => {
            return Err(spec_error(
                "dtype (a stdlib name such as \"float64\") is required",
            ));
        }
    };
    let shape_i = int_list(spec, "shape")?.ok_or_else(|| spec_error("shape is required"))?;
    let shape = shape_i
        .iter()
        .map(|&d| u64::try_from(d).map_err(|_| spec_error(format!("shape: {d} is negative"))))
        .collect::<Result<Vec<_>>>()?;
    let order = name_field(spec, "order", Order::from_name, Order::RowMajor)?;
    let bpe = dtype.bytes_per_element().map_or(0, |b| b as i64);
    let overflow = || spec_error("strides or offset overflow 64 bits");
    // stdlib's own `strides` and `offset` count elements, as `strides_elements` does.
    let element_strides = match int_list(spec, "strides_elements")? {
        Some(e) => Some(e),
        None => int_list(spec, "strides")?,
    };
    // stdlib gives a 0-d array the strides [0]; the meta data stores none.
    let element_strides = element_strides.map(|e| {
        if shape.is_empty() && e == [0] {
            Vec::new()
        } else {
            e
        }
    });
    let strides = match (int_list(spec, "strides_bytes")?, element_strides) {
        (Some(s), _) => s,
        (None, Some(e)) => e
            .iter()
            .map(|&s| s.checked_mul(bpe).ok_or_else(overflow))
            .collect::<Result<_>>()?,
        (None, None) => {
            let layout = if order == Order::ColumnMajor {
                tensor_dtype::Order::Fortran
            } else {
                tensor_dtype::Order::C
            };
            tensor_dtype::shape::strides(&shape, layout)?
                .into_iter()
                .map(|s| {
                    i64::try_from(s)
                        .ok()
                        .and_then(|s| s.checked_mul(bpe))
                        .ok_or_else(overflow)
                })
                .collect::<Result<_>>()?
        }
    };
    if strides.len() != shape.len() {
        return Err(spec_error(format!(
            "{} strides for {} dimensions",
            strides.len(),
            shape.len()
        )));
    }
    let offset = match (
        spec.get("offset_bytes"),
        spec.get("offset_elements").or_else(|| spec.get("offset")),
    ) {
        (Some(v), _) => v.as_u64().ok_or_else(|| {
            spec_error(format!("offset_bytes: {v} is not a non-negative integer"))
        })?,
        (None, Some(v)) => v
            .as_u64()
            .and_then(|o| o.checked_mul(bpe as u64))
            .ok_or_else(|| {
                spec_error(format!(
                    "offset_elements: {v} is not a usable non-negative integer"
                ))
            })?,
        (None, None) => 0,
    };
    let mode = name_field(spec, "mode", IndexMode::from_name, IndexMode::Throw)?;
    let submodes = match spec.get("submodes").or_else(|| spec.get("submode")) {
        None | Some(Value::Null) => vec![mode],
        Some(Value::Array(a)) => a
            .iter()
            .map(|m| {
                m.as_str()
                    .and_then(IndexMode::from_name)
                    .ok_or_else(|| spec_error(format!("submodes: {m} is not an index mode name")))
            })
            .collect::<Result<_>>()?,
        Some(other) => Err(spec_error(format!(
            "submodes must be a list of names, not {other}"
        )))?,
    };
    let flags = match (spec.get("flags"), spec.get("readonly")) {
        // stdlib's `flags` object: only READONLY is serialized.
        (Some(Value::Object(f)), _) => match f.get("READONLY") {
            Some(Value::Bool(true)) => crate::READONLY,
            None | Some(Value::Bool(false)) => 0,
            Some(other) => {
                return Err(spec_error(format!(
                    "flags.READONLY must be a bool, not {other}"
                )));
            }
        },
        (Some(v), _) => v
            .as_i64()
            .and_then(|f| i32::try_from(f).ok())
            .ok_or_else(|| spec_error(format!("flags: {v} is not a 32-bit integer")))?,
        (None, Some(Value::Bool(true))) => crate::READONLY,
        _ => 0,
    };
    let byte_order = match spec.get("endianness") {
        None | Some(Value::Null) => ByteOrder::NATIVE,
        Some(v) if v == 1 || v == "little" => ByteOrder::Little,
        Some(v) if v == 0 || v == "big" => ByteOrder::Big,
        Some(v) => {
            return Err(spec_error(format!(
                "endianness: {v} (use 1 or \"little\", 0 or \"big\")"
            )));
        }
    };
    Ok(MetaData {
        byte_order,
        dtype,
        shape,
        strides,
        offset,
        order,
        mode,
        submodes,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_stdlib() {
        let m = from_json(&json!({"dtype": "float64", "shape": [2, 3]})).unwrap();
        assert_eq!(m.strides, vec![24, 8]);
        assert_eq!(m.submodes, vec![IndexMode::Throw]);
        assert_eq!(m.byte_order, ByteOrder::NATIVE);
        let m = from_json(&json!({"dtype": "int16", "shape": [3, 4], "order": "column-major", "mode": "wrap", "readonly": true, "endianness": "big"})).unwrap();
        assert_eq!(m.strides, vec![2, 6]);
        assert_eq!(m.submodes, vec![IndexMode::Wrap]);
        assert!(m.is_readonly());
        assert_eq!(m.byte_order, ByteOrder::Big);
        // No byte size: strides and offset become 0, as stdlib writes them.
        let m = from_json(&json!({"dtype": "generic", "shape": [4], "strides_elements": [-1], "offset_elements": 3})).unwrap();
        assert_eq!((m.strides.clone(), m.offset), (vec![0], 0));
    }

    #[test]
    fn bad_specifications_say_what_is_wrong() {
        for (spec, needle) in [
            (json!([]), "JSON object"),
            (json!({"shape": [1]}), "dtype"),
            (json!({"dtype": "float128", "shape": [1]}), "float128"),
            (json!({"dtype": "float64"}), "shape is required"),
            (json!({"dtype": "float64", "shape": [-1]}), "negative"),
            (
                json!({"dtype": "float64", "shape": [2], "strides_bytes": [8, 8]}),
                "2 strides for 1",
            ),
            (
                json!({"dtype": "float64", "shape": [2], "mode": "bounce"}),
                "bounce",
            ),
            (
                json!({"dtype": "float64", "shape": [2], "endianness": 7}),
                "endianness",
            ),
        ] {
            let e = from_json(&spec).unwrap_err();
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        }
    }
}
