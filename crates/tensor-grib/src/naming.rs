//! What a GRIB field is called, and the keys it carries, when it is listed as a tensor.

use crate::field::{Field, Key};
use std::collections::HashMap;
use tensor_core::cbor::Value;

/// Names fields by `shortName`, adding the level, then the step, then the date and time,
/// then the ensemble member, then the message number, only as far as needed to tell fields
/// apart: a message number only where two fields share every other key.
pub(crate) fn names(fields: &[Field]) -> Vec<String> {
    let level = |f: &Field| {
        let l = match &f.ident.level {
            Key::Int(i) => i.to_string(),
            Key::Float(x) => x.to_string(),
            Key::Text(t) => t.clone(),
        };
        format!("{}_{}_{l}", f.ident.short_name(), f.ident.type_of_level)
    };
    let step = |f: &Field| format!("{}_step{}", level(f), f.ident.step_range);
    let date = |f: &Field| format!("{}_{}T{:04}", step(f), f.ident.data_date, f.ident.data_time);
    let member = |f: &Field| match f.ident.number() {
        Some(n) => format!("{}_number{n}", date(f)),
        None => date(f),
    };
    let schemes: [&dyn Fn(&Field) -> String; 5] = [
        &|f| f.ident.short_name().to_owned(),
        &level,
        &step,
        &date,
        &member,
    ];
    let mut out: Vec<Option<String>> = vec![None; fields.len()];
    for scheme in schemes {
        let candidates: Vec<String> = fields.iter().map(scheme).collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for c in &candidates {
            *count.entry(c.as_str()).or_default() += 1;
        }
        for (o, c) in out.iter_mut().zip(&candidates) {
            if o.is_none() && count[c.as_str()] == 1 {
                *o = Some(c.clone());
            }
        }
    }
    out.into_iter()
        .zip(fields)
        .map(|(o, f)| {
            o.unwrap_or_else(|| {
                let base = member(f);
                if f.submessage == 0 {
                    format!("{base}_m{}", f.message)
                } else {
                    format!("{base}_m{}.{}", f.message, f.submessage)
                }
            })
        })
        .collect()
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
