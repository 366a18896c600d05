//! `ModelProto` → its graph's initializers (`TensorProto`s) and metadata; everything else
//! (nodes, inputs, functions) is skipped without being parsed.

use crate::error::{Error, Result};
use crate::wire::{Fields, Value, fixed, varints};
use std::path::{Component, Path, PathBuf};
use tensor_core::{Limits, checked};
use tensor_dtype::Dtype;

/// Where an initializer's elements are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data<'a> {
    /// `raw_data`: little-endian, C order, in the file.
    Raw(&'a [u8]),
    /// Typed fields (`float_data`, `int32_data`, ...) decoded: little-endian, C order.
    Typed(Vec<u8>),
    /// In a file beside the model: its location (relative to the model's folder), the
    /// offset of the elements in it and their length, when stated.
    External {
        /// The file, as the model names it.
        location: String,
        /// Where the elements start.
        offset: u64,
        /// How many bytes, when the model says.
        length: Option<u64>,
    },
}

/// One initializer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Initializer<'a> {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape.
    pub dims: Vec<u64>,
    /// Its elements.
    pub data: Data<'a>,
}

/// What a model holds of interest here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model<'a> {
    /// The main graph's initializers, in order.
    pub initializers: Vec<Initializer<'a>>,
    /// Initializers of no numbers (strings), by name, with why they are left out.
    pub left_out: Vec<(String, String)>,
    /// `metadata_props`, in order.
    pub metadata: Vec<(String, String)>,
    /// `producer_name`.
    pub producer: String,
    /// `ir_version`.
    pub ir_version: u64,
}

/// The element type an ONNX `DataType` names, or why none does.
fn dtype_of(data_type: u64) -> std::result::Result<Dtype, &'static str> {
    Ok(match data_type {
        1 => Dtype::Float32,
        2 => Dtype::Uint8,
        3 => Dtype::Int8,
        4 => Dtype::Uint16,
        5 => Dtype::Int16,
        6 => Dtype::Int32,
        7 => Dtype::Int64,
        9 => Dtype::Bool,
        10 => Dtype::Float16,
        11 => Dtype::Float64,
        12 => Dtype::Uint32,
        13 => Dtype::Uint64,
        14 => Dtype::Complex64,
        15 => Dtype::Complex128,
        16 => Dtype::Bfloat16,
        17 => Dtype::Float8E4m3,
        18 => Dtype::Float8E4m3Fnuz,
        19 => Dtype::Float8E5m2,
        20 => Dtype::Float8E5m2Fnuz,
        24 => Dtype::Float8E8m0,
        8 => return Err("strings (no tensor holds them)"),
        21 | 22 | 25 | 26 => {
            return Err("4- and 2-bit integers (no tensor of tensorkit holds them)");
        }
        23 => return Err("4-bit floats stored two to a byte"),
        0 => return Err("an undefined data type"),
        _ => return Err("a data type this version does not know"),
    })
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Reads a `ModelProto` from `bytes`, within `limits` (the count of initializers; the bytes
/// typed fields decode to).
pub fn open<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Model<'a>> {
    let mut model = Model::default();
    let mut f = Fields::new(bytes, 0, "ModelProto");
    let mut decoded = 0u64;
    while let Some((number, value)) = f.next_field()? {
        match (number, value) {
            (1, Value::Varint(v)) => model.ir_version = v,
            (2, Value::Bytes(b, _)) => model.producer = text(b),
            (7, Value::Bytes(graph, at)) => {
                let mut g = Fields::new(graph, at, "GraphProto");
                while let Some((n, v)) = g.next_field()? {
                    if let (5, Value::Bytes(t, at)) = (n, v) {
                        limits.check_tensor_count(model.initializers.len() as u64 + 1)?;
                        match tensor(t, at, limits, &mut decoded)? {
                            Ok(init) => model.initializers.push(init),
                            Err(left) => model.left_out.push(left),
                        }
                    }
                }
            }
            (14, Value::Bytes(entry, at)) => {
                let (mut key, mut value) = (String::new(), String::new());
                let mut e = Fields::new(entry, at, "StringStringEntryProto");
                while let Some((n, v)) = e.next_field()? {
                    match (n, v) {
                        (1, Value::Bytes(b, _)) => key = text(b),
                        (2, Value::Bytes(b, _)) => value = text(b),
                        _ => {}
                    }
                }
                model.metadata.push((key, value));
            }
            _ => {}
        }
    }
    Ok(model)
}

/// One `TensorProto`: the initializer, or its name and why it is left out.
fn tensor<'a>(
    bytes: &'a [u8],
    at: u64,
    limits: &Limits,
    decoded: &mut u64,
) -> Result<std::result::Result<Initializer<'a>, (String, String)>> {
    let mut f = Fields::new(bytes, at, "TensorProto");
    let (mut name, mut data_type, mut dims) = (String::new(), 0u64, Vec::new());
    let mut raw = None;
    let mut typed: Vec<(u32, Value<'a>)> = Vec::new();
    let (mut external, mut location_external, mut segmented) = (Vec::new(), false, false);
    while let Some((number, value)) = f.next_field()? {
        match number {
            1 => {
                for d in varints(value, "TensorProto dims")? {
                    let d = i64::from_ne_bytes(d.to_ne_bytes());
                    let d = u64::try_from(d).map_err(|_| Error::Malformed {
                        what: "TensorProto".into(),
                        offset: at,
                        reason: format!("a dimension of {d}"),
                    })?;
                    dims.push(d);
                }
            }
            2 => {
                if let Value::Varint(v) = value {
                    data_type = v;
                }
            }
            3 => segmented = true,
            8 => {
                if let Value::Bytes(b, _) = value {
                    name = text(b);
                }
            }
            9 => {
                if let Value::Bytes(b, _) = value {
                    raw = Some(b);
                }
            }
            4 | 5 | 7 | 10 | 11 => typed.push((number, value)),
            13 => {
                if let Value::Bytes(entry, eat) = value {
                    let (mut key, mut val) = (String::new(), String::new());
                    let mut e = Fields::new(entry, eat, "StringStringEntryProto");
                    while let Some((n, v)) = e.next_field()? {
                        match (n, v) {
                            (1, Value::Bytes(b, _)) => key = text(b),
                            (2, Value::Bytes(b, _)) => val = text(b),
                            _ => {}
                        }
                    }
                    external.push((key, val));
                }
            }
            14 => location_external = matches!(value, Value::Varint(1)),
            _ => {}
        }
    }
    let dtype = match dtype_of(data_type) {
        Ok(d) => d,
        Err(why) => return Ok(Err((name, why.into()))),
    };
    if segmented {
        return Err(Error::Unsupported {
            name,
            what: "a tensor stored in segments".into(),
        });
    }
    let expected = tensor_dtype::shape::byte_len(dtype, &dims)?;
    let data = if location_external {
        let get = |k: &str| {
            external
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let number = |k: &str| -> Result<Option<u64>> {
            get(k)
                .map(|v| {
                    v.parse::<u64>().map_err(|_| Error::External {
                        name: name.clone(),
                        reason: format!("{k} {v:?} is not a number"),
                    })
                })
                .transpose()
        };
        let location = get("location").ok_or_else(|| Error::External {
            name: name.clone(),
            reason: "names no location".into(),
        })?;
        let length = number("length")?;
        if let Some(n) = length
            && n != expected
        {
            return Err(Error::External {
                name,
                reason: format!("of {n} bytes for a tensor of {expected}"),
            });
        }
        Data::External {
            location,
            offset: number("offset")?.unwrap_or(0),
            length,
        }
    } else if let Some(raw) = raw {
        if raw.len() as u64 != expected {
            return Err(Error::Malformed {
                what: format!("TensorProto {name:?}"),
                offset: at,
                reason: format!(
                    "raw_data of {} bytes for {expected} bytes of {dtype} {dims:?}",
                    raw.len()
                ),
            });
        }
        Data::Raw(raw)
    } else {
        limits.check_total_bytes(expected)?;
        *decoded = decoded.saturating_add(expected);
        limits.check_total_bytes(*decoded)?;
        Data::Typed(typed_elements(&name, dtype, &dims, &typed, at)?)
    };
    Ok(Ok(Initializer {
        name,
        dtype,
        dims,
        data,
    }))
}

/// The elements typed fields hold, little-endian in C order.
fn typed_elements(
    name: &str,
    dtype: Dtype,
    dims: &[u64],
    fields: &[(u32, Value<'_>)],
    at: u64,
) -> Result<Vec<u8>> {
    let count = tensor_dtype::shape::element_count(dims)?;
    let width = dtype.byte_width();
    // Which field holds this type, as onnx.proto says.
    let field = match dtype {
        Dtype::Float32 | Dtype::Complex64 => 4,
        Dtype::Float64 | Dtype::Complex128 => 10,
        Dtype::Int64 => 7,
        Dtype::Uint32 | Dtype::Uint64 => 11,
        _ => 5,
    };
    let want = checked::mul(count, width as u64, "tensor bytes")?;
    let mut out = Vec::new();
    tensor_core::buffer::try_reserve(
        &mut out,
        checked::to_usize(want, "tensor bytes")?,
        "an ONNX tensor",
    )?;
    for (_, v) in fields.iter().filter(|(n, _)| *n == field) {
        match field {
            4 => out.extend(fixed(*v, 4, "TensorProto float_data")?),
            10 => out.extend(fixed(*v, 8, "TensorProto double_data")?),
            _ => {
                for x in varints(*v, "TensorProto integer data")? {
                    // int32_data holds each element in an int32's low bits (16-bit floats by
                    // their bits); int64_data and uint64_data whole.
                    let keep = if field == 5 { width.min(4) } else { width };
                    out.extend_from_slice(&x.to_le_bytes()[..keep]);
                }
            }
        }
        if out.len() as u64 > want {
            break;
        }
    }
    if out.len() as u64 != want {
        return Err(Error::Malformed {
            what: format!("TensorProto {name:?}"),
            offset: at,
            reason: format!(
                "its typed fields hold {} bytes of {dtype} for {count} elements",
                out.len()
            ),
        });
    }
    Ok(out)
}

/// The file external data at `location` is in, relative to `folder` (the model's): refused
/// when absolute, when it climbs out of the folder (`..`, or a link that leads outside), or
/// when it does not exist.
pub fn external_path(folder: &Path, location: &str, name: &str) -> Result<PathBuf> {
    let bad = |reason: String| Error::External {
        name: name.into(),
        reason,
    };
    let relative = Path::new(location);
    if location.is_empty()
        || location.contains('\\')
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(bad(format!(
            "location {location:?} is absolute or climbs out of the model's folder"
        )));
    }
    let path = folder.join(relative);
    let (real, real_folder) = match (std::fs::canonicalize(&path), std::fs::canonicalize(folder)) {
        (Ok(r), Ok(f)) => (r, f),
        (Err(e), _) | (_, Err(e)) => {
            return Err(bad(format!(
                "file {} cannot be opened: {e}",
                path.display()
            )));
        }
    };
    if !real.starts_with(&real_folder) {
        return Err(bad(format!(
            "location {location:?} leads outside the model's folder (through a link)"
        )));
    }
    Ok(real)
}
