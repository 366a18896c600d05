//! A GRIB 2 field's sections 1 to 5 from its keys — the keys tensorkit's reader gives a field
//! (`Field::attributes`), cfgrib's names for the same things, or a user's — for tensors that
//! keep no sections of their own. Keys not given take the values ecCodes' GRIB 2 samples have.
//!
//! Grids: `regular_ll` (template 3.0), `rotated_ll` (3.1), `regular_gg` and `reduced_gg`
//! (3.40, the latter with `pl`). Products: 4.0, ensemble members 4.1 (`perturbationNumber`),
//! statistics over a period 4.8 (`typeOfStatisticalProcessing`, `stepRange` `a-b`) and both
//! 4.11. The ECMWF local section (MARS `class`, `type`, `stream`, `expver`) for centre 98.

use super::repacking::Repacking;
use super::sections::{ieee_body, packing_body, section, sign_magnitude};
use crate::error::{Error, Result};
use crate::field::Key;
use crate::names;

/// A field's keys, looked up by ecCodes' name (`mars.class` for MARS keys).
pub type Keys<'k> = &'k dyn Fn(&str) -> Option<Key>;

fn missing(what: &str) -> Error {
    Error::Write {
        what: format!("writing GRIB from keys: {what}"),
    }
}

fn int(keys: Keys<'_>, name: &str) -> Option<i64> {
    match keys(name)? {
        Key::Int(i) => Some(i),
        #[allow(clippy::cast_possible_truncation, reason = "whole values only")]
        Key::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => Some(f as i64),
        Key::Text(t) => t.trim().parse().ok(),
        Key::Float(_) => None,
    }
}

fn float(keys: Keys<'_>, name: &str) -> Option<f64> {
    match keys(name)? {
        #[allow(clippy::cast_precision_loss, reason = "a key's value")]
        Key::Int(i) => Some(i as f64),
        Key::Float(f) => Some(f),
        Key::Text(t) => t.trim().parse().ok(),
    }
}

fn text(keys: Keys<'_>, name: &str) -> Option<String> {
    match keys(name)? {
        Key::Text(t) => Some(t),
        Key::Int(i) => Some(i.to_string()),
        Key::Float(f) => Some(f.to_string()),
    }
}

/// `v` in `n` octets, or an error naming `what`.
fn octets(v: i64, n: usize, what: &str) -> Result<Vec<u8>> {
    let bits = 8 * n as u32;
    if v < 0 || (bits < 64 && v >= 1i64 << bits) {
        return Err(missing(&format!("{what} = {v} does not fit {n} octets")));
    }
    Ok(v.to_be_bytes()[8 - n..].to_vec())
}

/// Key `name` (or `default`) in `n` octets, or an error naming it.
fn key_octets(keys: Keys<'_>, name: &str, default: i64, n: usize) -> Result<Vec<u8>> {
    octets(int(keys, name).unwrap_or(default), n, name)
}

/// `v` in `n` octets, sign and magnitude.
fn signed(v: i64, n: usize, what: &str) -> Result<Vec<u8>> {
    sign_magnitude(v, n).ok_or_else(|| missing(&format!("{what} = {v} does not fit {n} octets")))
}

/// Degrees as GRIB 2 stores them: millionths, sign and magnitude.
#[allow(
    clippy::cast_possible_truncation,
    reason = "rounded, then checked to fit"
)]
fn micro(degrees: f64, what: &str) -> Result<Vec<u8>> {
    let v = (degrees * 1e6).round();
    if !v.is_finite() || v.abs() >= f64::from(1u32 << 31) {
        return Err(missing(&format!("{what} = {degrees} degrees")));
    }
    signed(v as i64, 4, what)
}

/// The discipline, sections 1 to 5 and the packing of a field of `points` values described by
/// `keys`; `how` overrides the packing they name (`packingType`, `bitsPerValue`: by default
/// simple packing at 16 bits, as ecCodes' samples).
pub fn sections_from_keys(
    keys: Keys<'_>,
    points: usize,
    how: Option<Repacking>,
) -> Result<(u8, Vec<u8>, Repacking)> {
    // A parameter named by `paramId` or `shortName` brings its codes, which keys given
    // explicitly override.
    let implied = ["paramId", "shortName"]
        .iter()
        .find_map(|k| text(keys, k).and_then(|w| names::parameter_codes(&w)))
        .unwrap_or_default();
    let lookup = |name: &str| -> Option<Key> {
        keys(name).or_else(|| {
            implied
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| Key::Int(*v))
        })
    };
    let keys: Keys<'_> = &lookup;
    let discipline = int(keys, "discipline")
        .ok_or_else(|| missing("no `discipline`, `paramId` or `shortName` names the parameter"))?;
    let discipline = u8::try_from(discipline).map_err(|_| missing("`discipline` over 255"))?;
    let mut out = identification(keys)?;
    out.extend(local(keys)?);
    out.extend(grid(keys, points)?);
    out.extend(product(keys)?);
    let how = match how {
        Some(h) => h,
        None => packing(keys),
    };
    out.extend(placeholder(how, points)?);
    Ok((discipline, out, how))
}

/// Section 1: centre, tables, the reference time, what the data are.
fn identification(keys: Keys<'_>) -> Result<Vec<u8>> {
    let centre = match keys("centre") {
        Some(Key::Text(t)) => t
            .parse()
            .ok()
            .or_else(|| names::centre_code(&t))
            .ok_or_else(|| missing(&format!("centre {t:?} is no centre ecCodes names")))?,
        Some(_) => int(keys, "centre").unwrap_or(255),
        None => 255,
    };
    let date = int(keys, "dataDate")
        .or_else(|| int(keys, "mars.date"))
        .ok_or_else(|| missing("no `dataDate`"))?;
    let time = int(keys, "dataTime")
        .or_else(|| int(keys, "mars.time"))
        .unwrap_or(0);
    let (year, month, day) = (date / 10000, date / 100 % 100, date % 100);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(missing(&format!("dataDate {date} is no date (YYYYMMDD)")));
    }
    let (hour, minute) = (time / 100, time % 100);
    if hour > 23 || minute > 59 || time < 0 {
        return Err(missing(&format!("dataTime {time} is no time (HHMM)")));
    }
    let mut b = Vec::with_capacity(16);
    b.extend(octets(centre, 2, "centre")?);
    b.extend(key_octets(keys, "subCentre", 0, 2)?);
    b.extend(key_octets(keys, "tablesVersion", 4, 1)?);
    b.extend(key_octets(keys, "localTablesVersion", 0, 1)?);
    b.extend(key_octets(keys, "significanceOfReferenceTime", 1, 1)?);
    b.extend(octets(year, 2, "the year")?);
    b.extend([month as u8, day as u8, hour as u8, minute as u8, 0]);
    b.extend(key_octets(keys, "productionStatusOfProcessedData", 0, 1)?);
    b.extend(key_octets(keys, "typeOfProcessedData", 255, 1)?);
    Ok(section(1, &b))
}

/// Section 2, ECMWF's MARS labelling (local definition 1), for centre 98 with a MARS class,
/// type and stream; none otherwise.
fn local(keys: Keys<'_>) -> Result<Vec<u8>> {
    let ecmwf = matches!(keys("centre"), Some(Key::Text(ref t)) if t == "ecmf")
        || int(keys, "centre") == Some(98);
    let mars: Vec<Option<String>> = ["class", "type", "stream"]
        .iter()
        .map(|k| text(keys, &format!("mars.{k}")))
        .collect();
    if !ecmwf || mars.iter().any(Option::is_none) {
        return Ok(Vec::new());
    }
    let mut b = vec![0, 1];
    for (kind, value) in ["class", "type", "stream"].iter().zip(&mars) {
        let value = value.as_deref().unwrap_or_default();
        let code = names::mars_code(kind, value)
            .ok_or_else(|| missing(&format!("MARS {kind} {value:?} has no code")))?;
        b.extend(octets(i64::try_from(code).unwrap_or(-1), 2, kind)?);
    }
    let expver = text(keys, "mars.expver").unwrap_or_else(|| "0001".into());
    if expver.len() != 4 || !expver.is_ascii() {
        return Err(missing(&format!(
            "MARS expver {expver:?} is not four characters"
        )));
    }
    b.extend(expver.as_bytes());
    Ok(section(2, &b))
}

/// The shape of the Earth (octets 15–30 of templates 3.0, 3.1, 3.40).
fn earth(keys: Keys<'_>) -> Result<Vec<u8>> {
    let shape = int(keys, "shapeOfTheEarth").unwrap_or(6);
    let mut b = octets(shape, 1, "shapeOfTheEarth")?;
    match float(keys, "radius") {
        Some(r) if shape == 1 => {
            #[allow(clippy::cast_possible_truncation, reason = "whole metres")]
            let metres = r.round() as i64;
            b.push(0);
            b.extend(octets(metres, 4, "radius")?);
        }
        _ => b.extend([0xff; 5]),
    }
    b.extend([0xff; 10]);
    Ok(b)
}

/// Section 3: the grid.
fn grid(keys: Keys<'_>, points: usize) -> Result<Vec<u8>> {
    let grid_type = text(keys, "gridType").unwrap_or_else(|| "regular_ll".into());
    let template: u16 = match grid_type.as_str() {
        "regular_ll" => 0,
        "rotated_ll" => 1,
        "regular_gg" | "reduced_gg" => 40,
        "mercator" => return projection(keys, 10, points),
        "polar_stereographic" => return projection(keys, 20, points),
        "lambert" => return projection(keys, 30, points),
        other => {
            return Err(missing(&format!(
                "gridType {other:?} (regular_ll, rotated_ll, regular_gg, reduced_gg, lambert, \
                 polar_stereographic and mercator are written)"
            )));
        }
    };
    let pl: Option<Vec<i64>> = match keys("pl") {
        None => None,
        Some(Key::Text(t)) => Some(
            t.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse()
                        .map_err(|_| missing("`pl` is not a list of counts"))
                })
                .collect::<Result<_>>()?,
        ),
        Some(_) => return Err(missing("`pl` is not a list of counts")),
    };
    let reduced = grid_type == "reduced_gg";
    if reduced != pl.is_some() {
        return Err(missing("a reduced_gg grid needs `pl`, and only it"));
    }
    let nj = int(keys, "Nj").ok_or_else(|| missing("no `Nj`"))?;
    let ni = if reduced {
        None
    } else {
        Some(int(keys, "Ni").ok_or_else(|| missing("no `Ni`"))?)
    };
    let count = match (&pl, ni) {
        (Some(pl), _) => pl.iter().sum::<i64>(),
        (None, Some(ni)) => ni.saturating_mul(nj),
        _ => 0,
    };
    if count != points as i64 {
        return Err(missing(&format!(
            "the grid has {count} points, the values {points}"
        )));
    }
    let deg = |name: &str| float(keys, name).ok_or_else(|| missing(&format!("no `{name}`")));
    let mut b = vec![0];
    b.extend(octets(count, 4, "numberOfDataPoints")?);
    b.extend(if reduced { [2, 1] } else { [0, 0] });
    b.extend(template.to_be_bytes());
    b.extend(earth(keys)?);
    b.extend(ni.map_or(Ok(vec![0xff; 4]), |n| octets(n, 4, "Ni"))?);
    b.extend(octets(nj, 4, "Nj")?);
    b.extend([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    b.extend(micro(
        deg("latitudeOfFirstGridPointInDegrees")?,
        "latitudeOfFirstGridPoint",
    )?);
    b.extend(micro(
        deg("longitudeOfFirstGridPointInDegrees")?,
        "longitudeOfFirstGridPoint",
    )?);
    let di = if reduced {
        None
    } else {
        float(keys, "iDirectionIncrementInDegrees")
    };
    let second = if template == 40 {
        Some(
            int(keys, "N")
                .ok_or_else(|| missing("no `N` (a Gaussian grid's parallels per hemisphere)"))?,
        )
    } else {
        None
    };
    let dj = if template == 40 {
        None
    } else {
        float(keys, "jDirectionIncrementInDegrees")
    };
    let mut flags = 0u8;
    if di.is_some() {
        flags |= 0x20;
    }
    if dj.is_some() || second.is_some() {
        flags |= 0x10;
    }
    if int(keys, "uvRelativeToGrid") == Some(1) {
        flags |= 0x08;
    }
    b.push(flags);
    b.extend(micro(
        deg("latitudeOfLastGridPointInDegrees")?,
        "latitudeOfLastGridPoint",
    )?);
    b.extend(micro(
        deg("longitudeOfLastGridPointInDegrees")?,
        "longitudeOfLastGridPoint",
    )?);
    b.extend(di.map_or(Ok(vec![0xff; 4]), |d| micro(d, "iDirectionIncrement"))?);
    match (second, dj) {
        (Some(n), _) => b.extend(octets(n, 4, "N")?),
        (None, Some(d)) => b.extend(micro(d, "jDirectionIncrement")?),
        (None, None) => b.extend([0xff; 4]),
    }
    let scan = |name: &str, bit: u8| {
        if int(keys, name) == Some(1) { bit } else { 0 }
    };
    b.push(
        scan("iScansNegatively", 0x80)
            | scan("jScansPositively", 0x40)
            | scan("jPointsAreConsecutive", 0x20),
    );
    if template == 1 {
        b.extend(micro(
            float(keys, "latitudeOfSouthernPoleInDegrees").unwrap_or(-90.0),
            "latitudeOfSouthernPole",
        )?);
        b.extend(micro(
            float(keys, "longitudeOfSouthernPoleInDegrees").unwrap_or(0.0),
            "longitudeOfSouthernPole",
        )?);
        #[allow(clippy::cast_possible_truncation, reason = "stored as a single")]
        let angle = float(keys, "angleOfRotationInDegrees").unwrap_or(0.0) as f32;
        b.extend(angle.to_be_bytes());
    }
    for n in pl.iter().flatten() {
        b.extend(octets(*n, 2, "pl")?);
    }
    Ok(section(3, &b))
}

/// Section 3 for a projection: Mercator (template 3.10), polar stereographic (3.20) or
/// Lambert conformal (3.30), angles in millionths of a degree and lengths in millimetres.
fn projection(keys: Keys<'_>, template: u16, points: usize) -> Result<Vec<u8>> {
    let ni = int(keys, "Ni")
        .or_else(|| int(keys, "Nx"))
        .ok_or_else(|| missing("no `Ni` (`Nx`)"))?;
    let nj = int(keys, "Nj")
        .or_else(|| int(keys, "Ny"))
        .ok_or_else(|| missing("no `Nj` (`Ny`)"))?;
    if ni.saturating_mul(nj) != points as i64 {
        return Err(missing(&format!(
            "the grid has {} points, the values {points}",
            ni.saturating_mul(nj)
        )));
    }
    let angle = |name: &str| -> Result<Vec<u8>> {
        micro(
            float(keys, name).ok_or_else(|| missing(&format!("no `{name}`")))?,
            name,
        )
    };
    let angle_or_missing = |name: &str| -> Result<Vec<u8>> {
        float(keys, name).map_or(Ok(vec![0xff; 4]), |d| micro(d, name))
    };
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounded millimetres, checked to fit"
    )]
    let metres = |names: &[&str]| -> Result<Vec<u8>> {
        match names.iter().find_map(|n| float(keys, n)) {
            Some(m) => octets((m * 1e3).round() as i64, 4, names[0]),
            None => Err(missing(&format!("no `{}`", names[0]))),
        }
    };
    let scan = |name: &str, bit: u8| {
        if int(keys, name) == Some(1) { bit } else { 0 }
    };
    let scanning = scan("iScansNegatively", 0x80)
        | scan("jScansPositively", 0x40)
        | scan("jPointsAreConsecutive", 0x20);
    let mut flags = 0x30u8;
    if int(keys, "uvRelativeToGrid") == Some(1) {
        flags |= 0x08;
    }
    let mut b = vec![0];
    b.extend(octets(points as i64, 4, "numberOfDataPoints")?);
    b.extend([0, 0]);
    b.extend(template.to_be_bytes());
    b.extend(earth(keys)?);
    b.extend(octets(ni, 4, "Ni")?);
    b.extend(octets(nj, 4, "Nj")?);
    b.extend(angle("latitudeOfFirstGridPointInDegrees")?);
    b.extend(angle("longitudeOfFirstGridPointInDegrees")?);
    b.push(flags);
    b.extend(angle("LaDInDegrees")?);
    if template == 10 {
        b.extend(angle("latitudeOfLastGridPointInDegrees")?);
        b.extend(angle("longitudeOfLastGridPointInDegrees")?);
        b.push(scanning);
        b.extend(angle_or_missing("orientationOfTheGridInDegrees")?);
        b.extend(metres(&["DiInMetres", "DxInMetres"])?);
        b.extend(metres(&["DjInMetres", "DyInMetres"])?);
    } else {
        b.extend(angle("LoVInDegrees")?);
        b.extend(metres(&["DxInMetres", "DiInMetres"])?);
        b.extend(metres(&["DyInMetres", "DjInMetres"])?);
        b.extend(key_octets(keys, "projectionCentreFlag", 0, 1)?);
        b.push(scanning);
        if template == 30 {
            b.extend(angle("Latin1InDegrees")?);
            b.extend(angle("Latin2InDegrees")?);
            b.extend(angle_or_missing("latitudeOfSouthernPoleInDegrees")?);
            b.extend(angle_or_missing("longitudeOfSouthernPoleInDegrees")?);
        }
    }
    Ok(section(3, &b))
}

/// The step as a start and a length in `unit`: `stepRange` `a` or `a-b`, else `forecastTime`.
fn step(keys: Keys<'_>) -> Result<(i64, Option<i64>)> {
    let range = text(keys, "stepRange").or_else(|| text(keys, "mars.step"));
    match range {
        Some(r) => {
            let bad = || missing(&format!("stepRange {r:?} is not `a` or `a-b`"));
            match r.split_once('-') {
                Some((a, b)) => {
                    let (a, b): (i64, i64) =
                        (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                    Ok((a, Some(b - a)))
                }
                None => Ok((r.parse().map_err(|_| bad())?, None)),
            }
        }
        None => Ok((int(keys, "forecastTime").unwrap_or(0), None)),
    }
}

/// Section 4: the product.
fn product(keys: Keys<'_>) -> Result<Vec<u8>> {
    let (start, length) = step(keys)?;
    let length = int(keys, "lengthOfTimeRange").or(length);
    let ensemble = int(keys, "perturbationNumber").or_else(|| int(keys, "mars.number"));
    let statistics = int(keys, "typeOfStatisticalProcessing");
    if length.is_some_and(|l| l != 0) && statistics.is_none() {
        return Err(missing(
            "a step range `a-b` needs `typeOfStatisticalProcessing` (code table 4.10)",
        ));
    }
    let template: u16 = match (ensemble.is_some(), statistics.is_some()) {
        (false, false) => 0,
        (true, false) => 1,
        (false, true) => 8,
        (true, true) => 11,
    };
    let unit = int(keys, "stepUnits")
        .or_else(|| int(keys, "indicatorOfUnitOfTimeRange"))
        .unwrap_or(1);
    let mut b = vec![0, 0];
    b.extend(template.to_be_bytes());
    for k in ["parameterCategory", "parameterNumber"] {
        b.extend(octets(
            int(keys, k).ok_or_else(|| missing(&format!("no `{k}`")))?,
            1,
            k,
        )?);
    }
    b.extend(key_octets(keys, "typeOfGeneratingProcess", 255, 1)?);
    b.extend(key_octets(keys, "backgroundProcess", 255, 1)?);
    b.extend(key_octets(keys, "generatingProcessIdentifier", 255, 1)?);
    b.extend([0xff, 0xff, 0xff]);
    b.extend(octets(unit, 1, "stepUnits")?);
    b.extend(signed(start, 4, "forecastTime")?);
    b.extend(surfaces(keys)?);
    if let Some(member) = ensemble {
        b.extend(key_octets(keys, "typeOfEnsembleForecast", 255, 1)?);
        b.extend(octets(member, 1, "perturbationNumber")?);
        b.extend(key_octets(keys, "numberOfForecastsInEnsemble", 255, 1)?);
    }
    if let Some(process) = statistics {
        let length = length.unwrap_or(0);
        let range_unit = int(keys, "indicatorOfUnitForTimeRange").unwrap_or(unit);
        let (Some(step_seconds), Some(range_seconds)) = (
            crate::cube::keys::unit_seconds(unit),
            crate::cube::keys::unit_seconds(range_unit),
        ) else {
            return Err(missing(&format!(
                "the end of a period in time units {unit} and {range_unit}"
            )));
        };
        let date = int(keys, "dataDate").unwrap_or(0);
        let time = int(keys, "dataTime").unwrap_or(0);
        let seconds =
            tensor_core::civil::days_from_civil(date / 10000, date / 100 % 100, date % 100)
                .saturating_mul(86_400)
                .saturating_add(time / 100 * 3600 + time % 100 * 60)
                .saturating_add(start.saturating_mul(step_seconds))
                .saturating_add(length.saturating_mul(range_seconds));
        let (y, m, d) = tensor_core::civil::civil_from_days(seconds.div_euclid(86_400));
        let in_day = seconds.rem_euclid(86_400);
        b.extend(octets(y, 2, "the period's end")?);
        #[allow(
            clippy::cast_possible_truncation,
            reason = "a month, day, hour, minute, second"
        )]
        b.extend([
            m as u8,
            d as u8,
            (in_day / 3600) as u8,
            (in_day / 60 % 60) as u8,
            (in_day % 60) as u8,
        ]);
        b.push(1);
        b.extend([0, 0, 0, 0]);
        b.extend(octets(process, 1, "typeOfStatisticalProcessing")?);
        b.extend(key_octets(keys, "typeOfTimeIncrement", 2, 1)?);
        b.extend(octets(range_unit, 1, "indicatorOfUnitForTimeRange")?);
        b.extend(octets(length, 4, "lengthOfTimeRange")?);
        b.extend([0xff, 0, 0, 0, 0]);
    }
    Ok(section(4, &b))
}

/// The level (octets 23–34 of templates 4.0 to 4.15): the surfaces' types, scale factors and
/// scaled values — given as codes, or from `typeOfLevel` and `level`.
fn surfaces(keys: Keys<'_>) -> Result<Vec<u8>> {
    let type_of_level = text(keys, "typeOfLevel");
    let named = type_of_level.as_deref().and_then(names::level_codes);
    let first = int(keys, "typeOfFirstFixedSurface")
        .or(named.map(|n| i64::from(n.0)))
        .ok_or_else(|| missing("no `typeOfFirstFixedSurface` or `typeOfLevel` ecCodes names"))?;
    let second = int(keys, "typeOfSecondFixedSurface")
        .or(named.map(|n| i64::from(n.1)))
        .unwrap_or(255);
    let mut b = octets(first, 1, "typeOfFirstFixedSurface")?;
    match (
        int(keys, "scaleFactorOfFirstFixedSurface"),
        int(keys, "scaledValueOfFirstFixedSurface"),
    ) {
        (Some(f), Some(v)) => {
            b.extend(signed(f, 1, "scaleFactorOfFirstFixedSurface")?);
            b.extend(octets(v, 4, "scaledValueOfFirstFixedSurface")?);
        }
        _ => match float(keys, "level") {
            Some(level) if level != 0.0 || !matches!(first, 1 | 8 | 9 | 101) => {
                let level = if type_of_level.as_deref() == Some("isobaricInhPa") {
                    level * 100.0
                } else {
                    level
                };
                let (factor, value) = scaled(level)?;
                b.extend(signed(factor, 1, "scaleFactorOfFirstFixedSurface")?);
                b.extend(octets(value, 4, "scaledValueOfFirstFixedSurface")?);
            }
            _ => b.extend([0xff; 5]),
        },
    }
    b.extend(octets(second, 1, "typeOfSecondFixedSurface")?);
    match (
        int(keys, "scaleFactorOfSecondFixedSurface"),
        int(keys, "scaledValueOfSecondFixedSurface"),
    ) {
        (Some(f), Some(v)) => {
            b.extend(signed(f, 1, "scaleFactorOfSecondFixedSurface")?);
            b.extend(octets(v, 4, "scaledValueOfSecondFixedSurface")?);
        }
        _ => b.extend([0xff; 5]),
    }
    Ok(b)
}

/// A level as GRIB 2 stores it: the fewest decimal places that give it whole.
#[allow(
    clippy::cast_possible_truncation,
    reason = "checked to be whole and to fit"
)]
fn scaled(level: f64) -> Result<(i64, i64)> {
    for factor in 0..=9 {
        let v = level * 10f64.powi(factor);
        if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) && v.abs() < 4e9 {
            return Ok((i64::from(factor), v.round() as i64));
        }
    }
    Err(missing(&format!("level {level} has no scaled form")))
}

/// The packing `packingType` and `bitsPerValue` name (simple packing at 16 bits when they
/// name none).
fn packing(keys: Keys<'_>) -> Repacking {
    let bits = int(keys, "bitsPerValue")
        .filter(|&b| b > 0)
        .map(|b| u32::try_from(b).unwrap_or(u32::MAX));
    let name = text(keys, "packingType").unwrap_or_else(|| "grid_simple".into());
    match name.as_str() {
        "grid_ccsds" => Repacking::Ccsds {
            bits: Some(bits.unwrap_or(16).min(32)),
        },
        "grid_complex" => Repacking::Complex {
            bits: Some(bits.unwrap_or(16).min(23)),
            order: 0,
        },
        "grid_complex_spatial_differencing" => Repacking::Complex {
            bits: Some(bits.unwrap_or(16).min(23)),
            order: u8::try_from(int(keys, "orderOfSpatialDifferencing").unwrap_or(2))
                .ok()
                .filter(|o| matches!(o, 1 | 2))
                .unwrap_or(2),
        },
        "grid_png" => Repacking::Png {
            bits: Some(bits.unwrap_or(16).div_ceil(8).clamp(1, 4) * 8),
        },
        "grid_ieee" => Repacking::Ieee {
            bits: if bits == Some(64) { 64 } else { 32 },
        },
        // Simple packing, and those with no encoder here at their width.
        _ => Repacking::Simple {
            bits: Some(bits.unwrap_or(16).min(63)),
        },
    }
}

/// A section 5 for `how` to start from: simple packing's template (R, E, D all 0) at its
/// bits, IEEE's at its precision; [`super::field`] packs the values as `how` says.
fn placeholder(how: Repacking, points: usize) -> Result<Vec<u8>> {
    let body = match how {
        Repacking::Ieee { bits } => ieee_body(points, bits)?,
        Repacking::Simple { bits }
        | Repacking::Ccsds { bits }
        | Repacking::Complex { bits, .. }
        | Repacking::Png { bits } => {
            let start = crate::field::Simple {
                reference_value: 0.0,
                binary_scale_factor: 0,
                decimal_scale_factor: 0,
                bits_per_value: bits.unwrap_or(16),
            };
            packing_body(points, 0, &start, 0)?
        }
    };
    Ok(section(5, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_take_the_fewest_decimals() {
        assert_eq!(scaled(2.0).unwrap(), (0, 2));
        assert_eq!(scaled(0.5).unwrap(), (1, 5));
        assert_eq!(scaled(50000.0).unwrap(), (0, 50000));
    }
}
