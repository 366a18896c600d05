//! Integration tests of tensor-onnx: one trial per model the onnx package wrote (every
//! initializer's dtype, shape and elements as `numpy_helper.to_array` gives them, the
//! metadata), one per model refused, and the wire reader on any bytes.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use tensor_core::{ErrorKind, Kinded, Limits};
use tensor_dtype::Dtype;
use tensor_onnx::{Data, OnnxFormat};

fn dir(sub: &str) -> PathBuf {
    tensor_testkit::testdata().join("onnx").join(sub)
}

/// numpy's (and `ml_dtypes`') name of a dtype.
fn numpy_name(d: Dtype) -> String {
    match d {
        Dtype::Float8E4m3 => "float8_e4m3fn".into(),
        other => other.to_string(),
    }
}

/// An initializer's elements, little-endian in C order.
fn elements(model_dir: &Path, init: &tensor_onnx::Initializer<'_>) -> Result<Vec<u8>, Failed> {
    Ok(match &init.data {
        Data::Raw(b) => b.to_vec(),
        Data::Typed(v) => v.clone(),
        Data::External {
            location, offset, ..
        } => {
            let path = tensor_onnx::external_path(model_dir, location, &init.name)?;
            let bytes = std::fs::read(path)?;
            let len = tensor_dtype::shape::byte_len(init.dtype, &init.dims)? as usize;
            let start = *offset as usize;
            bytes
                .get(start..start + len)
                .ok_or("external data past its file")?
                .to_vec()
        }
    })
}

fn reference(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    assert!(OnnxFormat::recognise(&bytes[..16]));
    let model = tensor_onnx::open(&bytes, &Limits::default())?;
    let want = side["tensors"].as_object().ok_or("sidecar")?;
    if model.initializers.len() != want.len() {
        return Err(format!(
            "{} initializers, onnx gives {}",
            model.initializers.len(),
            want.len()
        )
        .into());
    }
    let folder = path.parent().ok_or("folder")?;
    for init in &model.initializers {
        let w = &want[&init.name];
        if w["dtype"] != numpy_name(init.dtype) || w["shape"] != serde_json::json!(init.dims) {
            return Err(format!(
                "{}: {} {:?}, onnx gives {w}",
                init.name, init.dtype, init.dims
            )
            .into());
        }
        if w["sha256"] != tensor_testkit::sha256_hex(&elements(folder, init)?) {
            return Err(format!("{}: elements differ from onnx's", init.name).into());
        }
    }
    let left: Vec<&str> = model.left_out.iter().map(|(n, _)| n.as_str()).collect();
    if serde_json::json!(left) != side["left_out"] {
        return Err(format!("left out {left:?}, onnx's {}", side["left_out"]).into());
    }
    let meta: serde_json::Map<String, serde_json::Value> = model
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().into()))
        .collect();
    if serde_json::Value::Object(meta) != side["metadata"]
        || side["producer"] != model.producer.as_str()
    {
        return Err("metadata or producer differ".into());
    }
    Ok(())
}

fn malicious(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let folder = path.parent().ok_or("folder")?;
    let err = match tensor_onnx::open(&bytes, &Limits::default()) {
        Err(e) => e,
        Ok(model) => {
            let init = model.initializers.first().ok_or("no initializer")?;
            match &init.data {
                Data::External {
                    location,
                    offset,
                    length,
                } => match tensor_onnx::external_path(folder, location, &init.name) {
                    Err(e) => e,
                    Ok(p) => {
                        let len = std::fs::metadata(p)?.len();
                        if offset + length.unwrap_or(0) <= len {
                            return Err("external data in range".into());
                        }
                        return Ok(());
                    }
                },
                _ => return Err("read".into()),
            }
        }
    };
    if err.kind() != ErrorKind::Malformed {
        return Err(format!("{:?}: {err}", err.kind()).into());
    }
    Ok(())
}

/// Random bytes: read or refused, never a panic (the trial fails by panicking).
fn any_bytes() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in 0..2000usize {
        let bytes: Vec<u8> = (0..len % 97)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let _ = tensor_onnx::open(&bytes, &Limits::default());
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let reference_dir = dir("reference");
    for p in tensor_testkit::files_with_extension(&reference_dir, "onnx")
        .into_iter()
        .chain(tensor_testkit::files_with_extension(
            &reference_dir.join("external"),
            "onnx",
        ))
    {
        let name = format!(
            "reference::{}",
            p.strip_prefix(&reference_dir).unwrap_or(&p).display()
        );
        trials.push(Trial::test(name, move || reference(&p)));
    }
    let bad = dir("malicious");
    let mut hostile = tensor_testkit::files_with_extension(&bad, "onnx");
    for sub in ["traversal", "absolute", "past_end"] {
        hostile.extend(tensor_testkit::files_with_extension(&bad.join(sub), "onnx"));
    }
    for p in hostile {
        let name = format!(
            "malicious::{}",
            p.strip_prefix(&bad).unwrap_or(&p).display()
        );
        trials.push(Trial::test(name, move || malicious(&p)));
    }
    trials.push(Trial::test("any_bytes", || {
        any_bytes();
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
