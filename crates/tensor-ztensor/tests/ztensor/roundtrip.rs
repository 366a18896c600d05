//! Round trips through the writer, and corruption that must always be caught.

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, Tensor};
use tensor_ztensor::v0_1::{TensorOptions, WriteEncoding, ZTensor, serialize};
use tensor_ztensor::{ChecksumKind, Verify};

const DTYPES: [Dtype; 13] = [
    Dtype::Float64,
    Dtype::Float32,
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Int64,
    Dtype::Int32,
    Dtype::Int16,
    Dtype::Int8,
    Dtype::Uint64,
    Dtype::Uint32,
    Dtype::Uint16,
    Dtype::Uint8,
    Dtype::Bool,
];

fn tensor() -> impl Strategy<Value = Tensor> {
    (
        prop::sample::select(DTYPES.to_vec()),
        prop::collection::vec(0u64..5, 0..4),
        any::<u64>(),
    )
        .prop_map(|(d, shape, seed)| {
            let n = tensor_dtype::shape::byte_len(d, &shape).unwrap() as usize;
            let mut data: Vec<u8> = (0..n)
                .map(|i| (seed.wrapping_mul(i as u64 + 7) >> 11) as u8)
                .collect();
            if d == Dtype::Bool {
                for b in &mut data {
                    *b &= 1;
                }
            }
            Tensor::new(data, d, &shape, ByteOrder::Little).unwrap()
        })
}

fn options() -> impl Strategy<Value = TensorOptions> {
    (any::<bool>(), 0u8..3, 0u8..3).prop_map(|(zstd, c, o)| TensorOptions {
        encoding: if zstd {
            WriteEncoding::Zstd(1)
        } else {
            WriteEncoding::Raw
        },
        checksum: [
            ChecksumKind::None,
            ChecksumKind::Crc32c,
            ChecksumKind::Sha256,
        ][c as usize],
        byte_order: [None, Some(ByteOrder::Little), Some(ByteOrder::Big)][o as usize],
        custom: vec![("note".into(), vec![0x61, 0x78])],
    })
}

fn write_then_read() -> Result<(), Failed> {
    TestRunner::new(Config::with_cases(200))
        .run(
            &prop::collection::vec((tensor(), options()), 0..6),
            |items| {
                let names: Vec<String> = (0..items.len()).map(|i| format!("t{i}")).collect();
                let list: Vec<_> = items
                    .iter()
                    .zip(&names)
                    .map(|((t, o), n)| (n.as_str(), t.view(), o.clone()))
                    .collect();
                let bytes = serialize(list.iter().cloned()).unwrap();
                let file = ZTensor::open_with(
                    &bytes,
                    &tensor_ztensor::ReadOptions::default().verify(Verify::OnOpen),
                )
                .unwrap();
                for (i, (t, _)) in items.iter().enumerate() {
                    let native = t.clone().into_byte_order(ByteOrder::NATIVE);
                    prop_assert_eq!(&file.read(i).unwrap().into_tensor().unwrap(), &native);
                    let mut buf = vec![0u8; t.data().len()];
                    file.read_into(i, &mut buf).unwrap();
                    prop_assert_eq!(&buf[..], native.data());
                    prop_assert_eq!(file.entries()[i].offset % 64, 0);
                    prop_assert_eq!(file.entries()[i].custom[0].raw, &[0x61, 0x78][..]);
                }
                Ok(())
            },
        )
        .map_err(|e| e.to_string().into())
}

/// Every single-bit flip of a small checksummed file is reported, never accepted as data.
fn every_bit_flip_is_caught() -> Result<(), Failed> {
    let t = Tensor::from_elements(
        &[3, 4],
        &(0..12).map(|i| i as f32 * 0.5).collect::<Vec<_>>(),
    )?;
    let u = Tensor::from_elements(&[5], &[1u16, 2, 3, 4, 5])?;
    let crc = TensorOptions {
        checksum: ChecksumKind::Crc32c,
        ..TensorOptions::default()
    };
    let zstd = TensorOptions {
        checksum: ChecksumKind::Crc32c,
        encoding: WriteEncoding::Zstd(3),
        ..TensorOptions::default()
    };
    let bytes = serialize([("t", t.view(), crc), ("u", u.view(), zstd)])?;
    let original: Vec<Tensor> = {
        let f = ZTensor::open(&bytes)?;
        (0..2)
            .map(|i| f.read(i).and_then(tensor_ztensor::Decoded::into_tensor))
            .collect::<Result<_, _>>()?
    };
    for bit in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        let outcome = ZTensor::open(&b).and_then(|f| {
            (0..f.entries().len())
                .map(|i| f.read(i).and_then(tensor_ztensor::Decoded::into_tensor))
                .collect::<Result<Vec<_>, _>>()
        });
        // A flip inside padding changes nothing a reader returns; anything else must fail
        // or (for flips in unused bytes) return exactly the original tensors.
        if let Ok(got) = outcome
            && got != original
        {
            return Err(format!("bit {bit} changed the data without an error").into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("proptest::write_then_read", write_then_read),
        Trial::test(
            "corruption::every_bit_flip_is_caught",
            every_bit_flip_is_caught,
        ),
        Trial::test("corruption::every_cut_is_refused", every_cut_is_refused),
        Trial::test("v2::reserved_footer_field", v2_reserved_footer_field),
        Trial::test("sparse::both_spellings", sparse_spellings),
        Trial::test("v2::write_then_read", v2_write_then_read),
        Trial::test("v2::a_large_manifest_reads_as_written", v2_large_manifest),
        Trial::test(
            "v2::seekable_ranges",
            crate::conformance::v2_seekable_ranges,
        ),
        Trial::test("v2::every_bit_flip_is_caught", v2_every_bit_flip_is_caught),
        Trial::test(
            "v2::zstd_digests_are_checked_both_ways",
            v2_zstd_digests_are_checked_both_ways,
        ),
        Trial::test(
            "v2::canonical_rewrite_is_byte_identical",
            crate::conformance::v2_canonical_rewrite,
        ),
        Trial::test("window::reads_one_tensor_from_its_own_bytes", windows),
    ]
}

/// A window over one tensor's bytes reads it as the whole file does (checksums included:
/// damage inside the window is caught) and refuses every other tensor and short windows.
fn windows() -> Result<(), Failed> {
    let tensors: Vec<Tensor> = (0..3u8)
        .map(|k| {
            let data: Vec<u8> = (0..4096u32).map(|i| (i as u8) ^ k).collect();
            Tensor::new(data, Dtype::Uint32, &[1024], ByteOrder::Little).unwrap()
        })
        .collect();
    let v0_1 = serialize(tensors.iter().enumerate().map(|(i, t)| {
        let options = TensorOptions {
            encoding: if i == 1 {
                WriteEncoding::Zstd(3)
            } else {
                WriteEncoding::Raw
            },
            checksum: ChecksumKind::Crc32c,
            byte_order: None,
            custom: Vec::new(),
        };
        (format!("t{i}"), t.view(), options)
    }))?;
    let v2 = tensor_ztensor::v2::serialize(
        tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("t{i}"), t.view(), None)),
        None,
    )?;
    for file in [v0_1, v2] {
        let options = tensor_ztensor::ReadOptions::default().verify(Verify::OnRead);
        let any = tensor_ztensor::AnyZTensor::open_with(&file, &options)?;
        let span = |i: usize| -> (u64, u64) {
            match &any {
                tensor_ztensor::AnyZTensor::V0_1(f) => {
                    let e = &f.entries()[i];
                    (e.offset, e.offset + e.size)
                }
                tensor_ztensor::AnyZTensor::Later(c) => {
                    let p = &c.objects()[i].parts[0];
                    (p.offset, p.offset + p.length)
                }
            }
        };
        for (i, want) in tensors.iter().enumerate() {
            let (start, end) = span(i);
            let mut own = file[start as usize..end as usize].to_vec();
            let w = any.window(i, &own, start)?;
            let got = w.read(i)?.into_tensor()?;
            if got.data() != want.data() {
                return Err(format!(
                    "{:?}: tensor {i} differs read through a window",
                    any.generation()
                )
                .into());
            }
            let other = (i + 1) % 3;
            if w.read(other).is_ok() {
                return Err(format!("tensor {other} read from tensor {i}'s window").into());
            }
            if any.window(i, &own[1..], start + 1).is_ok() {
                return Err("a window short of the tensor was accepted".into());
            }
            let mid = own.len() / 2;
            own[mid] ^= 1;
            let damaged = any.window(i, &own, start)?.read(i);
            if damaged.is_ok() {
                return Err(format!("damage in tensor {i}'s window went unnoticed").into());
            }
        }
    }
    Ok(())
}

/// Builds a file with one sparse tensor, given its layout keys and blob.
fn sparse_file(layout_keys: &[(&str, &str)], blob: &[u8], shape: &[u64]) -> Vec<u8> {
    let mut out = b"ZTEN0001".to_vec();
    out.resize(64, 0);
    out.extend_from_slice(blob);
    let mut e = tensor_core::cbor::Encoder::new();
    e.array(1);
    e.map(6 + layout_keys.len());
    e.text("name");
    e.text("s");
    e.text("offset");
    e.uint(64);
    e.text("size");
    e.uint(blob.len() as u64);
    e.text("dtype");
    e.text("float32");
    e.text("shape");
    e.array(shape.len());
    for &d in shape {
        e.uint(d);
    }
    e.text("encoding");
    e.text("raw");
    for (k, v) in layout_keys {
        e.text(k);
        e.text(v);
    }
    out.extend_from_slice(&e.out);
    out.extend_from_slice(&(e.out.len() as u64).to_le_bytes());
    out
}

/// Both spellings of sparse layouts read to the same dense tensor; malformed components fail.
fn sparse_spellings() -> Result<(), Failed> {
    // A 2x3 matrix with 5.0 at (0, 2) and 7.0 at (1, 0).
    let csr: Vec<u8> = [0u64, 1, 2, 2, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .chain([5.0f32, 7.0].iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let coo: Vec<u8> = [(0u64, 2u64, 5.0f32), (1, 0, 7.0)]
        .iter()
        .flat_map(|(r, c, v)| {
            r.to_le_bytes()
                .into_iter()
                .chain(c.to_le_bytes())
                .chain(v.to_le_bytes())
        })
        .collect();
    let want = Tensor::from_elements(&[2, 3], &[0.0f32, 0.0, 5.0, 7.0, 0.0, 0.0])?;
    for (keys, blob) in [
        (vec![("layout", "sparsecsr")], &csr),
        (vec![("layout", "sparse"), ("sparse_format", "csr")], &csr),
        (vec![("layout", "sparsecoo")], &coo),
        (vec![("sparse_format", "coo"), ("layout", "sparse")], &coo),
    ] {
        let bytes = sparse_file(&keys, blob, &[2, 3]);
        let f = ZTensor::open(&bytes)?;
        let got = f.read(0)?.into_tensor()?;
        if got != want {
            return Err(format!("{keys:?}: {got:?}").into());
        }
    }
    let mut bad_csr = csr.clone();
    bad_csr[8] = 9; // indptr[1] = 9 > nnz
    for (keys, blob) in [
        (vec![("layout", "sparsecsr")], &bad_csr),
        (vec![("layout", "sparse"), ("sparse_format", "bsr")], &csr),
    ] {
        let bytes = sparse_file(&keys, blob, &[2, 3]);
        if ZTensor::open(&bytes)?.read(0).is_ok() {
            return Err(format!("{keys:?}: a malformed sparse tensor was accepted").into());
        }
    }
    Ok(())
}

/// Canonical zTensor 2 files we write read back through the generic opener, tensor for
/// tensor, including logical types (bool, float8) and attributes.
fn v2_write_then_read() -> Result<(), Failed> {
    TestRunner::new(Config::with_cases(100))
        .run(&prop::collection::vec(tensor(), 0..5), |items| {
            let names: Vec<String> = (0..items.len()).map(|i| format!("t{i}")).collect();
            let attrs = Some(tensor_core::cbor::Value::Map(vec![(
                tensor_core::cbor::Value::Text("k".into()),
                tensor_core::cbor::Value::Uint(1),
            )]));
            let list: Vec<_> = items
                .iter()
                .zip(&names)
                .map(|(t, n)| (n.as_str(), t.view(), attrs.clone()))
                .collect();
            let mut bytes = Vec::new();
            tensor_ztensor::v2::write(&mut bytes, list, attrs.clone()).unwrap();
            let f = tensor_ztensor::AnyZTensor::open(&bytes).unwrap();
            prop_assert_eq!(f.generation(), tensor_ztensor::Generation::V2);
            prop_assert_eq!(f.len(), items.len());
            for (i, t) in items.iter().enumerate() {
                let got = f
                    .read(f.position(&names[i]).unwrap())
                    .unwrap()
                    .into_tensor()
                    .unwrap();
                prop_assert_eq!(got, t.clone().into_byte_order(ByteOrder::NATIVE));
            }
            prop_assert!(f.verify_all().unwrap() >= items.len());
            Ok(())
        })
        .map_err(|e| e.to_string().into())
}

/// A manifest large enough to be read on two cores: every object as written, in order, with
/// attributes whose text reads like objects of their own.
fn v2_large_manifest() -> Result<(), Failed> {
    let n = 3000u32;
    let tensors: Vec<(String, Tensor)> = (0..n)
        .map(|i| {
            let t = Tensor::from_elements(&[2], &[i, i ^ 0x5A5A]).unwrap();
            (format!("{}.{i}", "w".repeat(1 + i as usize % 40)), t)
        })
        .collect();
    let trap = tensor_core::cbor::Value::Map(vec![(
        tensor_core::cbor::Value::Text("eparts\u{a1}dshape".into()),
        tensor_core::cbor::Value::Text("qlayer.1.weight".into()),
    )]);
    let bytes = tensor_ztensor::v2::serialize(
        tensors
            .iter()
            .map(|(name, t)| (name.clone(), t.view(), Some(trap.clone()))),
        None,
    )?;
    for _ in 0..8 {
        let f = tensor_ztensor::AnyZTensor::open(&bytes)?;
        let tensor_ztensor::AnyZTensor::Later(c) = &f else {
            return Err("not read as zTensor 2".into());
        };
        let mut names: Vec<&str> = tensors.iter().map(|(name, _)| name.as_str()).collect();
        // The manifest lists objects in its deterministic key order.
        names.sort_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)));
        let listed: Vec<&str> = c.objects().iter().map(|o| &*o.name).collect();
        if listed != names {
            return Err("the objects differ from those written".into());
        }
        for (name, t) in tensors.iter().step_by(97) {
            let got = f.read(f.position(name).ok_or("a tensor is missing")?)?;
            if got.into_tensor()? != t.clone().into_byte_order(ByteOrder::NATIVE) {
                return Err(format!("{name} differs").into());
            }
        }
        if c.objects()
            .iter()
            .any(|o| o.attributes.as_ref() != Some(&trap))
        {
            return Err("an object's attributes differ".into());
        }
    }
    Ok(())
}

/// Every single-bit flip of a small zTensor 2 file is caught (magic, footer, manifest hash,
/// part digests) or leaves the tensors exactly as they were.
fn v2_every_bit_flip_is_caught() -> Result<(), Failed> {
    let t = Tensor::from_elements(&[3], &[1.5f32, -2.0, 4.25])?;
    let mut bytes = Vec::new();
    tensor_ztensor::v2::write(&mut bytes, [("t", t.view(), None)], None)?;
    // Flip bits in the magic, the blob, the manifest and the footer (the zero padding in
    // between is checked too, but is mostly zeros; sample it).
    let interesting: Vec<usize> = (0..8)
        .chain(65_536..65_548)
        .chain(131_072..bytes.len())
        .chain([100, 4096, 70_000])
        .collect();
    for byte in interesting {
        for bit in 0..8 {
            let mut b = bytes.clone();
            b[byte] ^= 1 << bit;
            let outcome = tensor_ztensor::AnyZTensor::open(&b)
                .and_then(|f| f.read(0).and_then(tensor_ztensor::Decoded::into_tensor));
            if let Ok(got) = outcome
                && got != t
            {
                return Err(format!("byte {byte} bit {bit}: changed data accepted").into());
            }
        }
    }
    Ok(())
}

/// The digests of zTensor 2 parts stored as `zt.zstd-seekable/1` cover the decoded bytes:
/// they are checked whether a part is read whole or decoded in runs (`read_chunks`, which the
/// facade and the CLI use). The reference-written file reads the same both ways; with one
/// digest changed (and the manifest's hash in the footer made to match again) both refuse
/// that tensor and still read the other.
fn v2_zstd_digests_are_checked_both_ways() -> Result<(), Failed> {
    let path = tensor_testkit::conformance("ztensor").join("v2/v2_zstd_seekable.zt");
    let bytes = std::fs::read(&path)?;
    let runs = |f: &tensor_ztensor::AnyZTensor<'_>, i: usize| {
        let mut out = Vec::new();
        f.read_chunks(i, 1000, &mut |run| {
            out.extend_from_slice(run);
            Ok(())
        })
        .map(|_| out)
    };
    let f = tensor_ztensor::AnyZTensor::open(&bytes)?;
    for i in 0..f.len() {
        if runs(&f, i)? != f.read(i)?.data.as_ref() {
            return Err(format!("tensor {i}: runs and whole read differ").into());
        }
    }
    let (good, bad) = (&b"xxh3:359f32a95c127512"[..], &b"xxh3:359f32a95c127513"[..]);
    let at = bytes
        .windows(good.len())
        .position(|w| w == good)
        .ok_or("the fixture's digest of \"w\" is not where it was")?;
    let mut damaged = bytes.clone();
    damaged[at..at + bad.len()].copy_from_slice(bad);
    let footer = damaged.len() - 40;
    let offset = u64::from_le_bytes(damaged[footer..footer + 8].try_into()?) as usize;
    let length = u64::from_le_bytes(damaged[footer + 8..footer + 16].try_into()?) as usize;
    let hash = tensor_core::xxh3::xxh3_64(&damaged[offset..offset + length]);
    damaged[footer + 16..footer + 24].copy_from_slice(&hash.to_le_bytes());
    let f = tensor_ztensor::AnyZTensor::open(&damaged)?;
    let w = f.position("w").ok_or("no tensor w")?;
    for (how, outcome) in [
        ("whole", f.read(w).map(|d| d.data.to_vec())),
        ("in runs", runs(&f, w)),
    ] {
        match outcome {
            Err(e) if e.class() == Some(tensor_ztensor::Class::ChecksumMismatch) => {}
            other => return Err(format!("changed digest, read {how}: {other:?}").into()),
        }
    }
    let ids = f.position("ids").ok_or("no tensor ids")?;
    runs(&f, ids)?;
    Ok(())
}

/// A file cut short never reads as a sound file, in any generation: every prefix of every
/// reference-written file (up to 4 KiB of cut points each) fails to open or to read a tensor —
/// including cuts that end in a run of zeros, which a zTensor 0.1 reader could take for an
/// empty index.
fn every_cut_is_refused() -> Result<(), Failed> {
    let root = tensor_testkit::conformance("ztensor");
    let mut files = Vec::new();
    for generation in ["v0.1", "v1", "v2"] {
        files.extend(tensor_testkit::files_with_extension(
            &root.join(generation),
            "zt",
        ));
    }
    let mut cuts = 0;
    for f in files {
        let bytes = std::fs::read(&f)?;
        if bytes.len() > 1 << 20 {
            continue;
        }
        let step = (bytes.len() / 4096).max(1);
        for len in (0..bytes.len()).step_by(step) {
            let cut = &bytes[..len];
            // The bare magic and a zero length *is* the valid empty 0.1 file (the reference
            // writes and reads it): no reader can tell that prefix from it.
            if cut == b"ZTEN0001\0\0\0\0\0\0\0\0" {
                continue;
            }
            let sound = tensor_ztensor::AnyZTensor::open(cut).and_then(|z| {
                z.verify_all()?;
                for i in 0..z.len() {
                    z.read(i)?;
                }
                Ok(())
            });
            match sound {
                Ok(()) => {
                    return Err(format!("{} cut to {len} bytes reads as sound", f.display()).into());
                }
                // A cut zTensor 2 file is reported as cut short, not as a foreign one.
                Err(e)
                    if f.to_string_lossy().contains("/v2/")
                        && len >= 8
                        && tensor_core::Kinded::kind(&e) != tensor_core::ErrorKind::Truncated =>
                {
                    return Err(format!("{} cut to {len} bytes: {e}", f.display()).into());
                }
                Err(_) => {}
            }
            cuts += 1;
        }
    }
    if cuts < 1000 {
        return Err(format!("only {cuts} cuts tried").into());
    }
    Ok(())
}

/// A non-zero reserved field in the zTensor 2 footer: refused in strict mode, a warning
/// otherwise (the manifest hash does not cover the footer, so nothing else notices).
fn v2_reserved_footer_field() -> Result<(), Failed> {
    let t = Tensor::from_elements(&[2], &[1u8, 2])?;
    let mut bytes = Vec::new();
    tensor_ztensor::v2::write(&mut bytes, [("t", t.view(), None)], None)?;
    let at = bytes.len() - 40 + 28;
    if !tensor_ztensor::AnyZTensor::open(&bytes)?
        .warnings()
        .is_empty()
    {
        return Err("a clean file has warnings".into());
    }
    bytes[at] = 1;
    let lenient = tensor_ztensor::AnyZTensor::open(&bytes)?;
    if !lenient.warnings().iter().any(|w| w.contains("reserved")) {
        return Err("no warning about the reserved field".into());
    }
    let strict = tensor_ztensor::ReadOptions::default().strict(true);
    match tensor_ztensor::AnyZTensor::open_with(&bytes, &strict) {
        Err(e) if e.to_string().contains("reserved") => Ok(()),
        other => Err(format!("strict mode: {other:?}").into()),
    }
}
