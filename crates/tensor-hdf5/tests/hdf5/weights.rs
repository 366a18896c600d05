//! Files of weights (Keras' `.h5` in both layouts, a plain h5py file) read as tensors: every
//! dataset of numbers by its dotted path with the elements h5py reads, every attribute's
//! values, the datasets that hold no numbers named.

use libtest_mimic::{Failed, Trial};
use serde_json::Value as Json;
use std::path::Path;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::TensorContainer;
use tensor_hdf5::{Tensors, Values};

fn json(v: &Values) -> Json {
    let mut items: Vec<Json> = match v {
        Values::Ints(x) => x.iter().map(|&i| i.into()).collect(),
        Values::Uints(x) => x.iter().map(|&i| i.into()).collect(),
        Values::Floats(x) => x.iter().map(|&f| f.into()).collect(),
        Values::Texts(x) => x.iter().map(|s| s.as_str().into()).collect(),
    };
    if items.len() == 1 {
        items.swap_remove(0)
    } else {
        Json::Array(items)
    }
}

fn weights(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let file = Tensors::open(&bytes, Limits::default())?;
    let want = side["tensors"].as_object().ok_or("sidecar")?;
    if file.len() != want.len() {
        return Err(format!("{} tensors, h5py reads {}", file.len(), want.len()).into());
    }
    for i in 0..file.len() {
        let name = file.name(i).ok_or("unnamed")?;
        let w = &want[name];
        let shape = file.shape(i)?;
        if w["dtype"] != file.dtype(i)?.to_string() || w["shape"] != serde_json::json!(shape) {
            return Err(format!("{name}: {} {shape:?}, h5py reads {w}", file.dtype(i)?).into());
        }
        let len = tensor_dtype::shape::byte_len(file.dtype(i)?, shape)? as usize;
        let mut out = vec![0u8; len];
        file.read_into(i, &mut out)?;
        let width = file.dtype(i)?.byte_width();
        // Native to little-endian: the same swap as little to native.
        tensor_core::byte_order::to_native_in_place(ByteOrder::Little, &mut out, width)?;
        if w["sha256"] != tensor_testkit::sha256_hex(&out) {
            return Err(format!("{name}: elements differ from h5py's").into());
        }
    }
    let attrs: serde_json::Map<String, Json> = file
        .listing
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), json(v)))
        .collect();
    if !tensor_testkit::same_json_value(&Json::Object(attrs.clone()), &side["attributes"]) {
        return Err(format!("attributes {attrs:?}, h5py reads {}", side["attributes"]).into());
    }
    let mut left: Vec<&str> = file
        .listing
        .left_out
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    left.sort_unstable();
    if serde_json::json!(left) != side["left_out"] {
        return Err(format!("left out {left:?}, h5py holds {}", side["left_out"]).into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let dir = tensor_testkit::testdata().join("hdf5/weights");
    tensor_testkit::files_with_extension(&dir, "h5")
        .into_iter()
        .map(|p| {
            Trial::test(
                format!("weights::{}", tensor_testkit::stem(&p)),
                move || weights(&p),
            )
        })
        .collect()
}
