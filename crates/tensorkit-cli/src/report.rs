//! What `inspect` prints: a JSON object and a readable table.

use crate::model::{NamedTensor, TensorSet};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use tensor_core::ByteOrder;
use tensor_dtype::{Scalar, scalar};

/// How many leading values `inspect --json` shows per tensor.
pub const FIRST_VALUES: usize = 8;

pub use tensor_core::cbor::json::float_json;

/// One element as JSON: bools, exact integers, floats as [`float_json`], complex as `[re, im]`.
#[must_use]
pub fn scalar_json(s: Scalar) -> Value {
    match s {
        Scalar::Bool(b) => Value::from(b),
        Scalar::Int(i) => Value::from(i),
        Scalar::Uint(u) => Value::from(u),
        Scalar::Float(f) => float_json(f),
        Scalar::Complex(re, im) => Value::Array(vec![float_json(re), float_json(im)]),
    }
}

/// The JSON entry of one tensor: name, dtype, shape, SHA-256 of its little-endian elements in
/// stored order, and its first values.
#[must_use]
pub fn tensor_json(t: &NamedTensor<'_>) -> Value {
    let view = t.view();
    let le = view.to_le_bytes();
    let mut o = Map::new();
    o.insert(
        "name".into(),
        t.name.clone().map_or(Value::Null, Value::from),
    );
    for (key, index) in &t.location {
        o.insert((*key).into(), Value::from(*index));
    }
    o.insert("dtype".into(), Value::from(view.dtype().name()));
    o.insert("shape".into(), Value::from(view.shape().to_vec()));
    o.insert(
        "sha256_le".into(),
        Value::from(tensor_core::hex::encode(&Sha256::digest(&le))),
    );
    let first = scalar::decode(view.dtype(), &le, ByteOrder::Little, 0, FIRST_VALUES);
    o.insert(
        "first_values".into(),
        Value::Array(first.into_iter().map(scalar_json).collect()),
    );
    Value::Object(o)
}

/// The whole `inspect --json` object.
#[must_use]
pub fn json(set: &TensorSet<'_>) -> Value {
    json!({
        "format": set.format.id(),
        "metadata": set.metadata.clone().map_or(Value::Null, Value::Object),
        "tensors": set.tensors.iter().map(tensor_json).collect::<Vec<_>>(),
    })
}

fn display_name(t: &NamedTensor<'_>) -> String {
    let mut name = match &t.name {
        None => "-".to_owned(),
        Some(n) if n.is_empty() => "\"\"".to_owned(),
        Some(n) => n.escape_debug().to_string(),
    };
    for (key, index) in &t.location {
        let _ = write!(name, " {key}={index}");
    }
    name
}

pub(crate) fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// The readable `inspect` table.
#[must_use]
pub fn table(set: &TensorSet<'_>) -> String {
    let mut out = String::new();
    let total: u64 = set.tensors.iter().map(|t| t.view().byte_len()).sum();
    let _ = writeln!(out, "format    {}", set.format.id());
    match &set.metadata {
        None => out.push_str("metadata  (none)\n"),
        Some(m) if m.is_empty() => out.push_str("metadata  (empty)\n"),
        Some(m) => {
            let width = m.keys().map(|k| k.chars().count()).max().unwrap_or(0);
            for (i, (k, v)) in m.iter().enumerate() {
                let label = if i == 0 { "metadata" } else { "" };
                let value = match v {
                    Value::String(s) => s.escape_debug().to_string(),
                    other => other.to_string(),
                };
                let _ = writeln!(
                    out,
                    "{label:<9} {k:<width$}  {value}",
                    k = k.escape_debug().to_string()
                );
            }
        }
    }
    let _ = writeln!(out, "tensors   {} ({} bytes)", set.tensors.len(), total);
    if set.tensors.is_empty() {
        return out;
    }
    let rows: Vec<[String; 4]> = set
        .tensors
        .iter()
        .map(|t| {
            let view = t.view();
            [
                display_name(t),
                view.dtype().name().to_owned(),
                shape_text(view.shape()),
                view.byte_len().to_string(),
            ]
        })
        .collect();
    let header = ["name", "dtype", "shape", "bytes"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    out.push('\n');
    let mut line = |cells: [&str; 4]| {
        let _ = writeln!(
            out,
            "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    };
    line(header);
    for r in &rows {
        line([&r[0], &r[1], &r[2], &r[3]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_are_strings_and_complex_is_a_pair() {
        assert_eq!(float_json(f64::NAN), json!("NaN"));
        assert_eq!(float_json(f64::INFINITY), json!("Infinity"));
        assert_eq!(float_json(f64::NEG_INFINITY), json!("-Infinity"));
        assert_eq!(float_json(1.5), json!(1.5));
        assert_eq!(
            scalar_json(Scalar::Complex(1.0, f64::NAN)),
            json!([1.0, "NaN"])
        );
        assert_eq!(scalar_json(Scalar::Uint(u64::MAX)), json!(u64::MAX));
        assert_eq!(scalar_json(Scalar::Int(i64::MIN)), json!(i64::MIN));
        assert_eq!(scalar_json(Scalar::Bool(true)), json!(true));
    }
}
