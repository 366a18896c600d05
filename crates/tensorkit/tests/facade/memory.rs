//! Memory is bounded on hostile input: reading any file of the reference's `bad/` sets, and
//! every tensor in it, allocates at most a small multiple of the file's size plus the limits
//! the reader was given. The global allocator is capped before each file; an allocation past
//! the cap aborts this test binary, naming the file on stderr first.

use cap::Cap;
use std::alloc::System;
use std::path::{Path, PathBuf};
use tensorkit::Limits;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// What the readers may decode in total, and what they are told.
const LIMIT: u64 = 8 << 20;

fn limits() -> Limits {
    Limits::default()
        .with_max_total_bytes(LIMIT)
        .with_max_header_bytes(1 << 20)
}

/// The refused files of `FORMAT` or `FORMAT/SUBFOLDER` of the conformance suite.
fn bad_files(suite: &str) -> Vec<PathBuf> {
    let (format, sub) = suite.split_once('/').unwrap_or((suite, ""));
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(tensor_testkit::conformance(format).join(sub).join("bad"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e != "json"));
    files.sort();
    files
}

/// Runs `read` on `bytes` under a cap of 4× their size plus the limits plus 1 MiB for the
/// reader's own bookkeeping; returns whether the reader reported an error.
fn capped(label: &str, bytes: &[u8], read: impl FnOnce(&[u8]) -> bool) -> bool {
    let allowance = 4 * bytes.len() + LIMIT as usize + (1 << 20);
    eprintln!("{label} (cap +{allowance} bytes)");
    ALLOCATOR
        .set_limit(ALLOCATOR.allocated() + allowance)
        .expect("the cap is above what is allocated");
    let failed = read(bytes);
    ALLOCATOR.set_limit(usize::MAX).expect("lifting the cap");
    failed
}

fn capped_file(path: &Path, read: impl FnOnce(&[u8]) -> bool) -> bool {
    let bytes = std::fs::read(path).expect("fixture readable");
    capped(&path.display().to_string(), &bytes, read)
}

/// One test only: the cap is process-wide, so nothing may run beside it (every other test
/// holds [`crate::running`] while it runs).
#[test]
fn reading_bad_files_stays_within_a_small_multiple_of_their_size() {
    let _alone = crate::alone();
    let mut checked = 0;
    for path in bad_files("bintensors") {
        capped_file(&path, |b| {
            let options = tensorkit::bintensors::ReadOptions::default().limits(limits());
            match tensorkit::bintensors::BinTensors::open_with(b, &options) {
                Ok(file) => file.tensors().for_each(|t| drop(t.view.to_le_bytes())),
                Err(_) => return true,
            }
            false
        });
        checked += 1;
    }
    for path in bad_files("ztensor")
        .into_iter()
        .chain(bad_files("ztensor/v2"))
    {
        capped_file(&path, |b| {
            let options = tensorkit::ztensor::ReadOptions::default().limits(limits());
            let Ok(file) = tensorkit::ztensor::AnyZTensor::open_with(b, &options) else {
                return true;
            };
            let mut failed = file.verify_all().is_err();
            for i in 0..file.len() {
                failed |= file.read(i).is_err();
            }
            failed
        });
        checked += 1;
    }
    for path in bad_files("tensogram") {
        capped_file(&path, |b| {
            let opts = tensorkit::frame::DecodeOptions {
                verify_hash: true,
                ..tensorkit::frame::DecodeOptions::default()
            };
            let failed = tensorkit::frame::decode(b, opts, &limits()).is_err();
            let report = tensorkit::frame::validate(
                b,
                tensorkit::frame::ValidateOptions {
                    level: tensorkit::frame::Level::Full,
                    canonical: true,
                },
                &limits(),
            );
            failed || !report.is_ok()
        });
        checked += 1;
    }
    for path in bad_files("stdlib") {
        capped_file(&path, |b| {
            tensorkit::stdlib_meta::MetaDataRef::open_with(b, &limits()).is_err()
        });
        checked += 1;
    }
    assert!(checked > 50, "only {checked} bad files found");

    // A tiny zTensor 0.1 file whose index size claims 2^60 bytes.
    let mut lie = Vec::new();
    lie.extend_from_slice(b"ZTEN0001");
    lie.extend_from_slice(&[0u8; 8]);
    lie.extend_from_slice(&(1u64 << 60).to_le_bytes());
    let failed = capped("a 2^60-byte index claim", &lie, |b| {
        tensorkit::ztensor::AnyZTensor::open_with(
            b,
            &tensorkit::ztensor::ReadOptions::default().limits(limits()),
        )
        .is_err()
    });
    assert!(failed);
}

/// An edit holds no more than a header in memory, whether the header is written in place or
/// the file is copied (the tensors' bytes moved by the kernel, or, for Tensogram, written
/// from the file's mapping as they are hashed): a 64 MiB tensor in every format that edits,
/// edited under a cap of 4 MiB over what the test already holds.
#[test]
#[cfg_attr(
    feature = "paranoid",
    ignore = "the paranoid feature keeps what a writer writes, to read it back"
)]
fn edits_allocate_no_more_than_a_header() {
    use tensorkit::edit::{EditOptions, Edits, Method};
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let data = vec![7u8; 64 << 20];
    let big = tensorkit::TensorView::new(
        &data,
        tensorkit::Dtype::Float32,
        &[16 << 20],
        tensorkit::ByteOrder::Little,
    )
    .unwrap();
    let set = |value: &str| Edits {
        set: vec![("note".into(), serde_json::Value::from(value), None)],
        ..Edits::default()
    };
    for (format, ext) in [
        (tensorkit::Format::SAFETENSORS, "safetensors"),
        (tensorkit::Format::BINTENSORS, "bt"),
        (tensorkit::Format::ZTENSOR_2, "zt"),
        (tensorkit::Format::TENSOGRAM, "tgm"),
        (tensorkit::Format::GGUF, "gguf"),
    ] {
        let path = dir.path().join(format!("big.{ext}"));
        tensorkit::save_tensors(
            &path,
            [("w", big.clone())],
            &tensorkit::WriteOptions::for_format(format),
        )
        .unwrap();
        for value in ["x".repeat(20_000), "y".into()] {
            let allowance = 4 << 20;
            eprintln!(
                "edit of {ext}, a {}-byte value (cap +{allowance} bytes)",
                value.len()
            );
            ALLOCATOR
                .set_limit(ALLOCATOR.allocated() + allowance)
                .expect("the cap is above what is allocated");
            let report = tensorkit::edit(&path, &set(&value), &EditOptions::default());
            ALLOCATOR.set_limit(usize::MAX).expect("no cap");
            let report = report.unwrap();
            assert_ne!(report.method, Method::Unchanged, "{ext}");
        }
        let file = tensorkit::open(&path).unwrap();
        assert_eq!(file.metadata().unwrap()["note"], "y", "{ext}");
    }
}

/// Converting a compressed tensor of 64 MiB to every format that writes allocates a few
/// runs, never the tensor: the source decodes in bounded runs and every writer streams them
/// (zTensor 0.1's writer held each tensor whole before `Writer::add_streamed`; Tensogram's
/// took each object whole before `ObjectSource::runs`). A NaN in every thousand elements
/// makes Tensogram output find them run by run and write their masks.
#[test]
#[cfg_attr(
    feature = "paranoid",
    ignore = "the paranoid feature keeps what a writer writes, to read it back"
)]
fn conversions_of_compressed_tensors_stream() {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f32> = (0..16u32 << 20)
        .map(|i| {
            if i % 1000 == 7 {
                f32::NAN
            } else {
                (i % 1000) as f32
            }
        })
        .collect();
    let big = tensorkit::Tensor::from_elements(&[16 << 20], &values).unwrap();
    drop(values);
    let src = dir.path().join("big.tgm");
    let mut zstd = tensorkit::WriteOptions::for_format(tensorkit::Format::TENSOGRAM);
    zstd.pipeline = tensorkit::pipeline_spec::PipelineSpec::parse("zstd:1").unwrap();
    tensorkit::save_tensors(&src, [("w", big.view())], &zstd).unwrap();
    drop(big);
    let file = tensorkit::open(&src).unwrap();
    for format in tensorkit::Format::writable_any() {
        let out = dir.path().join(format!("out.{}", format.id()));
        let allowance = 24 << 20;
        eprintln!("conversion to {} (cap +{allowance} bytes)", format.id());
        ALLOCATOR
            .set_limit(ALLOCATOR.allocated() + allowance)
            .expect("the cap is above what is allocated");
        let saved = tensorkit::save(&out, &file, &tensorkit::WriteOptions::for_format(format));
        ALLOCATOR.set_limit(usize::MAX).expect("no cap");
        saved.unwrap();
        let back = tensorkit::open(&out).unwrap();
        assert_eq!(
            back.get("w").unwrap().byte_len(),
            64 << 20,
            "{}",
            format.id()
        );
        if format == tensorkit::Format::TENSOGRAM {
            // Every NaN back where it was, every other value as it was.
            let (a, b) = (file.get("w").unwrap(), back.get("w").unwrap());
            let (a, b) = (a.to_tensor().unwrap(), b.to_tensor().unwrap());
            assert_eq!(a.data(), b.data());
        }
    }
}

/// CF unpacking (`WriteOptions::unpack`) of a compressed packed variable of 64 MiB (256 MiB
/// unpacked, as float64) allocates runs, never the variable, whatever the output: each run
/// of packed integers is unpacked as it goes by.
#[test]
#[cfg_attr(
    feature = "paranoid",
    ignore = "the paranoid feature keeps what a writer writes, to read it back"
)]
fn unpacking_streams() {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let n = 32u32 << 20;
    let values: Vec<i16> = (0..n).map(|i| (i % 3000) as i16 - 1).collect();
    let packed = tensorkit::Tensor::from_elements(&[u64::from(n)], &values).unwrap();
    drop(values);
    let src = dir.path().join("packed.tgm");
    let mut zstd = tensorkit::WriteOptions::for_format(tensorkit::Format::TENSOGRAM);
    zstd.pipeline = tensorkit::pipeline_spec::PipelineSpec::parse("zstd:1").unwrap();
    zstd.attributes = Some(
        serde_json::json!({"v": {"scale_factor": 0.5, "add_offset": 10.0, "_FillValue": -1}})
            .as_object()
            .unwrap()
            .clone(),
    );
    tensorkit::save_tensors(&src, [("v", packed.view())], &zstd).unwrap();
    drop(packed);
    let file = tensorkit::open(&src).unwrap();
    for format in [
        tensorkit::Format::TENSOGRAM,
        tensorkit::Format::NETCDF,
        tensorkit::Format::SAFETENSORS,
    ] {
        let out = dir.path().join(format!("out.{}", format.id()));
        let mut opts = tensorkit::WriteOptions::for_format(format);
        opts.unpack = true;
        let allowance = 24 << 20;
        eprintln!("unpacked to {} (cap +{allowance} bytes)", format.id());
        ALLOCATOR
            .set_limit(ALLOCATOR.allocated() + allowance)
            .expect("the cap is above what is allocated");
        let saved = tensorkit::save(&out, &file, &opts);
        ALLOCATOR.set_limit(usize::MAX).expect("no cap");
        saved.unwrap();
        let back = tensorkit::open(&out).unwrap();
        let v = back.get("v").unwrap();
        assert_eq!(v.dtype(), tensorkit::Dtype::Float64, "{}", format.id());
        let t = v.to_tensor().unwrap();
        let got = t.view().typed::<f64>().unwrap();
        assert!(got[0].is_nan(), "{}: the fill value", format.id());
        assert_eq!(got[1], 10.0, "{}", format.id());
        assert_eq!(got[2999], 10.0 + 0.5 * 2998.0, "{}", format.id());
        assert!(got[3000].is_nan(), "{}", format.id());
    }
}

/// The limits an edit is given are those it reads the file with.
#[test]
fn an_edit_reads_with_the_limits_it_is_given() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let w = tensorkit::TensorView::new(
        &[0u8; 16],
        tensorkit::Dtype::Float32,
        &[4],
        tensorkit::ByteOrder::Little,
    )
    .unwrap();
    tensorkit::save_tensors(&path, [("w", w)], &tensorkit::WriteOptions::default()).unwrap();
    let edits = tensorkit::Edits {
        rename: vec![("w".into(), "weight".into())],
        ..tensorkit::Edits::default()
    };
    let tight = tensorkit::EditOptions {
        limits: Limits::default().with_max_header_bytes(8),
        ..tensorkit::EditOptions::default()
    };
    let before = std::fs::read(&path).unwrap();
    assert!(tensorkit::edit(&path, &edits, &tight).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    tensorkit::edit(&path, &edits, &tensorkit::EditOptions::default()).unwrap();
}
