//! How a NetCDF variable rides along with its tensor through formats that know nothing of
//! NetCDF. Its attributes are the tensor's attributes, by name (numbers widened to integers
//! and doubles, a list of one as the value alone, text as text), where every format and
//! command shows and edits them. Its structure is one more attribute, `netcdf`, with the
//! keys tensogram's `convert-netcdf` gives its objects' `netcdf` entry: `_dims` (dimension
//! names), `_file` (`{"dims": [{"name", "len", "unlimited"}]}`), `_attr_types` (each
//! attribute's type name), and `_global` / `_global_types` for the file's attributes. A
//! `char` variable adds `_nc_type: "char"`. A map tensogram wrote also holds the
//! attributes' values (it keeps no others); they are read from there too. What tensogram does not record, `_file` carries
//! in entries tensogram's reader passes over: `format` (netCDF4-python's `data_model`),
//! `attributes` (the global attributes' names in file order), `order` (the variable's) and
//! `index` (the variable's place among the file's), since a format that sorts its map keys
//! (Tensogram) or its tensors (zTensor) would lose those orders.

use crate::attribute::{Attribute, Values};
use crate::error::{Error, Result};
use crate::model::{Definition, Dimension};
use crate::types::NcType;
use tensor_core::cbor::Value as Cbor;

/// The attribute's key.
pub const KEY: &str = "netcdf";

/// Entries of the map that carry structure, not attributes.
pub const INTERNAL: &[&str] = &[
    "_dims",
    "_file",
    "_global",
    "_attr_types",
    "_global_types",
    "record_index",
    "_nc_type",
];

fn text(s: &str) -> Cbor {
    Cbor::Text(s.to_owned())
}

/// One value widened: an integer, a double or text.
fn widened(v: &Values) -> Vec<Cbor> {
    fn int(i: i64) -> Cbor {
        if i < 0 {
            Cbor::Nint(!(i as u64))
        } else {
            Cbor::Uint(i as u64)
        }
    }
    match v {
        Values::Byte(x) => x.iter().map(|&i| int(i.into())).collect(),
        Values::Short(x) => x.iter().map(|&i| int(i.into())).collect(),
        Values::Int(x) => x.iter().map(|&i| int(i.into())).collect(),
        Values::Int64(x) => x.iter().map(|&i| int(i)).collect(),
        Values::Ubyte(x) => x.iter().map(|&i| Cbor::Uint(i.into())).collect(),
        Values::Ushort(x) => x.iter().map(|&i| Cbor::Uint(i.into())).collect(),
        Values::Uint(x) => x.iter().map(|&i| Cbor::Uint(i.into())).collect(),
        Values::Uint64(x) => x.iter().map(|&i| Cbor::Uint(i)).collect(),
        Values::Float(x) => x.iter().map(|&f| Cbor::Float(f.into())).collect(),
        Values::Double(x) => x.iter().map(|&f| Cbor::Float(f)).collect(),
        Values::Char(t) => vec![match std::str::from_utf8(t) {
            Ok(s) => text(s),
            Err(_) => Cbor::Bytes(t.clone()),
        }],
        Values::String(s) => s.iter().map(|s| text(s)).collect(),
    }
}

/// An attribute's values as the map holds them: text as text, a list of one as the value
/// alone, any other list as an array.
#[must_use]
pub fn to_cbor(v: &Values) -> Cbor {
    let mut items = widened(v);
    match v {
        Values::Char(_) => items.pop().unwrap_or(Cbor::Text(String::new())),
        _ if items.len() == 1 => items.pop().unwrap_or(Cbor::Null),
        _ => Cbor::Array(items),
    }
}

/// Values of `nc_type` (when the map records one) or of the type the value calls for (text
/// `char`, integers `int` or, past 32 bits, `int64`, floats `double`) from what the map
/// holds for attribute `name`.
pub fn from_cbor(value: &Cbor, nc_type: Option<NcType>, name: &str) -> Result<Values> {
    let items: Vec<&Cbor> = match value {
        Cbor::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let bad = |why: String| Error::CannotWrite(format!("attribute {name:?}: {why}"));
    let nc_type = match nc_type {
        Some(t) => t,
        None => infer(&items).ok_or_else(|| bad(format!("{value:?} has no NetCDF type")))?,
    };
    if matches!(nc_type, NcType::Char | NcType::String) {
        let texts: Vec<Vec<u8>> = items
            .iter()
            .map(|i| match i {
                Cbor::Text(s) => Ok(s.as_bytes().to_vec()),
                Cbor::Bytes(b) => Ok(b.clone()),
                other => Err(bad(format!("{other:?} is not text"))),
            })
            .collect::<Result<_>>()?;
        return Ok(if nc_type == NcType::String {
            Values::String(
                texts
                    .into_iter()
                    .map(|t| String::from_utf8_lossy(&t).into_owned())
                    .collect(),
            )
        } else {
            Values::Char(texts.concat())
        });
    }
    let ints = || -> Result<Vec<i128>> {
        items
            .iter()
            .map(|i| match i {
                Cbor::Uint(u) => Ok(i128::from(*u)),
                Cbor::Nint(n) => Ok(-1 - i128::from(*n)),
                Cbor::Float(f) if f.fract() == 0.0 && f.is_finite() => Ok(*f as i128),
                other => Err(bad(format!(
                    "{other:?} is not an integer of type {nc_type}"
                ))),
            })
            .collect()
    };
    macro_rules! narrowed {
        ($variant:ident, $t:ty) => {
            Values::$variant(
                ints()?
                    .into_iter()
                    .map(|i| {
                        <$t>::try_from(i).map_err(|_| bad(format!("{i} does not fit {nc_type}")))
                    })
                    .collect::<Result<_>>()?,
            )
        };
    }
    let floats = || -> Result<Vec<f64>> {
        items
            .iter()
            .map(|i| match i {
                Cbor::Float(f) => Ok(*f),
                // JSON's spellings of what it has no numbers for.
                Cbor::Text(t) if matches!(t.as_str(), "NaN" | "nan") => Ok(f64::NAN),
                Cbor::Text(t) if matches!(t.as_str(), "Infinity" | "inf") => Ok(f64::INFINITY),
                Cbor::Text(t) if matches!(t.as_str(), "-Infinity" | "-inf") => {
                    Ok(f64::NEG_INFINITY)
                }
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "an integer given for a float attribute"
                )]
                Cbor::Uint(u) => Ok(*u as f64),
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "an integer given for a float attribute"
                )]
                Cbor::Nint(n) => Ok(-1.0 - *n as f64),
                other => Err(bad(format!("{other:?} is not a number"))),
            })
            .collect()
    };
    Ok(match nc_type {
        NcType::Byte => narrowed!(Byte, i8),
        NcType::Short => narrowed!(Short, i16),
        NcType::Int => narrowed!(Int, i32),
        NcType::Int64 => narrowed!(Int64, i64),
        NcType::Ubyte => narrowed!(Ubyte, u8),
        NcType::Ushort => narrowed!(Ushort, u16),
        NcType::Uint => narrowed!(Uint, u32),
        NcType::Uint64 => narrowed!(Uint64, u64),
        #[allow(
            clippy::cast_possible_truncation,
            reason = "a float attribute, widened when read"
        )]
        NcType::Float => Values::Float(floats()?.into_iter().map(|f| f as f32).collect()),
        _ => Values::Double(floats()?),
    })
}

/// The type a value with no recorded type is written as.
fn infer(items: &[&Cbor]) -> Option<NcType> {
    if items
        .iter()
        .all(|i| matches!(i, Cbor::Text(_) | Cbor::Bytes(_)))
        && !items.is_empty()
    {
        return Some(NcType::Char);
    }
    if items
        .iter()
        .all(|i| matches!(i, Cbor::Float(_) | Cbor::Uint(_) | Cbor::Nint(_)))
        && items.iter().any(|i| matches!(i, Cbor::Float(_)))
    {
        return Some(NcType::Double);
    }
    let fits = |lo: i128, hi: i128| {
        items.iter().all(|i| match i {
            Cbor::Uint(u) => i128::from(*u) <= hi,
            Cbor::Nint(n) => -1 - i128::from(*n) >= lo,
            _ => false,
        })
    };
    if fits(i32::MIN.into(), i32::MAX.into()) {
        Some(NcType::Int)
    } else if fits(i64::MIN.into(), i64::MAX.into()) {
        Some(NcType::Int64)
    } else if fits(0, u64::MAX.into()) {
        Some(NcType::Uint64)
    } else {
        None
    }
}

/// A CBOR map's entries.
type Entries = Vec<(Cbor, Cbor)>;

/// Each attribute's value and its type name, as two maps' entries.
fn attribute_entries(attributes: &[Attribute]) -> (Entries, Entries) {
    attributes
        .iter()
        .map(|a| {
            (
                (text(&a.name), to_cbor(&a.values)),
                (text(&a.name), text(a.values.nc_type().name())),
            )
        })
        .unzip()
}

/// Variable `v`'s attributes as a tensor's, then its `netcdf` map. An attribute named
/// `netcdf` itself stays in the map, as tensogram keeps them all.
#[must_use]
pub fn tensor_attributes(def: &Definition, v: usize) -> Vec<(String, Cbor)> {
    def.variables[v]
        .attributes
        .iter()
        .filter(|a| a.name != KEY)
        .map(|a| (a.name.clone(), to_cbor(&a.values)))
        .chain(std::iter::once((KEY.to_owned(), variable_map(def, v))))
        .collect()
}

/// The `netcdf` map of variable `v` of `def`.
#[must_use]
pub fn variable_map(def: &Definition, v: usize) -> Cbor {
    let var = &def.variables[v];
    let (entries, types) = attribute_entries(&var.attributes);
    let mut map: Vec<(Cbor, Cbor)> = entries
        .into_iter()
        .filter(|(k, _)| matches!(k, Cbor::Text(t) if t == KEY))
        .collect();
    map.push((
        text("_dims"),
        Cbor::Array(
            var.dims
                .iter()
                .map(|&d| text(&def.dimensions[d].name))
                .collect(),
        ),
    ));
    map.push((text("_file"), file_map(def, v)));
    if !types.is_empty() {
        map.push((text("_attr_types"), Cbor::Map(types)));
    }
    if !def.attributes.is_empty() {
        let (global, global_types) = attribute_entries(&def.attributes);
        map.push((text("_global"), Cbor::Map(global)));
        map.push((text("_global_types"), Cbor::Map(global_types)));
    }
    if var.nc_type == NcType::Char {
        map.push((text("_nc_type"), text("char")));
    }
    Cbor::Map(map)
}

/// `_file`: every dimension of the file, in order, the file's format and the order of the
/// file's and variable `v`'s attributes.
fn file_map(def: &Definition, v: usize) -> Cbor {
    let names = |a: &[Attribute]| Cbor::Array(a.iter().map(|a| text(&a.name)).collect());
    let dims = def
        .dimensions
        .iter()
        .map(|d| {
            Cbor::Map(vec![
                (text("name"), text(&d.name)),
                (text("len"), Cbor::Uint(d.len)),
                (text("unlimited"), Cbor::Bool(d.unlimited)),
            ])
        })
        .collect();
    let mut map = vec![(text("dims"), Cbor::Array(dims))];
    if let Some(format) = &def.format {
        map.push((text("format"), text(format)));
    }
    map.push((text("attributes"), names(&def.attributes)));
    map.push((text("order"), names(&def.variables[v].attributes)));
    map.push((text("index"), Cbor::Uint(v as u64)));
    Cbor::Map(map)
}

/// `attributes` put in the order `order` names (those it does not name last, as they were).
fn sorted_by(mut attributes: Vec<Attribute>, order: &[String]) -> Vec<Attribute> {
    let rank = |name: &str| order.iter().position(|o| o == name).unwrap_or(usize::MAX);
    attributes.sort_by_key(|a| rank(&a.name));
    attributes
}

/// The texts of an array of names (anything else in it passed over); none for no array.
fn names(list: Option<&Cbor>) -> Vec<String> {
    match list {
        Some(Cbor::Array(names)) => names
            .iter()
            .filter_map(|n| match n {
                Cbor::Text(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// What a `netcdf` map says of its variable and its file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Carried {
    /// Its dimensions' names (`_dims`), when recorded.
    pub dims: Option<Vec<String>>,
    /// The file's dimensions (`_file`).
    pub file_dims: Vec<Dimension>,
    /// Its attributes, in their recorded types.
    pub attributes: Vec<Attribute>,
    /// The file's attributes (`_global`), when recorded.
    pub global: Option<Vec<Attribute>>,
    /// Whether it is a `char` variable.
    pub char: bool,
    /// The file's format (netCDF4-python's `data_model`), when recorded.
    pub format: Option<String>,
    /// The variable's place among the file's, when recorded.
    pub index: Option<u64>,
    /// Each attribute's recorded type (`_attr_types`).
    pub types: Vec<(String, NcType)>,
    /// The variable's attribute names in file order, when recorded.
    pub order: Vec<String>,
}

impl Carried {
    /// The attribute a tensor attribute `name` = `value` is written as: in its recorded type
    /// when the value is one of it, else in the type the value calls for; an error for a
    /// value no NetCDF type holds (a map, a boolean...).
    pub fn attribute(&self, name: &str, value: &Cbor) -> Result<Attribute> {
        let recorded = self.types.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
        let values = recorded
            .and_then(|t| from_cbor(value, Some(t), name).ok())
            .map_or_else(|| from_cbor(value, None, name), Ok)?;
        Ok(Attribute {
            name: name.to_owned(),
            values,
        })
    }

    /// `attributes` in the recorded order (those it does not name last, as they come).
    #[must_use]
    pub fn in_order(&self, attributes: Vec<Attribute>) -> Vec<Attribute> {
        sorted_by(attributes, &self.order)
    }
}

fn get<'m>(map: &'m [(Cbor, Cbor)], key: &str) -> Option<&'m Cbor> {
    map.iter()
        .find(|(k, _)| matches!(k, Cbor::Text(t) if t == key))
        .map(|(_, v)| v)
}

fn types_of(map: &[(Cbor, Cbor)], key: &str) -> Vec<(String, NcType)> {
    match get(map, key) {
        Some(Cbor::Map(m)) => m
            .iter()
            .filter_map(|(k, v)| match (k, v) {
                (Cbor::Text(k), Cbor::Text(t)) => Some((k.clone(), NcType::from_name(t)?)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn attributes_of(
    entries: &[(Cbor, Cbor)],
    types: &[(String, NcType)],
    skip_internal: bool,
) -> Result<Vec<Attribute>> {
    entries
        .iter()
        .filter_map(|(k, v)| match k {
            Cbor::Text(k) if !(skip_internal && INTERNAL.contains(&k.as_str())) => Some((k, v)),
            _ => None,
        })
        .map(|(name, v)| {
            let t = types.iter().find(|(n, _)| n == name).map(|(_, t)| *t);
            Ok(Attribute {
                name: name.clone(),
                values: from_cbor(v, t, name)?,
            })
        })
        .collect()
}

/// Reads a `netcdf` map back.
pub fn parse(map: &Cbor) -> Result<Carried> {
    let Cbor::Map(map) = map else {
        return Err(Error::CannotWrite(format!(
            "the {KEY:?} attribute is not a map: {map:?}"
        )));
    };
    let dims = match get(map, "_dims") {
        Some(Cbor::Array(a)) => Some(
            a.iter()
                .map(|d| match d {
                    Cbor::Text(t) => Ok(t.clone()),
                    other => Err(Error::CannotWrite(format!("a dimension name {other:?}"))),
                })
                .collect::<Result<_>>()?,
        ),
        _ => None,
    };
    let mut file_dims = Vec::new();
    let file = match get(map, "_file") {
        Some(Cbor::Map(f)) => f.as_slice(),
        _ => &[],
    };
    if let Some(Cbor::Array(ds)) = get(file, "dims") {
        for d in ds {
            let Cbor::Map(d) = d else { continue };
            let (Some(Cbor::Text(name)), Some(Cbor::Uint(len))) = (get(d, "name"), get(d, "len"))
            else {
                return Err(Error::CannotWrite(format!("a dimension {d:?} in _file")));
            };
            file_dims.push(Dimension {
                name: name.clone(),
                len: *len,
                unlimited: matches!(get(d, "unlimited"), Some(Cbor::Bool(true))),
            });
        }
    }
    let types = types_of(map, "_attr_types");
    let order = names(get(file, "order"));
    let attributes = sorted_by(attributes_of(map, &types, true)?, &order);
    let global = match get(map, "_global") {
        Some(Cbor::Map(g)) => Some(sorted_by(
            attributes_of(g, &types_of(map, "_global_types"), false)?,
            &names(get(file, "attributes")),
        )),
        _ => None,
    };
    Ok(Carried {
        dims,
        file_dims,
        attributes,
        global,
        char: matches!(get(map, "_nc_type"), Some(Cbor::Text(t)) if t == "char"),
        format: match get(file, "format") {
            Some(Cbor::Text(t)) => Some(t.clone()),
            _ => None,
        },
        index: match get(file, "index") {
            Some(Cbor::Uint(i)) => Some(*i),
            _ => None,
        },
        types,
        order,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Variable;

    #[test]
    fn a_variable_map_reads_back_with_every_type() {
        let attributes: Vec<Attribute> = crate::types::ALL
            .iter()
            .filter(|t| t.in_classic(5))
            .enumerate()
            .map(|(i, t)| {
                let bytes: Vec<u8> = (0..t.size() as u8 * 2)
                    .map(|b| b.wrapping_mul(13).wrapping_add(i as u8) & 0x7f)
                    .collect();
                Attribute {
                    name: format!("a{i}"),
                    values: Values::from_be(*t, if *t == NcType::Char { b"text" } else { &bytes })
                        .unwrap(),
                }
            })
            .chain([Attribute {
                name: "one".into(),
                values: Values::Float(vec![0.5]),
            }])
            .collect();
        let def = Definition {
            dimensions: vec![
                Dimension {
                    name: "t".into(),
                    len: 3,
                    unlimited: true,
                },
                Dimension {
                    name: "x".into(),
                    len: 2,
                    unlimited: false,
                },
            ],
            attributes: vec![
                Attribute::text("title", "t"),
                Attribute {
                    name: "n".into(),
                    values: Values::Short(vec![-1, 2]),
                },
            ],
            variables: vec![Variable {
                name: "c".into(),
                dims: vec![0, 1],
                attributes: attributes.clone(),
                nc_type: NcType::Char,
            }],
            format: Some("NETCDF3_64BIT_DATA".into()),
        };
        let map = variable_map(&def, 0);
        let back = parse(&map).unwrap();
        // The values are the tensor's own attributes; the map holds their types and order.
        assert!(back.attributes.is_empty());
        let tensor = tensor_attributes(&def, 0);
        assert_eq!(tensor.len(), attributes.len() + 1);
        let again: Vec<Attribute> = tensor
            .iter()
            .filter(|(k, _)| k != KEY)
            .map(|(k, v)| back.attribute(k, v).unwrap())
            .collect();
        assert_eq!(back.in_order(again.into_iter().rev().collect()), attributes);
        assert_eq!(
            back.dims.as_deref(),
            Some(&["t".to_owned(), "x".to_owned()][..])
        );
        assert_eq!(back.file_dims, def.dimensions);
        assert_eq!(back.global.as_deref(), Some(&def.attributes[..]));
        assert!(back.char);
        assert_eq!(back.index, Some(0));
        assert_eq!(back.format.as_deref(), Some("NETCDF3_64BIT_DATA"));
        assert_eq!(to_cbor(&Values::Float(vec![0.5])), Cbor::Float(0.5));
        assert!(from_cbor(&Cbor::Uint(300), Some(NcType::Byte), "b").is_err());
        assert_eq!(
            from_cbor(&Cbor::Uint(1 << 40), None, "b").unwrap(),
            Values::Int64(vec![1 << 40])
        );
        assert_eq!(
            from_cbor(&Cbor::Nint(0), None, "b").unwrap(),
            Values::Int(vec![-1])
        );
    }
}
