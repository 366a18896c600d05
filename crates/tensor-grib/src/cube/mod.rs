//! GRIB fields as hypercubes, the shape weather code expects (cfgrib's datasets): one variable
//! per parameter, named by ecCodes' `cfVarName`, with dimensions `number`, `time`, `step`,
//! the level type's own name (`isobaricInhPa`, `heightAboveGround`...), then the grid's;
//! `valid_time`; CF and `GRIB_*` attributes.
//!
//! The builder reads the keys a field carries as a tensor's attributes (`Field::attributes`),
//! so files converted from GRIB that kept them build the same cubes. It says which field
//! fills each cell of each variable; reading the values is the caller's.
//!
//! - [`dataset`] builds one cube from the fields a filter selects, as `cfgrib` does, and
//!   refuses a selection that is not one consistent cube, naming the filters that pick each
//!   of its cubes.
//! - [`cubes`] splits the fields into consistent cubes: by level type first, then by the
//!   first key that tells apart the fields that do not fit together.

mod coordinate;
mod geography;
pub(crate) mod keys;
mod projection;

pub use coordinate::{Coordinate, Values};
pub use geography::gaussian_latitudes;

use crate::field::Key;
use crate::names;
use geography::Geography;
use keys::{Keys, UNKNOWN_PREFIX, same};
use tensor_core::cbor::Value;

/// A variable of a cube: one parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// cfgrib's name for it (ecCodes' `cfVarName`: `t`, `t2m`, `u10`).
    pub name: String,
    /// Its dimensions: the header ones (`number`, `time`, `step`, the level), then the grid's.
    pub dims: Vec<String>,
    /// Its shape.
    pub shape: Vec<u64>,
    /// How many of the trailing dimensions are the grid's (the shape of one field).
    pub grid_ndim: usize,
    /// For each cell of the header dimensions, row-major, the index (among the fields given)
    /// of the field that fills it; `None` where no field does (read as NaN).
    pub fields: Vec<Option<usize>>,
    /// Its attributes: `GRIB_*` keys and CF's `long_name`, `units`, `standard_name`.
    pub attributes: Vec<(String, Value)>,
}

/// One consistent cube of fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Cube {
    /// A name for it in a tree of cubes: the level type, then the values of the keys that
    /// set it apart (`heightAboveGround_2`).
    pub name: String,
    /// The `filter_by_keys` that selects exactly its fields.
    pub filter: Vec<(String, Key)>,
    /// Its dimensions and their sizes.
    pub dims: Vec<(String, u64)>,
    /// Its coordinates.
    pub coordinates: Vec<Coordinate>,
    /// Its variables.
    pub variables: Vec<Variable>,
    /// Dataset attributes: `GRIB_edition`, `GRIB_centre`, `Conventions`...
    pub attributes: Vec<(String, Value)>,
}

/// A field as the builder reads it: a tensor's attributes (the keys `Field::attributes`
/// gives) and its shape.
pub type FieldKeys<'a> = (&'a [(String, Value)], &'a [u64]);

/// The keys that say a tensor is a GRIB field, in a GRIB file or converted from one with its
/// keys kept: what every cube is built from.
pub const IDENTIFICATION_KEYS: [&str; 3] = ["typeOfLevel", "dataDate", "stepRange"];

/// Whether `attributes` hold every one of the [`IDENTIFICATION_KEYS`].
#[must_use]
pub fn is_field(attributes: &[(String, Value)]) -> bool {
    IDENTIFICATION_KEYS
        .iter()
        .all(|k| attributes.iter().any(|(n, _)| n == k))
}

/// How cubes are built; the defaults are cfgrib's.
#[derive(Clone, Debug)]
pub struct Options {
    /// Only fields whose key has one of the values given (`filter_by_keys`).
    pub filter: Vec<(String, Vec<Key>)>,
    /// More keys to copy into each variable's attributes as `GRIB_<key>` (`read_keys`).
    pub read_keys: Vec<String>,
    /// The time dimensions (`time_dims`): any of `time`, `step`, `valid_time`.
    pub time_dims: Vec<String>,
    /// More coordinates: a key, and the header dimension it runs along (`extra_coords`).
    pub extra_coords: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            filter: Vec::new(),
            read_keys: Vec::new(),
            time_dims: vec!["time".into(), "step".into()],
            extra_coords: Vec::new(),
        }
    }
}

/// What the builder refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A field without the keys a cube needs.
    #[error(
        "field #{field} has no GRIB identification keys (typeOfLevel, dataDate, stepRange): it is not a GRIB field or one converted with its keys"
    )]
    NotGrib {
        /// The field's index among those given.
        field: usize,
    },
    /// An option that cannot be honoured.
    #[error("{0}")]
    Option(String),
    /// The fields selected are not one cube.
    #[error("{}", mixed_message(.reason, .choices))]
    Mixed {
        /// Why they do not fit together.
        reason: String,
        /// The filters that select each consistent cube.
        choices: Vec<Vec<(String, Key)>>,
    },
    /// No field is selected.
    #[error("no field matches filter_by_keys {0}")]
    Empty(String),
}

impl tensor_core::Kinded for Error {
    fn kind(&self) -> tensor_core::ErrorKind {
        tensor_core::ErrorKind::InvalidArgument
    }
}

fn filter_text(filter: &[(String, Key)]) -> String {
    let items: Vec<String> = filter
        .iter()
        .map(|(k, v)| match v {
            Key::Text(t) => format!("'{k}': '{t}'"),
            v => format!("'{k}': {v}"),
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

fn mixed_message(reason: &str, choices: &[Vec<(String, Key)>]) -> String {
    let mut s = format!("the fields are not one cube ({reason}); open one of them with:");
    for c in choices {
        s.push_str("\n    filter_by_keys=");
        s.push_str(&filter_text(c));
    }
    s
}

/// A reason fields do not fit in one cube, and the key whose values would set them apart.
#[derive(Debug)]
struct Conflict {
    reason: String,
    key: Option<&'static str>,
}

/// Every field's keys.
fn read_keys<'a>(fields: &'a [FieldKeys<'a>]) -> Result<Vec<Keys<'a>>, Error> {
    fields
        .iter()
        .enumerate()
        .map(|(i, (a, s))| Keys::read(a, s).ok_or(Error::NotGrib { field: i }))
        .collect()
}

fn check_options(options: &Options) -> Result<(), Error> {
    for d in &options.time_dims {
        if !matches!(d.as_str(), "time" | "step" | "valid_time") {
            return Err(Error::Option(format!(
                "time_dims: {d:?} is not one of 'time', 'step', 'valid_time'"
            )));
        }
    }
    Ok(())
}

fn selected(keys: &[Keys<'_>], filter: &[(String, Vec<Key>)]) -> Vec<usize> {
    (0..keys.len())
        .filter(|&i| {
            filter.iter().all(|(name, wanted)| {
                keys[i]
                    .get(name)
                    .is_some_and(|v| wanted.iter().any(|w| same(w, &v)))
            })
        })
        .collect()
}

/// The cube of the fields `options.filter` selects, as cfgrib's `open_dataset` builds it.
///
/// # Errors
///
/// [`Error::Mixed`] when they are not one consistent cube (parameters on several level types
/// with clashing coordinates, several grids, editions or statistics for one parameter),
/// naming a filter for each cube; [`Error::Empty`] when no field is selected;
/// [`Error::NotGrib`] for a field without GRIB keys.
pub fn dataset(fields: &[FieldKeys<'_>], options: &Options) -> Result<Cube, Error> {
    let (keys, sel, filter) = selection(fields, options)?;
    match build(&keys, &sel, options, &filter) {
        Ok(cube) => Ok(cube),
        Err(conflict) => {
            let choices = split(&keys, &sel, options, &filter)
                .into_iter()
                .map(|c| c.filter)
                .collect();
            Err(Error::Mixed {
                reason: conflict.reason,
                choices,
            })
        }
    }
}

/// The fields `options.filter` selects as consistent cubes, one per level type where they
/// fit together, else split further (by statistics, grid, edition, level or parameter): what
/// `xr.open_datatree` shows as groups.
///
/// # Errors
///
/// [`Error::Empty`] when no field is selected; [`Error::NotGrib`] for a field without GRIB
/// keys.
pub fn cubes(fields: &[FieldKeys<'_>], options: &Options) -> Result<Vec<Cube>, Error> {
    let (keys, sel, filter) = selection(fields, options)?;
    Ok(split(&keys, &sel, options, &filter))
}

/// Every field's keys, the fields `options.filter` selects, and the filter's single-valued
/// keys (what every cube's own filter starts from).
type Selection<'a> = (Vec<Keys<'a>>, Vec<usize>, Vec<(String, Key)>);

fn selection<'a>(fields: &'a [FieldKeys<'a>], options: &Options) -> Result<Selection<'a>, Error> {
    check_options(options)?;
    let keys = read_keys(fields)?;
    let sel = selected(&keys, &options.filter);
    let filter: Vec<(String, Key)> = options
        .filter
        .iter()
        .filter(|(_, v)| v.len() == 1)
        .map(|(k, v)| (k.clone(), v[0].clone()))
        .collect();
    if sel.is_empty() {
        return Err(Error::Empty(filter_text(&filter)));
    }
    Ok((keys, sel, filter))
}

/// Consistent cubes of the fields `sel`: by level type, then as [`refine`] finds.
fn split(
    keys: &[Keys<'_>],
    sel: &[usize],
    options: &Options,
    filter: &[(String, Key)],
) -> Vec<Cube> {
    let mut out = Vec::new();
    for (value, part) in partition(keys, sel, "typeOfLevel") {
        let mut f = filter.to_vec();
        if !f.iter().any(|(k, _)| k == "typeOfLevel") {
            f.push(("typeOfLevel".into(), value));
        }
        refine(keys, &part, options, &f, &mut out);
    }
    out
}

/// The fields `sel` grouped by their value of `key`, in the order values first appear.
fn partition(keys: &[Keys<'_>], sel: &[usize], key: &str) -> Vec<(Key, Vec<usize>)> {
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    for &i in sel {
        let v = keys[i].get(key).unwrap_or(Key::Text("undef".into()));
        match groups.iter_mut().find(|(g, _)| same(g, &v)) {
            Some((_, members)) => members.push(i),
            None => groups.push((v, vec![i])),
        }
    }
    groups
}

/// Keys that set apart fields that cannot share a cube, in the order they are tried.
const REFINE: [&str; 6] = [
    "stepType",
    "gridType",
    "numberOfPoints",
    "edition",
    "level",
    "paramId",
];

/// Adds the cube of `sel` to `out`, or, when its fields do not fit together, splits them by
/// the first key of [`REFINE`] that tells them apart (the level only where each parameter
/// has one level: fields on one level each, such as 2 m and 10 m fields).
fn refine(
    keys: &[Keys<'_>],
    sel: &[usize],
    options: &Options,
    filter: &[(String, Key)],
    out: &mut Vec<Cube>,
) {
    let conflict = match build(keys, sel, options, filter) {
        Ok(cube) => {
            out.push(cube);
            return;
        }
        Err(c) => c,
    };
    let one_level_each = partition(keys, sel, "paramId")
        .iter()
        .all(|(_, p)| partition(keys, p, "level").len() == 1);
    let candidates = conflict.key.into_iter().chain(REFINE);
    for key in candidates {
        if filter.iter().any(|(k, _)| k == key) || (key == "level" && !one_level_each) {
            continue;
        }
        let parts = partition(keys, sel, key);
        if parts.len() > 1 {
            for (value, part) in parts {
                let mut f = filter.to_vec();
                f.push((key.to_owned(), value));
                refine(keys, &part, options, &f, out);
            }
            return;
        }
    }
    // Nothing sets them apart: one cube per field (duplicates of one key set).
    for &i in sel {
        let mut f = filter.to_vec();
        f.push(("message".into(), Key::Int(i as i64)));
        if let Ok(cube) = build(keys, &[i], options, &f) {
            out.push(cube);
        }
    }
}

/// A header coordinate's values for one field: numbers (levels, members) or seconds.
fn header_value(k: &Keys<'_>, name: &str) -> Option<f64> {
    Some(match name {
        "number" => k.number? as f64,
        "time" => k.time as f64,
        "step" => k.step as f64,
        "valid_time" => (k.time + k.step) as f64,
        "level" => k.level,
        _ => return None,
    })
}

fn attr(name: &str, v: impl Into<Value>) -> (String, Value) {
    (name.to_owned(), v.into())
}

/// cfgrib's attributes for a coordinate.
fn coordinate_attributes(name: &str, key: &str) -> Vec<(String, Value)> {
    let mut a = vec![
        attr(
            "long_name",
            format!("original GRIB coordinate for key: {key}({name})"),
        ),
        attr("units", "1"),
    ];
    let mut set = |k: &str, v: &str| match a.iter_mut().find(|(n, _)| n == k) {
        Some(e) => e.1 = Value::from(v),
        None => a.push(attr(k, v)),
    };
    let cf: &[(&str, &str)] = match name {
        "depthBelowLand" | "depthBelowLandLayer" => &[
            ("units", "m"),
            ("positive", "down"),
            ("long_name", "soil depth"),
            ("standard_name", "depth"),
        ],
        "hybrid" => &[
            ("units", "1"),
            ("positive", "down"),
            ("long_name", "hybrid level"),
            (
                "standard_name",
                "atmosphere_hybrid_sigma_pressure_coordinate",
            ),
        ],
        "heightAboveGround" => &[
            ("units", "m"),
            ("positive", "up"),
            ("long_name", "height above the surface"),
            ("standard_name", "height"),
        ],
        "isobaricInhPa" | "isobaricInPa" => &[
            ("units", if name == "isobaricInhPa" { "hPa" } else { "Pa" }),
            ("positive", "down"),
            ("stored_direction", "decreasing"),
            ("standard_name", "air_pressure"),
            ("long_name", "pressure"),
        ],
        "number" => &[
            ("units", "1"),
            ("standard_name", "realization"),
            ("long_name", "ensemble member numerical id"),
        ],
        "step" => &[
            ("units", "hours"),
            ("standard_name", "forecast_period"),
            ("long_name", "time since forecast_reference_time"),
        ],
        "time" => &[
            ("standard_name", "forecast_reference_time"),
            ("long_name", "initial time of forecast"),
        ],
        "valid_time" => &[("standard_name", "time"), ("long_name", "time")],
        _ => &[],
    };
    for (k, v) in cf {
        set(k, v);
    }
    // Times and steps carry their units as the values' own type.
    if matches!(name, "time" | "valid_time" | "step") {
        a.retain(|(k, _)| k != "units");
    }
    a
}

fn values_of(name: &str, v: &[f64]) -> Values {
    match name {
        "number" => Values::Int(v.iter().map(|&x| x as i64).collect()),
        "time" | "valid_time" => Values::Time(v.iter().map(|&x| x as i64).collect()),
        "step" => Values::Duration(v.iter().map(|&x| x as i64).collect()),
        _ => Values::Float(v.to_vec()),
    }
}

/// One variable, its coordinates and its dimensions, from the fields `sel` of one parameter.
struct Part {
    variable: Variable,
    coordinates: Vec<Coordinate>,
    dims: Vec<(String, u64)>,
    geography: Geography,
}

/// Keys every field of a variable must agree on (cfgrib's data attribute keys).
const UNIQUE: [&str; 4] = ["typeOfLevel", "stepType", "gridType", "numberOfPoints"];

fn variable(keys: &[Keys<'_>], sel: &[usize], options: &Options) -> Result<Part, Conflict> {
    let first = &keys[sel[0]];
    for key in UNIQUE {
        let v = first.get(key);
        if let Some(other) = sel.iter().find(|&&i| {
            let w = keys[i].get(key);
            match (&v, &w) {
                (Some(a), Some(b)) => !same(a, b),
                (a, b) => a.is_some() != b.is_some(),
            }
        }) {
            return Err(Conflict {
                reason: format!(
                    "parameter {} has more than one {key}: {} and {}",
                    first.var_name(),
                    v.map_or("none".into(), |v| v.to_string()),
                    keys[*other]
                        .get(key)
                        .map_or("none".into(), |v| v.to_string()),
                ),
                key: Some(key),
            });
        }
    }
    let level_name = first.type_of_level.clone();
    let decreasing = matches!(level_name.as_str(), "isobaricInhPa" | "isobaricInPa");
    let header: Vec<&str> = std::iter::once("number")
        .chain(options.time_dims.iter().map(String::as_str))
        .chain(std::iter::once("level"))
        .collect();
    let mut coordinates = Vec::new();
    // Header dimensions: name, key, sorted values.
    let mut dims: Vec<(String, &str, Vec<f64>)> = Vec::new();
    for key in header {
        let vals: Vec<Option<f64>> = sel.iter().map(|&i| header_value(&keys[i], key)).collect();
        if vals.iter().all(Option::is_none) {
            continue;
        }
        if vals.iter().any(Option::is_none) {
            return Err(Conflict {
                reason: format!(
                    "some fields of {} have a {key} and some none",
                    first.var_name()
                ),
                key: None,
            });
        }
        let mut v: Vec<f64> = vals.into_iter().flatten().collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        if decreasing && key == "level" {
            v.reverse();
        }
        let name = if key == "level" {
            level_name.clone()
        } else {
            key.to_owned()
        };
        let attributes = coordinate_attributes(&name, key);
        if v.len() == 1 {
            coordinates.push(Coordinate {
                name,
                dims: Vec::new(),
                values: values_of(key, &v),
                attributes,
            });
        } else {
            coordinates.push(Coordinate {
                name: name.clone(),
                dims: vec![name.clone()],
                values: values_of(key, &v),
                attributes,
            });
            dims.push((name, key, v));
        }
    }
    // Which field fills each header cell (the first one, as cfgrib takes).
    let header_shape: Vec<usize> = dims.iter().map(|d| d.2.len()).collect();
    let cells: usize = header_shape.iter().product();
    let mut fields = vec![None; cells];
    for &i in sel {
        let mut at = 0usize;
        for (_, key, values) in &dims {
            let v = header_value(&keys[i], key).unwrap_or(f64::NAN);
            let pos = values.iter().position(|&x| x == v).unwrap_or(0);
            at = at * values.len() + pos;
        }
        if fields[at].is_none() {
            fields[at] = Some(i);
        }
    }
    // `valid_time`, from `time` and `step` where both are coordinates.
    let find = |n: &str| coordinates.iter().find(|c| c.name == n);
    if let (Some(t), Some(s)) = (find("time"), find("step"))
        && let (Values::Time(tv), Values::Duration(sv)) = (&t.values, &s.values)
    {
        let mut dims_v = t.dims.clone();
        dims_v.extend(s.dims.iter().cloned());
        let mut v = Vec::with_capacity(tv.len() * sv.len());
        for a in tv {
            for b in sv {
                v.push(a + b);
            }
        }
        coordinates.push(Coordinate {
            name: "valid_time".into(),
            dims: dims_v,
            values: Values::Time(v),
            attributes: coordinate_attributes("valid_time", "valid_time"),
        });
    }
    for (name, along) in &options.extra_coords {
        coordinates.push(extra_coordinate(
            keys,
            sel,
            &dims,
            &coordinates,
            name,
            along,
        )?);
    }
    let geography = geography::geography(first);
    let mut all_dims: Vec<(String, u64)> = dims
        .iter()
        .map(|(n, _, v)| (n.clone(), v.len() as u64))
        .collect();
    all_dims.extend(
        geography
            .dims
            .iter()
            .cloned()
            .zip(geography.shape.iter().copied()),
    );
    let mut variable = Variable {
        name: first.var_name(),
        dims: all_dims.iter().map(|d| d.0.clone()).collect(),
        shape: all_dims.iter().map(|d| d.1).collect(),
        grid_ndim: geography.dims.len(),
        fields,
        attributes: variable_attributes(first, options),
    };
    if let Some(m) = &geography.grid_mapping {
        variable.attributes.push(attr("grid_mapping", m.as_str()));
    }
    Ok(Part {
        variable,
        coordinates,
        dims: all_dims,
        geography,
    })
}

/// An `extra_coords` coordinate: key `name`'s value for each value of header dimension
/// `along`, which must be one value per value of that dimension.
fn extra_coordinate(
    keys: &[Keys<'_>],
    sel: &[usize],
    dims: &[(String, &str, Vec<f64>)],
    coordinates: &[Coordinate],
    name: &str,
    along: &str,
) -> Result<Coordinate, Conflict> {
    let Some(c) = coordinates.iter().find(|c| c.name == along) else {
        return Err(Conflict {
            reason: format!("extra_coords: {along:?} is not a coordinate of the cube"),
            key: None,
        });
    };
    let key = dims.iter().find(|d| d.0 == along).map_or(along, |d| d.1);
    let key = if key == c.name && !matches!(key, "number" | "time" | "step" | "valid_time") {
        "level"
    } else {
        key
    };
    let along_values: Vec<f64> = dims.iter().find(|d| d.0 == along).map_or_else(
        || {
            sel.iter()
                .filter_map(|&i| header_value(&keys[i], key))
                .take(1)
                .collect()
        },
        |d| d.2.clone(),
    );
    let mut found: Vec<Option<Key>> = vec![None; along_values.len()];
    for &i in sel {
        let (Some(h), Some(v)) = (header_value(&keys[i], key), keys[i].get(name)) else {
            continue;
        };
        let Some(pos) = along_values.iter().position(|&x| x == h) else {
            continue;
        };
        match &found[pos] {
            Some(prev) if !same(prev, &v) => {
                return Err(Conflict {
                    reason: format!(
                        "'{name}' cannot be indexed by dimension '{along}': it has two values ({prev} and {v}) at one of its values",
                    ),
                    key: None,
                });
            }
            _ => found[pos] = Some(v),
        }
    }
    let found: Vec<Key> = found
        .into_iter()
        .map(|k| k.unwrap_or(Key::Text("undef".into())))
        .collect();
    let values = if found.iter().all(|k| matches!(k, Key::Int(_))) {
        Values::Int(
            found
                .iter()
                .map(|k| if let Key::Int(i) = k { *i } else { 0 })
                .collect(),
        )
    } else if found.iter().all(|k| !matches!(k, Key::Text(_))) {
        Values::Float(
            found
                .iter()
                .map(|k| match k {
                    Key::Int(i) => *i as f64,
                    Key::Float(f) => *f,
                    Key::Text(_) => f64::NAN,
                })
                .collect(),
        )
    } else {
        Values::Text(found.iter().map(Key::to_string).collect())
    };
    Ok(Coordinate {
        name: name.to_owned(),
        dims: c.dims.clone(),
        values,
        attributes: Vec::new(),
    })
}

/// ecCodes' `missingValue` as cfgrib reports it (float32's largest value).
const MISSING_VALUE: f64 = 3.402_823_466_385_288_6e38;

fn key_value(k: Key) -> Value {
    match k {
        Key::Int(i) => Value::from(i),
        Key::Float(f) => Value::Float(f),
        Key::Text(t) => Value::Text(t),
    }
}

/// ecCodes' `dataType`: the MARS type of an ECMWF local section, else, in GRIB 2, what
/// `typeOfProcessedData` (code table 1.4) says.
fn data_type(k: &Keys<'_>) -> Option<Key> {
    if let Some(t) = k.get("mars.type").or_else(|| k.get("dataType")) {
        return Some(t);
    }
    let Key::Int(code) = k.get("typeOfProcessedData")? else {
        return None;
    };
    let t = match code {
        0 => "an",
        1 => "fc",
        2 => "af",
        3 => "cf",
        4 => "pf",
        _ => return None,
    };
    Some(Key::Text(t.to_owned()))
}

/// A variable's attributes, cfgrib's: the keys its fields agree on, more keys of its first
/// field in name order, then CF's.
fn variable_attributes(first: &Keys<'_>, options: &Options) -> Vec<(String, Value)> {
    let mut a = vec![attr("GRIB_paramId", first.param_id)];
    if let Some(t) = data_type(first) {
        a.push(("GRIB_dataType".into(), key_value(t)));
    }
    a.push(attr("GRIB_numberOfPoints", first.points as i64));
    a.push(attr("GRIB_typeOfLevel", first.type_of_level.as_str()));
    a.push(attr("GRIB_stepUnits", 1i64));
    a.push(attr("GRIB_stepType", first.step_type));
    a.push(attr("GRIB_gridType", first.grid_type.as_str()));
    if let Some(uv) = first.get("uvRelativeToGrid") {
        a.push(("GRIB_uvRelativeToGrid".into(), key_value(uv)));
    }
    let mut extra: Vec<(String, Value)> = geography::grid_keys(first);
    // A parameter outside the table is `unknown` in every key ecCodes names it by.
    let unknown = first.unknown.is_some();
    let cf = if unknown {
        Some(("unknown", Some("unknown")))
    } else {
        names::cf_names(first.edition, first.param_id)
    };
    if let Some((var, name)) = cf {
        extra.push(attr("cfVarName", var));
        extra.push(attr("cfName", name.unwrap_or("unknown")));
    }
    if let Some(d) = geography::description(first.edition, &first.grid_type) {
        extra.push(attr("gridDefinitionDescription", d));
    }
    extra.push(attr("missingValue", MISSING_VALUE));
    for (ours, theirs) in [
        ("parameterName", "name"),
        ("shortName", "shortName"),
        ("units", "units"),
    ] {
        if let Some(v) = first.get_text(ours) {
            extra.push(attr(theirs, v));
        } else if unknown {
            extra.push(attr(theirs, "unknown"));
        }
    }
    if let Some(n) = first.get("numberOfForecastsInEnsemble") {
        extra.push(("totalNumber".into(), key_value(n)));
    }
    if let Some(n) = first.get("NV") {
        extra.push(("NV".into(), key_value(n)));
    }
    for k in &options.read_keys {
        if !extra.iter().any(|(n, _)| n == k)
            && let Some(v) = first.get(k)
        {
            extra.push((k.clone(), key_value(v)));
        }
    }
    extra.sort_by(|x, y| x.0.cmp(&y.0));
    a.extend(extra.into_iter().map(|(k, v)| (format!("GRIB_{k}"), v)));
    let long_name = match first.get_text("parameterName") {
        Some(name) => name.to_owned(),
        None if unknown => "unknown".to_owned(),
        None => format!("original GRIB paramId: {}", first.param_id),
    };
    a.push(attr("long_name", long_name));
    let units = first
        .get_text("units")
        .unwrap_or(if unknown { "unknown" } else { "1" });
    a.push(attr("units", units));
    if let Some((_, name)) = cf {
        a.push(attr("standard_name", name.unwrap_or("unknown")));
    }
    a
}

/// The cube of fields `sel`, or why they are not one.
fn build(
    keys: &[Keys<'_>],
    sel: &[usize],
    options: &Options,
    filter: &[(String, Key)],
) -> Result<Cube, Conflict> {
    // Dataset attributes: every field must agree on the edition and the centre.
    let first = &keys[sel[0]];
    for key in ["edition", "centre"] {
        let v = first.get(key);
        if sel.iter().any(|&i| {
            keys[i]
                .get(key)
                .zip(v.as_ref())
                .is_some_and(|(a, b)| !same(&a, b))
        }) {
            return Err(Conflict {
                reason: format!("the fields have more than one {key}"),
                key: Some(if key == "edition" {
                    "edition"
                } else {
                    "centre"
                }),
            });
        }
    }
    let mut cube = Cube {
        name: group_name(filter),
        filter: filter.to_vec(),
        dims: Vec::new(),
        coordinates: Vec::new(),
        variables: Vec::new(),
        attributes: Vec::new(),
    };
    let mut geography: Option<Geography> = None;
    for (_, members) in partition(keys, sel, "paramId") {
        let part = variable(keys, &members, options)?;
        let name = part.variable.name.clone();
        if cube.variables.iter().any(|v| v.name == name) {
            return Err(Conflict {
                reason: format!("two parameters are both called {name}"),
                key: Some("paramId"),
            });
        }
        match &geography {
            Some(g) if *g != part.geography => {
                return Err(Conflict {
                    reason: format!("{name} is on another grid"),
                    key: Some("gridType"),
                });
            }
            Some(_) => {}
            None => {
                cube.coordinates
                    .extend(part.geography.coordinates.iter().cloned());
                geography = Some(part.geography.clone());
            }
        }
        for c in part.coordinates {
            match cube.coordinates.iter().find(|k| k.name == c.name) {
                Some(k) if *k != c => {
                    return Err(Conflict {
                        reason: format!("{name} has other values of {}", c.name),
                        key: Some("level").filter(|_| c.name == first.type_of_level),
                    });
                }
                Some(_) => {}
                None => cube.coordinates.push(c),
            }
        }
        for (d, n) in part.dims {
            match cube.dims.iter().find(|k| k.0 == d) {
                Some(k) if k.1 != n => {
                    return Err(Conflict {
                        reason: format!("{name} has {n} values of {d}, others {}", k.1),
                        key: None,
                    });
                }
                Some(_) => {}
                None => cube.dims.push((d, n)),
            }
        }
        cube.variables.push(part.variable);
    }
    // One parameter outside the table is `unknown`, as cfgrib names it; several keep their
    // codes (cfgrib would keep one of them and drop the others).
    let unknown: Vec<usize> = (0..cube.variables.len())
        .filter(|&i| cube.variables[i].name.starts_with(UNKNOWN_PREFIX))
        .collect();
    if let [only] = unknown[..] {
        cube.variables[only].name = "unknown".into();
    }
    cube.attributes = dataset_attributes(first);
    Ok(cube)
}

fn group_name(filter: &[(String, Key)]) -> String {
    let parts: Vec<String> = filter
        .iter()
        .map(|(k, v)| match (k.as_str(), v) {
            ("paramId", Key::Int(id)) => names::cf_names(2, *id)
                .or_else(|| names::cf_names(1, *id))
                .map_or_else(|| format!("paramId_{id}"), |(var, _)| var.to_owned()),
            ("message", v) => format!("message{v}"),
            (_, v) => v.to_string(),
        })
        .collect();
    parts.join("_")
}

fn dataset_attributes(first: &Keys<'_>) -> Vec<(String, Value)> {
    let mut a = Vec::new();
    if let Some(e) = first.get("edition") {
        a.push(("GRIB_edition".into(), key_value(e)));
    }
    if let Some(Key::Int(c)) = first.get("centre") {
        match names::centre(c) {
            Some((abbr, description)) => {
                a.push(attr("GRIB_centre", abbr));
                a.push(attr("GRIB_centreDescription", description));
            }
            None => a.push(attr("GRIB_centre", c)),
        }
    }
    if let Some(s) = first.get("subCentre") {
        a.push(("GRIB_subCentre".into(), key_value(s)));
    }
    a.push(attr("Conventions", "CF-1.7"));
    if let Some((_, description)) = first.get("centre").and_then(|c| {
        if let Key::Int(c) = c {
            names::centre(c)
        } else {
            None
        }
    }) {
        a.push(attr("institution", description));
    }
    a
}

#[cfg(test)]
mod tests;
