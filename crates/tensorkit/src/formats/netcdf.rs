//! NetCDF, through tensor-netcdf (see docs/formats/netcdf.md): one tensor per variable, a
//! zero-copy view of the file, carrying its dimensions and typed attributes in a `netcdf`
//! attribute laid out as tensogram's; the file's attributes as metadata. Written as
//! NetCDF-3, streamed, from those attributes where tensors have them.

use crate::adapter::{Adapter, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
use std::path::Path;
use std::sync::Arc;
use tensor_core::cbor::Value as Cbor;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Dtype, Format as _, FormatInfo, TensorContainer, TensorView};
use tensor_netcdf::carried;
use tensor_netcdf::{
    Attribute, Definition, Dimension, NcType, Netcdf, NetcdfFormat, Output, Variable,
};

/// NetCDF, as the front door reads and writes it.
pub(crate) struct NetcdfAdapter;

/// The registry's entry.
pub(crate) static ADAPTER: NetcdfAdapter = NetcdfAdapter;

const FORMAT: &str = NetcdfFormat::INFO.id;

fn wrap(path: &Path) -> impl Fn(tensor_netcdf::Error) -> Error + '_ {
    move |source| Error::format(path, FORMAT, source)
}

impl Adapter for NetcdfAdapter {
    fn info(&self) -> &'static FormatInfo {
        &NetcdfFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        NetcdfFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        read(path, bytes, options)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn tensor_core::atomic::WriteSeek,
        path: &Path,
        writing: &Writing<'_>,
    ) -> Result<Vec<String>> {
        write(set, out, path, writing.packing)
    }

    fn outline(&self, set: &TensorSet<'_>, name: &str) -> Option<String> {
        plan(set)
            .ok()
            .map(|p| tensor_netcdf::cdl::header(&p.def, name))
    }

    fn derived_attributes(&self) -> &'static [&'static str] {
        &[carried::KEY]
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        NetcdfFormat::header_ranges(held, limits).map_err(wrap(path))
    }

    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        held: &dyn Fn(std::ops::Range<u64>) -> bool,
    ) -> Result<crate::adapter::Opening<'a>> {
        open_header(path, bytes, options, held)
    }
}

/// Lists a remote NetCDF-3 file whose header is held: each variable's span is its data
/// (from its first record to the end of its last, for a record variable); one stored
/// contiguously is used as it arrives, a record variable whose records others' separate is
/// viewed over its fetched span, and a boolean checked.
#[cfg(feature = "remote")]
fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
    held: &dyn Fn(std::ops::Range<u64>) -> bool,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    if bytes.starts_with(tensor_netcdf::HDF5_SIGNATURE) {
        return open_netcdf4_header(path, bytes, options, held);
    }
    let file = tensor_netcdf::classic::Classic::open_with(bytes, options).map_err(wrap(path))?;
    let def = file.definition();
    let mut tensors = Vec::with_capacity(def.variables.len());
    for (i, v) in def.variables.iter().enumerate() {
        let dtype = file.dtype(i).map_err(wrap(path))?;
        let raw = file.is_contiguous(i) && dtype != Dtype::Bool;
        tensors.push(Listed {
            name: Some(v.name.clone()),
            dtype,
            shape: file.shape(i).map_err(wrap(path))?.to_vec(),
            encoding: None,
            location: Vec::new(),
            attributes: tensor_attributes(def, i, dtype),
            span: file.data_range(i),
            fetch: if raw {
                Fetch::Raw(tensor_core::ByteOrder::Big)
            } else {
                Fetch::Decode
            },
        });
    }
    let (metadata, metadata_types) = metadata(def);
    let listing = Listing {
        format: Format::NETCDF,
        metadata,
        metadata_types,
        tensors,
        not_read: Vec::new(),
    };
    Ok(Opening::listed(listing, Records(file)))
}

/// Lists a remote NetCDF-4 file from the prefix held (its metadata, `header_ranges`): a
/// contiguous variable is fetched alone and used as it arrives; a chunked one fetches the
/// whole file and is decoded from it (its chunk index and chunks may lie anywhere).
#[cfg(feature = "remote")]
fn open_netcdf4_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
    held: &dyn Fn(std::ops::Range<u64>) -> bool,
) -> Result<crate::adapter::Opening<'a>> {
    use crate::adapter::listing::{Fetch, Listed, Listing, Opening};
    let len = bytes.len() as u64;
    // The longest prefix held: what the metadata was read from.
    let (mut lo, mut hi) = (0u64, len);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if held(0..mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let prefix = &bytes[..lo as usize];
    let file = tensor_netcdf::netcdf4::Netcdf4::open_with(prefix, options).map_err(wrap(path))?;
    let def = file.definition();
    let mut tensors = Vec::with_capacity(def.variables.len());
    for i in 0..def.variables.len() {
        let dtype = file.dtype(i).map_err(wrap(path))?;
        let shape = file.shape(i).map_err(wrap(path))?.to_vec();
        let stored = file.stored_range(i).map_err(wrap(path))?;
        let attributes = tensor_attributes(def, i, dtype);
        tensors.push(Listed {
            name: Some(def.variables[i].name.clone()),
            dtype,
            shape,
            encoding: stored.is_none().then(|| file.encoding(i)),
            location: Vec::new(),
            attributes,
            span: stored.as_ref().map_or(0..len, |(r, _)| r.clone()),
            fetch: match stored {
                Some((_, order)) => Fetch::Raw(order),
                None => Fetch::Decode,
            },
        });
    }
    let (metadata, metadata_types) = metadata(def);
    let listing = Listing {
        format: Format::NETCDF,
        metadata,
        metadata_types,
        tensors,
        not_read: not_read(file.not_read(), &|_| Ok(None)).map_err(wrap(path))?,
    };
    Ok(Opening::listed(listing, Whole))
}

/// A remote NetCDF-4 file's chunked variables, decoded from the whole file fetched.
#[cfg(feature = "remote")]
struct Whole;

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Whole {
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        bytes: &'w [u8],
        options: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let file = Arc::new(Netcdf::open_with(bytes, options).map_err(wrap(path))?);
        chunked(path, &file, i)
    }
}

/// A remote classic file's header, to view a variable over its fetched span.
#[cfg(feature = "remote")]
struct Records<'a>(tensor_netcdf::classic::Classic<'a>);

#[cfg(feature = "remote")]
impl crate::adapter::listing::ReadIn for Records<'_> {
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: std::ops::Range<u64>,
        bytes: &'w [u8],
        _: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        let view = self.0.view_over(i, bytes).map_err(wrap(path))?;
        let name = &self.0.definition().variables[i].name;
        if view.dtype() == Dtype::Bool && view.to_le_bytes().iter().any(|&b| b > 1) {
            return Err(Error::format(
                path,
                FORMAT,
                tensor_netcdf::Error::Unsupported(format!(
                    "variable {name:?} is marked as booleans but holds bytes other than 0 and 1"
                )),
            ));
        }
        Ok(NamedTensor::borrowed(name, view))
    }
}

/// Variable `i`'s attributes as its tensor (read as `dtype`) carries them: its own and its
/// `netcdf` map; a boolean's mark left out, its dtype saying it (the writer marks it again).
fn tensor_attributes(def: &Definition, i: usize, dtype: Dtype) -> Vec<(String, Cbor)> {
    let mut attributes = carried::tensor_attributes(def, i);
    let (mark, _) = tensor_netcdf::BOOL_MARK;
    attributes.retain(|(k, _)| !(dtype == Dtype::Bool && k == mark));
    attributes
}

/// What `file` holds that no tensor can, by name, and why; with its string variables'
/// values when `strings` gives them (a local file's, read within the limits; a remote
/// listing reads none, as it reads no data).
fn not_read(
    variables: &[tensor_netcdf::NotRead],
    strings: &dyn Fn(&str) -> tensor_netcdf::Result<Option<tensor_netcdf::Strings>>,
) -> tensor_netcdf::Result<Vec<crate::NotRead>> {
    variables
        .iter()
        .map(|n| {
            Ok(crate::NotRead {
                name: n.name.clone(),
                why: n.why.clone(),
                strings: strings(&n.name)?.map(|s| (s.shape, s.values)),
            })
        })
        .collect()
}

/// The file's attributes as metadata (their values as JSON), and each one's NetCDF type.
fn metadata(
    def: &Definition,
) -> (
    Option<serde_json::Map<String, serde_json::Value>>,
    std::collections::BTreeMap<String, String>,
) {
    let values = (!def.attributes.is_empty()).then(|| {
        def.attributes
            .iter()
            .map(|a| {
                let value = tensor_core::cbor::json::to_json(&carried::to_cbor(&a.values));
                (a.name.clone(), value)
            })
            .collect()
    });
    let types = def
        .attributes
        .iter()
        .map(|a| (a.name.clone(), a.values.nc_type().name().to_owned()))
        .collect();
    (values, types)
}

fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let file = Arc::new(Netcdf::open_with(bytes, options).map_err(wrap(path))?);
    let def = file.definition();
    let mut tensors = Vec::with_capacity(file.len());
    for (i, v) in def.variables.iter().enumerate() {
        let mut t = match file.view(i).map_err(wrap(path))? {
            Some(view) => NamedTensor::borrowed(&v.name, view),
            None => chunked(path, &file, i)?,
        };
        t.attributes = tensor_attributes(def, i, t.dtype());
        tensors.push(t);
    }
    let (metadata, metadata_types) = metadata(def);
    Ok(TensorSet {
        format: Format::NETCDF,
        metadata,
        metadata_types,
        tensors,
        limits: options.limits,
        mapped: Vec::new(),
        not_read: not_read(file.not_read(), &|name| file.strings(name, &options.limits))
            .map_err(wrap(path))?,
    })
}

/// Variable `i` of a NetCDF-4 file stored in chunks or through filters: decoded when read,
/// straight into a caller's buffer where one is given, a window of chunk rows at a time when
/// streamed.
fn chunked<'a>(path: &Path, file: &Arc<Netcdf<'a>>, i: usize) -> Result<NamedTensor<'a>> {
    let read_rows = {
        let (file, path) = (file.clone(), path.to_path_buf());
        move |rows: std::ops::Range<u64>, out: &mut [u8]| {
            file.read_rows(i, rows, out).map_err(wrap(&path))
        }
    };
    crate::model::rows::decoded_in_rows(crate::model::rows::ByRows {
        name: file.definition().variables[i].name.clone(),
        dtype: file.dtype(i).map_err(wrap(path))?,
        shape: file.shape(i).map_err(wrap(path))?.to_vec(),
        encoding: file.encoding(i).unwrap_or_default(),
        chunk_rows: file.chunk_rows(i),
        read_rows: Arc::new(read_rows),
    })
}

/// What a set's tensors say of the file they are written as: its dimensions and
/// attributes, each tensor's variable.
struct Planned {
    def: Definition,
    /// The tensor each variable is written from.
    tensor_of: Vec<usize>,
    notes: Vec<String>,
}

/// The dimension named `name` of length `len` (unlimited when `unlimited`), added unless
/// there; an error when one of that name has another length.
fn dimension(dims: &mut Vec<Dimension>, name: &str, len: u64, unlimited: bool) -> Result<usize> {
    if let Some(i) = dims.iter().position(|d| d.name == name) {
        let d = &mut dims[i];
        if d.unlimited && unlimited {
            d.len = d.len.max(len);
        } else if d.len != len || d.unlimited != unlimited {
            return Err(Error::CannotRepresent {
                format: FORMAT,
                what: format!(
                    "dimension {name:?} of length {len} where another variable gives it {}",
                    d.len
                ),
            });
        }
        return Ok(i);
    }
    dims.push(Dimension {
        name: name.to_owned(),
        len,
        unlimited,
    });
    Ok(dims.len() - 1)
}

/// A tensor's variable attributes: its own attributes (other than `netcdf`), each in the
/// type recorded for it when it still is one, else in the type its value calls for, else as
/// its JSON text (with a note); then those the `netcdf` map holds that it does not (a map
/// tensogram wrote holds them all); in the order recorded.
fn variable_attributes(
    t: &NamedTensor<'_>,
    name: &str,
    c: &carried::Carried,
    notes: &mut Vec<String>,
) -> Vec<Attribute> {
    let mut out: Vec<Attribute> = t
        .attributes
        .iter()
        .filter(|(k, _)| k != carried::KEY)
        .map(|(k, v)| {
            c.attribute(k, v).unwrap_or_else(|_| {
                notes.push(format!(
                    "tensor {name:?}: attribute {k:?} written as its JSON text"
                ));
                Attribute::text(k.clone(), &tensor_core::cbor::json::to_json(v).to_string())
            })
        })
        .collect();
    for a in &c.attributes {
        if !out.iter().any(|o| o.name == a.name) {
            out.push(a.clone());
        }
    }
    c.in_order(out)
}

fn plan(set: &TensorSet<'_>) -> Result<Planned> {
    let names = set.names();
    let mut notes = Vec::new();
    let mut dims: Vec<Dimension> = Vec::new();
    let mut global: Option<Vec<Attribute>> = None;
    let mut format: Option<String> = None;
    let mut carried_all = Vec::with_capacity(set.tensors.len());
    for (name, t) in names.iter().zip(&set.tensors) {
        let c = match t.attributes.iter().find(|(k, _)| k == carried::KEY) {
            Some((_, map)) => Some(carried::parse(map).map_err(|e| Error::CannotRepresent {
                format: FORMAT,
                what: format!("tensor {name:?}: {e}"),
            })?),
            None => None,
        };
        if let Some(c) = &c {
            for d in &c.file_dims {
                dimension(&mut dims, &d.name, d.len, d.unlimited)?;
            }
            if global.is_none() {
                global.clone_from(&c.global);
            }
            if format.is_none() {
                format.clone_from(&c.format);
            }
        }
        carried_all.push(c);
    }
    // Variables in the order their file had (a format may have sorted the tensors), those
    // with no recorded place after them, as they come.
    let mut tensor_of: Vec<usize> = (0..set.tensors.len()).collect();
    tensor_of.sort_by_key(|&i| {
        carried_all[i]
            .as_ref()
            .and_then(|c| c.index)
            .unwrap_or(u64::MAX)
    });
    let mut carried_all: Vec<Option<Option<_>>> = carried_all.into_iter().map(Some).collect();
    let mut variables = Vec::with_capacity(set.tensors.len());
    for &i in &tensor_of {
        let (name, t) = (&names[i], &set.tensors[i]);
        let c = carried_all[i].take().flatten();
        let shape = t.shape();
        let dtype = t.dtype();
        let c = c.unwrap_or_default();
        // Booleans as xarray writes them: bytes, marked.
        let boolean = dtype == Dtype::Bool;
        let stored = if boolean { Dtype::Int8 } else { dtype };
        let mut nc_type = NcType::for_dtype(stored).ok_or_else(|| Error::CannotRepresent {
            format: FORMAT,
            what: format!(
                "tensor {name:?} of dtype {dtype} (NetCDF holds booleans, 8- to 64-bit integers, float32 and float64; convert it to float32 first)"
            ),
        })?;
        if c.char && dtype == Dtype::Uint8 {
            nc_type = NcType::Char;
        }
        let var_dims = match &c.dims {
            Some(d) if d.len() == shape.len() => {
                let mut ids = Vec::with_capacity(d.len());
                for (k, (dn, &len)) in d.iter().zip(shape).enumerate() {
                    let unlimited = k == 0 && dims.iter().any(|x| x.name == *dn && x.unlimited);
                    ids.push(dimension(&mut dims, dn, len, unlimited)?);
                }
                ids
            }
            // Named by their lengths; a first dimension of length 0 can only be the
            // unlimited one (a classic file marks that one by length 0).
            _ => shape
                .iter()
                .enumerate()
                .map(|(k, &len)| {
                    dimension(&mut dims, &format!("dim_{len}"), len, k == 0 && len == 0)
                })
                .collect::<Result<_>>()?,
        };
        let mut attributes = variable_attributes(t, name, &c, &mut notes);
        let (mark, text) = tensor_netcdf::BOOL_MARK;
        if boolean && !attributes.iter().any(|a| a.name == mark) {
            attributes.push(Attribute::text(mark, text));
        }
        variables.push(Variable {
            name: name.clone(),
            dims: var_dims,
            attributes,
            nc_type,
        });
    }
    let attributes = global_attributes(set, global.unwrap_or_default());
    Ok(Planned {
        def: Definition {
            dimensions: dims,
            attributes,
            variables,
            format,
        },
        tensor_of,
        notes,
    })
}

/// NetCDF-3 has no strings: a string attribute of one string (NetCDF-4's) becomes text,
/// said so in `notes`; one of several is refused.
fn strings_as_text(def: &mut Definition, notes: &mut Vec<String>) -> Result<()> {
    for (of, list) in std::iter::once(("the file".to_owned(), &mut def.attributes)).chain(
        def.variables
            .iter_mut()
            .map(|v| (format!("variable {:?}", v.name), &mut v.attributes)),
    ) {
        for a in list.iter_mut() {
            if let tensor_netcdf::Values::String(s) = &a.values {
                let [one] = s.as_slice() else {
                    return Err(Error::CannotRepresent {
                        format: FORMAT,
                        what: format!(
                            "{of}: attribute {:?} of {} strings (NetCDF-3 holds one text an attribute; NetCDF-4 holds them: --pipeline netcdf4)",
                            a.name,
                            s.len()
                        ),
                    });
                };
                notes.push(format!(
                    "{of}: string attribute {:?} written as char text (NetCDF-3 has no string type)",
                    a.name
                ));
                a.values = tensor_netcdf::Values::Char(one.as_bytes().to_vec());
            }
        }
    }
    Ok(())
}

/// The file's attributes: those the tensors carry (`_global`, typed and in order), as the
/// set's metadata has them. A metadata value equal to a carried one keeps the carried
/// attribute (its type, its exact value); any other is written in the type recorded for it
/// (the carried one's, or the metadata's own when a NetCDF type name) or the type its value
/// calls for; a carried attribute the metadata no longer holds is dropped when the metadata
/// is the file's attributes (it shares a name with them), kept otherwise.
fn global_attributes(set: &TensorSet<'_>, carried: Vec<Attribute>) -> Vec<Attribute> {
    let Some(metadata) = set.metadata.as_ref().filter(|m| !m.is_empty()) else {
        return carried;
    };
    let json = |a: &Attribute| tensor_core::cbor::json::to_json(&carried::to_cbor(&a.values));
    let shared = carried.iter().any(|a| metadata.contains_key(&a.name));
    let mut out: Vec<Attribute> = carried
        .iter()
        .filter(|a| !shared || metadata.contains_key(&a.name))
        .cloned()
        .collect();
    for (k, v) in metadata {
        let held = out.iter().position(|a| a.name == *k);
        if held.is_some_and(|i| json(&out[i]) == *v) {
            continue;
        }
        let t = held
            .map(|i| out[i].values.nc_type())
            .or_else(|| set.metadata_types.get(k).and_then(|t| NcType::from_name(t)));
        let cbor = tensor_core::cbor::json::to_cbor(v);
        let values = carried::from_cbor(&cbor, t, k)
            .or_else(|_| carried::from_cbor(&cbor, None, k))
            .unwrap_or_else(|_| {
                tensor_netcdf::Values::Char(
                    match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }
                    .into_bytes(),
                )
            });
        let attribute = Attribute {
            name: k.clone(),
            values,
        };
        match held {
            Some(i) => out[i] = attribute,
            None => out.push(attribute),
        }
    }
    out
}

/// Writes `set` as NetCDF-3 or NetCDF-4 (as `packing` names it, else as the file it was
/// read from was), streamed: each tensor's elements go to the file run by run (made
/// big-endian on their way for NetCDF-3).
fn write(
    set: &TensorSet<'_>,
    out: &mut dyn tensor_core::atomic::WriteSeek,
    path: &Path,
    packing: Option<&str>,
) -> Result<Vec<String>> {
    let Planned {
        mut def,
        tensor_of,
        mut notes,
    } = plan(set)?;
    let output = match packing {
        Some(spec) => Output::parse(spec, &def).map_err(|e| Error::UnknownTarget {
            what: e.to_string(),
        })?,
        None => Output::of(&def),
    };
    let big_endian = matches!(output, Output::Classic(_));
    if big_endian {
        strings_as_text(&mut def, &mut notes)?;
    }
    let mut carried = super::Carried::default();
    let mut data = |i: usize, sink: &mut dyn std::io::Write| -> tensor_netcdf::Result<()> {
        let t = &set.tensors[tensor_of[i]];
        let width = t.dtype().byte_width().max(1);
        let result = if !big_endian || width == 1 {
            // As every format stores them: little-endian, booleans as 0 and 1 whatever byte
            // a source held for true (xarray's mark alone does not make 2 read as true).
            t.write_canonical(&set.limits, sink)
        } else {
            // NetCDF-3: made big-endian run by run on their way.
            let mut pending: Vec<u8> = Vec::new();
            t.stream(&set.limits, &mut |run| {
                pending.extend_from_slice(run);
                let whole = pending.len() - pending.len() % width;
                tensor_core::byte_order::swap_in_place(&mut pending[..whole], width)?;
                sink.write_all(&pending[..whole])
                    .map_err(|e| tensor_core::Error::io("writing NetCDF", e))?;
                pending.drain(..whole);
                Ok(())
            })
        };
        result.map_err(|e| {
            carried.keep(e, |m| {
                tensor_netcdf::Error::Core(tensor_core::Error::InvalidArgument(m))
            })
        })
    };
    let written = match output {
        Output::Classic(version) => {
            tensor_netcdf::classic::write::write(out, &def, version, &mut data).map(|_| ())
        }
        Output::Netcdf4 {
            storage,
            classic_model,
        } => tensor_netcdf::netcdf4::write::write(out, &def, &storage, classic_model, &mut data)
            .map(|_| ()),
    };
    carried.finish(written, wrap(path))?;
    Ok(notes)
}

/// Each record of the unlimited dimension `set`'s tensors carry (their NetCDF structure,
/// read from NetCDF or kept through another format), as a group of tensors, in order: each
/// record variable's record — its first dimension dropped, from its shape and its `_dims` —
/// and every tensor that has no record dimension (`--split-by record`). A record of a view
/// is a view; a variable stored encoded is decoded once.
pub(crate) fn each_record(
    set: &TensorSet<'_>,
    write: &mut dyn FnMut(Vec<NamedTensor<'_>>) -> Result<()>,
) -> Result<()> {
    let refuse = |why: &str| Error::UnknownTarget {
        what: format!("--split-by record: {why}"),
    };
    let mut unlimited: Option<String> = None;
    let mut over = vec![false; set.tensors.len()];
    for (i, t) in set.tensors.iter().enumerate() {
        let Some(c) = t
            .attributes
            .iter()
            .find(|(k, _)| k == carried::KEY)
            .and_then(|(_, map)| carried::parse(map).ok())
        else {
            continue;
        };
        if unlimited.is_none() {
            unlimited = c
                .file_dims
                .iter()
                .find(|d| d.unlimited)
                .map(|d| d.name.clone());
        }
        over[i] = !t.shape().is_empty()
            && unlimited.is_some()
            && c.dims.as_ref().and_then(|d| d.first()) == unlimited.as_ref();
    }
    if unlimited.is_none() {
        return Err(refuse(
            "no tensor carries an unlimited dimension (a set read from NetCDF with one)",
        ));
    }
    let records = set
        .tensors
        .iter()
        .zip(&over)
        .filter(|(_, o)| **o)
        .map(|(t, _)| t.shape()[0])
        .max()
        .unwrap_or(0);
    if records == 0 {
        return Err(refuse(
            "the unlimited dimension has no record: no message to write",
        ));
    }
    // Record variables stored encoded, decoded once.
    let decoded: Vec<Option<tensor_dtype::Tensor>> = set
        .tensors
        .iter()
        .zip(&over)
        .map(|(t, &o)| match &t.data {
            crate::model::TensorData::Encoded(l) if o => (l.decode)(&set.limits).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    for r in 0..records {
        let mut group = Vec::with_capacity(set.tensors.len());
        for (i, t) in set.tensors.iter().enumerate() {
            if !over[i] {
                group.push(t.clone());
                continue;
            }
            if r >= t.shape()[0] {
                continue;
            }
            let view = match (&t.data, &decoded[i]) {
                (crate::model::TensorData::View(v), _) => v.clone(),
                (crate::model::TensorData::Owned(o), _) | (_, Some(o)) => o.view(),
                (crate::model::TensorData::Encoded(_), None) => unreachable!("decoded above"),
            };
            group.push(record_of(t, &view, r)?);
        }
        write(group)?;
    }
    Ok(())
}

/// Record `r` of record variable `t` (whose elements `view` holds): a view of it, named as
/// `t`, its `_dims` without the record dimension.
fn record_of<'v>(t: &NamedTensor<'_>, view: &TensorView<'v>, r: u64) -> Result<NamedTensor<'v>> {
    let record = view.row(r)?;
    let mut attributes = t.attributes.clone();
    for (k, v) in &mut attributes {
        if k != carried::KEY {
            continue;
        }
        if let Cbor::Map(entries) = v {
            for (key, value) in entries.iter_mut() {
                if key == &Cbor::from("_dims")
                    && let Cbor::Array(dims) = value
                    && !dims.is_empty()
                {
                    dims.remove(0);
                }
            }
        }
    }
    Ok(NamedTensor {
        name: t.name.clone(),
        data: crate::model::TensorData::View(record),
        location: t.location.clone(),
        attributes,
        check: None,
    })
}

#[cfg(test)]
mod tests {
    use super::dimension;

    #[test]
    fn a_dimension_is_shared_by_name_and_refused_at_another_length() {
        let mut dims = Vec::new();
        assert_eq!(dimension(&mut dims, "x", 3, false).unwrap(), 0);
        assert_eq!(dimension(&mut dims, "x", 3, false).unwrap(), 0);
        assert!(dimension(&mut dims, "x", 4, false).is_err());
        assert_eq!(dimension(&mut dims, "t", 2, true).unwrap(), 1);
        assert_eq!(dimension(&mut dims, "t", 5, true).unwrap(), 1);
        assert_eq!(dims[1].len, 5);
    }
}
