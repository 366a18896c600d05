//! What a field is, in the names ecCodes gives it: the parameter (`shortName`, `paramId`)
//! from the table in `parameters.tsv`, the level (`typeOfLevel`, `level`), the time
//! (`dataDate`, `dataTime`, `stepRange`) and the MARS request keys.

use crate::key::Key;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A field's identification, decoded from its sections.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ident {
    /// The edition (1 or 2).
    pub edition: u8,
    /// Originating centre (`centre`, numeric).
    pub centre: u16,
    /// The codes that select the parameter: for GRIB 2 `discipline`, `parameterCategory`,
    /// `parameterNumber`; for GRIB 1 `table2Version`, `indicatorOfParameter`; and the level
    /// and statistics keys some parameters also need.
    pub codes: Vec<(&'static str, i64)>,
    /// `typeOfLevel`.
    pub type_of_level: String,
    /// `level`: whole numbers as integers.
    pub level: Key,
    /// `dataDate` as YYYYMMDD.
    pub data_date: i64,
    /// `dataTime` as HHMM.
    pub data_time: i64,
    /// `stepRange`: `"6"`, or `"0-6"` for statistics over a period.
    pub step_range: String,
    /// The step's unit (`stepUnits`, code table 4.4 / GRIB 1 table 4): 1 = hours.
    pub step_unit: u8,
    /// MARS keys from an ECMWF local section (`class`, `type`, `stream`, `expver`).
    pub local_mars: Vec<(&'static str, String)>,
}

/// One row of the parameter table.
struct Param {
    edition: u8,
    short_name: &'static str,
    id: &'static str,
    name: &'static str,
    units: &'static str,
    /// `(key, value, at most)`: the key's value is `value`, or at most `value`.
    conditions: Vec<(&'static str, i64, bool)>,
}

/// The parameter table, and its rows by the codes that name a parameter, so that a field is
/// matched against the few rows for its codes (the table has thousands).
struct Table {
    rows: Vec<Param>,
    by_code: HashMap<CodeKey, Vec<usize>>,
    /// Rows that do not name all three codes: matched against every field.
    rest: Vec<usize>,
}

/// (edition, discipline or `table2Version`, category or `indicatorOfParameter`, number or 0).
type CodeKey = (u8, i64, i64, i64);

fn code_key(edition: u8, code: impl Fn(&str) -> Option<i64>) -> Option<CodeKey> {
    if edition == 1 {
        Some((1, code("table2Version")?, code("indicatorOfParameter")?, 0))
    } else {
        Some((
            edition,
            code("discipline")?,
            code("parameterCategory")?,
            code("parameterNumber")?,
        ))
    }
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let rows: Vec<Param> = include_str!("parameters.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut f = l.split('\t');
                let edition = f.next()?.parse().ok()?;
                let (short_name, param_id, name, units) =
                    (f.next()?, f.next()?, f.next()?, f.next()?);
                let conditions = f
                    .next()?
                    .split(',')
                    .filter_map(|c| {
                        if let Some((k, v)) = c.split_once("<=") {
                            return Some((k, v.parse().ok()?, true));
                        }
                        let (k, v) = c.split_once('=')?;
                        Some((k, v.parse().ok()?, false))
                    })
                    .collect();
                Some(Param {
                    edition,
                    short_name,
                    id: param_id,
                    name,
                    units,
                    conditions,
                })
            })
            .collect();
        let (mut by_code, mut rest): (HashMap<CodeKey, Vec<usize>>, Vec<usize>) =
            Default::default();
        for (i, p) in rows.iter().enumerate() {
            let code = |k: &str| {
                p.conditions
                    .iter()
                    .find(|(n, _, at_most)| *n == k && !at_most)
                    .map(|c| c.1)
            };
            match code_key(p.edition, code) {
                Some(key) => by_code.entry(key).or_default().push(i),
                None => rest.push(i),
            }
        }
        Table {
            rows,
            by_code,
            rest,
        }
    })
}

/// The codes a GRIB 2 parameter is written with, for writing a field named by `paramId` or
/// `shortName` (`wanted`): the conditions of the table's last edition-2 row for it that
/// depend on no table version (`discipline`, `parameterCategory`, `parameterNumber`, and
/// where the parameter implies them the level and statistics codes), the centre left out.
pub(crate) fn parameter_codes(wanted: &str) -> Option<Vec<(&'static str, i64)>> {
    let row = table()
        .rows
        .iter()
        .rev()
        .filter(|p| p.edition == 2 && (p.id == wanted || p.short_name == wanted))
        .find(|p| p.conditions.iter().all(|c| !c.2))?;
    Some(
        row.conditions
            .iter()
            .filter(|c| c.0 != "centre")
            .map(|c| (c.0, c.1))
            .collect(),
    )
}

/// The GRIB 2 surface types (`typeOfFirstFixedSurface`, `typeOfSecondFixedSurface`) of
/// `typeOfLevel`, as `levels.tsv` pairs them (the first pair naming it).
pub(crate) fn level_codes(type_of_level: &str) -> Option<(u8, u8)> {
    match type_of_level {
        "isobaricInhPa" | "isobaricInPa" => return Some((100, 255)),
        _ => {}
    }
    include_str!("levels.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut f = l.split('\t');
            let pair = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
            (f.next()? == type_of_level).then_some(pair)
        })
}

/// The code of MARS `class`, `type` or `stream` `text` (the reverse of [`mars_class`] and its
/// kin); a number as text is its own code.
pub(crate) fn mars_code(kind: &str, text: &str) -> Option<u64> {
    if let Ok(n) = text.parse() {
        return Some(n);
    }
    let named = |code: u64| match kind {
        "class" => mars_class(code),
        "type" => mars_type(code),
        _ => mars_stream(code),
    };
    let range = if kind == "stream" { 1000..1300 } else { 0..30 };
    range.into_iter().find(|&c| named(c) == text)
}

/// The code of the centre abbreviated `abbreviation` (`ecmf`), from `centres.tsv`.
pub(crate) fn centre_code(abbreviation: &str) -> Option<i64> {
    include_str!("centres.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let mut f = l.split('\t');
            let code = f.next()?.parse::<i64>().ok()?;
            (f.next()? == abbreviation).then_some(code)
        })
}

impl Ident {
    fn code(&self, key: &str) -> Option<i64> {
        if key == "centre" {
            return Some(i64::from(self.centre));
        }
        self.codes.iter().find(|(k, _)| *k == key).map(|c| c.1)
    }

    /// The table row whose conditions all hold, the most specific one (as ecCodes' concepts
    /// choose).
    fn param(&self) -> Option<&'static Param> {
        let t = table();
        let coded = code_key(self.edition, |k| self.code(k))
            .and_then(|key| t.by_code.get(&key))
            .map_or(&[][..], Vec::as_slice);
        // The most conditions wins; among equals, the later row, as the table is ordered.
        coded
            .iter()
            .chain(&t.rest)
            .map(|&i| (i, &t.rows[i]))
            .filter(|(_, p)| p.edition == self.edition)
            .filter(|(_, p)| {
                p.conditions
                    .iter()
                    .all(|&(k, v, at_most)| match self.code(k) {
                        Some(c) if at_most => c <= v,
                        c => c == Some(v),
                    })
            })
            .max_by_key(|(i, p)| (p.conditions.len(), *i))
            .map(|(_, p)| p)
    }

    /// `shortName`; `unknown` (as ecCodes says) for parameters outside the table.
    #[must_use]
    pub fn short_name(&self) -> &'static str {
        self.param().map_or("unknown", |p| p.short_name)
    }

    /// `paramId`, for parameters in the table.
    #[must_use]
    pub fn param_id(&self) -> Option<i64> {
        self.param().and_then(|p| p.id.parse().ok())
    }

    /// The ensemble member (`number`: `perturbationNumber`), when the field has one.
    #[must_use]
    pub fn number(&self) -> Option<i64> {
        self.code("perturbationNumber")
    }

    /// The ensemble member of an ensemble product, as MARS names it (`number`): GRIB 2's
    /// ensemble templates, GRIB 1's control and perturbed forecasts. `None` for other fields,
    /// whose local sections may still carry a `perturbationNumber` of 0.
    #[must_use]
    pub fn member(&self) -> Option<i64> {
        let ensemble = match self.edition {
            1 => self
                .local_mars
                .iter()
                .any(|(k, v)| *k == "type" && matches!(v.as_str(), "cf" | "pf")),
            _ => true,
        };
        self.number().filter(|_| ensemble)
    }

    /// The step's end (the step of an instantaneous field).
    fn step_end(&self) -> &str {
        self.step_range.rsplit('-').next().unwrap_or("0")
    }

    /// MARS `levtype`.
    fn levtype(&self) -> &'static str {
        match self.type_of_level.as_str() {
            "isobaricInhPa" | "isobaricInPa" => "pl",
            "hybrid" => "ml",
            "theta" => "pt",
            "potentialVorticity" => "pv",
            "depthBelowLandLayer" | "soilLayer" => "sol",
            _ => "sfc",
        }
    }

    /// The MARS request keys (`mars` namespace): `class`, `type`, `stream`, `expver` when an
    /// ECMWF local section gives them; `date`, `time`, `step`, `levtype`, `levelist`,
    /// `number` (ensemble members), `param`.
    #[must_use]
    pub fn mars(&self) -> Vec<(&'static str, String)> {
        let mut m = self.local_mars.clone();
        m.push(("date", self.data_date.to_string()));
        m.push(("time", format!("{:04}", self.data_time)));
        m.push(("step", self.step_end().to_owned()));
        let levtype = self.levtype();
        m.push(("levtype", levtype.to_owned()));
        if levtype != "sfc" {
            m.push(("levelist", self.level.to_string()));
        }
        if let Some(n) = self.member() {
            m.push(("number", n.to_string()));
        }
        let param = match (self.edition, self.param()) {
            (1, Some(p)) => format!("{}.{}", p.id, self.code("table2Version").unwrap_or(128)),
            (_, Some(p)) => p.id.to_owned(),
            (1, None) => format!(
                "{}.{}",
                self.code("indicatorOfParameter").unwrap_or(0),
                self.code("table2Version").unwrap_or(0)
            ),
            (_, None) => "0".to_owned(),
        };
        m.push(("param", param));
        m
    }

    /// The identification keys, with ecCodes' names.
    #[must_use]
    pub fn keys(&self) -> Vec<(&'static str, Key)> {
        let p = self.param();
        let mut k = vec![("shortName", Key::from(self.short_name()))];
        if let Some(id) = self.param_id() {
            k.push(("paramId", Key::Int(id)));
        }
        if let Some(p) = p {
            // ecCodes' `name`, under another key: `name` is what tensors are called by.
            k.push(("parameterName", p.name.into()));
            k.push(("units", p.units.into()));
        }
        k.push(("edition", Key::Int(i64::from(self.edition))));
        k.push(("centre", Key::Int(i64::from(self.centre))));
        k.extend(self.codes.iter().map(|(name, v)| (*name, Key::Int(*v))));
        k.push(("typeOfLevel", Key::Text(self.type_of_level.clone())));
        k.push(("level", self.level.clone()));
        k.push(("dataDate", Key::Int(self.data_date)));
        k.push(("dataTime", Key::Int(self.data_time)));
        k.push(("stepRange", Key::Text(self.step_range.clone())));
        k.push(("stepUnits", Key::Int(i64::from(self.step_unit))));
        k
    }
}

/// ecCodes' `cfVarName` (the variable name cfgrib gives a parameter, `t2m` for `2t`) and
/// `cfName` (the CF standard name; `None` where ecCodes has `unknown`) of parameter
/// `param_id` in GRIB edition `edition`, from the table in `cf_names.tsv`.
#[must_use]
pub fn cf_names(edition: i64, param_id: i64) -> Option<(&'static str, Option<&'static str>)> {
    type CfTable = HashMap<(i64, i64), (&'static str, &'static str)>;
    static TABLE: OnceLock<CfTable> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        include_str!("cf_names.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut f = l.split('\t');
                let edition = f.next()?.parse().ok()?;
                let id = f.next()?.parse().ok()?;
                Some(((edition, id), (f.next()?, f.next()?)))
            })
            .collect()
    });
    let (var, cf) = table.get(&(edition, param_id))?;
    Some((var, (*cf != "unknown").then_some(*cf)))
}

/// ecCodes' abbreviation (`centre` as text: `ecmf`) and `centreDescription` of originating
/// centre `code`, for the centres in `centres.tsv`.
#[must_use]
pub fn centre(code: i64) -> Option<(&'static str, &'static str)> {
    include_str!("centres.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.parse::<i64>().ok()?, f.next()?, f.next()?))
        })
        .find(|(c, _, _)| *c == code)
        .map(|(_, a, d)| (a, d))
}

/// A level value as ecCodes gives it: an integer when whole.
pub(crate) fn level_key(v: f64) -> Key {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Key::Int(v as i64)
    } else {
        Key::Float(v)
    }
}

/// GRIB 2 `typeOfFirstFixedSurface` and `typeOfSecondFixedSurface` → (`typeOfLevel`, level
/// divisor), as ecCodes' concept names them (`levels.tsv`): pressure in Pa is given in hPa
/// from 100 Pa on (ecCodes' `pressureUnits`); `unknown` for a pair the concept lacks.
pub(crate) fn level_type_2(surface: u8, second: u8, value: f64) -> (&'static str, f64) {
    static TABLE: OnceLock<HashMap<(u8, u8), &'static str>> = OnceLock::new();
    if surface == 100 && second == 255 {
        return if value >= 100.0 || value == 0.0 {
            ("isobaricInhPa", 100.0)
        } else {
            ("isobaricInPa", 1.0)
        };
    }
    let table = TABLE.get_or_init(|| {
        include_str!("levels.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let mut f = l.split('\t');
                let pair = (f.next()?.parse().ok()?, f.next()?.parse().ok()?);
                Some((pair, f.next()?))
            })
            .collect()
    });
    (
        table.get(&(surface, second)).copied().unwrap_or("unknown"),
        1.0,
    )
}

/// GRIB 1 `indicatorOfTypeOfLevel` → `typeOfLevel`, and whether octets 11 and 12 hold two
/// levels (a layer's top and bottom) rather than one.
pub(crate) fn level_type_1(code: u8) -> (&'static str, bool) {
    match code {
        1 => ("surface", false),
        2 => ("cloudBase", false),
        3 => ("cloudTop", false),
        4 => ("isothermZero", false),
        8 => ("nominalTop", false),
        100 => ("isobaricInhPa", false),
        101 => ("isobaricLayer", true),
        102 => ("meanSea", false),
        103 => ("heightAboveSea", false),
        105 => ("heightAboveGround", false),
        106 => ("heightAboveGroundLayer", true),
        107 => ("sigma", false),
        108 => ("sigmaLayer", true),
        109 => ("hybrid", false),
        110 => ("hybridLayer", true),
        111 => ("depthBelowLand", false),
        112 => ("depthBelowLandLayer", true),
        113 => ("theta", false),
        114 => ("thetaLayer", true),
        117 => ("potentialVorticity", false),
        160 => ("depthBelowSea", false),
        200 => ("entireAtmosphere", false),
        _ => ("unknown", false),
    }
}

/// ECMWF's MARS class, type and stream codes (the local section's numbers) → names.
pub(crate) fn mars_class(code: u64) -> String {
    const CLASSES: [&str; 30] = [
        "0", "od", "rd", "er", "cs", "e4", "dm", "pv", "el", "to", "co", "en", "ti", "me", "ei",
        "sr", "dt", "la", "yt", "mc", "pe", "em", "e2", "ea", "ep", "rm", "nr", "s2", "j5", "ur",
    ];
    CLASSES
        .get(code as usize)
        .map_or_else(|| code.to_string(), |s| (*s).to_owned())
}

/// See [`mars_class`].
pub(crate) fn mars_type(code: u64) -> String {
    const TYPES: [&str; 30] = [
        "0", "fg", "an", "ia", "oi", "3v", "4v", "3g", "4g", "fc", "cf", "pf", "ef", "ea", "cm",
        "cs", "fp", "em", "es", "fa", "cl", "si", "s3", "ed", "tu", "ff", "of", "efi", "efic",
        "pb",
    ];
    TYPES
        .get(code as usize)
        .map_or_else(|| code.to_string(), |s| (*s).to_owned())
}

/// See [`mars_class`].
pub(crate) fn mars_stream(code: u64) -> String {
    match code {
        1025 => "oper",
        1026 => "scda",
        1030 => "enda",
        1035 => "enfo",
        1043 => "mnth",
        1045 => "wave",
        1046 => "ocea",
        1078 => "edmm",
        1082 => "waef",
        1090 => "eefo",
        1247 => "elda",
        _ => return code.to_string(),
    }
    .to_owned()
}

/// A step value in hours, from a count of `unit` (code table 4.4: 0 minute, 1 hour, 2 day,
/// 10 3 hours, 11 6 hours, 12 12 hours, 13 second); other units keep the count.
pub(crate) fn step_hours(value: i64, unit: u8) -> (i64, u8) {
    match unit {
        1 => (value, 1),
        2 => (value * 24, 1),
        10 => (value * 3, 1),
        11 => (value * 6, 1),
        12 => (value * 12, 1),
        0 if value % 60 == 0 => (value / 60, 1),
        13 if value % 3600 == 0 => (value / 3600, 1),
        _ => (value, unit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_parameter_wins() {
        let mut id = Ident {
            edition: 2,
            codes: vec![
                ("discipline", 0),
                ("parameterCategory", 0),
                ("parameterNumber", 0),
                ("typeOfFirstFixedSurface", 103),
                ("scaleFactorOfFirstFixedSurface", 0),
                ("scaledValueOfFirstFixedSurface", 2),
            ],
            ..Ident::default()
        };
        assert_eq!((id.short_name(), id.param_id()), ("2t", Some(167)));
        id.codes[3].1 = 100;
        assert_eq!((id.short_name(), id.param_id()), ("t", Some(130)));
        id.codes[0].1 = 99;
        assert_eq!((id.short_name(), id.param_id()), ("unknown", None));
    }
}
