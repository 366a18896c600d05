//! Choosing tensors by their metadata, as tensogram's and ecCodes' tools do: `-w` clauses
//! (`mars.param=2t/10u`, `mars.class!=od`), the value of a dotted key for a tensor (`-p`
//! columns), and output names templated with `[key]`.
//!
//! A key is looked up in the tensor's own attributes (a Tensogram object's `base` entry, a
//! GRIB field's keys, a zTensor tensor's attributes) and then in its file's (or message's)
//! metadata; dots walk into maps (`mars.param`). Values compare as text: strings as they are,
//! numbers as tensogram prints them (`6`, `0.5`), `true`/`false`, `null`.

use crate::error::{Error, Result};
use std::path::PathBuf;
use tensor_core::cbor::Value;

/// One `-w` clause: `KEY=V1/V2/…` (any of the values) or `KEY!=V1/V2/…` (none of them). A
/// tensor without the key fails `=` and passes `!=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Where {
    key: String,
    negated: bool,
    values: Vec<String>,
}

impl Where {
    /// Parses one clause.
    pub fn parse(s: &str) -> Result<Where> {
        let (key, negated, values) = if let Some((k, v)) = s.split_once("!=") {
            (k, true, v)
        } else if let Some((k, v)) = s.split_once('=') {
            (k, false, v)
        } else {
            return Err(usage(format!(
                "-w {s:?}: expected KEY=VALUE or KEY!=VALUE (several values as V1/V2)"
            )));
        };
        if key.is_empty() {
            return Err(usage(format!("-w {s:?}: the key is empty")));
        }
        Ok(Where {
            key: key.to_owned(),
            negated,
            values: values.split('/').map(str::to_owned).collect(),
        })
    }

    /// Whether a tensor whose value for the key is `value` passes.
    fn passes(&self, value: Option<&str>) -> bool {
        match value {
            None => self.negated,
            Some(v) => self.values.iter().any(|w| w == v) != self.negated,
        }
    }
}

/// A command line that asks for something impossible.
fn usage(what: String) -> Error {
    Error::UnknownTarget { what }
}

/// Parses every clause.
pub fn parse_all(clauses: &[String]) -> Result<Vec<Where>> {
    clauses.iter().map(|c| Where::parse(c)).collect()
}

/// Whether a tensor passes every clause, `lookup` giving its value for a key.
pub fn passes(clauses: &[Where], lookup: &dyn Fn(&str) -> Option<String>) -> bool {
    clauses.iter().all(|c| c.passes(lookup(&c.key).as_deref()))
}

/// The value at dotted `path` in `entries` (a map's entries), as text.
#[must_use]
pub fn in_cbor(entries: &[(String, Value)], path: &str) -> Option<String> {
    let (first, rest) = split(path);
    let v = entries.iter().find(|(k, _)| k == first)?.1.clone();
    walk_cbor(&v, rest).map(|v| cbor_text(&v))
}

/// The value at dotted `path` in a JSON map, as text.
#[must_use]
pub fn in_json(map: &serde_json::Map<String, serde_json::Value>, path: &str) -> Option<String> {
    let mut at = map.get(split(path).0)?;
    let mut rest = split(path).1;
    while let Some(r) = rest {
        let (key, next) = split(r);
        at = at.as_object()?.get(key)?;
        rest = next;
    }
    Some(match at {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "null".into(),
        other => other.to_string(),
    })
}

fn split(path: &str) -> (&str, Option<&str>) {
    match path.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (path, None),
    }
}

fn walk_cbor(v: &Value, rest: Option<&str>) -> Option<Value> {
    let Some(rest) = rest else {
        return Some(v.clone());
    };
    let (key, next) = split(rest);
    let Value::Map(entries) = v else {
        return None;
    };
    let found = entries
        .iter()
        .find(|(k, _)| matches!(k, Value::Text(t) if t == key))?;
    walk_cbor(&found.1, next)
}

/// A value as text, as tensogram's tools print it.
#[must_use]
pub fn cbor_text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Uint(n) => n.to_string(),
        Value::Nint(n) => (-1 - i128::from(*n)).to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Undefined => "null".into(),
        Value::Simple(n) => format!("simple({n})"),
        Value::Tag(_, inner) => cbor_text(inner),
        Value::Bytes(b) => tensor_core::hex::encode(b),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(cbor_text).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Map(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", cbor_text(k), cbor_text(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
    }
}

/// `template` with each `[key]` replaced by the tensor's value for it (`unknown` when it has
/// none, as tensogram's `copy` writes it). A value comes from a file, so it is made safe as
/// one path component: separators, NUL and a leading dot become `_`, and an empty one is
/// `_` — a hostile file names no file outside the template's directory.
pub fn expand(template: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            return Err(usage(format!("{template:?}: a `[` without its `]`")));
        };
        out.push_str(&rest[..open]);
        let key = &rest[open + 1..open + close];
        out.push_str(&component(&lookup(key).unwrap_or_else(|| "unknown".into())));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(PathBuf::from(out))
}

/// `value` as one safe path component.
fn component(value: &str) -> String {
    let mut s: String = value
        .chars()
        .map(|c| match c {
            '/' | '\\' | '\0' => '_',
            c => c,
        })
        .collect();
    if s.starts_with('.') {
        s.replace_range(..1, "_");
    }
    if s.is_empty() {
        s.push('_');
    }
    s
}

/// Whether `output` names files by keys (`[key]` in it).
#[must_use]
pub fn is_template(output: &str) -> bool {
    output.contains('[') && output.contains(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mars() -> Vec<(String, Value)> {
        vec![
            (
                "mars".into(),
                Value::Map(vec![
                    (Value::Text("param".into()), Value::Text("2t".into())),
                    (Value::Text("step".into()), Value::Uint(6)),
                    (Value::Text("level".into()), Value::Float(0.5)),
                ]),
            ),
            ("number".into(), Value::Nint(2)),
        ]
    }

    #[test]
    fn clauses_parse_and_match_as_tensograms_do() {
        let m = mars();
        let lookup = |k: &str| in_cbor(&m, k);
        let pass = |c: &str| passes(&[Where::parse(c).unwrap()], &lookup);
        assert!(pass("mars.param=2t/10u"));
        assert!(!pass("mars.param=10u"));
        assert!(pass("mars.param!=10u"));
        assert!(!pass("mars.param!=2t/10u"));
        assert!(pass("mars.step=6") && pass("mars.level=0.5") && pass("number=-3"));
        assert!(!pass("mars.class=od") && pass("mars.class!=od"));
        assert!(
            !pass("mars.param.x=2t"),
            "a path through a text finds nothing"
        );
        assert!(Where::parse("param").is_err() && Where::parse("=2t").is_err());
    }

    #[test]
    fn templates_take_values_as_single_safe_components() {
        let m = mars();
        let lookup = |k: &str| in_cbor(&m, k);
        assert_eq!(
            expand("out/[mars.param]_[mars.step].tgm", &lookup).unwrap(),
            PathBuf::from("out/2t_6.tgm")
        );
        assert_eq!(
            expand("[mars.class].tgm", &lookup).unwrap(),
            PathBuf::from("unknown.tgm")
        );
        let hostile = |_: &str| Some("../../etc/passwd".to_owned());
        assert_eq!(
            expand("out/[x].tgm", &hostile).unwrap(),
            PathBuf::from("out/_._.._etc_passwd.tgm")
        );
        assert!(expand("out/[x.tgm", &lookup).is_err());
        let json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"a": {"b": 1.5, "c": "x"}, "n": null}"#).unwrap();
        assert_eq!(in_json(&json, "a.b").as_deref(), Some("1.5"));
        assert_eq!(in_json(&json, "a.c").as_deref(), Some("x"));
        assert_eq!(in_json(&json, "n").as_deref(), Some("null"));
        assert_eq!(in_json(&json, "a.z"), None);
    }
}
