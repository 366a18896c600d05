//! GRIB editions 1 and 2, through tensor-grib (see docs/formats/grib.md): read only, one
//! tensor per field, its identification keys as attributes and the MARS keys under `mars`.

use crate::error::{Error, Result};
use crate::model::{FormatId, Lazy, NamedTensor, TensorData, TensorSet};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use tensor_core::cbor::Value;
use tensor_dtype::{Dtype, Tensor};
use tensor_grib::{Field, Grib, Key};

pub(super) fn looks_like(bytes: &[u8]) -> bool {
    tensor_grib::looks_like(bytes)
}

pub(crate) fn wrap(path: &Path) -> impl Fn(tensor_grib::Error) -> Error + '_ {
    move |source| Error::Grib {
        path: path.to_path_buf(),
        source: Box::new(source),
    }
}

pub(super) fn read<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &crate::model::ReadOptions,
) -> Result<TensorSet<'a>> {
    let grib = Arc::new(Grib::open(bytes, &options.limits).map_err(wrap(path))?);
    let tensors = names(grib.fields())
        .into_iter()
        .enumerate()
        .map(|(i, name)| tensor(path, &grib, i, name))
        .collect();
    Ok(TensorSet {
        format: FormatId::Grib,
        metadata: None,
        tensors,
        limits: options.limits,
    })
}

/// Names fields by `shortName`, adding the level, then the step, then the date and time,
/// then the message number, only as far as needed to tell fields apart.
fn names(fields: &[Field]) -> Vec<String> {
    let level = |f: &Field| {
        let l = match &f.ident.level {
            Key::Int(i) => i.to_string(),
            Key::Float(x) => x.to_string(),
            Key::Text(t) => t.clone(),
        };
        format!("{}_{}_{l}", f.ident.short_name(), f.ident.type_of_level)
    };
    let step = |f: &Field| format!("{}_step{}", level(f), f.ident.step_range);
    let date = |f: &Field| format!("{}_{}T{:04}", step(f), f.ident.data_date, f.ident.data_time);
    let schemes: [&dyn Fn(&Field) -> String; 4] =
        [&|f| f.ident.short_name().to_owned(), &level, &step, &date];
    let mut out: Vec<Option<String>> = vec![None; fields.len()];
    for scheme in schemes {
        let candidates: Vec<String> = fields.iter().map(scheme).collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for c in &candidates {
            *count.entry(c.as_str()).or_default() += 1;
        }
        for (o, c) in out.iter_mut().zip(&candidates) {
            if o.is_none() && count[c.as_str()] == 1 {
                *o = Some(c.clone());
            }
        }
    }
    out.into_iter()
        .zip(fields)
        .map(|(o, f)| {
            o.unwrap_or_else(|| {
                let base = date(f);
                if f.submessage == 0 {
                    format!("{base}_m{}", f.message)
                } else {
                    format!("{base}_m{}.{}", f.message, f.submessage)
                }
            })
        })
        .collect()
}

fn key_value(k: &Key) -> Value {
    match k {
        Key::Int(i) => {
            if *i >= 0 {
                Value::Uint(*i as u64)
            } else {
                Value::Nint((-1 - *i) as u64)
            }
        }
        Key::Float(f) => Value::Float(*f),
        Key::Text(t) => Value::Text(t.clone()),
    }
}

/// A field's attributes: its keys, and `mars`.
pub(crate) fn attributes(f: &Field) -> Vec<(String, Value)> {
    let mut a: Vec<(String, Value)> = f
        .keys()
        .iter()
        .map(|(k, v)| ((*k).to_owned(), key_value(v)))
        .collect();
    let mars = f
        .ident
        .mars()
        .into_iter()
        .map(|(k, v)| (Value::from(k), Value::Text(v)))
        .collect();
    a.push(("mars".into(), Value::Map(mars)));
    a
}

/// Lists a GRIB object held whole (a remote reader fetches GRIB objects whole: messages
/// carry no index); every tensor's span is the whole object.
#[cfg(feature = "remote")]
pub(super) fn open_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &crate::model::ReadOptions,
) -> Result<super::Opening<'a>> {
    let grib = Arc::new(Grib::open(bytes, &options.limits).map_err(wrap(path))?);
    let tensors = names(grib.fields())
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let t = tensor(path, &grib, i, name);
            super::Listed {
                dtype: t.dtype(),
                shape: t.shape().to_vec(),
                encoding: Some(grib.fields()[i].packing.name().to_owned()),
                span: 0..bytes.len() as u64,
                fetch: super::Fetch::Decode,
                name: t.name,
                location: t.location,
                attributes: t.attributes,
            }
        })
        .collect();
    let listing = super::Listing {
        format: FormatId::Grib,
        metadata: None,
        tensors,
    };
    Ok(super::Opening::Listed(
        listing,
        Box::new(super::Header::Grib(grib)),
    ))
}

/// Tensor `i` of a GRIB object listed by [`open_header`].
#[cfg(feature = "remote")]
pub(super) fn read_in<'a>(path: &Path, grib: &Arc<Grib<'a>>, i: usize) -> NamedTensor<'a> {
    let name = names(grib.fields()).swap_remove(i);
    tensor(path, grib, i, name)
}

/// Field `i` as a tensor called `name`.
fn tensor<'a>(path: &Path, grib: &Arc<Grib<'a>>, i: usize, name: String) -> NamedTensor<'a> {
    let f = &grib.fields()[i];
    let shape = f.shape();
    let decode = {
        let (grib, path, shape) = (grib.clone(), path.to_path_buf(), shape.clone());
        move |limits: &tensor_core::Limits| -> Result<Tensor> {
            let values = grib.values(i, limits).map_err(wrap(&path))?;
            Ok(Tensor::from_elements(&shape, &values)?)
        }
    };
    let decode = Arc::new(decode);
    let stream = {
        let decode = decode.clone();
        move |limits: &tensor_core::Limits,
              chunk: usize,
              sink: &mut dyn FnMut(&[u8]) -> Result<()>|
              -> Result<()> {
            let t = decode(limits)?;
            let run = (chunk / 8).max(1) * 8;
            t.view().to_le_bytes().chunks(run).try_for_each(sink)
        }
    };
    NamedTensor {
        name: Some(name),
        data: TensorData::Encoded(Lazy {
            encoding: f.packing.name().to_owned(),
            dtype: Dtype::Float64,
            shape,
            stream: Arc::new(stream),
            decode,
        }),
        location: vec![
            ("message", f.message as u64),
            ("field", f.submessage as u64),
        ],
        attributes: attributes(f),
    }
}
