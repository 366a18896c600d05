//! Integration tests of tensor-safetensors: one trial per reference-written fixture (names,
//! dtypes, shapes, data offsets order and bytes as the sidecar records them; our writer's
//! bytes equal to the reference's where the sidecar says they are stable), and hostile
//! headers that must be errors of the right kind.

use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::path::Path;
use tensor_core::{ErrorKind, Kinded};
use tensor_safetensors::{SafeTensors, serialize};

fn fixture(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let sidecar = tensor_testkit::sidecar(path)?;
    let file = SafeTensors::open(&bytes)?;
    let expected = sidecar["tensors"]
        .as_array()
        .ok_or("no tensors in the sidecar")?;
    let order: Vec<&str> = sidecar["tensor_order"]
        .as_array()
        .ok_or("no tensor_order")?
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let ours: Vec<&str> = file.tensors.iter().map(|t| t.name.as_str()).collect();
    if ours != order {
        return Err(format!("order {ours:?}, the sidecar says {order:?}").into());
    }
    for e in expected {
        let name = e["name"].as_str().ok_or("unnamed")?;
        let t = file
            .tensor(name)
            .ok_or_else(|| format!("{name:?} is missing"))?;
        let st = tensor_safetensors::dtype::to_reference(t.view.dtype()).ok_or("no dtype")?;
        if format!("{st:?}") != e["dtype"].as_str().unwrap_or_default() {
            return Err(format!("{name}: dtype {st:?}, the sidecar says {}", e["dtype"]).into());
        }
        let shape: Vec<u64> = e["shape"]
            .as_array()
            .ok_or("no shape")?
            .iter()
            .filter_map(serde_json::value::Value::as_u64)
            .collect();
        if t.view.shape() != shape.as_slice() {
            return Err(format!("{name}: shape {:?}", t.view.shape()).into());
        }
        if tensor_testkit::sha256_hex(&t.view.to_le_bytes())
            != e["sha256"].as_str().unwrap_or_default()
        {
            return Err(format!("{name}: the bytes differ").into());
        }
    }
    // Written again: the reference's bytes, where its own writer is deterministic.
    if sidecar["byte_stable"] == true {
        let metadata: Option<BTreeMap<String, String>> = file.metadata.clone();
        let again = serialize(
            file.tensors
                .iter()
                .map(|t| (t.name.as_str(), t.view.clone())),
            metadata.as_ref(),
        )?;
        if again != bytes {
            return Err("our bytes differ from the reference writer's".into());
        }
    }
    Ok(())
}

fn with_header(json: &str, data: &[u8]) -> Vec<u8> {
    let mut h = json.to_owned();
    while !h.len().is_multiple_of(8) {
        h.push(' ');
    }
    let mut b = (h.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(h.as_bytes());
    b.extend_from_slice(data);
    b
}

fn hostile() -> Result<(), Failed> {
    let cases: [(&str, Vec<u8>, ErrorKind); 5] = [
        ("short", vec![1, 2, 3], ErrorKind::Truncated),
        (
            "huge header",
            u64::MAX.to_le_bytes().to_vec(),
            ErrorKind::LimitExceeded,
        ),
        (
            "repeated name",
            with_header(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                &[1, 2],
            ),
            ErrorKind::Malformed,
        ),
        (
            "unknown dtype",
            with_header(
                r#"{"a":{"dtype":"F2","shape":[2],"data_offsets":[0,1]}}"#,
                &[0],
            ),
            ErrorKind::Unsupported,
        ),
        (
            "data cut short",
            with_header(
                r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
                &[0; 8],
            ),
            ErrorKind::Truncated,
        ),
    ];
    for (what, bytes, kind) in cases {
        let e = SafeTensors::open_with(&bytes, &tensor_core::ReadOptions::default())
            .err()
            .ok_or_else(|| format!("{what}: accepted"))?;
        if e.kind() != kind {
            return Err(format!("{what}: {:?} ({e}), expected {kind:?}", e.kind()).into());
        }
    }
    // What the format cannot hold is refused, naming it.
    let odd = tensor_dtype::Tensor::new(
        vec![0x21, 0x03],
        tensor_dtype::Dtype::Float4E2m1,
        &[3],
        tensor_core::ByteOrder::Little,
    )?;
    let e = serialize([("f4", odd.view())], None)
        .err()
        .ok_or("an odd float4 count was written")?;
    if e.kind() != ErrorKind::Unsupported || !e.to_string().contains("\"f4\"") {
        return Err(format!("odd float4 count: {e}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let dir = tensor_testkit::conformance("safetensors");
    for file in tensor_testkit::files_with_extension(&dir, "safetensors") {
        let name = tensor_testkit::stem(&file);
        trials.push(Trial::test(format!("conformance::{name}"), move || {
            fixture(&file)
        }));
    }
    trials.push(Trial::test("hostile_headers", hostile));
    libtest_mimic::run(&args, trials).exit();
}
