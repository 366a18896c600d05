//! Integration tests of tensor-pytorch: one trial per checkpoint torch.save wrote (every
//! tensor's dtype, shape and elements, and the values that are not tensors, as the sidecar
//! records what `torch.load` gives), one per hostile file (refused with the kind it should
//! be, nothing run), and the pickle machine on pickles built here.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::{ErrorKind, Kinded, ReadOptions};
use tensor_dtype::{Dtype, Format, TensorContainer};
use tensor_pytorch::{Checkpoint, Layout, PytorchFormat};

fn dir(sub: &str) -> PathBuf {
    tensor_testkit::testdata().join("pytorch").join(sub)
}

/// torch's name of a dtype.
fn torch_name(d: Dtype) -> String {
    match d {
        Dtype::Float8E4m3 => "float8_e4m3fn".into(),
        Dtype::Float8E8m0 => "float8_e8m0fnu".into(),
        other => other.to_string(),
    }
}

fn reference(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    assert!(
        PytorchFormat::recognise(&bytes[..bytes.len().min(64)]),
        "not recognised"
    );
    let ckpt = Checkpoint::open(&bytes, &ReadOptions::default())?;
    let expected = side["tensors"]
        .as_object()
        .ok_or("sidecar without tensors")?;
    if ckpt.tensors.len() != expected.len() {
        return Err(format!(
            "{} tensors, torch.load gives {}",
            ckpt.tensors.len(),
            expected.len()
        )
        .into());
    }
    let legacy = path.file_stem().is_some_and(|s| s == "legacy");
    assert_eq!(ckpt.layout == Layout::Legacy, legacy);
    for (i, t) in ckpt.tensors.iter().enumerate() {
        let want = &expected
            .get(&t.name)
            .ok_or_else(|| format!("{}: not in torch.load's", t.name))?;
        let view = ckpt.view_of(t)?;
        if want["dtype"] != torch_name(t.dtype) || want["shape"] != serde_json::json!(t.shape) {
            return Err(
                format!("{}: {} {:?}, torch gives {want}", t.name, t.dtype, t.shape).into(),
            );
        }
        let elements = view.to_le_bytes();
        if want["sha256"] != tensor_testkit::sha256_hex(&elements) {
            return Err(format!("{}: elements differ from torch.load's", t.name).into());
        }
        // Stored as they are: the view borrows the file (but NumPy arrays pickled in the
        // object, whose elements are in the pickle), and decoding into a buffer agrees.
        let borrowed = TensorContainer::view(&ckpt, i)?;
        if borrowed.is_none() && !t.storage.starts_with("numpy:") {
            return Err(format!("{}: not viewed zero-copy", t.name).into());
        }
        let mut dst = vec![0; elements.len()];
        ckpt.read_into(i, &mut dst)?;
        if cfg!(target_endian = "little") && dst != *elements {
            return Err(format!("{}: read_into differs from the view", t.name).into());
        }
    }
    let metadata = Json::Object(ckpt.metadata.clone());
    if !tensor_testkit::same_json_value(&metadata, &side["metadata"]) {
        return Err(format!("metadata {metadata}, torch.load gives {}", side["metadata"]).into());
    }
    if !legacy && tensor_pytorch::verify(&bytes, &tensor_core::Limits::default())? == 0 {
        return Err("no CRC verified".into());
    }
    Ok(())
}

/// The kind each hostile file is refused with.
fn expected_kind(name: &str) -> ErrorKind {
    match name {
        "os_system" | "posix_system" | "builtins_eval" | "subprocess" | "nested_reduce"
        | "stack_global" | "newobj" | "inst" => ErrorKind::Unsupported,
        _ => ErrorKind::Malformed,
    }
}

const MARKER: &str = "/tmp/tensorkit-pickle-ran";

fn malicious(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let name = tensor_testkit::stem(path);
    let started = std::time::Instant::now();
    let err = match Checkpoint::open(&bytes, &ReadOptions::default()) {
        Ok(c) => return Err(format!("read, {} tensors", c.tensors.len()).into()),
        Err(e) => e,
    };
    if err.kind() != expected_kind(&name) {
        return Err(format!(
            "{:?} where {:?} was expected: {err}",
            err.kind(),
            expected_kind(&name)
        )
        .into());
    }
    if started.elapsed() > std::time::Duration::from_secs(10) {
        return Err(format!("took {:?}", started.elapsed()).into());
    }
    if Path::new(MARKER).exists() {
        return Err(format!("{MARKER} exists: something ran").into());
    }
    Ok(())
}

/// The whole module torch.save pickled: refused by the class it names.
fn whole_module() -> Result<(), Failed> {
    let bytes = std::fs::read(dir("reference").join("whole_module.pt"))?;
    let err = Checkpoint::open(&bytes, &ReadOptions::default())
        .err()
        .ok_or("read")?;
    let text = err.to_string();
    if err.kind() != ErrorKind::Unsupported
        || !text.contains("torch.nn.modules")
        || !text.contains("state_dict")
    {
        return Err(format!("{:?}: {text}", err.kind()).into());
    }
    Ok(())
}

/// A pickle in an archive of its own, with `storages` as its entries.
fn archive(pickle: &[u8], storages: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = tensor_zip::Writer::new(std::io::Cursor::new(Vec::new())).unwrap();
    w.stored("archive/data.pkl", pickle.len() as u64, |o| {
        o.write_all(pickle)
    })
    .unwrap();
    for (name, data) in storages {
        w.stored(&format!("archive/data/{name}"), data.len() as u64, |o| {
            o.write_all(data)
        })
        .unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// `{name: _rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())}`,
/// protocol 2, as torch writes it.
fn state_dict_pickle(
    name: &str,
    storage: &str,
    key: &str,
    numel: u8,
    offset: u8,
    size: &[u8],
    stride: &[u8],
) -> Vec<u8> {
    let mut p = b"\x80\x02}(X".to_vec();
    p.extend_from_slice(&(name.len() as u32).to_le_bytes());
    p.extend_from_slice(name.as_bytes());
    p.extend_from_slice(b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\n");
    p.extend_from_slice(storage.as_bytes());
    p.extend_from_slice(b"\nX");
    p.extend_from_slice(&(key.len() as u32).to_le_bytes());
    p.extend_from_slice(key.as_bytes());
    p.extend_from_slice(b"X\x03\x00\x00\x00cpuK");
    p.push(numel);
    p.extend_from_slice(b"tQK");
    p.push(offset);
    for dims in [size, stride] {
        p.push(b'(');
        for d in dims {
            p.extend_from_slice(&[b'K', *d]);
        }
        p.push(b't');
    }
    p.extend_from_slice(b"\x89ccollections\nOrderedDict\n)RtRu.");
    p
}

fn built_pickles() -> Result<(), Failed> {
    let floats: Vec<u8> = (0..6u8).flat_map(|i| f32::from(i).to_le_bytes()).collect();
    // A transposed view with an offset: elements 1.. of a 2x3 storage, read down columns.
    let bytes = archive(
        &state_dict_pickle("w", "FloatStorage", "0", 6, 1, &[2, 2], &[1, 3]),
        &[("0", &floats)],
    );
    let ckpt = Checkpoint::open(&bytes, &ReadOptions::default())?;
    let v = ckpt.view_of(&ckpt.tensors[0])?;
    assert_eq!(&*v.typed::<f32>()?, &[1.0, 4.0, 2.0, 5.0]);
    // A view past its storage.
    let bytes = archive(
        &state_dict_pickle("w", "FloatStorage", "0", 6, 4, &[2, 2], &[1, 3]),
        &[("0", &floats)],
    );
    let err = Checkpoint::open(&bytes, &ReadOptions::default())
        .err()
        .ok_or("read past its storage")?;
    assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
    // More elements than the entry holds.
    let bytes = archive(
        &state_dict_pickle("w", "DoubleStorage", "0", 6, 0, &[6], &[1]),
        &[("0", &floats)],
    );
    let err = Checkpoint::open(&bytes, &ReadOptions::default())
        .err()
        .ok_or("storage too long")?;
    assert!(err.to_string().contains("claims 48 bytes"), "{err}");
    // A storage class no dtype of ours holds: named.
    let bytes = archive(
        &state_dict_pickle("q", "QInt8Storage", "0", 6, 0, &[6], &[1]),
        &[("0", &floats)],
    );
    let err = Checkpoint::open(&bytes, &ReadOptions::default())
        .err()
        .ok_or("qint8 read")?;
    assert!(
        err.kind() == ErrorKind::Unsupported && err.to_string().contains("qint8"),
        "{err}"
    );
    // Tensor limits hold.
    let bytes = archive(
        &state_dict_pickle("w", "FloatStorage", "0", 6, 0, &[6], &[1]),
        &[("0", &floats)],
    );
    let limits = tensor_core::Limits::default().with_max_tensor_count(0);
    let err = Checkpoint::open(&bytes, &ReadOptions::default().limits(limits))
        .err()
        .ok_or("limit")?;
    assert_eq!(err.kind(), ErrorKind::LimitExceeded, "{err}");
    Ok(())
}

/// A list holding itself, lists sharing one list many times over: refused or read in
/// bounded time, and dropped without recursion.
fn self_reference() -> Result<(), Failed> {
    // l = []; l.append(l); {"l": l}
    let bytes = archive(b"\x80\x02}(X\x01\x00\x00\x00l]q\x00h\x00au.", &[]);
    let ckpt = Checkpoint::open(&bytes, &ReadOptions::default());
    if ckpt.is_ok() {
        return Err(format!("a list holding itself read as {ckpt:?}").into());
    }
    // a0 = []; a1 = [a0, a0]; ... a60: 2^60 paths to a0.
    let mut p = b"\x80\x02]q\x00".to_vec();
    for i in 1..=60u8 {
        p.extend_from_slice(&[b'(', b'h', i - 1, b'h', i - 1, b'l', b'q', i]);
    }
    p.extend_from_slice(b".");
    let started = std::time::Instant::now();
    let bytes = archive(&p, &[]);
    let err = Checkpoint::open(&bytes, &ReadOptions::default());
    if started.elapsed() > std::time::Duration::from_secs(20) {
        return Err(format!("took {:?}", started.elapsed()).into());
    }
    if err.is_ok_and(|c| !c.tensors.is_empty()) {
        return Err("tensors out of lists of lists".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for p in tensor_testkit::files_with_extension(&dir("reference"), "pt") {
        if p.file_stem().is_some_and(|s| s == "whole_module") {
            continue;
        }
        trials.push(Trial::test(
            format!("reference::{}", tensor_testkit::stem(&p)),
            move || reference(&p),
        ));
    }
    for p in tensor_testkit::files_with_extension(&dir("malicious"), "pt") {
        trials.push(Trial::test(
            format!("malicious::{}", tensor_testkit::stem(&p)),
            move || malicious(&p),
        ));
    }
    trials.push(Trial::test("whole_module_refused", whole_module));
    trials.push(Trial::test("built_pickles", built_pickles));
    trials.push(Trial::test("self_reference", self_reference));
    libtest_mimic::run(&args, trials).exit();
}
