//! Integration tests of tensor-descriptor: every descriptor inside the Tensogram fixtures
//! decodes to what the sidecar records and re-encodes to exactly the bytes on the wire; and
//! property-based round trips.

use libtest_mimic::{Arguments, Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value as Json;
use std::path::Path;
use tensor_core::cbor::{Decoder, Value};
use tensor_descriptor::DataObjectDescriptor;

/// The descriptor bytes of every data frame in a fixture, with the sidecar's view of each.
fn descriptors(file: &Path) -> Result<Vec<(Vec<u8>, Json)>, Failed> {
    let bytes = std::fs::read(file)?;
    let sidecar = tensor_testkit::sidecar(file)?;
    let mut out = Vec::new();
    for m in sidecar["messages"].as_array().ok_or("no messages")? {
        let base = m["offset"].as_u64().ok_or("message offset")? as usize;
        let frames: Vec<&Json> = m["frames"]
            .as_array()
            .ok_or("no frames")?
            .iter()
            .filter(|f| f["type"] == 9)
            .collect();
        let objects = m["objects"].as_array().ok_or("no objects")?;
        if frames.len() != objects.len() {
            return Err("data frames and objects differ in number".into());
        }
        for (f, o) in frames.iter().zip(objects) {
            let start = base + f["offset"].as_u64().ok_or("frame offset")? as usize;
            let cbor = start + f["cbor_offset"].as_u64().ok_or("cbor_offset")? as usize;
            let end = if f["cbor_after_payload"] == true {
                start + f["total_length"].as_u64().ok_or("total_length")? as usize - 20
            } else {
                let mut d = Decoder::new(&bytes[cbor..]);
                d.value()?;
                cbor + d.position()
            };
            out.push((bytes[cbor..end].to_vec(), o["descriptor"].clone()));
        }
    }
    Ok(out)
}

fn json(v: &Value) -> Json {
    match v {
        Value::Uint(n) => Json::from(*n),
        Value::Nint(n) => Json::from(-1 - *n as i64),
        Value::Text(s) => Json::from(s.as_str()),
        Value::Float(f) => Json::from(*f),
        Value::Array(a) => Json::Array(a.iter().map(json).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.as_text().unwrap_or_default().to_owned(), json(v)))
                .collect(),
        ),
        Value::Bool(b) => Json::from(*b),
        other => Json::from(format!("{other:?}")),
    }
}

fn check(file: &Path) -> Result<(), Failed> {
    for (i, (bytes, want)) in descriptors(file)?.into_iter().enumerate() {
        let (d, canonical) = DataObjectDescriptor::decode(&bytes)?;
        if !canonical {
            return Err(format!(
                "object {i}: the reference wrote a descriptor we do not call canonical"
            )
            .into());
        }
        if d.encode() != bytes {
            return Err(format!("object {i}: re-encoding changed the bytes").into());
        }
        let got = json(&d.to_value());
        let (Some(g), Some(w)) = (got.as_object(), want.as_object()) else {
            return Err("not maps".into());
        };
        if g.len() != w.len() || w.iter().any(|(k, v)| g.get(k) != Some(v)) {
            return Err(format!("object {i}: decoded {got}, sidecar {want}").into());
        }
    }
    Ok(())
}

/// Any key order decodes; only the canonical one is reported canonical; duplicates fail.
/// A writer's descriptor gets tensogram's defaults for what it leaves out, keeps what it
/// gives, and still needs a shape and a dtype.
fn defaults_for_writers() -> Result<(), Failed> {
    let map = |fields: &[(&str, Value)]| {
        Value::Map(
            fields
                .iter()
                .map(|(k, v)| (Value::Text((*k).into()), v.clone()))
                .collect(),
        )
    };
    let shape = Value::Array(vec![Value::Uint(2), Value::Uint(3), Value::Uint(4)]);
    let d = DataObjectDescriptor::with_defaults(map(&[
        ("dtype", Value::Text("float32".into())),
        ("shape", shape.clone()),
    ]))?;
    if (
        d.obj_type.as_str(),
        d.ndim,
        &d.strides[..],
        d.encoding.as_str(),
        d.filter.as_str(),
        d.compression.as_str(),
    ) != ("ntensor", 3, &[12, 4, 1][..], "none", "none", "none")
    {
        return Err(format!("defaults: {d:?}").into());
    }
    let d = DataObjectDescriptor::with_defaults(map(&[
        ("dtype", Value::Text("float32".into())),
        ("shape", shape.clone()),
        ("compression", Value::Text("zstd".into())),
        (
            "strides",
            Value::Array(vec![Value::Uint(1), Value::Uint(2), Value::Uint(6)]),
        ),
    ]))?;
    if d.compression != "zstd" || d.strides != [1, 2, 6] {
        return Err(format!("given fields were replaced: {d:?}").into());
    }
    for missing in [
        map(&[("dtype", Value::Text("float32".into()))]),
        map(&[("shape", shape)]),
    ] {
        if DataObjectDescriptor::with_defaults(missing).is_ok() {
            return Err("a descriptor without a shape or a dtype was accepted".into());
        }
    }
    Ok(())
}

fn orders_and_duplicates() -> Result<(), Failed> {
    let file = tensor_testkit::conformance("tensogram").join("sp16_szip.tgm");
    let (bytes, _) = descriptors(&file)?
        .into_iter()
        .next()
        .ok_or("no descriptor")?;
    let (d, _) = DataObjectDescriptor::decode(&bytes)?;
    let Value::Map(mut entries) = d.to_value() else {
        return Err("not a map".into());
    };
    entries.reverse();
    let mut e = tensor_core::cbor::Encoder::new();
    e.value(&Value::Map(entries.clone()));
    let (back, canonical) = DataObjectDescriptor::decode(&e.out)?;
    if canonical || back != d || back.encode() != bytes {
        return Err("a reordered descriptor must decode to the same value, non-canonical".into());
    }
    entries.push(entries[0].clone());
    let mut e = tensor_core::cbor::Encoder::new();
    e.value(&Value::Map(entries));
    if DataObjectDescriptor::decode(&e.out).is_ok() {
        return Err("a duplicated key was accepted".into());
    }
    Ok(())
}

fn round_trip() -> Result<(), Failed> {
    let dtypes = [
        "float32",
        "float64",
        "int8",
        "uint16",
        "complex64",
        "bitmask",
        "bfloat16",
    ];
    let strategy = (
        prop::collection::vec(0u64..1000, 0..5),
        prop::sample::select(dtypes.to_vec()),
        any::<bool>(),
        prop::collection::btree_map(
            "[a-z_]{1,12}",
            prop_oneof![
                any::<u64>().prop_map(Value::Uint),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(Value::Float),
                "[ -~]{0,8}".prop_map(Value::Text)
            ],
            0..6,
        ),
    );
    TestRunner::new(Config::with_cases(300))
        .run(&strategy, |(shape, dtype, big, params)| {
            let reserved = [
                "type",
                "ndim",
                "shape",
                "strides",
                "dtype",
                "byte_order",
                "encoding",
                "filter",
                "compression",
                "masks",
            ];
            let params = params
                .into_iter()
                .filter(|(k, _)| !reserved.contains(&k.as_str()))
                .map(|(k, v)| (k, tensor_descriptor::ParamValue::from(&v)))
                .collect();
            let d = DataObjectDescriptor {
                obj_type: "ntensor".into(),
                ndim: shape.len() as u64,
                strides: tensor_dtype::shape::c_strides(&shape).unwrap(),
                shape,
                dtype: dtype.parse().unwrap(),
                byte_order: Some(if big {
                    tensor_core::ByteOrder::Big
                } else {
                    tensor_core::ByteOrder::Little
                }),
                encoding: "none".into(),
                filter: "none".into(),
                compression: "zstd".into(),
                masks: None,
                params,
            };
            let bytes = d.encode();
            let (back, canonical) = DataObjectDescriptor::decode(&bytes).unwrap();
            prop_assert!(canonical);
            prop_assert_eq!(back, d);
            Ok(())
        })
        .map_err(|e| e.to_string().into())
}

fn main() {
    let args = Arguments::from_args();
    let dir = tensor_testkit::conformance("tensogram");
    let files = tensor_testkit::files_with_extension(&dir, "tgm");
    assert!(!files.is_empty(), "no tensogram fixtures");
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|f| {
            Trial::test(
                format!("conformance::{}", tensor_testkit::stem(&f)),
                move || check(&f),
            )
        })
        .collect();
    trials.push(Trial::test("orders_and_duplicates", orders_and_duplicates));
    trials.push(Trial::test("defaults_for_writers", defaults_for_writers));
    trials.push(Trial::test("proptest::round_trip", round_trip));
    libtest_mimic::run(&args, trials).exit();
}
