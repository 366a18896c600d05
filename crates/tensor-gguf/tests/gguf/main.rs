//! Integration tests of tensor-gguf: one trial per file gguf-py wrote (header, metadata with
//! types, tensors with their stored bytes and their values dequantized, as the sidecar
//! records what gguf-py reads), the same file written again byte for byte, one trial per
//! damaged file (the error kind its sidecar names), remote header reads, and round trips.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::{ByteOrder, ErrorKind, Kinded, ReadOptions};
use tensor_dtype::{Format, TensorContainer};
use tensor_gguf::{GgmlType, Gguf, GgufFormat, Value, Writer};

fn dir() -> PathBuf {
    tensor_testkit::testdata().join("gguf/reference")
}

/// Whether our value is the one gguf-py read (its JSON form).
fn same(ours: &Value<'_>, theirs: &Json) -> bool {
    match ours {
        Value::String(s) => theirs.as_str() == Some(s.as_ref()),
        Value::Bool(b) => theirs.as_bool() == Some(*b),
        Value::F32(f) => theirs.as_f64() == Some(f64::from(*f)),
        Value::F64(f) => theirs.as_f64() == Some(*f),
        Value::Array(a) => match theirs.as_array() {
            Some(items) => {
                items.len() == a.items.len() && a.items.iter().zip(items).all(|(o, t)| same(o, t))
            }
            // Nested arrays are left to the byte-for-byte rewrite.
            None => theirs.is_null() && a.item_type == tensor_gguf::ValueType::Array,
        },
        other => match (other.as_u64(), theirs.as_u64()) {
            (Some(a), Some(b)) => a == b,
            _ => match other {
                Value::I8(v) => theirs.as_i64() == Some(i64::from(*v)),
                Value::I16(v) => theirs.as_i64() == Some(i64::from(*v)),
                Value::I32(v) => theirs.as_i64() == Some(i64::from(*v)),
                Value::I64(v) => theirs.as_i64() == Some(*v),
                _ => false,
            },
        },
    }
}

fn fixture(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let file = Gguf::open_with(&bytes, &ReadOptions::default().strict(true))?;
    let h = file.header();
    let order = if side["byte_order"] == "big" {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    if Some(u64::from(h.version)) != side["version"].as_u64()
        || h.byte_order != order
        || Some(h.alignment) != side["alignment"].as_u64()
        || Some(h.data_offset) != side["data_offset"].as_u64()
    {
        return Err(format!(
            "header: version {}, {:?}, alignment {}, data at {}; gguf-py read {side}",
            h.version, h.byte_order, h.alignment, h.data_offset
        )
        .into());
    }
    let metadata = side["metadata"].as_array().ok_or("no metadata")?;
    if metadata.len() != h.metadata.len() {
        return Err(format!("{} keys; gguf-py read {}", h.metadata.len(), metadata.len()).into());
    }
    for ((key, value), theirs) in h.metadata.iter().zip(metadata) {
        if theirs["key"] != key.as_ref() || theirs["type"] != value.value_type().name() {
            return Err(format!("{key:?} ({}): gguf-py read {theirs}", value.value_type()).into());
        }
        if let Value::Array(a) = value {
            let types = &theirs["item_types"];
            if !a.items.is_empty() && types[0] != a.item_type.name() {
                return Err(
                    format!("{key:?}: items of {}; gguf-py read {types}", a.item_type).into(),
                );
            }
        }
        if !same(value, &theirs["value"]) {
            return Err(format!("{key:?} = {value:?}; gguf-py read {}", theirs["value"]).into());
        }
    }
    let tensors = side["tensors"].as_array().ok_or("no tensors")?;
    if tensors.len() != file.len() {
        return Err(format!("{} tensors; gguf-py read {}", file.len(), tensors.len()).into());
    }
    for (i, (t, theirs)) in file.tensors().iter().zip(tensors).enumerate() {
        let shape: Vec<u64> = theirs["shape"]
            .as_array()
            .ok_or("no shape")?
            .iter()
            .filter_map(Json::as_u64)
            .collect();
        if theirs["name"] != t.name
            || theirs["type"] != t.ggml_type.name()
            || shape != t.shape
            || theirs["offset"].as_u64() != Some(h.data_offset + t.offset)
            || theirs["n_bytes"].as_u64() != Some(t.n_bytes)
        {
            return Err(format!("tensor {i}: {t:?}; gguf-py read {theirs}").into());
        }
        if tensor_testkit::sha256_hex(file.stored(i)) != theirs["raw_sha256"].as_str().unwrap_or("")
        {
            return Err(format!("{}: the stored bytes differ", t.name).into());
        }
        if let Some(expected) = theirs["float32_sha256"].as_str() {
            let mut values = vec![0f32; usize::try_from(t.elements())?];
            file.dequantize_into(i, &mut values)?;
            let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            if tensor_testkit::sha256_hex(&le) != expected {
                let ours = &values[..values.len().min(8)];
                return Err(format!(
                    "{} ({}): dequantized values differ from gguf-py's; ours begin {ours:?}",
                    t.name, t.ggml_type
                )
                .into());
            }
            if !t.ggml_type.is_quantized() {
                continue;
            }
            // The container reads a quantized tensor as the same float32 values.
            let mut dst = vec![0u8; le.len()];
            file.read_into(i, &mut dst)?;
            if dst
                .chunks_exact(4)
                .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
                .ne(values.iter().map(|v| v.to_bits()))
            {
                return Err(format!("{}: read_into differs from dequantize_into", t.name).into());
            }
        }
    }
    Ok(())
}

/// Our writer, given what the file holds in its order, writes gguf-py's bytes.
fn rewrite(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let file = Gguf::open(&bytes)?;
    let mut w = Writer::new();
    if file.header().byte_order == ByteOrder::Big {
        w.big_endian();
    }
    for (k, v) in file.metadata() {
        w.metadata(k.clone(), v.clone());
    }
    for (i, t) in file.tensors().iter().enumerate() {
        match file.view(i)? {
            Some(view) => {
                w.dense(
                    t.name,
                    &t.shape,
                    view.dtype(),
                    view.to_le_bytes().into_owned(),
                )?;
            }
            None => {
                w.quantized(t.name, &t.shape, t.ggml_type, file.stored(i));
            }
        }
    }
    let again = w.to_vec()?;
    if again != bytes {
        let at = again.iter().zip(&bytes).position(|(a, b)| a != b);
        return Err(format!(
            "our bytes ({}) differ from gguf-py's ({}) first at {at:?}",
            again.len(),
            bytes.len()
        )
        .into());
    }
    Ok(())
}

fn malformed(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let expected = side["kind"].as_str().ok_or("no kind")?;
    if expected == "unknown format" {
        return if GgufFormat::recognise(&bytes) {
            Err("recognised as GGUF".into())
        } else {
            Ok(())
        };
    }
    match Gguf::open(&bytes) {
        Ok(_) => Err(format!("opened; expected {expected}").into()),
        Err(e) => {
            let kind = format!("{:?}", e.kind());
            if kind == expected {
                Ok(())
            } else {
                Err(format!("{kind} ({e}); expected {expected}").into())
            }
        }
    }
}

/// A remote reader holding only what `header_ranges` asked for lists the same tensors, in
/// at most three requests (the first read included).
fn remote_header(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let limits = tensor_core::Limits::default();
    // A small first read, so that the header takes more than one.
    let held = tensor_testkit::Prefix::read_header(&bytes, 40, 3, |held| {
        GgufFormat::header_ranges(held, &limits)
    })?;
    let header = tensor_gguf::Header::parse(
        &bytes[..held as usize],
        bytes.len() as u64,
        &ReadOptions::default(),
    )?;
    if header.tensors != Gguf::open(&bytes)?.tensors() {
        return Err("the remote header lists other tensors".into());
    }
    Ok(())
}

fn round_trip_trials() -> Vec<Trial> {
    vec![
        Trial::test("round_trip::every_dense_type_both_byte_orders", || {
            for big in [false, true] {
                let mut w = Writer::new();
                if big {
                    w.big_endian();
                }
                w.metadata("general.architecture", Value::String("x".into()));
                let types = [
                    (GgmlType::F32, 4),
                    (GgmlType::F16, 2),
                    (GgmlType::BF16, 2),
                    (GgmlType::F64, 8),
                    (GgmlType::I8, 1),
                    (GgmlType::I16, 2),
                    (GgmlType::I32, 4),
                    (GgmlType::I64, 8),
                ];
                let data: Vec<Vec<u8>> = types
                    .iter()
                    .map(|(_, w)| (0..6 * w).map(|b| b as u8).collect())
                    .collect();
                for ((t, _), d) in types.iter().zip(&data) {
                    w.dense(t.name(), &[2, 3], t.dense_dtype().unwrap(), d.as_slice())?;
                }
                let bytes = w.to_vec()?;
                let file = Gguf::open(&bytes)?;
                for (i, d) in data.iter().enumerate() {
                    let view = file.view(i)?.ok_or("not a view")?;
                    if view.to_le_bytes().as_ref() != d.as_slice() {
                        return Err(
                            format!("{}: the elements changed (big: {big})", types[i].0).into()
                        );
                    }
                }
            }
            Ok(())
        }),
        Trial::test("round_trip::big_endian_bf16_is_stored_big_endian", || {
            // NaN, -0, +Inf, -Inf and 1.0 as bfloat16 words: the bytes in a big-endian file
            // are the words big-endian (as gguf-py's endian converter swaps them), and they
            // read back as the same values.
            let words: [u16; 5] = [0x7FC1, 0x8000, 0x7F80, 0xFF80, 0x3F80];
            let le: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let be: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
            let mut w = Writer::new();
            w.big_endian();
            w.dense("b", &[5], tensor_dtype::Dtype::Bfloat16, le.as_slice())?;
            let bytes = w.to_vec()?;
            let file = Gguf::open(&bytes)?;
            assert_eq!(file.stored(0), be.as_slice(), "stored big-endian");
            let view = file.view(0)?.ok_or("not a view")?;
            assert_eq!(
                view.to_le_bytes().as_ref(),
                le.as_slice(),
                "read in the file's order"
            );
            Ok(())
        }),
        Trial::test("round_trip::writer_refusals", || {
            let mut w = Writer::new();
            w.quantized("q", &[2, 48], GgmlType::Q8_0, vec![0u8; 2 * 48]);
            let e = w.to_vec().expect_err("48 is not whole blocks of 32");
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            let mut w = Writer::new();
            w.metadata("k", Value::U8(1)).metadata("k", Value::U8(2));
            assert!(w.to_vec().is_err(), "a repeated key is refused");
            let mut w = Writer::new();
            w.dense("t", &[4], tensor_dtype::Dtype::Float32, vec![0u8; 12])?;
            assert!(w.to_vec().is_err(), "too few bytes are refused");
            Ok(())
        }),
    ]
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let files = tensor_testkit::files_with_extension(&dir(), "gguf");
    assert!(files.len() >= 10, "the gguf-py files are missing");
    for path in files {
        let stem = tensor_testkit::stem(&path);
        let p = path.clone();
        trials.push(Trial::test(format!("reference::{stem}"), move || {
            fixture(&p)
        }));
        if stem != "v2" {
            let p = path.clone();
            trials.push(Trial::test(format!("rewrite::{stem}"), move || rewrite(&p)));
        }
        trials.push(Trial::test(format!("remote_header::{stem}"), move || {
            remote_header(&path)
        }));
    }
    for path in tensor_testkit::files_with_extension(&dir().join("malformed"), "gguf") {
        let stem = tensor_testkit::stem(&path);
        trials.push(Trial::test(format!("malformed::{stem}"), move || {
            malformed(&path)
        }));
    }
    trials.extend(round_trip_trials());
    libtest_mimic::run(&args, trials).exit();
}
