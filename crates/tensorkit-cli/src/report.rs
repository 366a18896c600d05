//! What the commands print: `inspect`'s JSON object and table, `validate`'s and `verify`'s
//! reports.

use crate::error::Result;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::ByteOrder;
use tensor_dtype::{Scalar, scalar};
use tensorkit::{Checks, Problem, Validation, Verification};
use tensorkit::{Format, TensorRef, TensorSet};

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

/// The JSON entry of one tensor: name, dtype, shape, how it is stored when it needs decoding
/// (`stored_as`; a GGUF quantized tensor's ggml type and block layout under `stored`), its
/// attributes (when it has any), SHA-256 of its little-endian elements in stored order, and
/// its first values. The elements are streamed through the hash in
/// bounded runs, so memory stays flat whatever the tensor's decoded size.
pub fn tensor_json(t: TensorRef<'_>) -> Result<Value> {
    let dtype = t.dtype();
    let mut hasher = Sha256::new();
    let mut first = Vec::new();
    let want = dtype.payload_bytes(FIRST_VALUES as u64).unwrap_or(0) as usize;
    t.stream(&mut |c| {
        if first.len() < want {
            first.extend_from_slice(&c[..c.len().min(want - first.len())]);
        }
        hasher.update(c);
        Ok(())
    })?;
    let mut o = Map::new();
    o.insert(
        "name".into(),
        t.stored_name().map_or(Value::Null, Value::from),
    );
    for (key, index) in t.location() {
        o.insert((*key).into(), Value::from(*index));
    }
    o.insert("dtype".into(), Value::from(dtype.name()));
    o.insert("shape".into(), Value::from(t.shape().to_vec()));
    if let Some(encoding) = t.encoding() {
        // What the table's "stored as" column shows: the elements above are decoded.
        o.insert("stored_as".into(), Value::from(encoding));
    }
    if let Some((scheme, stored, byte_shape)) = t.blocks() {
        o.insert(
            "stored".into(),
            json!({
                "ggml_type": scheme.name,
                "block_elements": scheme.block_elements,
                "block_bytes": scheme.block_bytes,
                "shape_in_bytes": byte_shape,
                "bytes": stored.len(),
            }),
        );
    }
    if !t.attributes().is_empty() {
        // zTensor object attributes, Tensogram per-object `base` entries.
        o.insert(
            "attributes".into(),
            Value::Object(
                t.attributes()
                    .iter()
                    .map(|(k, v)| (k.clone(), tensor_core::cbor::json::to_json(v)))
                    .collect(),
            ),
        );
    }
    o.insert(
        "sha256_le".into(),
        Value::from(tensor_core::hex::encode(&hasher.finalize())),
    );
    let count = usize::try_from(t.shape().iter().product::<u64>())
        .unwrap_or(usize::MAX)
        .min(FIRST_VALUES);
    let first = scalar::decode(dtype, &first, ByteOrder::Little, 0, count);
    o.insert(
        "first_values".into(),
        Value::Array(first.into_iter().map(scalar_json).collect()),
    );
    Ok(Value::Object(o))
}

/// The whole `inspect --json` object (tensors decoded one at a time, within the set's
/// limits).
pub fn json(set: &TensorSet<'_>) -> Result<Value> {
    let tensors = set.tensors().map(tensor_json).collect::<Result<Vec<_>>>()?;
    let mut o = json!({
        "format": set.format().id(),
        "metadata": set.metadata().cloned().map_or(Value::Null, Value::Object),
        "tensors": tensors,
    });
    if !set.metadata_types().is_empty() {
        o["metadata_types"] = json!(set.metadata_types());
    }
    if !set.not_read().is_empty() {
        o["not_read"] = set
            .not_read()
            .iter()
            .map(|n| {
                let mut o = json!({"name": n.name, "why": n.why});
                if let Some((shape, values)) = &n.strings {
                    o["shape"] = json!(shape);
                    o["first_values"] = json!(values.iter().take(FIRST_VALUES).collect::<Vec<_>>());
                }
                o
            })
            .collect();
    }
    Ok(o)
}

fn display_name(t: TensorRef<'_>) -> String {
    let mut name = match t.stored_name() {
        None => "-".to_owned(),
        Some("") => "\"\"".to_owned(),
        Some(n) => n.escape_debug().to_string(),
    };
    for (key, index) in t.location() {
        let _ = write!(name, " {key}={index}");
    }
    name
}

pub(crate) fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

/// Arrays longer than this show their first items and their length.
const SHOWN_ITEMS: usize = 8;

/// A metadata value as the table shows it: strings as they are, float32 values at their own
/// precision (where the file's types say so), long arrays summarised.
fn metadata_text(v: &Value, ty: Option<&str>) -> String {
    let item_type = ty.and_then(|t| t.strip_prefix("ARRAY[")?.strip_suffix(']'));
    match v {
        Value::String(s) => s.escape_debug().to_string(),
        #[allow(clippy::cast_possible_truncation)] // A FLOAT32 value, shown as one.
        Value::Number(n) if ty == Some("FLOAT32") => n
            .as_f64()
            .map_or_else(|| n.to_string(), |f| (f as f32).to_string()),
        Value::Array(items) => {
            let shown: Vec<String> = items
                .iter()
                .take(SHOWN_ITEMS)
                .map(|x| match x {
                    Value::String(s) => format!("{s:?}"),
                    other => metadata_text(other, item_type),
                })
                .collect();
            if items.len() > SHOWN_ITEMS {
                format!("[{}, … {} items]", shown.join(", "), items.len())
            } else {
                format!("[{}]", shown.join(", "))
            }
        }
        other => other.to_string(),
    }
}

/// The readable `inspect` table.
#[must_use]
pub fn table(set: &TensorSet<'_>) -> String {
    let mut out = String::new();
    let total: u64 = set.tensors().map(|t| t.byte_len()).sum();
    let _ = writeln!(out, "format    {}", set.format().id());
    match set.metadata() {
        None => out.push_str("metadata  (none)\n"),
        Some(m) if m.is_empty() => out.push_str("metadata  (empty)\n"),
        Some(m) => {
            let width = m.keys().map(|k| k.chars().count()).max().unwrap_or(0);
            let types = set.metadata_types();
            let type_width = types.values().map(String::len).max().unwrap_or(0);
            for (i, (k, v)) in m.iter().enumerate() {
                let label = if i == 0 { "metadata" } else { "" };
                let ty = types.get(k).map(String::as_str);
                let value = metadata_text(v, ty);
                let k = k.escape_debug().to_string();
                let _ = if types.is_empty() {
                    writeln!(out, "{label:<9} {k:<width$}  {value}")
                } else {
                    let ty = ty.unwrap_or("");
                    writeln!(out, "{label:<9} {k:<width$}  {ty:<type_width$}  {value}")
                };
            }
        }
    }
    let _ = writeln!(out, "tensors   {} ({} bytes)", set.len(), total);
    for (i, n) in set.not_read().iter().enumerate() {
        let label = if i == 0 { "not read" } else { "" };
        let _ = writeln!(out, "{label:<9} {}: {}", n.name.escape_debug(), n.why);
    }
    if set.is_empty() {
        return out;
    }
    let encoding = |t: TensorRef<'_>| t.encoding().unwrap_or("").to_owned();
    let any_encoded = set
        .tensors()
        .any(|t| t.encoding().is_some_and(|e| !e.is_empty()));
    let rows: Vec<[String; 5]> = set
        .tensors()
        .map(|t| {
            [
                display_name(t),
                t.dtype().name().to_owned(),
                shape_text(t.shape()),
                t.byte_len().to_string(),
                encoding(t),
            ]
        })
        .collect();
    let header = ["name", "dtype", "shape", "bytes", "stored as"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    out.push('\n');
    let mut line = |cells: [&str; 5]| {
        let _ = write!(
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
        if any_encoded && !cells[4].is_empty() {
            let _ = write!(out, "  {}", cells[4]);
        }
        let end = out.trim_end_matches(' ').len();
        out.truncate(end);
        out.push('\n');
    };
    line(header);
    for r in &rows {
        line([&r[0], &r[1], &r[2], &r[3], &r[4]]);
    }
    out
}

/// One line per problem: `error: code at WHERE: message` (or `warning: …`).
fn problem_lines(problems: &[Problem]) -> String {
    let mut s = String::new();
    for p in problems {
        let _ = writeln!(s, "{}: {p}", p.severity_name());
    }
    s
}

/// `validate`'s report: a line for the file, one per problem, and the verdict.
#[must_use]
pub fn validation_text(v: &Validation, path: &Path) -> String {
    let format = v.format.map_or("unknown format", Format::id);
    let mut s = format!(
        "{}: {format}, {} tensors, {} hashes verified\n",
        path.display(),
        v.tensors,
        v.hashes_verified
    );
    s.push_str(&problem_lines(&v.problems));
    let errors = v.problems.iter().filter(|p| p.is_error()).count();
    if errors == 0 {
        s.push_str("valid\n");
    } else {
        let _ = writeln!(s, "invalid: {errors} errors");
    }
    s
}

/// `verify`'s report: what was verified, and the problems found on the way (the verdict, when
/// the check did not pass, is the command's error line).
#[must_use]
pub fn verification_text(v: &Verification, path: &Path) -> String {
    let head = format!("{}: {}", path.display(), v.format.id());
    match v.checks {
        Checks::Hashes => format!(
            "{head}, {} hashes verified\n{}",
            v.verified,
            problem_lines(&v.problems)
        ),
        Checks::Checksums if v.problem.is_some() && !v.problems.is_empty() => {
            let mut s = format!("{head}\n");
            for p in &v.problems {
                let _ = writeln!(s, "error: {}", p.message);
            }
            s
        }
        Checks::Checksums => format!("{head}, {} checksums verified\n", v.verified),
        _ => format!(
            "{head}: the format stores no checksums; all {} tensors read\n",
            v.tensors_read.unwrap_or(0)
        ),
    }
}

/// `doctor --json`: the build, the formats, the codecs and the self-test as one object.
#[must_use]
pub fn doctor_json(d: &tensorkit::doctor::Doctor) -> Value {
    json!({
        "build": {
            "version": d.version,
            "wire_version": d.wire_version,
            "target": d.target,
            "profile": d.profile,
        },
        "formats": d.formats.iter().map(|f| json!({
            "id": f.id(),
            "name": f.info().name,
            "writes": f.info().writes,
        })).collect::<Vec<_>>(),
        "codecs": d.codecs.iter().map(|c| json!({
            "name": c.name,
            "kind": c.kind,
            "built": c.built,
            "backend": c.backend,
            "linkage": if c.ffi { "ffi" } else { "pure-rust" },
        })).collect::<Vec<_>>(),
        "remote": d.remote,
        "parallel": d.parallel,
        "self_test": d.self_test.iter().map(|t| json!({
            "label": t.label,
            "outcome": t.outcome,
            "detail": t.detail,
        })).collect::<Vec<_>>(),
    })
}

/// `doctor`: the same, as lines for people.
#[must_use]
pub fn doctor_text(d: &tensorkit::doctor::Doctor) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "tensorkit {} ({}, {}), Tensogram wire version {}\n",
        d.version, d.target, d.profile, d.wire_version
    );
    let formats: Vec<String> = d
        .formats
        .iter()
        .map(|f| format!("{}{}", f.id(), if f.info().writes { "" } else { " (read)" }))
        .collect();
    let _ = writeln!(out, "formats: {}", formats.join(", "));
    let yes = |b: bool| if b { "on" } else { "off" };
    let _ = writeln!(
        out,
        "remote reads: {}, threads: {}",
        yes(d.remote),
        yes(d.parallel)
    );
    let _ = writeln!(out, "codecs:");
    for c in &d.codecs {
        let _ = writeln!(
            out,
            "  {:<16}{:<13}{:<5}{}{}",
            c.name,
            c.kind,
            yes(c.built),
            c.backend,
            if c.ffi { " (C/C++)" } else { "" }
        );
    }
    let _ = writeln!(out, "self-test:");
    for t in &d.self_test {
        let _ = writeln!(
            out,
            "  {:<36}{}{}",
            t.label,
            t.outcome,
            t.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        );
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
