//! GRIB fields as cubes for the xarray engine: `tensor_grib::cube` run over an open file's
//! tensors, its answer as plain Python values (`tensorkit/xarray.py` builds the dataset).

use crate::errors::{invalid, to_py};
use crate::file::File;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tensorkit::grib::Key;
use tensorkit::grib::cube::{self, Cube, Options, Values};

/// A filter or key value from Python: an int, a float or a str.
fn key(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Key> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Ok(Key::Int(i64::from(obj.extract::<bool>()?)));
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Key::Int(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Key::Float(f));
    }
    if let Ok(s) = obj.extract::<String>() {
        return Ok(Key::Text(s));
    }
    Err(invalid(format!(
        "{what}: {} is not an int, a float or a str",
        obj.repr()?
    )))
}

fn key_to_py<'py>(py: Python<'py>, k: &Key) -> PyResult<Bound<'py, PyAny>> {
    Ok(match k {
        Key::Int(i) => i.into_pyobject(py)?.into_any(),
        Key::Float(f) => f.into_pyobject(py)?.into_any(),
        Key::Text(t) => t.into_pyobject(py)?.into_any(),
    })
}

fn options(
    filter_by_keys: Option<&Bound<'_, PyDict>>,
    read_keys: Vec<String>,
    time_dims: Vec<String>,
    extra_coords: Option<&Bound<'_, PyDict>>,
) -> PyResult<Options> {
    let mut filter = Vec::new();
    for (k, v) in filter_by_keys.into_iter().flat_map(PyDictMethods::iter) {
        let name: String = k.extract()?;
        let what = format!("filter_by_keys[{name:?}]");
        let values = if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
            v.try_iter()?
                .map(|item| key(&item?, &what))
                .collect::<PyResult<_>>()?
        } else {
            vec![key(&v, &what)?]
        };
        filter.push((name, values));
    }
    let mut extra = Vec::new();
    for (k, v) in extra_coords.into_iter().flat_map(PyDictMethods::iter) {
        extra.push((k.extract()?, v.extract()?));
    }
    Ok(Options {
        filter,
        read_keys,
        time_dims,
        extra_coords: extra,
    })
}

fn values_to_py<'py>(py: Python<'py>, v: &Values) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match v {
        Values::Int(v) => ("int", v.into_pyobject(py)?.into_any()),
        Values::Float(v) => ("float", v.into_pyobject(py)?.into_any()),
        Values::Text(v) => ("str", v.into_pyobject(py)?.into_any()),
        Values::Time(v) => ("datetime", v.into_pyobject(py)?.into_any()),
        Values::Duration(v) => ("timedelta", v.into_pyobject(py)?.into_any()),
        _ => return Err(invalid("a coordinate of a kind this package does not know")),
    })
}

fn attributes<'py>(
    py: Python<'py>,
    a: &[(String, tensor_core::cbor::Value)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in a {
        d.set_item(k, crate::cbor::core_to_py(py, v)?)?;
    }
    Ok(d)
}

/// A cube as a dict: `name`, `filter`, `dims`, `coordinates`, `variables`, `attributes`;
/// each variable's `fields` names the tensor of each header cell (`None` for none).
fn cube_to_py<'py>(py: Python<'py>, c: &Cube, names: &[String]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &c.name)?;
    let filter = PyDict::new(py);
    for (k, v) in &c.filter {
        filter.set_item(k, key_to_py(py, v)?)?;
    }
    d.set_item("filter", filter)?;
    let dims = PyDict::new(py);
    for (k, n) in &c.dims {
        dims.set_item(k, n)?;
    }
    d.set_item("dims", dims)?;
    let coords = PyList::empty(py);
    for co in &c.coordinates {
        let e = PyDict::new(py);
        e.set_item("name", &co.name)?;
        e.set_item("dims", co.dims.clone())?;
        let (kind, values) = values_to_py(py, &co.values)?;
        e.set_item("kind", kind)?;
        e.set_item("values", values)?;
        e.set_item("attributes", attributes(py, &co.attributes)?)?;
        coords.append(e)?;
    }
    d.set_item("coordinates", coords)?;
    let vars = PyList::empty(py);
    for v in &c.variables {
        let e = PyDict::new(py);
        e.set_item("name", &v.name)?;
        e.set_item("dims", v.dims.clone())?;
        e.set_item("shape", v.shape.clone())?;
        e.set_item("grid_ndim", v.grid_ndim)?;
        let fields: Vec<Option<&str>> = v
            .fields
            .iter()
            .map(|f| f.map(|i| names[i].as_str()))
            .collect();
        e.set_item("fields", fields)?;
        e.set_item("attributes", attributes(py, &v.attributes)?)?;
        vars.append(e)?;
    }
    d.set_item("variables", vars)?;
    d.set_item("attributes", attributes(py, &c.attributes)?)?;
    Ok(d)
}

/// Whether an open file's tensors are GRIB fields: a GRIB file, or one converted from GRIB
/// that kept the fields' keys (its first tensor has them,
/// [`tensorkit::grib::cube::IDENTIFICATION_KEYS`]).
#[pyfunction]
pub(crate) fn holds_grib_fields(file: &File) -> PyResult<bool> {
    let f = file.file()?;
    if f.format() == tensorkit::Format::GRIB {
        return Ok(true);
    }
    Ok(f.tensors()
        .next()
        .is_some_and(|t| cube::is_field(t.attributes())))
}

/// The GRIB cubes of an open file's tensors (a GRIB file, or one converted from GRIB that
/// kept the fields' keys): one cube as `open_dataset` gives it (`tree=False`; a file that is
/// not one cube is refused, naming a filter for each), or every consistent cube (`tree=True`).
#[pyfunction]
#[pyo3(signature = (file, *, filter_by_keys=None, read_keys=Vec::new(), time_dims=vec!["time".to_owned(), "step".to_owned()], extra_coords=None, tree=false))]
pub(crate) fn grib_cubes<'py>(
    py: Python<'py>,
    file: &File,
    filter_by_keys: Option<&Bound<'py, PyDict>>,
    read_keys: Vec<String>,
    time_dims: Vec<String>,
    extra_coords: Option<&Bound<'py, PyDict>>,
    tree: bool,
) -> PyResult<Bound<'py, PyList>> {
    let options = options(filter_by_keys, read_keys, time_dims, extra_coords)?;
    let f = file.file()?;
    let tensors: Vec<_> = f.tensors().collect();
    let names: Vec<String> = tensors.iter().map(|t| t.name().into_owned()).collect();
    let fields: Vec<cube::FieldKeys<'_>> = tensors
        .iter()
        .map(|t| (t.attributes(), t.shape()))
        .collect();
    cubes_to_py(py, &fields, &names, &options, tree)
}

/// [`grib_cubes`] of the objects a Tensogram metadata frame describes (`frame`, the frame's
/// bytes alone: what a virtual store references for a cube's coordinates): each object's
/// attributes as `tensorkit.open` gives them, its shape from the metadata's
/// `_reserved_.tensor`. The objects' names are their positions in the message.
#[pyfunction]
#[pyo3(signature = (frame, *, filter_by_keys=None, read_keys=Vec::new(), time_dims=vec!["time".to_owned(), "step".to_owned()], extra_coords=None, tree=false))]
pub(crate) fn tgm_frame_cubes<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
    filter_by_keys: Option<&Bound<'py, PyDict>>,
    read_keys: Vec<String>,
    time_dims: Vec<String>,
    extra_coords: Option<&Bound<'py, PyDict>>,
    tree: bool,
) -> PyResult<Bound<'py, PyList>> {
    let options = options(filter_by_keys, read_keys, time_dims, extra_coords)?;
    let frame = crate::buffer::Borrowed::get(frame, false, "the metadata frame")?;
    let meta = tensorkit::frame::metadata_frame(frame.bytes(), &tensorkit::Limits::default())
        .map_err(to_py)?;
    let mut objects = Vec::with_capacity(meta.base.len());
    for (j, base) in meta.base.iter().enumerate() {
        let (_, shape) = meta.recorded_layout(j).ok_or_else(|| {
            invalid(format!(
                "object {j}: the metadata frame does not record its shape (_reserved_.tensor)"
            ))
        })?;
        objects.push((tensorkit::frame::container::attributes(base.clone()), shape));
    }
    let names: Vec<String> = (0..objects.len()).map(|j| j.to_string()).collect();
    let fields: Vec<cube::FieldKeys<'_>> = objects
        .iter()
        .map(|(a, s)| (a.as_slice(), s.as_slice()))
        .collect();
    cubes_to_py(py, &fields, &names, &options, tree)
}

/// The cubes of `fields` (named `names`) as Python values: every consistent one (`tree`), or
/// the one the options pick.
fn cubes_to_py<'py>(
    py: Python<'py>,
    fields: &[cube::FieldKeys<'_>],
    names: &[String],
    options: &Options,
    tree: bool,
) -> PyResult<Bound<'py, PyList>> {
    let cubes = if tree {
        cube::cubes(fields, options).map_err(to_py)?
    } else {
        vec![cube::dataset(fields, options).map_err(to_py)?]
    };
    let out = PyList::empty(py);
    for c in &cubes {
        out.append(cube_to_py(py, c, names)?)?;
    }
    Ok(out)
}
