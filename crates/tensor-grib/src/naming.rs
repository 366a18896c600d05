//! What a GRIB field is called, and the keys it carries, when it is listed as a tensor.

use crate::field::{Field, Key};
use std::collections::HashMap;
use std::fmt::Write as _;
use tensor_core::cbor::Value;

/// Names each field by every key of its cube, the same in whatever file it is found:
/// `shortName`, level type and level, step, date and time, and the ensemble member where
/// there is one (`t_isobaricInhPa_500_step6_20261120T0000_number3`). The message number is
/// added only where two fields share all of those (`…_m4`, or `…_m4.1` for a field after the
/// first of a message).
pub(crate) fn names(fields: &[Field]) -> Vec<String> {
    let full: Vec<String> = fields.iter().map(full_name).collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for name in &full {
        *count.entry(name.as_str()).or_default() += 1;
    }
    full.iter()
        .zip(fields)
        .map(|(name, f)| {
            if count[name.as_str()] == 1 {
                name.clone()
            } else if f.submessage == 0 {
                format!("{name}_m{}", f.message)
            } else {
                format!("{name}_m{}.{}", f.message, f.submessage)
            }
        })
        .collect()
}

/// A field's name from its own keys (see [`names`]).
fn full_name(f: &Field) -> String {
    let mut name = format!(
        "{}_{}_{}_step{}_{}T{:04}",
        f.ident.short_name(),
        f.ident.type_of_level,
        f.ident.level,
        f.ident.step_range,
        f.ident.data_date,
        f.ident.data_time
    );
    if let Some(n) = f.ident.member() {
        let _ = write!(name, "_number{n}");
    }
    name
}

fn key_value(k: &Key) -> Value {
    match k {
        Key::Int(i) => {
            if *i >= 0 {
                Value::Uint(i.unsigned_abs())
            } else {
                Value::Nint((-1 - *i).unsigned_abs())
            }
        }
        Key::Float(f) => Value::Float(*f),
        Key::Text(t) => Value::Text(t.clone()),
    }
}

impl Field {
    /// The field's identification keys as a tensor's attributes, a reduced grid's points
    /// per parallel as `pl`, and its MARS keys under `mars`.
    #[must_use]
    pub fn attributes(&self) -> Vec<(String, Value)> {
        let mut a: Vec<(String, Value)> = self
            .keys()
            .iter()
            .map(|(k, v)| ((*k).to_owned(), key_value(v)))
            .collect();
        let mars = self
            .ident
            .mars()
            .into_iter()
            .map(|(k, v)| (Value::from(k), Value::Text(v)))
            .collect();
        if let Some(pl) = &self.grid.pl {
            a.push((
                "pl".into(),
                Value::Array(pl.iter().map(|&n| Value::Uint(n)).collect()),
            ));
        }
        a.push(("mars".into(), Value::Map(mars)));
        a
    }
}

/// Key `name` of a tensor's `attributes` as the writer takes it
/// ([`sections_from_keys`](crate::write::sections_from_keys)): the inverse of
/// [`Field::attributes`] — `mars.class` is key `class` of the `mars` map, a list of counts
/// (`pl`) is their text joined by commas, `true`/`false` are 1/0.
#[must_use]
pub fn attribute_key(attributes: &[(String, Value)], name: &str) -> Option<Key> {
    let (map, wanted) = match name.split_once('.') {
        Some((m, k)) => (Some(m), k),
        None => (None, name),
    };
    let v = match map {
        None => attributes
            .iter()
            .find(|(k, _)| k == wanted)
            .map(|(_, v)| v)?,
        Some(m) => {
            let (_, Value::Map(entries)) = attributes.iter().find(|(k, _)| k == m)? else {
                return None;
            };
            entries
                .iter()
                .find(|(k, _)| k.as_text() == Some(wanted))
                .map(|(_, v)| v)?
        }
    };
    Some(match v {
        Value::Uint(n) => Key::Int(i64::try_from(*n).ok()?),
        Value::Nint(n) => Key::Int(-1 - i64::try_from(*n).ok()?),
        Value::Float(f) => Key::Float(*f),
        Value::Text(t) => Key::Text(t.clone()),
        Value::Bool(b) => Key::Int(i64::from(*b)),
        Value::Array(a) => Key::Text(
            a.iter()
                .map(|x| match x {
                    Value::Uint(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?
                .join(","),
        ),
        _ => return None,
    })
}
