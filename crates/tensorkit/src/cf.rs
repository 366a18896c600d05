//! CF's packed and masked variables (CF conventions §2.5.1 and §8.1), unpacked on request
//! (`WriteOptions::unpack`, `convert --unpack`) for tensors of any format that carry CF
//! attributes (read from NetCDF, or converted from it): `packed × scale_factor + add_offset`
//! as floats, and every element equal to `_FillValue` or `missing_value`, or outside
//! `valid_min`/`valid_max`/`valid_range` (all compared in the packed type), as NaN. The
//! attributes that described the packed form go, from the tensor and from its `netcdf` map.
//! The floats are float32 where the scale and offset are float32 and the packed integers
//! have at most 16 bits (as xarray decodes them), float64 otherwise.

use crate::error::Result;
use crate::model::{Lazy, NamedTensor, StreamFn, TensorData, TensorSet};
use std::sync::Arc;
use tensor_core::cbor::Value as Cbor;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::{Dtype, Scalar, Tensor};

/// The attributes that describe a packed or masked form, gone once it is unpacked.
const PACKING: [&str; 7] = [
    "scale_factor",
    "add_offset",
    "_FillValue",
    "missing_value",
    "valid_min",
    "valid_max",
    "valid_range",
];

/// The numbers an attribute holds (one, or a list), as doubles, with whether it is float32
/// in its NetCDF type (from the `netcdf` map's `_attr_types`, when recorded).
fn numbers(v: &Cbor) -> Vec<f64> {
    let one = |v: &Cbor| match v {
        Cbor::Float(f) => Some(*f),
        #[allow(
            clippy::cast_precision_loss,
            reason = "CF's numbers, compared as doubles"
        )]
        Cbor::Uint(u) => Some(*u as f64),
        #[allow(
            clippy::cast_precision_loss,
            reason = "CF's numbers, compared as doubles"
        )]
        Cbor::Nint(n) => Some(-1.0 - *n as f64),
        _ => None,
    };
    match v {
        Cbor::Array(items) => items.iter().filter_map(one).collect(),
        other => one(other).into_iter().collect(),
    }
}

fn attribute<'t>(t: &'t NamedTensor<'_>, name: &str) -> Option<&'t Cbor> {
    t.attributes.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// The NetCDF type recorded for attribute `name` (`_attr_types` of the `netcdf` map).
fn recorded_type(t: &NamedTensor<'_>, name: &str) -> Option<String> {
    let Some(Cbor::Map(m)) = attribute(t, "netcdf") else {
        return None;
    };
    let types = m.iter().find_map(|(k, v)| match (k, v) {
        (Cbor::Text(k), Cbor::Map(types)) if k == "_attr_types" => Some(types),
        _ => None,
    })?;
    types.iter().find_map(|(k, v)| match (k, v) {
        (Cbor::Text(k), Cbor::Text(t)) if k == name => Some(t.clone()),
        _ => None,
    })
}

/// What unpacking a tensor takes: its scale, offset, the values it masks, its valid range.
struct Packing {
    scale: Option<f64>,
    offset: Option<f64>,
    missing: Vec<f64>,
    valid: (f64, f64),
    float32: bool,
}

impl Packing {
    /// The tensor's packing, when it has one to undo: a scale or offset, or (a float
    /// tensor) values to mask.
    fn of(t: &NamedTensor<'_>) -> Option<Self> {
        let first = |name| attribute(t, name).and_then(|v| numbers(v).first().copied());
        let scale = first("scale_factor");
        let offset = first("add_offset");
        let mut missing = Vec::new();
        for name in ["_FillValue", "missing_value"] {
            missing.extend(attribute(t, name).map(numbers).unwrap_or_default());
        }
        let range = attribute(t, "valid_range").map(numbers).unwrap_or_default();
        let valid = (
            first("valid_min")
                .or_else(|| range.first().copied())
                .unwrap_or(f64::NEG_INFINITY),
            first("valid_max")
                .or_else(|| range.get(1).copied())
                .unwrap_or(f64::INFINITY),
        );
        let dtype = t.dtype();
        let masked = !missing.is_empty() || valid != (f64::NEG_INFINITY, f64::INFINITY);
        if scale.is_none() && offset.is_none() && !(dtype.is_float() && masked) {
            return None;
        }
        let float32_attrs = ["scale_factor", "add_offset"]
            .iter()
            .filter(|n| attribute(t, n).is_some())
            .all(|n| recorded_type(t, n).as_deref() == Some("float"));
        let float32 = if scale.is_none() && offset.is_none() {
            dtype == Dtype::Float32
        } else {
            float32_attrs && dtype.byte_width() <= 2 && !dtype.is_float()
        };
        Some(Packing {
            scale,
            offset,
            missing,
            valid,
            float32,
        })
    }

    fn value(&self, packed: f64) -> f64 {
        if packed.is_nan()
            || self.missing.contains(&packed)
            || packed < self.valid.0
            || packed > self.valid.1
        {
            return f64::NAN;
        }
        packed * self.scale.unwrap_or(1.0) + self.offset.unwrap_or(0.0)
    }
}

/// The packed value of an element, as a double.
fn as_f64(s: Scalar) -> f64 {
    #[allow(
        clippy::cast_precision_loss,
        reason = "packed integers unpacked as CF does"
    )]
    match s {
        Scalar::Bool(b) => f64::from(u8::from(b)),
        Scalar::Int(i) => i as f64,
        Scalar::Uint(u) => u as f64,
        Scalar::Float(f) => f,
        Scalar::Complex(re, _) => re,
    }
}

/// The tensor's attributes without those of its packed form, its `netcdf` map's too.
fn unpacked_attributes(attributes: &[(String, Cbor)]) -> Vec<(String, Cbor)> {
    attributes
        .iter()
        .filter(|(k, _)| !PACKING.contains(&k.as_str()))
        .map(|(k, v)| match (k.as_str(), v) {
            ("netcdf", Cbor::Map(m)) => {
                let kept = m
                    .iter()
                    .filter(|(k, _)| !matches!(k, Cbor::Text(k) if PACKING.contains(&k.as_str())))
                    .map(|(k, v)| {
                        match (k, v) {
                        (Cbor::Text(name), Cbor::Map(types)) if name == "_attr_types" => (
                            k.clone(),
                            Cbor::Map(
                                types
                                    .iter()
                                    .filter(|(t, _)| {
                                        !matches!(t, Cbor::Text(t) if PACKING.contains(&t.as_str()))
                                    })
                                    .cloned()
                                    .collect(),
                            ),
                        ),
                        _ => (k.clone(), v.clone()),
                    }
                    })
                    .collect();
                (k.clone(), Cbor::Map(kept))
            }
            _ => (k.clone(), v.clone()),
        })
        .collect()
}

/// Tensor `t` unpacked by `p`: decoded when its elements are asked for, a run of the packed
/// tensor at a time (never whole in memory unless it is asked for whole).
fn unpacked<'a>(t: &NamedTensor<'a>, p: Packing) -> NamedTensor<'a> {
    let dtype = if p.float32 {
        Dtype::Float32
    } else {
        Dtype::Float64
    };
    let shape = t.shape().to_vec();
    let stream = {
        let (packed, p) = (t.clone(), Arc::new(p));
        move |limits: &Limits, run: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>| {
            let from = packed.dtype();
            let (w_in, w_out) = (from.byte_width().max(1), dtype.byte_width());
            let mut out = Vec::new();
            packed.stream(limits, &mut |elements| {
                // Up to eight times the packed bytes: cut so that a run stays within `run`.
                for piece in elements.chunks((run / w_out).max(1) * w_in) {
                    out.clear();
                    for e in piece.chunks_exact(w_in) {
                        let v = p.value(as_f64(tensor_dtype::scalar::decode_one(
                            from,
                            e,
                            ByteOrder::Little,
                        )));
                        #[allow(
                            clippy::cast_possible_truncation,
                            reason = "float32 unpacking, as CF's float32 scale asks"
                        )]
                        if p.float32 {
                            out.extend_from_slice(&(v as f32).to_le_bytes());
                        } else {
                            out.extend_from_slice(&v.to_le_bytes());
                        }
                    }
                    sink(&out)?;
                }
                Ok(())
            })
        }
    };
    let stream: Arc<StreamFn<'a>> = Arc::new(stream);
    let decode = {
        let (stream, shape) = (stream.clone(), shape.clone());
        move |limits: &Limits| {
            let len = dtype.payload_bytes(tensor_dtype::shape::element_count(&shape)?)?;
            limits.check_total_bytes(len)?;
            let mut data = Vec::new();
            tensor_core::buffer::try_reserve(
                &mut data,
                tensor_core::checked::to_usize(len, "an unpacked tensor")?,
                "an unpacked tensor",
            )?;
            stream(limits, crate::model::RUN_BYTES, &mut |run| {
                data.extend_from_slice(run);
                Ok(())
            })?;
            Ok(Tensor::new(data, dtype, &shape, ByteOrder::Little)?)
        }
    };
    NamedTensor {
        name: t.name.clone(),
        data: TensorData::Encoded(Lazy {
            encoding: "CF packing, unpacked".into(),
            dtype,
            shape,
            stream,
            decode: Arc::new(decode),
            packed: None,
            decode_into: None,
            blocks: None,
        }),
        location: t.location.clone(),
        attributes: unpacked_attributes(&t.attributes),
        check: None,
    }
}

/// `set` with every packed or masked tensor unpacked; the others as they are.
pub(crate) fn unpack<'a>(set: &TensorSet<'a>) -> TensorSet<'a> {
    let mut out = set.clone();
    for t in &mut out.tensors {
        if let Some(p) = Packing::of(t) {
            *t = unpacked(t, p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(values: &[i16], attributes: Vec<(String, Cbor)>) -> NamedTensor<'static> {
        NamedTensor {
            name: Some("t".into()),
            data: TensorData::Owned(Tensor::from_elements(&[values.len() as u64], values).unwrap()),
            location: Vec::new(),
            attributes,
            check: None,
        }
    }

    #[test]
    fn packed_integers_unpack_and_fill_values_become_nan() {
        let packed = tensor(
            &[0, 10, -32767, 20, 500],
            vec![
                ("scale_factor".into(), Cbor::Float(0.5)),
                ("add_offset".into(), Cbor::Float(100.0)),
                ("_FillValue".into(), Cbor::Nint(32766)),
                ("valid_max".into(), Cbor::Uint(400)),
                ("units".into(), Cbor::Text("K".into())),
            ],
        );
        let packing = Packing::of(&packed).unwrap();
        assert!(!packing.float32);
        let out = unpacked(&packed, packing);
        let crate::model::Loaded::Owned(owned) = out.load(&Limits::default()).unwrap() else {
            panic!("an unpacked tensor is decoded")
        };
        let values = owned.view().typed::<f64>().unwrap().into_owned();
        // In runs of any size (here two elements), the same bytes.
        let TensorData::Encoded(lazy) = &out.data else {
            panic!("an unpacked tensor is decoded when asked")
        };
        let mut runs = Vec::new();
        (lazy.stream)(&Limits::default(), 16, &mut |run| {
            assert!(run.len() <= 16);
            runs.extend_from_slice(run);
            Ok(())
        })
        .unwrap();
        assert_eq!(runs, owned.view().to_le_bytes().as_ref());
        assert_eq!(&values[..2], &[100.0, 105.0]);
        assert!(values[2].is_nan() && values[4].is_nan());
        assert_eq!(values[3], 110.0);
        assert_eq!(
            out.attributes,
            vec![("units".to_owned(), Cbor::Text("K".into()))]
        );
        // Nothing to undo: no packing.
        assert!(
            Packing::of(&tensor(
                &[1],
                vec![("units".into(), Cbor::Text("m".into()))]
            ))
            .is_none()
        );
        assert!(Packing::of(&tensor(&[1], vec![("_FillValue".into(), Cbor::Uint(1))])).is_none());
    }
}
