//! Integration tests of tensor-numpy: one trial per file numpy wrote (every array's dtype,
//! shape and elements as numpy.load gives them), one per file refused (the kind it should
//! be), and round trips through the writers.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use tensor_core::{ErrorKind, Kinded, Limits, ReadOptions};
use tensor_dtype::{Dtype, Format, TensorContainer};
use tensor_numpy::{Npy, NpyFormat, NpzFormat, NpzWriter};

fn dir(sub: &str) -> PathBuf {
    tensor_testkit::testdata().join("numpy").join(sub)
}

/// numpy's name of a dtype (`ml_dtypes`' for the floats numpy lacks).
fn numpy_name(d: Dtype) -> String {
    match tensor_numpy::descr::descr(d) {
        Some(name) if !name.starts_with(['<', '|']) => name.into(),
        _ => d.to_string(),
    }
}

/// An array's elements as numpy holds them: C order, little-endian, 4- and 6-bit floats a
/// byte each.
fn numpy_bytes(npy: &Npy<'_>) -> Result<Vec<u8>, Failed> {
    let t = npy.to_tensor(&Limits::default())?;
    if !t.dtype().is_packed() {
        return Ok(t
            .into_byte_order(tensor_core::ByteOrder::Little)
            .into_data());
    }
    let n = tensor_dtype::shape::element_count(t.shape())? as usize;
    Ok((0..n)
        .map(|i| tensor_dtype::minifloat::packed_code(t.dtype(), t.data(), i).unwrap_or(0xff))
        .collect())
}

fn check(name: &str, npy: &Npy<'_>, want: &serde_json::Value) -> Result<(), Failed> {
    if want["dtype"] != numpy_name(npy.dtype) || want["shape"] != serde_json::json!(npy.shape) {
        return Err(format!("{name}: {} {:?}, numpy gives {want}", npy.dtype, npy.shape).into());
    }
    if want["sha256"] != tensor_testkit::sha256_hex(&numpy_bytes(npy)?) {
        return Err(format!("{name}: elements differ from numpy.load's").into());
    }
    Ok(())
}

fn reference(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let want = side["arrays"].as_object().ok_or("sidecar")?;
    if path.extension().is_some_and(|e| e == "npz") {
        assert!(NpzFormat::recognise(&bytes[..64]));
        let r = NpzFormat::open_with(&bytes, &ReadOptions::default())?;
        let names: Vec<&str> = (0..r.len()).filter_map(|i| r.name(i)).collect();
        if names.len() != want.len() {
            return Err(format!("{names:?}, numpy gives {:?}", want.keys()).into());
        }
        let left: Vec<&str> = r.left_out.iter().map(|(n, _)| n.as_str()).collect();
        if serde_json::json!(left)
            != side
                .get("left_out")
                .cloned()
                .unwrap_or(serde_json::json!([]))
        {
            return Err(format!("left out {left:?}").into());
        }
        for (i, m) in r.members.iter().enumerate() {
            let npy = m.npy(&Limits::default())?;
            check(&m.name, &npy, &want[&m.name])?;
            assert_eq!(r.shape(i)?, npy.shape.as_slice());
        }
        if tensor_numpy::npz::verify(&bytes, &Limits::default())? != want.len() + left.len() {
            return Err("not every CRC verified".into());
        }
    } else {
        assert!(NpyFormat::recognise(&bytes[..16]));
        let npy = Npy::open(&bytes, &Limits::default())?;
        let (name, w) = want.iter().next().ok_or("sidecar")?;
        check(name, &npy, w)?;
        if w.get("numpy_dtype").and_then(|t| t.as_str()) != npy.numpy_type.as_deref() {
            return Err(format!(
                "numpy type {:?}, numpy's {}",
                npy.numpy_type, w["numpy_dtype"]
            )
            .into());
        }
        // Stored as tensorkit holds them: viewed where they lie.
        if !npy.dtype.is_packed() && npy.view()?.is_none() {
            return Err("not viewed in place".into());
        }
    }
    Ok(())
}

fn malicious(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let err = if path.extension().is_some_and(|e| e == "npz") {
        NpzFormat::open_with(&bytes, &ReadOptions::default()).err()
    } else {
        Npy::open(&bytes, &Limits::default()).err()
    }
    .ok_or("read")?;
    let want = if tensor_testkit::stem(path) == "shape_too_large" {
        ErrorKind::Truncated
    } else {
        ErrorKind::Unsupported
    };
    if err.kind() != want {
        return Err(format!("{:?}: {err}", err.kind()).into());
    }
    Ok(())
}

/// Arrays written by the writers read back with the same elements.
fn written_read_back() -> Result<(), Failed> {
    let arrays: Vec<(String, Dtype, Vec<u64>, Vec<u8>)> = vec![
        ("a".into(), Dtype::Float32, vec![2, 3], (0..24).collect()),
        ("nested/b".into(), Dtype::Int64, vec![1], vec![7; 8]),
        ("s".into(), Dtype::Float64, vec![], vec![1; 8]),
        ("e".into(), Dtype::Uint16, vec![0, 5], vec![]),
    ];
    let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new()))?;
    for (name, dtype, shape, data) in &arrays {
        w.array(name, *dtype, shape, |o| o.write_all(data))?;
    }
    let bytes = w.finish()?.into_inner();
    let r = NpzFormat::open_with(&bytes, &ReadOptions::default())?;
    for ((name, dtype, shape, data), m) in arrays.iter().zip(&r.members) {
        let npy = m.npy(&Limits::default())?;
        assert_eq!((&m.name, npy.dtype, &npy.shape), (name, *dtype, shape));
        assert_eq!(npy.data, data.as_slice());
        // numpy's alignment: the elements start at a multiple of 64 in the .npy.
        assert_eq!(npy.data_offset % 64, 0);
    }
    // A header too long for version 1.0 is written as 2.0.
    let shape: Vec<u64> = vec![1; 30_000];
    let head = tensor_numpy::header_bytes(Dtype::Uint8, &shape, "long")?;
    assert_eq!(head[6], 2);
    let mut file = head;
    file.push(9);
    let npy = Npy::open(&file, &Limits::default())?;
    assert_eq!(
        (npy.version, npy.shape.len(), npy.data),
        (2, 30_000, &[9u8][..])
    );
    let strict = Limits::default().with_max_header_bytes(1024);
    assert_eq!(
        Npy::open(&file, &strict).unwrap_err().kind(),
        ErrorKind::LimitExceeded
    );
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for ext in ["npy", "npz"] {
        for p in tensor_testkit::files_with_extension(&dir("reference"), ext) {
            trials.push(Trial::test(
                format!("reference::{}", tensor_testkit::stem(&p)),
                move || reference(&p),
            ));
        }
        for p in tensor_testkit::files_with_extension(&dir("malicious"), ext) {
            trials.push(Trial::test(
                format!("malicious::{}", tensor_testkit::stem(&p)),
                move || malicious(&p),
            ));
        }
    }
    trials.push(Trial::test("written_read_back", written_read_back));
    libtest_mimic::run(&args, trials).exit();
}
