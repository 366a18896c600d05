//! A field's keys as the cube builder reads them: from the attributes a GRIB field carries as a
//! tensor (`Field::attributes`), which files converted from GRIB keep.

use crate::field::Key;
use crate::names;
use tensor_core::cbor::Value;

/// What the cube builder knows of one field.
#[derive(Clone, Debug)]
pub(crate) struct Keys<'a> {
    /// Every attribute, for filters, `read_keys` and `extra_coords`.
    pub attributes: &'a [(String, Value)],
    /// The tensor's shape.
    pub shape: &'a [u64],
    pub edition: i64,
    /// `paramId`; 0 for a parameter outside the table.
    pub param_id: i64,
    /// The codes that name a parameter outside the table (`discipline.category.number`, or
    /// GRIB 1's `table2Version.indicatorOfParameter`), so that two such parameters stay two
    /// variables; `None` for a parameter in the table.
    pub unknown: Option<String>,
    pub type_of_level: String,
    pub level: f64,
    /// `dataDate` and `dataTime` as seconds since 1970-01-01T00:00:00.
    pub time: i64,
    /// The step's end, in seconds.
    pub step: i64,
    pub step_type: &'static str,
    /// `number` (the ensemble member), when the field has one.
    pub number: Option<i64>,
    pub grid_type: String,
    pub points: u64,
}

/// A key's value as a field's attributes hold it: integers and whole floats as integers.
pub(crate) fn key_of(v: &Value) -> Option<Key> {
    match v {
        Value::Text(t) => Some(Key::Text(t.clone())),
        Value::Float(f) => Some(names::level_key(*f)),
        Value::Bool(b) => Some(Key::Int(i64::from(*b))),
        v => v
            .as_i128()
            .and_then(|i| i64::try_from(i).ok())
            .map(Key::Int),
    }
}

/// Whether two keys are the same value: `2`, `2.0` and `"2"` are.
pub(crate) fn same(a: &Key, b: &Key) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.to_string() == b.to_string(),
    }
}

fn number(k: &Key) -> Option<f64> {
    match k {
        Key::Int(i) => Some(*i as f64),
        Key::Float(f) => Some(*f),
        Key::Text(_) => None,
    }
}

/// Seconds in one unit of code table 4.4 (GRIB 1 table 4 agrees on these).
pub(crate) fn unit_seconds(unit: i64) -> Option<i64> {
    Some(match unit {
        0 => 60,
        1 => 3600,
        2 => 86_400,
        10 => 3 * 3600,
        11 => 6 * 3600,
        12 => 12 * 3600,
        13 => 1,
        _ => return None,
    })
}

impl<'a> Keys<'a> {
    /// The keys of a field with these attributes; `None` when they do not identify a GRIB
    /// field (no `typeOfLevel`, `dataDate` or `stepRange`).
    pub(crate) fn read(attributes: &'a [(String, Value)], shape: &'a [u64]) -> Option<Self> {
        let get = |k: &str| attributes.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let int = |k: &str| {
            get(k)
                .and_then(key_of)
                .and_then(|k| number(&k))
                .map(|f| f as i64)
        };
        let type_of_level = get("typeOfLevel")?.as_text()?.to_owned();
        let level = get("level")
            .and_then(key_of)
            .and_then(|k| number(&k))
            .unwrap_or(0.0);
        let date = int("dataDate")?;
        let hhmm = int("dataTime").unwrap_or(0);
        let (y, m, d) = (date / 10_000, date / 100 % 100, date % 100);
        let time = tensor_core::civil::days_from_civil(y, m, d) * 86_400
            + (hhmm / 100) * 3600
            + (hhmm % 100) * 60;
        let range = get("stepRange")?.as_text()?;
        let end: i64 = range.rsplit('-').next()?.trim().parse().ok()?;
        let step = end.checked_mul(unit_seconds(int("stepUnits").unwrap_or(1))?)?;
        let statistics = int("typeOfStatisticalProcessing");
        let step_type = match (int("edition"), statistics, int("timeRangeIndicator")) {
            (_, Some(0), _) | (Some(1), _, Some(3)) => "avg",
            (_, Some(1), _) | (Some(1), _, Some(4)) => "accum",
            (_, Some(2), _) => "max",
            (_, Some(3), _) => "min",
            (_, Some(4), _) | (Some(1), _, Some(5)) => "diff",
            (_, Some(6), _) => "sd",
            (_, Some(_), _) => "stat",
            _ => "instant",
        };
        let points = int("numberOfDataPoints")
            .and_then(|p| u64::try_from(p).ok())
            .unwrap_or_else(|| shape.iter().product());
        Some(Keys {
            attributes,
            shape,
            edition: int("edition").unwrap_or(2),
            param_id: int("paramId").unwrap_or(0),
            unknown: int("paramId").is_none().then(|| {
                let codes: [&str; 3] = if int("edition") == Some(1) {
                    ["table2Version", "indicatorOfParameter", ""]
                } else {
                    ["discipline", "parameterCategory", "parameterNumber"]
                };
                codes
                    .iter()
                    .filter(|c| !c.is_empty())
                    .map(|c| int(c).map_or_else(|| "x".to_owned(), |v| v.to_string()))
                    .collect::<Vec<_>>()
                    .join("_")
            }),
            type_of_level,
            level,
            time,
            step,
            step_type,
            number: int("perturbationNumber").or_else(|| int("number")),
            grid_type: get("gridType")
                .and_then(Value::as_text)
                .unwrap_or("unknown")
                .to_owned(),
            points,
        })
    }

    /// An attribute's value, by ecCodes' name; also `number`, `stepType`, `step` (hours),
    /// `cfVarName`, and the MARS keys as `mars.<key>`.
    pub(crate) fn get(&self, key: &str) -> Option<Key> {
        match key {
            "number" => return self.number.map(Key::Int),
            "stepType" => return Some(Key::Text(self.step_type.to_owned())),
            "step" | "endStep" => return Some(hours(self.step)),
            "level" => return Some(names::level_key(self.level)),
            "numberOfPoints" => return Some(Key::Int(self.points as i64)),
            "cfVarName" => return Some(Key::Text(self.var_name())),
            "paramId" => {
                return Some(match &self.unknown {
                    Some(codes) => Key::Text(format!("unknown_{codes}")),
                    None => Key::Int(self.param_id),
                });
            }
            _ => {}
        }
        if let Some(rest) = key.strip_prefix("mars.") {
            let mars = self.attributes.iter().find(|(k, _)| k == "mars")?;
            return mars.1.get(rest).and_then(key_of);
        }
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| key_of(v))
    }

    /// The name cfgrib gives the field's variable: ecCodes' `cfVarName`, else `shortName`;
    /// a parameter outside the table is `unknown_` and its codes (one variable each, where
    /// cfgrib would keep one unknown parameter under `unknown` and drop the others; a cube
    /// with only one calls it `unknown`).
    pub(crate) fn var_name(&self) -> String {
        if let Some(codes) = &self.unknown {
            return format!("{UNKNOWN_PREFIX}{codes}");
        }
        if let Some((var, _)) = names::cf_names(self.edition, self.param_id) {
            return var.to_owned();
        }
        match self.get_text("shortName") {
            Some(s) if s != "unknown" => s.to_owned(),
            _ => format!("paramId_{}", self.param_id),
        }
    }

    pub(crate) fn get_text(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_text())
    }
}

/// A step in seconds as a whole number of hours where it is one.
fn hours(seconds: i64) -> Key {
    if seconds % 3600 == 0 {
        Key::Int(seconds / 3600)
    } else {
        Key::Float(seconds as f64 / 3600.0)
    }
}

/// How the variable of a parameter outside the table begins: `unknown_`, then its codes.
pub(super) const UNKNOWN_PREFIX: &str = "unknown_";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_as_numbers() {
        assert!(same(&Key::Int(2), &Key::Float(2.0)));
        assert!(same(&Key::Int(2), &Key::Text("2".into())));
        assert!(!same(&Key::Int(10), &Key::Float(9.5)));
        assert!(!same(&Key::Int(10), &Key::Text("a".into())));
    }
}
