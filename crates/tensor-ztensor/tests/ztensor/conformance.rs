//! One trial per zTensor 0.1 fixture.

use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tensor_core::ByteOrder;
use tensor_dtype::scalar;
use tensor_ztensor::v0_1::{Encoding, TensorOptions, WriteEncoding, ZTensor, serialize};
use tensor_ztensor::{Checksum, ChecksumKind, Container, Sparse};

fn fixtures() -> PathBuf {
    tensor_testkit::conformance("ztensor")
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    tensor_testkit::files_with_extension(dir, "zt")
}

use tensor_testkit::scalar_matches as same;

fn check_tensor(file: &ZTensor<'_>, i: usize, want: &Value) -> Result<(), Failed> {
    let e = &file.entries()[i];
    let name = &want["name"];
    if *e.name != *name
        || *e.dtype_name != want["dtype"]
        || serde_json::to_value(&e.shape)? != want["shape"]
    {
        return Err(format!(
            "{name}: name/dtype/shape {:?} {} {:?}",
            e.name, e.dtype_name, e.shape
        )
        .into());
    }
    let decoded = file.read(i)?;
    let view = decoded.view()?;
    let le = view.to_le_bytes();
    if Some(le.len() as u64) != want["nbytes"].as_u64() {
        return Err(format!("{name}: {} bytes, expected {}", le.len(), want["nbytes"]).into());
    }
    let sha = sha_hex(&le);
    if sha != want["sha256"] {
        return Err(format!("{name}: sha256 of the decoded little-endian bytes differs").into());
    }
    if let Some(Value::Array(values)) = want.get("values").or_else(|| want.get("first_values")) {
        let got = scalar::decode(view.dtype(), &le, ByteOrder::Little, 0, values.len());
        if let Some((k, (g, v))) = got
            .iter()
            .zip(values)
            .enumerate()
            .find(|(_, (g, v))| !same(**g, v))
        {
            return Err(format!("{name}: value {k} is {g:?}, expected {v}").into());
        }
    }
    if let Some(index) = want.get("index") {
        if Some(e.offset) != index["offset"].as_u64()
            || Some(e.size) != index["size"].as_u64()
            || e.encoding.name() != index["encoding"]
        {
            return Err(
                format!("{name}: offset/size/encoding differ from the stored index").into(),
            );
        }
        let checksum = e.checksum.as_ref().map(|c| match c {
            Checksum::Unknown(s) | Checksum::Malformed(s) => s.clone(),
            other => other.to_stored(),
        });
        if let (Some(ours), Some(theirs)) = (checksum, index["checksum"].as_str())
            && !ours.eq_ignore_ascii_case(theirs)
        {
            return Err(format!("{name}: checksum {ours} vs {theirs}").into());
        }
        for field in &e.custom {
            if index.get(&field.key).is_none() {
                return Err(format!(
                    "{name}: custom key {:?} is not in the stored index",
                    field.key
                )
                .into());
            }
        }
    }
    if let Some(sp) = want.get("sparse") {
        match (file.sparse(i)?, sp["format"].as_str()) {
            (
                Sparse::Csr {
                    indptr, indices, ..
                },
                Some("csr"),
            ) => {
                if serde_json::to_value(indptr)? != sp["indptr"]
                    || serde_json::to_value(indices)? != sp["indices"]
                {
                    return Err(format!("{name}: CSR components differ").into());
                }
            }
            (Sparse::Coo { coords, shape, .. }, Some("coo")) => {
                let rows: Vec<Vec<u64>> = coords
                    .chunks(shape.len().max(1))
                    .map(<[u64]>::to_vec)
                    .collect();
                if serde_json::to_value(rows)? != sp["coords"] {
                    return Err(format!("{name}: COO coordinates differ").into());
                }
            }
            (s, f) => return Err(format!("{name}: sparse form {s:?} vs {f:?}").into()),
        }
    }
    Ok(())
}

/// Fixtures that did not come from a reference writer, or that store what no writer emits.
const NOT_WRITER_OUTPUT: [&str; 9] = [
    "definite_maps_shuffled", // definite maps in another key order
    "padding_gaps_order",     // blobs out of index order, gaps, 0xAA padding
    "empty_size0",            // no index at all
    "bool_nonzero_bytes",     // bool bytes other than 0/1
    "crc32c_raw",             // one checksum in lower-case hex
    "unknown_checksum_algo",  // a checksum no writer computes
    "sparse_csr_code",        // no 0.1 writer wrote sparse tensors
    "sparse_coo_code",
    "zstd_multiframe", // two zstd frames in one blob
];

/// Writes the tensors back with the settings their index records, and compares the bytes.
fn rewrite(file: &ZTensor<'_>) -> Result<Vec<u8>, Failed> {
    let mut decoded = Vec::new();
    for i in 0..file.entries().len() {
        decoded.push(file.read(i)?);
    }
    let mut items = Vec::new();
    for (e, d) in file.entries().iter().zip(&decoded) {
        let options = TensorOptions {
            encoding: if e.encoding == Encoding::Zstd {
                WriteEncoding::Zstd(0)
            } else {
                WriteEncoding::Raw
            },
            checksum: match e.checksum {
                Some(Checksum::Crc32c(_)) => ChecksumKind::Crc32c,
                Some(Checksum::Sha256(_)) => ChecksumKind::Sha256,
                _ => ChecksumKind::None,
            },
            byte_order: e.byte_order_stored.then_some(e.byte_order),
            custom: e
                .custom
                .iter()
                .map(|c| (c.key.clone(), c.raw.to_vec()))
                .collect(),
        };
        items.push((&*e.name, d.view()?, options));
    }
    Ok(serialize(items)?)
}

fn accept(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let want: Value = tensor_testkit::sidecar(path)?;
    let file = ZTensor::open(&bytes)?;
    let tensors = want["tensors"].as_array().ok_or("no tensors")?;
    if file.entries().len() != tensors.len() {
        return Err(format!(
            "{} tensors, expected {}",
            file.entries().len(),
            tensors.len()
        )
        .into());
    }
    for (i, t) in tensors.iter().enumerate() {
        check_tensor(&file, i, t)?;
    }
    let stem = tensor_testkit::stem(path);
    if !NOT_WRITER_OUTPUT.contains(&stem.as_str()) && rewrite(&file)? != bytes {
        return Err(
            "writing the tensors back does not reproduce the reference writer's bytes".into(),
        );
    }
    Ok(())
}

/// A bad fixture must fail, when opened or read through `open_and_read`, with the error
/// class its sidecar names.
fn expect_rejection(
    path: &Path,
    open_and_read: impl FnOnce(&[u8]) -> Result<(), tensor_ztensor::Error>,
) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let want: Value = tensor_testkit::sidecar(path)?;
    let expected = want["expected_error"].as_str().ok_or("expected_error")?;
    match open_and_read(&bytes) {
        Ok(()) => Err("accepted".into()),
        Err(e) => match e.class() {
            Some(c) if c.name() == expected => Ok(()),
            _ => Err(format!("{:?} ({e}), expected {expected}", e.class()).into()),
        },
    }
}

fn reject(path: &Path) -> Result<(), Failed> {
    expect_rejection(path, |bytes| {
        ZTensor::open(bytes)
            .and_then(|f| (0..f.entries().len()).try_for_each(|i| f.read(i).map(drop)))
    })
}

pub(crate) fn trials() -> Vec<Trial> {
    let root = fixtures();
    let mut trials = Vec::new();
    for (dir, good) in [("v0.1", true), ("bad", false)] {
        let files = sorted_files(&root.join(dir));
        assert!(!files.is_empty(), "no fixtures in {dir}");
        for f in files {
            let name = tensor_testkit::stem(&f);
            trials.push(Trial::test(
                format!("conformance::{dir}::{name}"),
                move || if good { accept(&f) } else { reject(&f) },
            ));
        }
    }
    trials
}

use tensor_testkit::sha256_hex as sha_hex;

/// A 1.x or 2 fixture: every object reads to the recorded dense values, every part to its
/// recorded digest.
fn accept_container(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let want: Value = tensor_testkit::sidecar(path)?;
    let file = Container::open(&bytes)?;
    let tensors = want["tensors"].as_array().ok_or("no tensors")?;
    if file.objects().len() != tensors.len() {
        return Err(format!(
            "{} objects, expected {}",
            file.objects().len(),
            tensors.len()
        )
        .into());
    }
    for t in tensors {
        let name = t["name"].as_str().ok_or("name")?;
        let i = file
            .objects()
            .iter()
            .position(|o| o.name == name)
            .ok_or_else(|| format!("{name} missing"))?;
        let o = &file.objects()[i];
        if serde_json::to_value(o.shape.as_slice())? != t["shape"] {
            return Err(format!("{name}: shape {:?}", o.shape).into());
        }
        let decoded = file.read(i)?;
        let le = decoded.view()?.to_le_bytes().into_owned();
        if let Some(sha) = t.get("sha256")
            && sha_hex(&le) != *sha
        {
            return Err(format!("{name}: dense sha256 differs").into());
        }
        if let Some(Value::Object(parts)) = t.get("parts") {
            for (role, p) in parts {
                let part = o
                    .part(role)
                    .ok_or_else(|| format!("{name}: part {role} missing"))?;
                if sha_hex(&file.part_bytes(o, part)?) != p["sha256"] {
                    return Err(format!("{name}/{role}: part sha256 differs").into());
                }
            }
        }
        let values = t
            .get("values")
            .or_else(|| t.get("dense_values"))
            .or_else(|| t.get("first_values"));
        if let Some(Value::Array(values)) = values {
            let got = scalar::decode(decoded.dtype, &le, ByteOrder::Little, 0, values.len());
            if let Some((k, (g, v))) = got
                .iter()
                .zip(values)
                .enumerate()
                .find(|(_, (g, v))| !same(**g, v))
            {
                return Err(format!("{name}: value {k} is {g:?}, expected {v}").into());
            }
        }
        if let (Some(attrs), Some(ours)) = (t.get("attributes"), &o.attributes)
            && attrs.as_object().map(serde_json::Map::len) != ours.as_map().map(<[_]>::len)
        {
            return Err(format!("{name}: attributes differ").into());
        }
    }
    Ok(())
}

fn reject_container(path: &Path) -> Result<(), Failed> {
    expect_rejection(path, |bytes| {
        Container::open(bytes)
            .and_then(|f| (0..f.objects().len()).try_for_each(|i| f.read(i).map(drop)))
    })
}

pub(crate) fn container_trials() -> Vec<Trial> {
    let root = fixtures();
    let mut trials = Vec::new();
    for (dir, good) in [("v1", true), ("v2", true), ("v2/bad", false)] {
        let files = sorted_files(&root.join(dir));
        assert!(!files.is_empty(), "no fixtures in {dir}");
        for f in files {
            let name = tensor_testkit::stem(&f);
            trials.push(Trial::test(
                format!("conformance::{dir}::{name}"),
                move || {
                    if good {
                        accept_container(&f)
                    } else {
                        reject_container(&f)
                    }
                },
            ));
        }
    }
    trials
}

/// Our canonical zTensor 2 writer reproduces the reference's canonical file byte for byte.
pub(crate) fn v2_canonical_rewrite() -> Result<(), Failed> {
    let path = fixtures().join("v2/v2_canonical.zt");
    let bytes = std::fs::read(&path)?;
    let file = Container::open(&bytes)?;
    let decoded: Vec<_> = (0..file.objects().len())
        .map(|i| file.read(i))
        .collect::<Result<_, _>>()?;
    let mut items = Vec::new();
    for (o, d) in file.objects().iter().zip(&decoded) {
        items.push((&*o.name, d.view()?, o.attributes.clone()));
    }
    let mut out = Vec::new();
    tensor_ztensor::v2::write(&mut out, items, file.attributes().cloned())?;
    if out != bytes {
        return Err(format!(
            "{} bytes written, {} in the reference file; they differ",
            out.len(),
            bytes.len()
        )
        .into());
    }
    Ok(())
}

/// Byte ranges of a `zt.zstd-seekable/1` part decode from the reference's file to the same
/// bytes as the whole part.
pub(crate) fn v2_seekable_ranges() -> Result<(), Failed> {
    let bytes = std::fs::read(fixtures().join("v2/v2_zstd_seekable.zt"))?;
    let file = Container::open(&bytes)?;
    for o in file.objects() {
        let part = o.part("data").ok_or("no data part")?;
        let whole = file.part_bytes(o, part)?;
        for (start, len) in [
            (0usize, 1usize),
            (7, 100),
            (whole.len() / 2, whole.len() / 3),
            (whole.len() - 5, 5),
        ] {
            let mut got = vec![0u8; len];
            file.read_part_range(o, part, start as u64, &mut got)?;
            if got != whole[start..start + len] {
                return Err(format!("{}: range {start}+{len} differs", o.name).into());
            }
        }
        let mut beyond = vec![0u8; 2];
        if file
            .read_part_range(o, part, whole.len() as u64 - 1, &mut beyond)
            .is_ok()
        {
            return Err("a range past the end was accepted".into());
        }
    }
    Ok(())
}
