//! CBOR values (metadata, descriptor parameters) to Python objects and back, without a
//! detour through JSON: integers stay integers, floats stay floats (NaN included), byte
//! strings stay `bytes`.

use crate::errors::invalid;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use tensor_core::ciborium::value::{Integer, Value};

/// How deeply Python containers may nest: deeper input is refused, not recursed into.
const MAX_DEPTH: usize = 128;

/// A CBOR value as the Python object a user expects: `int`, `float`, `str`, `bytes`,
/// `bool`, `None`, `list`, `dict` (tags are dropped, their content kept).
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Integer(i) => i128::from(*i).into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Text(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Tag(_, inner) => to_py(py, inner)?,
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                let key = to_py(py, k)?;
                // A key Python cannot hash (an array or a map) is kept as its text.
                let key = if key.hash().is_ok() {
                    key
                } else {
                    PyString::new(py, &format!("{k:?}")).into_any()
                };
                dict.set_item(key, to_py(py, v)?)?;
            }
            dict.into_any()
        }
        _ => py.None().into_bound(py),
    })
}

/// A JSON value (a report, metadata the library keeps as JSON) as the Python object
/// `json.loads` would give for its text, built directly.
pub(crate) fn json_to_py<'py>(
    py: Python<'py>,
    v: &serde_json::Value,
) -> PyResult<Bound<'py, PyAny>> {
    core_to_py(py, &tensor_core::cbor::json::to_cbor(v))
}

/// A value of tensor-core's CBOR (tensor attributes) as [`to_py`] gives it.
pub(crate) fn core_to_py<'py>(
    py: Python<'py>,
    v: &tensor_core::cbor::Value,
) -> PyResult<Bound<'py, PyAny>> {
    use tensor_core::cbor::Value as Core;
    // As `to_py` gives the same value once made a `ciborium` one, built directly: listing
    // a file converts every tensor's attributes.
    Ok(match v {
        Core::Uint(n) => n.into_pyobject(py)?.into_any(),
        Core::Nint(n) => (-1 - i128::from(*n)).into_pyobject(py)?.into_any(),
        Core::Float(f) => PyFloat::new(py, *f).into_any(),
        Core::Text(s) => PyString::new(py, s).into_any(),
        Core::Bytes(b) => PyBytes::new(py, b).into_any(),
        Core::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Core::Tag(_, inner) => core_to_py(py, inner)?,
        Core::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(core_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Core::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                let key = match k {
                    Core::Text(s) => PyString::new(py, s).into_any(),
                    other => {
                        let key = core_to_py(py, other)?;
                        // A key Python cannot hash (an array or a map) is kept as its text.
                        if key.hash().is_ok() {
                            key
                        } else {
                            PyString::new(py, &format!("{:?}", Value::from(other))).into_any()
                        }
                    }
                };
                dict.set_item(key, core_to_py(py, v)?)?;
            }
            dict.into_any()
        }
        Core::Null | Core::Undefined | Core::Simple(_) => py.None().into_bound(py),
    })
}

/// A map with text keys as a Python `dict`.
pub(crate) fn map_to_py<'py>(
    py: Python<'py>,
    map: &std::collections::BTreeMap<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in map {
        dict.set_item(k, to_py(py, v)?)?;
    }
    Ok(dict)
}

/// A Python object as a CBOR value: `None`, `bool`, `int` (within CBOR's 65-bit range),
/// `float`, `str`, `bytes`/`bytearray`, dicts (any mapping), lists and tuples, and numpy
/// scalars and arrays (through `.item()` / `.tolist()`). `what` names the value in errors.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    from_py_at(obj, what, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(invalid(format!(
            "{what} nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        let n: i128 = obj
            .extract()
            .map_err(|_| invalid(format!("{what}: the integer {obj} is too large for CBOR")))?;
        return Integer::try_from(n)
            .map(Value::Integer)
            .map_err(|_| invalid(format!("{what}: the integer {n} is too large for CBOR")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Text(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if obj.is_instance_of::<pyo3::types::PyByteArray>() {
        return Ok(Value::Bytes(obj.extract::<Vec<u8>>()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut entries = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = from_py_at(&k, what, depth + 1)?;
            let name = k
                .str()
                .map_or_else(|_| what.to_owned(), |s| format!("{what}[{s}]"));
            entries.push((key, from_py_at(&v, &name, depth + 1)?));
        }
        return Ok(Value::Map(entries));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(from_py_at(&item?, &format!("{what}[{i}]"), depth + 1)?);
        }
        return Ok(Value::Array(items));
    }
    // Other mappings (not dicts): their items.
    if obj.hasattr("keys")? && obj.hasattr("items")? {
        let dict = PyDict::new(obj.py());
        for item in obj.call_method0("items")?.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            dict.set_item(k, v)?;
        }
        return from_py_at(dict.as_any(), what, depth);
    }
    // numpy scalars (`.item()`) and arrays (`.tolist()`).
    let module = obj
        .get_type()
        .module()
        .map(|m| m.to_string())
        .unwrap_or_default();
    if module == "numpy" {
        let plain = if obj.hasattr("tolist")?
            && obj.hasattr("ndim")?
            && obj.getattr("ndim")?.extract::<usize>()? > 0
        {
            obj.call_method0("tolist")?
        } else {
            obj.call_method0("item")?
        };
        return from_py_at(&plain, what, depth + 1);
    }
    Err(invalid(format!(
        "{what}: a {} cannot be stored as CBOR (use None, bool, int, float, str, bytes, list or dict)",
        obj.get_type().name()?
    )))
}

/// A Python value as JSON: `None`, `bool`, `int` (within 64 bits), `float` (NaN and the
/// infinities spelled `"NaN"`, `"Infinity"`, `"-Infinity"`, as tensorkit's JSON spells
/// them), `str`, lists and tuples, and dicts with `str` keys. `what` names the value in
/// errors.
pub(crate) fn to_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<serde_json::Value> {
    to_json_at(obj, what, 0)
}

fn to_json_at(obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<serde_json::Value> {
    use serde_json::Value as Json;
    if depth > MAX_DEPTH {
        return Err(invalid(format!(
            "{what} nests deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(n) = obj.extract::<i64>() {
            return Ok(Json::from(n));
        }
        return obj
            .extract::<u64>()
            .map(Json::from)
            .map_err(|_| invalid(format!("{what}: the integer {obj} is too large for JSON")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let x = f.value();
        return Ok(serde_json::Number::from_f64(x).map_or_else(
            || {
                Json::from(if x.is_nan() {
                    "NaN"
                } else if x > 0.0 {
                    "Infinity"
                } else {
                    "-Infinity"
                })
            },
            Json::Number,
        ));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Json::from(s.to_str()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| invalid(format!("{what}: a key {k} that is not a str")))?;
            let value = to_json_at(&v, &format!("{what}[{key:?}]"), depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Json::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj
            .try_iter()?
            .enumerate()
            .map(|(i, item)| to_json_at(&item?, &format!("{what}[{i}]"), depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Json::Array(items));
    }
    Err(invalid(format!(
        "{what}: a {} cannot be written as JSON (use None, bool, int, float, str, list or dict)",
        obj.get_type().name()?
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(py: Python<'_>, v: &Value) -> Value {
        from_py(&to_py(py, v).unwrap(), "value").unwrap()
    }

    #[test]
    fn values_survive_python_unchanged() {
        Python::initialize();
        Python::attach(|py| {
            let v = Value::Map(vec![
                (Value::Text("a".into()), Value::Integer(Integer::from(-3))),
                (Value::Text("b".into()), Value::Float(1.0)),
                (Value::Text("c".into()), Value::Bytes(vec![0, 255])),
                (
                    Value::Text("d".into()),
                    Value::Array(vec![
                        Value::Null,
                        Value::Bool(true),
                        Value::Text("x".into()),
                    ]),
                ),
                (
                    Value::Integer(Integer::from(7)),
                    Value::Integer(Integer::from(u64::MAX)),
                ),
            ]);
            assert_eq!(round_trip(py, &v), v);
            let nan = round_trip(py, &Value::Float(f64::NAN));
            assert!(matches!(nan, Value::Float(f) if f.is_nan()));
        });
    }

    #[test]
    fn what_cbor_cannot_hold_is_refused_by_name() {
        Python::initialize();
        Python::attach(|py| {
            let huge = py.eval(c"2**70", None, None).unwrap();
            let e = from_py(&huge, "meta").unwrap_err().to_string();
            assert!(e.contains("too large"), "{e}");
            let set = py.eval(c"{1, 2}", None, None).unwrap();
            let e = from_py(&set, "meta").unwrap_err().to_string();
            assert!(e.contains("set cannot be stored"), "{e}");
            let deep = py
                .eval(
                    c"(lambda f: f(f, 200))(lambda f, n: [f(f, n - 1)] if n else [])",
                    None,
                    None,
                )
                .unwrap();
            let e = from_py(&deep, "meta").unwrap_err().to_string();
            assert!(e.contains("deeper than"), "{e}");
        });
    }
}
