//! NetCDF-4: an HDF5 file (read by tensor-hdf5) following netCDF's conventions. Dimensions
//! are HDF5 dimension scales (`CLASS = "DIMENSION_SCALE"`), ordered by `_Netcdf4Dimid`; a
//! scale whose `NAME` says it is "a netCDF dimension but not a netCDF variable" is a
//! dimension only, the others are coordinate variables too. A variable's dimensions are its
//! `_Netcdf4Coordinates` (dimension ids), else its `DIMENSION_LIST` (references to scales),
//! else phony dimensions named by length as netCDF-C names them. Attributes keep their
//! types; the conventions' own (`CLASS`, `NAME`, `REFERENCE_LIST`, `DIMENSION_LIST`,
//! `_Netcdf4Dimid`, `_Netcdf4Coordinates`, `_NCProperties`) are left out. Variables,
//! dimensions and attributes of subgroups are named by their path (`group/var`), a group's
//! attributes beside the file's.

pub mod write;

use crate::attribute::{Attribute, Values};
use crate::error::{Error, Result};
use crate::model::{Definition, Dimension, NotRead, Strings, Variable};
use crate::types::NcType;
use tensor_core::{ByteOrder, ReadOptions};
use tensor_dtype::{Dtype, TensorContainer, TensorView};
use tensor_hdf5::message::datatype::{Datatype, Padding};
use tensor_hdf5::{Dataset, Hdf5, Kind, Object};

/// Attributes of netCDF's conventions, not the file's.
const HIDDEN: &[&str] = &[
    "CLASS",
    "NAME",
    "REFERENCE_LIST",
    "DIMENSION_LIST",
    "_Netcdf4Dimid",
    "_Netcdf4Coordinates",
    "_NCProperties",
    "_nc3_strict",
];

/// The prefix netCDF-C stores a variable under when a dimension of its name exists and it
/// is not that dimension's coordinate.
const NON_COORD: &str = "_nc4_non_coord_";

/// The `NAME` netCDF-C gives a scale that is a dimension only.
const DIMENSION_ONLY: &[u8] = b"This is a netCDF dimension but not a netCDF variable";

/// Whether `bytes`, an HDF5 file, follows netCDF's conventions: `_NCProperties` (netCDF-C
/// since 4.4.1, h5netcdf) or another of netCDF's attributes on any object, or a dimension
/// scale (netCDF's dimensions). A file that does not parse from `bytes` (cut short, or the
/// first bytes of a remote file) counts as NetCDF-4, whose reader then says what is wrong
/// or asks for more.
#[must_use]
pub fn follows_netcdf(bytes: &[u8]) -> bool {
    let marks = |o: &Object<'_>| {
        o.attributes.iter().any(|a| {
            matches!(
                a.name.as_str(),
                "_NCProperties"
                    | "_nc3_strict"
                    | "_Netcdf4Dimid"
                    | "_Netcdf4Coordinates"
                    | "DIMENSION_LIST"
            ) || (a.name == "CLASS" && a.data.starts_with(b"DIMENSION_SCALE"))
        })
    };
    let Ok(file) = Hdf5::open(bytes, tensor_core::Limits::default()) else {
        return true;
    };
    // The root group's `_NCProperties` settles it for netCDF-C's and h5netcdf's files without
    // walking the file; only files without it are walked for dimension scales.
    match file.root() {
        Ok(root) if marks(&root) => true,
        Ok(_) => file
            .objects()
            .map_or(true, |objects| objects.iter().any(marks)),
        Err(_) => true,
    }
}

fn hdf5(e: tensor_hdf5::Error) -> Error {
    match e {
        tensor_hdf5::Error::Core(c) => Error::Core(c),
        other => Error::Hdf5(other),
    }
}

/// A NetCDF-4 file, borrowing its bytes.
#[derive(Clone, Debug)]
pub struct Netcdf4<'a> {
    file: Hdf5<'a>,
    definition: Definition,
    datasets: Vec<Dataset<'a>>,
    dtypes: Vec<(Dtype, ByteOrder)>,
    shapes: Vec<Vec<u64>>,
    not_read: Vec<NotRead>,
    /// The string variables among those not read: name, dataset, dimensions' names.
    string_variables: Vec<(String, Dataset<'a>, Vec<String>)>,
}

fn attribute(
    file: &Hdf5<'_>,
    a: &tensor_hdf5::message::Attribute<'_>,
    path: &str,
    limits: &tensor_core::Limits,
) -> Result<Option<Attribute>> {
    let values = match &a.datatype {
        Datatype::String { size, padding, .. } => {
            let mut text: Vec<u8> = Vec::with_capacity(a.data.len());
            for e in a.data.chunks(*size as usize) {
                let end = match padding {
                    Padding::NullTerminated => e.iter().position(|&b| b == 0).unwrap_or(e.len()),
                    _ => e.len(),
                };
                text.extend_from_slice(&e[..end]);
            }
            Values::Char(text)
        }
        Datatype::VlenString { .. } => Values::String(
            file.vlen_texts(a.data, a.datatype.size(), limits, 0)
                .map_err(hdf5)?,
        ),
        t => {
            let Some((dtype, order)) = t.dtype() else {
                return Err(Error::Unsupported(format!(
                    "attribute {:?} of {path} of HDF5 class {}",
                    a.name,
                    t.class_name()
                )));
            };
            let Some(nc) = NcType::for_dtype(dtype) else {
                return Err(Error::Unsupported(format!(
                    "attribute {:?} of {path} of dtype {dtype}",
                    a.name
                )));
            };
            let mut be = a.data.to_vec();
            tensor_core::byte_order::convert_copy(
                a.data,
                order,
                &mut be,
                ByteOrder::Big,
                dtype.byte_width(),
            )?;
            Values::from_be(nc, &be)?
        }
    };
    Ok(Some(Attribute {
        name: a.name.clone(),
        values,
    }))
}

/// The values of `d`, a dataset of variable-length strings, in C order, within `limits` (the
/// references and the strings count as bytes decoded).
fn strings(file: &Hdf5<'_>, d: &Dataset<'_>, limits: &tensor_core::Limits) -> Result<Vec<String>> {
    let len = d.byte_len().map_err(hdf5)?;
    limits.check_total_bytes(len)?;
    let n = tensor_core::checked::to_usize(len, "a string variable")?;
    let mut refs = Vec::new();
    tensor_core::buffer::try_reserve(&mut refs, n, "a string variable")?;
    refs.resize(n, 0);
    file.read(d, &mut refs).map_err(hdf5)?;
    file.vlen_texts(&refs, d.datatype.size(), limits, len)
        .map_err(hdf5)
}

/// A variable's NetCDF type, or why no tensor holds it (a [`NotRead`]'s words).
fn nc_type(t: &Datatype) -> std::result::Result<NcType, String> {
    match t {
        Datatype::String { size: 1, .. } => Ok(NcType::Char),
        Datatype::VlenString { .. } => {
            Err("a string variable (no tensor dtype holds strings: its values are read as strings)".into())
        }
        t => t
            .dtype()
            .and_then(|(d, _)| NcType::for_dtype(d))
            .ok_or_else(|| {
                format!(
                    "a variable of HDF5 class {} ({} bytes an element), which no tensor dtype holds",
                    t.class_name(),
                    t.size()
                )
            }),
    }
}

fn text_attribute<'o>(o: &'o Object<'_>, name: &str) -> Option<&'o [u8]> {
    o.attributes.iter().find(|a| a.name == name).map(|a| a.data)
}

fn int_attribute(o: &Object<'_>, name: &str) -> Option<Vec<i64>> {
    let a = o.attributes.iter().find(|a| a.name == name)?;
    let (dtype, order) = a.datatype.dtype()?;
    let w = dtype.byte_width();
    Some(
        a.data
            .chunks_exact(w)
            .map(
                |e| match tensor_dtype::scalar::decode_one(dtype, e, order) {
                    tensor_dtype::Scalar::Int(i) => i,
                    tensor_dtype::Scalar::Uint(u) => i64::try_from(u).unwrap_or(i64::MAX),
                    _ => -1,
                },
            )
            .collect(),
    )
}

/// A path without its leading `/`.
fn relative(path: &str) -> &str {
    path.strip_prefix('/').unwrap_or(path)
}

impl<'a> Netcdf4<'a> {
    /// Opens `bytes`, a whole NetCDF-4 file.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let file = Hdf5::open(bytes, options.limits).map_err(hdf5)?;
        let objects = file.objects().map_err(hdf5)?;
        // Dimensions: the scales, by dimension id.
        let mut scales: Vec<(i64, &Object<'a>)> = Vec::new();
        for (i, o) in objects.iter().enumerate() {
            if text_attribute(o, "CLASS").is_some_and(|c| c.starts_with(b"DIMENSION_SCALE")) {
                let id = int_attribute(o, "_Netcdf4Dimid")
                    .and_then(|v| v.first().copied())
                    .unwrap_or(i as i64);
                scales.push((id, o));
            }
        }
        scales.sort_by_key(|(id, _)| *id);
        let mut dimensions: Vec<Dimension> = Vec::new();
        let mut dim_of_address: Vec<(u64, usize)> = Vec::new();
        let mut dim_of_id: Vec<(i64, usize)> = Vec::new();
        for (id, o) in &scales {
            let Kind::Dataset(d) = &o.kind else { continue };
            let unlimited = d
                .dataspace
                .max
                .as_ref()
                .and_then(|m| m.first())
                .is_some_and(|&m| m == u64::MAX);
            dim_of_address.push((o.address, dimensions.len()));
            dim_of_id.push((*id, dimensions.len()));
            dimensions.push(Dimension {
                name: relative(&o.path).to_owned(),
                len: d.dataspace.dims.first().copied().unwrap_or(0),
                unlimited,
            });
        }
        let mut variables = Vec::new();
        let mut datasets = Vec::new();
        let mut dtypes = Vec::new();
        let mut not_read = Vec::new();
        let mut string_variables = Vec::new();
        for o in &objects {
            let Kind::Dataset(d) = &o.kind else { continue };
            if text_attribute(o, "NAME").is_some_and(|n| n.starts_with(DIMENSION_ONLY)) {
                continue;
            }
            // A variable named as a dimension it is not the coordinate of: netCDF-C stores
            // it under a prefixed name (the prefix of its own name, not of its group's, and
            // not the same letters elsewhere in it).
            let full = relative(&o.path);
            let (group, own) = crate::model::split(full);
            let path = match own.strip_prefix(NON_COORD) {
                Some(rest) if group.is_empty() => rest.to_owned(),
                Some(rest) => format!("{group}/{rest}"),
                None => full.to_owned(),
            };
            let nc = nc_type(&d.datatype);
            let rank = d.dataspace.dims.len();
            let dims: Vec<usize> = if rank == 0 {
                Vec::new()
            } else if let Some(ids) =
                int_attribute(o, "_Netcdf4Coordinates").filter(|v| v.len() == rank)
            {
                ids.iter()
                    .map(|id| {
                        dim_of_id
                            .iter()
                            .find(|(i, _)| i == id)
                            .map(|(_, d)| *d)
                            .ok_or_else(|| {
                                Error::malformed(
                                    format!("variable {path:?}"),
                                    0,
                                    format!("dimension id {id} of no dimension scale"),
                                )
                            })
                    })
                    .collect::<Result<_>>()?
            } else if let Some(list) = o.attributes.iter().find(|a| a.name == "DIMENSION_LIST") {
                let mut out = Vec::with_capacity(rank);
                for e in list
                    .data
                    .chunks(4 + usize::from(file.address_size()) + 4)
                    .take(rank)
                {
                    let refs = file
                        .vlen(e)
                        .map_err(hdf5)?
                        .map(|r| file.references(r))
                        .unwrap_or_default();
                    let d = refs
                        .first()
                        .and_then(|r| dim_of_address.iter().find(|(a, _)| a == r))
                        .map(|(_, d)| *d)
                        .ok_or_else(|| {
                            Error::malformed(
                                format!("variable {path:?}"),
                                0,
                                "a dimension list naming no dimension scale",
                            )
                        })?;
                    out.push(d);
                }
                out
            } else {
                // Phony dimensions, as netCDF-C names them for plain HDF5 datasets.
                d.dataspace
                    .dims
                    .iter()
                    .map(|&len| {
                        let name = format!("phony_dim_{len}");
                        if let Some(i) = dimensions.iter().position(|x| x.name == name) {
                            i
                        } else {
                            dimensions.push(Dimension {
                                name,
                                len,
                                unlimited: false,
                            });
                            dimensions.len() - 1
                        }
                    })
                    .collect()
            };
            if dims.len() != rank {
                return Err(Error::malformed(
                    format!("variable {path:?}"),
                    0,
                    "fewer dimensions than its shape",
                ));
            }
            // An unlimited dimension is as long as its longest variable.
            for (k, &dim) in dims.iter().enumerate() {
                if dimensions[dim].unlimited {
                    dimensions[dim].len = dimensions[dim].len.max(d.dataspace.dims[k]);
                }
            }
            let nc = match nc {
                Ok(nc) => nc,
                Err(why) => {
                    if matches!(d.datatype, Datatype::VlenString { .. }) {
                        string_variables.push((
                            path.clone(),
                            d.clone(),
                            dims.iter().map(|&k| dimensions[k].name.clone()).collect(),
                        ));
                    }
                    not_read.push(NotRead { name: path, why });
                    continue;
                }
            };
            let attributes = o
                .attributes
                .iter()
                .filter(|a| !HIDDEN.contains(&a.name.as_str()))
                .map(|a| attribute(&file, a, &path, &options.limits))
                .filter_map(Result::transpose)
                .collect::<Result<Vec<_>>>()?;
            let dtype = match (&d.datatype, nc) {
                (_, NcType::Char) => (Dtype::Uint8, ByteOrder::Little),
                (t, _) => t.dtype().unwrap_or((Dtype::Uint8, ByteOrder::Little)),
            };
            variables.push(Variable {
                name: path,
                dims,
                attributes,
                nc_type: nc,
            });
            datasets.push(d.clone());
            dtypes.push(dtype);
        }
        options.limits.check_tensor_count(variables.len() as u64)?;
        let root = objects.iter().find(|o| o.path == "/");
        // The root group's attributes, then each subgroup's, named by the group's path as
        // its variables are (`forecast/source`).
        let mut attributes = Vec::new();
        for g in root.into_iter().chain(
            objects
                .iter()
                .filter(|o| matches!(o.kind, Kind::Group) && o.path != "/"),
        ) {
            let group = relative(&g.path);
            let of = if group.is_empty() {
                "the file".to_owned()
            } else {
                format!("group {group}")
            };
            for a in g
                .attributes
                .iter()
                .filter(|a| !HIDDEN.contains(&a.name.as_str()))
            {
                if let Some(mut a) = attribute(&file, a, &of, &options.limits)? {
                    if !group.is_empty() {
                        a.name = format!("{group}/{}", a.name);
                    }
                    attributes.push(a);
                }
            }
        }
        let strict = root.is_some_and(|r| r.attributes.iter().any(|a| a.name == "_nc3_strict"));
        let shapes = datasets.iter().map(|d| d.dataspace.dims.clone()).collect();
        let mut file = Netcdf4 {
            file,
            definition: Definition {
                dimensions,
                attributes,
                variables,
                format: Some(if strict { "NETCDF4_CLASSIC" } else { "NETCDF4" }.into()),
            },
            datasets,
            dtypes,
            shapes,
            not_read,
            string_variables,
        };
        // Booleans as xarray writes them: read as `bool` when every byte is 0 or 1 — looked
        // at in place, or decoded when chunked and at most 64 MiB (a larger one, or one whose
        // bytes are not at hand, stays `byte`).
        for i in 0..file.dtypes.len() {
            if crate::model::marked_bool(&file.definition.variables[i]) && file.holds_booleans(i) {
                file.dtypes[i] = (Dtype::Bool, ByteOrder::Little);
            }
        }
        Ok(file)
    }

    /// Whether variable `i`'s bytes are all 0 or 1.
    fn holds_booleans(&self, i: usize) -> bool {
        let d = &self.datasets[i];
        if let Ok(Some(bytes)) = self.file.stored(d) {
            return bytes.iter().all(|&b| b <= 1);
        }
        match d.byte_len() {
            Ok(n) if n <= 64 << 20 => {
                let mut out = vec![0u8; n as usize];
                self.file.read(d, &mut out).is_ok() && out.iter().all(|&b| b <= 1)
            }
            _ => false,
        }
    }

    /// Dimensions, global attributes and variables.
    #[must_use]
    pub fn definition(&self) -> &Definition {
        &self.definition
    }

    /// The variables of types no tensor holds (strings, compound, enum, variable-length),
    /// left out of [`definition`](Self::definition).
    #[must_use]
    pub fn not_read(&self) -> &[NotRead] {
        &self.not_read
    }

    /// The values of string variable `name` (one of [`not_read`](Self::not_read)), read
    /// from the file within `limits`; `None` for any other name.
    pub fn strings(&self, name: &str, limits: &tensor_core::Limits) -> Result<Option<Strings>> {
        let Some((_, d, dims)) = self.string_variables.iter().find(|(n, _, _)| n == name) else {
            return Ok(None);
        };
        Ok(Some(Strings {
            dims: dims.clone(),
            shape: d.dataspace.dims.clone(),
            values: strings(&self.file, d, limits)?,
        }))
    }

    /// Reads `rows` of variable `i`'s outermost dimension into `dst` in the machine's byte
    /// order: the chunks those rows lie in decoded, no others.
    pub fn read_rows(&self, i: usize, rows: std::ops::Range<u64>, dst: &mut [u8]) -> Result<()> {
        let (dtype, order) = self.dtypes[i];
        self.file
            .read_rows_native(&self.datasets[i], order, dtype.byte_width(), rows, dst)
            .map_err(hdf5)
    }

    /// The rows of variable `i`'s outermost dimension one chunk holds (1 for a variable
    /// not chunked or of no dimension).
    #[must_use]
    pub fn chunk_rows(&self, i: usize) -> u64 {
        self.datasets[i].chunk_rows()
    }

    /// Where variable `i`'s elements lie in the file and in which byte order, when they are
    /// stored as they are in one run (contiguous): what a remote reader fetches for it.
    pub fn stored_range(&self, i: usize) -> Result<Option<(std::ops::Range<u64>, ByteOrder)>> {
        let range = self.file.stored_range(&self.datasets[i]).map_err(hdf5)?;
        Ok(range.map(|r| (r, self.dtypes[i].1)))
    }

    /// Whether variable `i` is stored as it is (a zero-copy view), not chunked or filtered.
    pub fn is_stored(&self, i: usize) -> Result<bool> {
        Ok(self.file.stored(&self.datasets[i]).map_err(hdf5)?.is_some())
    }

    /// The HDF5 layout of variable `i`, for people: `contiguous`, `compact`, or `chunked`
    /// and its filters.
    #[must_use]
    pub fn encoding(&self, i: usize) -> String {
        self.datasets[i].storage()
    }
}

impl<'a> TensorContainer<'a> for Netcdf4<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.definition.variables.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.definition.variables[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.dtypes[i].0)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.shapes[i])
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        let Some(bytes) = self.file.stored(&self.datasets[i]).map_err(hdf5)? else {
            return Ok(None);
        };
        let (dtype, order) = self.dtypes[i];
        Ok(Some(TensorView::new(bytes, dtype, &self.shapes[i], order)?))
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        // Every row (a scalar's one).
        let rows = self.shapes[i].first().copied().unwrap_or(1);
        self.read_rows(i, 0..rows, dst)
    }
}
