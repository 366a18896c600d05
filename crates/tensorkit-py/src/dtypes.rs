//! Every dtype tensorkit has, as the Python ecosystem names it: the one table the Python
//! modules build their numpy, `ml_dtypes`, torch and Zarr mappings from (`_dtypes.py`,
//! `torch.py`, `zarr.py`), so that a dtype added to tensorkit is added there too.

use pyo3::prelude::*;
use tensorkit::Dtype;

/// How the Python ecosystem holds one dtype.
struct Names {
    /// numpy's dtype name (an `ml_dtypes` type's, for the machine-learning floats numpy
    /// lacks); `None`: no numpy type holds it.
    numpy: Option<&'static str>,
    /// Whether `numpy` is an `ml_dtypes` type.
    ml_dtypes: bool,
    /// torch's attribute (`torch.float8_e4m3fn`), where torch has the type (some only in
    /// later releases: looked up when torch is imported).
    torch: Option<&'static str>,
    /// Whether Zarr v3 has a data type of the same name.
    zarr: bool,
}

/// The names of `d`; none for a dtype this table does not know yet.
fn names(d: Dtype) -> Names {
    let plain = |name: &'static str, zarr: bool| Names {
        numpy: Some(name),
        ml_dtypes: false,
        torch: Some(name),
        zarr,
    };
    let ml = |numpy: &'static str, torch: Option<&'static str>| Names {
        numpy: Some(numpy),
        ml_dtypes: true,
        torch,
        zarr: false,
    };
    match d {
        // A bitmask reads as one bool per element.
        Dtype::Bool | Dtype::Bitmask => plain("bool", true),
        Dtype::Int8 => plain("int8", true),
        Dtype::Int16 => plain("int16", true),
        Dtype::Int32 => plain("int32", true),
        Dtype::Int64 => plain("int64", true),
        Dtype::Uint8 => plain("uint8", true),
        Dtype::Uint16 => plain("uint16", true),
        Dtype::Uint32 => plain("uint32", true),
        Dtype::Uint64 => plain("uint64", true),
        Dtype::Float16 => plain("float16", true),
        Dtype::Float32 => plain("float32", true),
        Dtype::Float64 => plain("float64", true),
        Dtype::Complex64 => plain("complex64", true),
        Dtype::Complex128 => plain("complex128", true),
        Dtype::Bfloat16 => ml("bfloat16", Some("bfloat16")),
        Dtype::Float8E4m3 => ml("float8_e4m3fn", Some("float8_e4m3fn")),
        Dtype::Float8E5m2 => ml("float8_e5m2", Some("float8_e5m2")),
        Dtype::Float8E4m3Fnuz => ml("float8_e4m3fnuz", Some("float8_e4m3fnuz")),
        Dtype::Float8E5m2Fnuz => ml("float8_e5m2fnuz", Some("float8_e5m2fnuz")),
        Dtype::Float8E8m0 => ml("float8_e8m0fnu", Some("float8_e8m0fnu")),
        Dtype::Float6E2m3 => ml("float6_e2m3fn", None),
        Dtype::Float6E3m2 => ml("float6_e3m2fn", None),
        // torch holds two of them in a byte.
        Dtype::Float4E2m1 => ml("float4_e2m1fn", Some("float4_e2m1fn_x2")),
        _ => Names {
            numpy: None,
            ml_dtypes: false,
            torch: None,
            zarr: false,
        },
    }
}

/// Every dtype, in tensorkit's order: a dict each with `name` (tensorkit's), `numpy` (numpy's
/// or `ml_dtypes`' type name, or `None`), `ml_dtypes` (whether it is `ml_dtypes`'), `torch`
/// (torch's attribute, or `None`) and `zarr` (whether Zarr v3 has it under `name`).
#[pyfunction]
pub(crate) fn dtypes(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    Dtype::ALL
        .into_iter()
        .map(|d| {
            let n = names(d);
            let row = pyo3::types::PyDict::new(py);
            row.set_item("name", d.name())?;
            row.set_item("numpy", n.numpy)?;
            row.set_item("ml_dtypes", n.ml_dtypes)?;
            row.set_item("torch", n.torch)?;
            row.set_item("zarr", n.zarr)?;
            Ok(row)
        })
        .collect()
}
