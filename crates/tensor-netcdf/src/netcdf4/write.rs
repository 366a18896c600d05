//! NetCDF-4 written: a [`Definition`] laid out over tensor-hdf5's writer as netCDF-C lays
//! it out, so that netCDF-C (`ncdump`, netCDF4-python), h5netcdf and h5py read it as the
//! same dataset. Each dimension is an HDF5 dimension scale — its coordinate variable, or a
//! dataset with no storage named as netCDF-C names a dimension only — numbered by
//! `_Netcdf4Dimid`; each other variable points at its scales (`DIMENSION_LIST`) and lists
//! their ids (`_Netcdf4Coordinates`). A variable named as a dimension it is not the
//! coordinate of is stored as `_nc4_non_coord_<name>`. Attributes keep their NetCDF types
//! (`char` as fixed strings, `string` as variable-length ones). What a name puts in a
//! subgroup (`forecast/t2m`, as the reader names it) goes in that group, made as it is
//! first needed. Elements are streamed little-endian; a variable is contiguous unless it
//! has an unlimited dimension or filters, then chunked (see [`default_chunks`]).

use super::{DIMENSION_ONLY, NON_COORD};
use crate::attribute::{Attribute, Values};
use crate::error::{Error, Result};
use crate::model::{Definition, split};
use crate::types::NcType;
use std::io::{Seek, Write};
use tensor_hdf5::write::{self as h5, DatasetId, DatasetSpec, Type, Value};

/// How variables are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Storage {
    /// The filters every variable's chunks go through (a variable with any is chunked).
    pub filters: h5::Filters,
}

/// The root attribute by which netCDF-C marks a NetCDF-4 file of the classic data model.
pub const CLASSIC_MODEL: &str = "_nc3_strict";

/// The bytes a chunk holds at most when the writer chooses its shape.
const CHUNK_BYTES: u64 = 1 << 20;

/// The chunk shape of a variable of `shape` and `width`-byte elements: the whole variable
/// (a length 0 dimension as 1), cut down dimension by dimension, outermost first, until a
/// chunk holds at most 1 MiB — records one or a few at a time, each field in a few chunks
/// that compress side by side.
#[must_use]
pub fn default_chunks(shape: &[u64], width: u64) -> Vec<u64> {
    let mut chunk: Vec<u64> = shape.iter().map(|&d| d.max(1)).collect();
    let bytes = |c: &[u64]| c.iter().fold(width, |n, &d| n.saturating_mul(d));
    for i in 0..chunk.len() {
        let total = bytes(&chunk);
        if total <= CHUNK_BYTES {
            break;
        }
        let rest = total / chunk[i];
        chunk[i] = (CHUNK_BYTES / rest.max(1)).clamp(1, chunk[i]);
    }
    chunk
}

fn hdf5(e: tensor_hdf5::Error) -> Error {
    match e {
        tensor_hdf5::Error::Core(c) => Error::Core(c),
        tensor_hdf5::Error::CannotWrite(m) => Error::CannotWrite(m),
        other => Error::Hdf5(other),
    }
}

/// The HDF5 element type of a variable of `t`.
fn element(t: NcType) -> Result<Type> {
    let int = |size, signed| Ok(Type::Integer { size, signed });
    match t {
        NcType::Byte => int(1, true),
        NcType::Ubyte => int(1, false),
        NcType::Short => int(2, true),
        NcType::Ushort => int(2, false),
        NcType::Int => int(4, true),
        NcType::Uint => int(4, false),
        NcType::Int64 => int(8, true),
        NcType::Uint64 => int(8, false),
        NcType::Float => Ok(Type::Float { size: 4 }),
        NcType::Double => Ok(Type::Float { size: 8 }),
        NcType::Char => Ok(Type::Text {
            len: 1,
            utf8: false,
        }),
        NcType::String => Err(Error::CannotWrite(
            "string variables are not written (string attributes are)".into(),
        )),
    }
}

/// Big-endian elements of `width` bytes made little-endian.
fn little(mut be: Vec<u8>, width: usize) -> Result<Vec<u8>> {
    tensor_core::byte_order::swap_in_place(&mut be, width)?;
    Ok(be)
}

/// An attribute as netCDF-C stores it.
fn attribute(a: &Attribute) -> Result<h5::Attribute> {
    let name = a.name.clone();
    Ok(match &a.values {
        Values::Char(text) => h5::Attribute {
            name,
            ty: Type::Text {
                len: u32::try_from(text.len()).map_err(|_| {
                    Error::CannotWrite(format!("attribute {:?}: 4 GiB of text", a.name))
                })?,
                utf8: std::str::from_utf8(text).is_ok_and(|t| !t.is_ascii()),
            },
            scalar: true,
            value: Value::Bytes(text.clone()),
        },
        Values::String(strings) => h5::Attribute {
            name,
            ty: Type::VlenText { utf8: true },
            scalar: false,
            value: Value::Strings(strings.clone()),
        },
        numbers => {
            let t = numbers.nc_type();
            h5::Attribute {
                name,
                ty: element(t)?,
                scalar: false,
                value: Value::Bytes(little(numbers.to_be_bytes()?, t.size() as usize)?),
            }
        }
    })
}

fn int_attribute(name: &str, values: &[i32], scalar: bool) -> h5::Attribute {
    h5::Attribute {
        name: name.into(),
        ty: Type::Integer {
            size: 4,
            signed: true,
        },
        scalar,
        value: Value::Bytes(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
    }
}

fn text_attribute(name: &str, text: &str) -> h5::Attribute {
    // Null-terminated, the terminator counted, as the dimension scale API stores them.
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    h5::Attribute {
        name: name.into(),
        ty: Type::Text {
            len: bytes.len() as u32,
            utf8: false,
        },
        scalar: true,
        value: Value::Bytes(bytes),
    }
}

/// A dimension scale's own attributes: what marks it so, its name, its dimension id.
fn scale_attributes(name: &str, id: usize) -> [h5::Attribute; 3] {
    [
        text_attribute("CLASS", "DIMENSION_SCALE"),
        text_attribute("NAME", name),
        int_attribute("_Netcdf4Dimid", &[id as i32], true),
    ]
}

/// Whether `name` names something in a group as this crate names it: `/`-separated
/// components (the groups, then the name), none empty.
fn well_formed(name: &str) -> bool {
    name.split('/').all(|c| !c.is_empty() && c != ".")
}

/// Refuses what no NetCDF-4 file says: empty or repeated names, dimension ids out of range.
fn check(def: &Definition) -> Result<()> {
    let bad = |what: String| Err(Error::CannotWrite(what));
    let mut seen = std::collections::HashSet::new();
    for (i, d) in def.dimensions.iter().enumerate() {
        if !well_formed(&d.name) || !seen.insert(d.name.as_str()) {
            return bad(format!(
                "dimension {i}: an empty or repeated name, or an empty group name, {:?}",
                d.name
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, v) in def.variables.iter().enumerate() {
        if !well_formed(&v.name)
            || split(&v.name).1.starts_with(NON_COORD)
            || !seen.insert(v.name.as_str())
        {
            return bad(format!(
                "variable {i}: an empty, repeated or reserved name, or an empty group name, {:?}",
                v.name
            ));
        }
        if let Some(&d) = v.dims.iter().find(|&&d| d >= def.dimensions.len()) {
            return bad(format!(
                "variable {:?}: dimension id {d} of {}",
                v.name,
                def.dimensions.len()
            ));
        }
    }
    for a in &def.attributes {
        if !well_formed(&a.name) {
            return bad(format!(
                "attribute {:?}: an empty name, or an empty group name",
                a.name
            ));
        }
    }
    Ok(())
}

/// The groups of a file being written, made as they are first needed, by path.
#[derive(Default)]
struct Groups(Vec<(String, h5::GroupId)>);

impl Groups {
    /// The group at `path` (`None` for the root, the empty path), made with its ancestors
    /// where they are not yet.
    fn at<W: Write + Seek + ?Sized>(
        &mut self,
        w: &mut h5::Writer<'_, W>,
        path: &str,
    ) -> Result<Option<h5::GroupId>> {
        if path.is_empty() {
            return Ok(None);
        }
        if let Some((_, id)) = self.0.iter().find(|(p, _)| p == path) {
            return Ok(Some(*id));
        }
        let (parent, name) = split(path);
        let parent = self.at(w, parent)?;
        let id = w.group(parent, name).map_err(hdf5)?;
        self.0.push((path.to_owned(), id));
        Ok(Some(id))
    }
}

/// Writes `def` to `out` as NetCDF-4, stored as `storage` says. `data` is called once for
/// each variable, in order, with a sink taking the variable's elements in C order,
/// little-endian; it must write exactly the variable's bytes. Returns the file's length.
///
/// # Errors
/// [`Error::CannotWrite`] for what NetCDF-4 cannot say (or this writer does not write:
/// string variables, attributes past 64 KiB); what `data` returns; I/O errors.
pub fn write<W: Write + Seek + ?Sized>(
    out: &mut W,
    def: &Definition,
    storage: &Storage,
    classic_model: bool,
    data: &mut dyn FnMut(usize, &mut dyn Write) -> Result<()>,
) -> Result<u64> {
    check(def)?;
    if classic_model
        && let Some(name) = def
            .dimensions
            .iter()
            .map(|d| &d.name)
            .chain(def.variables.iter().map(|v| &v.name))
            .chain(def.attributes.iter().map(|a| &a.name))
            .find(|n| n.contains('/'))
    {
        return Err(Error::CannotWrite(format!(
            "{name:?} is in a group, which the classic data model has not"
        )));
    }
    let types: Vec<Type> = def
        .variables
        .iter()
        .map(|v| element(v.nc_type))
        .collect::<Result<_>>()?;
    // Each dimension's coordinate variable: named as it, over it alone.
    let coordinate: Vec<Option<usize>> = (0..def.dimensions.len())
        .map(|d| {
            def.variables
                .iter()
                .position(|v| v.name == def.dimensions[d].name && v.dims == [d])
        })
        .collect();
    let mut w = h5::Writer::new(out).map_err(hdf5)?;
    let mut groups = Groups::default();
    let mut scales: Vec<Option<DatasetId>> = vec![None; def.dimensions.len()];
    // The dimensions that are dimensions only come first, as netCDF-C defines them first.
    for (d, dim) in def.dimensions.iter().enumerate() {
        if coordinate[d].is_some() {
            continue;
        }
        let spec = DatasetSpec {
            ty: Type::Float { size: 4 },
            dims: vec![dim.len],
            max: Some(vec![(!dim.unlimited).then_some(dim.len)]),
            chunks: dim.unlimited.then(|| vec![1]),
            filters: h5::Filters::default(),
            fill: None,
        };
        let (group, own) = split(&dim.name);
        let group = groups.at(&mut w, group)?;
        let id = w.dataset_in(group, own, spec, None).map_err(hdf5)?;
        // netCDF-C's words, a full stop, and the length in ten places.
        let name = format!(
            "{}.{:>10}",
            std::str::from_utf8(DIMENSION_ONLY).unwrap_or_default(),
            dim.len
        );
        let [class, _, dimid] = scale_attributes(own, d);
        for a in [class, text_attribute("NAME", &name), dimid] {
            w.attribute(Some(id), a);
        }
        scales[d] = Some(id);
    }
    let mut ids = Vec::with_capacity(def.variables.len());
    for (i, v) in def.variables.iter().enumerate() {
        let shape = def.shape(i);
        let unlimited = v.dims.iter().any(|&d| def.dimensions[d].unlimited);
        let chunked = unlimited || storage.filters.any();
        let width = u64::from(types[i].size());
        let spec = DatasetSpec {
            ty: types[i],
            max: Some(
                v.dims
                    .iter()
                    .map(|&d| (!def.dimensions[d].unlimited).then_some(def.dimensions[d].len))
                    .collect(),
            ),
            chunks: (chunked && !shape.is_empty()).then(|| default_chunks(&shape, width)),
            filters: if shape.is_empty() {
                h5::Filters::default()
            } else {
                storage.filters
            },
            fill: Some(little(v.fill_be(), width as usize)?),
            dims: shape,
        };
        let is_coordinate = v.dims.len() == 1 && coordinate[v.dims[0]] == Some(i);
        let (group, own) = split(&v.name);
        let stored_name = if !is_coordinate && def.dimensions.iter().any(|d| d.name == v.name) {
            format!("{NON_COORD}{own}")
        } else {
            own.to_owned()
        };
        let group = groups.at(&mut w, group)?;
        let mut hand_over = |sink: &mut dyn Write| -> tensor_hdf5::Result<()> {
            data(i, sink).map_err(|e| match e {
                Error::Core(c) => tensor_hdf5::Error::Core(c),
                other => tensor_hdf5::Error::CannotWrite(other.to_string()),
            })
        };
        let id = w
            .dataset_in(group, &stored_name, spec, Some(&mut hand_over))
            .map_err(hdf5)?;
        if is_coordinate {
            scales[v.dims[0]] = Some(id);
        }
        ids.push((id, is_coordinate));
    }
    for (i, v) in def.variables.iter().enumerate() {
        let (id, is_coordinate) = ids[i];
        let dimids: Vec<i32> = v.dims.iter().map(|&d| d as i32).collect();
        if !v.dims.is_empty() {
            w.attribute(
                Some(id),
                int_attribute("_Netcdf4Coordinates", &dimids, false),
            );
        }
        if is_coordinate {
            for a in scale_attributes(split(&v.name).1, v.dims[0]) {
                w.attribute(Some(id), a);
            }
        } else if !v.dims.is_empty() {
            let lists = v
                .dims
                .iter()
                .map(|&d| scales[d].map(|s| vec![s]).unwrap_or_default())
                .collect();
            w.attribute(
                Some(id),
                h5::Attribute {
                    name: "DIMENSION_LIST".into(),
                    ty: Type::References,
                    scalar: false,
                    value: Value::References(lists),
                },
            );
        }
        for a in &v.attributes {
            w.attribute(Some(id), attribute(a)?);
        }
    }
    // A subgroup's attributes are named by its path, as the reader names them.
    for a in &def.attributes {
        let (group, own) = split(&a.name);
        let mut h = attribute(a)?;
        own.clone_into(&mut h.name);
        match groups.at(&mut w, group)? {
            Some(g) => w.group_attribute(g, h),
            None => w.attribute(None, h),
        }
    }
    if classic_model {
        w.attribute(None, int_attribute(CLASSIC_MODEL, &[1], false));
    }
    w.finish().map_err(hdf5)
}

#[cfg(test)]
mod tests {
    use super::default_chunks;

    #[test]
    fn chunks_hold_a_mebibyte_at_most_cut_outermost_first() {
        assert_eq!(default_chunks(&[10, 20], 4), [10, 20]);
        assert_eq!(default_chunks(&[0, 20], 4), [1, 20]);
        // 100 fields of 721 x 1440 float32 (4 MB each): a quarter of a field per chunk.
        assert_eq!(default_chunks(&[100, 721, 1440], 4), [1, 182, 1440]);
        assert_eq!(default_chunks(&[1 << 20], 8), [1 << 17]);
    }
}
