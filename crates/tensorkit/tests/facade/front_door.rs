//! `tensorkit::open` reads every conformance file of every format the same way the format
//! readers do; views, decoding and decoding into buffers agree; `save` and `save_tensors`
//! write what opens again with the same tensors.

use std::path::PathBuf;
use tensorkit::{ByteOrder, Dtype, ErrorKind, Format, Kinded, ReadOptions, WriteOptions};

fn fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (format, dir, ext) in [
        ("safetensors", "", "safetensors"),
        ("bintensors", "", "bt"),
        ("ztensor", "v0.1", "zt"),
        ("ztensor", "v1", "zt"),
        ("ztensor", "v2", "zt"),
        ("tensogram", "", "tgm"),
    ] {
        files.extend(tensor_testkit::files_with_extension(
            &tensor_testkit::conformance(format).join(dir),
            ext,
        ));
    }
    assert!(files.len() > 100, "only {} fixtures", files.len());
    files
}

#[test]
fn every_fixture_opens_and_decodes_three_ways_alike() {
    let _running = crate::running();
    for path in fixtures() {
        let file = match tensorkit::open(&path) {
            Ok(f) => f,
            // Codecs this build does not have (blosc2, zfp, sz3).
            Err(e) if e.kind() == ErrorKind::Unsupported => continue,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(file.len(), file.tensors().len());
        for t in file.tensors() {
            let owned = t.to_tensor().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((owned.dtype(), owned.shape()), (t.dtype(), t.shape()));
            assert!(owned.byte_order().is_native());
            let mut buf = vec![0u8; usize::try_from(t.byte_len()).unwrap()];
            t.read_into(&mut buf).unwrap();
            assert_eq!(buf, owned.data(), "{} {}", path.display(), t.name());
            if let Ok(v) = t.view() {
                assert_eq!(v.to_tensor(), owned, "{} {}", path.display(), t.name());
            }
            assert_eq!(file.get(&t.name()).unwrap().shape(), t.shape());
        }
        let bytes = std::fs::read(&path).unwrap();
        let again = tensorkit::open_bytes(&bytes).unwrap();
        assert_eq!((again.format(), again.len()), (file.format(), file.len()));
    }
}

#[test]
fn a_missing_tensor_and_a_wrong_buffer_are_errors() {
    let _running = crate::running();
    let file =
        tensorkit::open(tensor_testkit::conformance("safetensors").join("scalar_f32.safetensors"))
            .unwrap();
    let e = file.get("no such tensor").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("no such tensor"), "{e}");
    let t = file.tensors().next().unwrap();
    let e = t.read_into(&mut [0u8; 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn encoded_tensors_say_why_they_have_no_view() {
    let _running = crate::running();
    let dir = tensor_testkit::conformance("tensogram");
    let compressed = tensor_testkit::files_with_extension(&dir, "tgm")
        .into_iter()
        .filter_map(|p| tensorkit::open(p).ok())
        .find_map(|f| {
            let t = f.tensors().find(|t| t.view().is_err())?;
            Some((t.view().unwrap_err().to_string(), t.to_tensor().is_ok()))
        })
        .expect("a compressed Tensogram fixture");
    assert!(compressed.0.contains("to_tensor()"), "{}", compressed.0);
    assert!(compressed.1);
}

#[test]
fn save_and_save_tensors_write_what_opens_again() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let src =
        tensorkit::open(tensor_testkit::conformance("safetensors").join("all_dtypes.safetensors"))
            .unwrap();
    for format in [Format::TENSOGRAM, Format::ZTENSOR_2, Format::SAFETENSORS] {
        let out = dir.path().join(format!("out.{}", format.extension()));
        tensorkit::save(&out, &src, &WriteOptions::for_format(format)).unwrap();
        let back = tensorkit::open(&out).unwrap();
        assert_eq!(back.format(), format);
        for t in src.tensors() {
            let b = back.get(&t.name()).unwrap();
            assert_eq!(
                b.to_tensor().unwrap(),
                t.to_tensor().unwrap(),
                "{format:?} {}",
                t.name()
            );
        }
    }
    let w = tensorkit::Tensor::from_elements(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0]).unwrap();
    let out = dir.path().join("w.safetensors");
    tensorkit::save_tensors(&out, [("w", w.view())], &WriteOptions::default()).unwrap();
    let back = tensorkit::open(&out).unwrap();
    assert_eq!(back.format(), Format::SAFETENSORS);
    assert_eq!(back.get("w").unwrap().view().unwrap().to_tensor(), w);
    let e = tensorkit::save_tensors(
        dir.path().join("w.unknown"),
        [("w", w.view())],
        &WriteOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn progress_follows_every_save_to_the_files_length() {
    use std::sync::{Arc, Mutex};
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<f32> = (0..100_000u32).map(|i| i as f32 * 0.5).collect();
    let w = tensorkit::Tensor::from_elements(&[250, 400], &values).unwrap();
    let m = tensorkit::Tensor::from_elements(&[3], &[1i8, 0, -1]).unwrap();
    let src = dir.path().join("src.safetensors");
    // Several metadata keys: the same file must give the same bytes every time.
    let metadata = (0..8)
        .map(|i| {
            (
                format!("key{i}"),
                serde_json::Value::from(format!("value {i}")),
            )
        })
        .collect();
    let with_metadata = WriteOptions {
        metadata: Some(metadata),
        ..WriteOptions::default()
    };
    tensorkit::save_tensors(&src, [("w", w.view()), ("m", m.view())], &with_metadata).unwrap();
    let src = tensorkit::open(&src).unwrap();
    for format in tensorkit::Format::writable_any() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let options = WriteOptions {
            progress: Some(tensorkit::Progress::new(move |n| {
                record.lock().unwrap().push(n);
            })),
            ..WriteOptions::for_format(format)
        };
        let with = dir.path().join(format!("with.{}", format.id()));
        let without = dir.path().join(format!("without.{}", format.id()));
        tensorkit::save(&with, &src, &options).unwrap();
        tensorkit::save(&without, &src, &WriteOptions::for_format(format)).unwrap();
        let (bytes, plain) = (
            std::fs::read(&with).unwrap(),
            std::fs::read(&without).unwrap(),
        );
        // Tensogram records when and under which UUID a message was written: only its
        // length repeats.
        if format == Format::TENSOGRAM {
            assert_eq!(bytes.len(), plain.len());
        } else {
            assert!(
                bytes == plain,
                "{format:?}: the hook changed what was written"
            );
        }
        let seen = seen.lock().unwrap();
        assert!(seen.len() > 1, "{format:?}: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{format:?}: {seen:?}");
        assert_eq!(seen.last().copied(), Some(bytes.len() as u64), "{format:?}");
    }
}

#[test]
fn repeated_names_are_refused_or_renamed_as_the_options_say() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let w = tensorkit::Tensor::from_elements(&[2], &[1.0f32, 2.0]).unwrap();
    let v = tensorkit::Tensor::from_elements(&[2], &[3.0f32, 4.0]).unwrap();
    let tgm = dir.path().join("twice.tgm");
    tensorkit::save_tensors(
        &tgm,
        [("w", w.view()), ("w", v.view())],
        &WriteOptions::default(),
    )
    .unwrap();
    let src = tensorkit::open(&tgm).unwrap();
    let out = dir.path().join("out.safetensors");
    let e = tensorkit::save(&out, &src, &WriteOptions::default()).unwrap_err();
    assert!(e.to_string().contains("\"w\""), "{e}");
    assert!(!out.exists());
    let renaming = WriteOptions {
        rename_duplicates: true,
        ..WriteOptions::default()
    };
    tensorkit::save(&out, &src, &renaming).unwrap();
    let back = tensorkit::open(&out).unwrap();
    let names: Vec<String> = back.tensors().map(|t| t.name().into_owned()).collect();
    assert_eq!(names.len(), 2);
    assert_eq!(back.get("w").unwrap().to_tensor().unwrap(), w);
    let other = names.iter().find(|n| *n != "w").unwrap();
    assert!(other.starts_with("w~"), "{names:?}");
    assert_eq!(back.get(other).unwrap().to_tensor().unwrap(), v);
}

/// A choice only some formats' writers offer (a header reserve, an alignment, a pipeline,
/// quantization) is refused for every other writable format, naming the formats that offer
/// it, and leaves no file; where it is offered, it is taken.
#[test]
fn write_choices_are_refused_where_the_format_does_not_offer_them() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let w = tensorkit::Tensor::from_elements(&[2, 32], &[0.5f32; 64]).unwrap();
    let asking: [(&str, &str, WriteOptions); 4] = [
        (
            "a header reserve",
            "safetensors and gguf",
            WriteOptions {
                header_reserve: Some(4096),
                ..WriteOptions::default()
            },
        ),
        (
            "an alignment",
            "ztensor-2",
            WriteOptions {
                alignment: Some(1 << 16),
                ..WriteOptions::default()
            },
        ),
        (
            "a pipeline",
            "tensogram",
            WriteOptions {
                pipeline: tensorkit::pipeline_spec::PipelineSpec::parse("zstd").unwrap(),
                ..WriteOptions::default()
            },
        ),
        (
            "quantization",
            "gguf",
            WriteOptions {
                quantize: Some(tensorkit::gguf::GgmlType::Q8_0),
                ..WriteOptions::default()
            },
        ),
    ];
    for (what, offered_by, options) in asking {
        for format in Format::writable_any() {
            let path = dir.path().join(format!("w.{}", format.extension()));
            let options = WriteOptions {
                format: Some(format),
                ..options.clone()
            };
            let saved = tensorkit::save_tensors(&path, [("w", w.view())], &options);
            if offered_by.split(" and ").any(|id| id == format.id()) {
                saved.unwrap_or_else(|e| panic!("{what} to {}: {e}", format.id()));
                std::fs::remove_file(&path).unwrap();
                continue;
            }
            let e = saved.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            let expected = format!("{what} applies to {offered_by} output, not {}", format.id());
            assert!(e.to_string().contains(&expected), "{e}");
            assert!(!path.exists(), "{}", path.display());
        }
    }
}

/// safetensors files leave 4 KiB of spaces after their JSON unless told otherwise, so that a
/// later metadata edit fits in place; `Some(0)` writes the reference writer's bytes. GGUF,
/// whose room would be a key readers list, leaves none by default.
#[test]
fn safetensors_keeps_room_for_edits_by_default_and_the_reference_bytes_on_request() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let w = tensorkit::Tensor::from_elements(&[3], &[1.5f32, -2.0, 0.25]).unwrap();
    let tensors = || [("w", w.view())];
    let reference = tensorkit::safetensors::serialize(tensors(), None).unwrap();
    let exact = WriteOptions {
        header_reserve: Some(0),
        ..WriteOptions::for_format(Format::SAFETENSORS)
    };
    assert_eq!(
        tensorkit::serialize_tensors(tensors(), &exact).unwrap(),
        reference
    );
    let default = WriteOptions::for_format(Format::SAFETENSORS);
    let roomy = tensorkit::serialize_tensors(tensors(), &default).unwrap();
    assert_eq!(roomy.len(), reference.len() + 4096);
    assert_eq!(
        tensorkit::open_bytes(&roomy)
            .unwrap()
            .get("w")
            .unwrap()
            .to_tensor()
            .unwrap(),
        w
    );

    let path = dir.path().join("w.safetensors");
    tensorkit::save_tensors(&path, tensors(), &default).unwrap();
    let edits = tensorkit::Edits {
        set: vec![("license".into(), serde_json::json!("apache-2.0"), None)],
        ..tensorkit::Edits::default()
    };
    let report = tensorkit::edit(&path, &edits, &tensorkit::EditOptions::default()).unwrap();
    assert_eq!(report.method, tensorkit::edit::Method::InPlace);
    let back = tensorkit::open(&path).unwrap();
    assert_eq!(back.metadata().unwrap()["license"], "apache-2.0");

    let gguf = WriteOptions::for_format(Format::GGUF);
    let bytes = tensorkit::serialize_tensors(tensors(), &gguf).unwrap();
    let file = tensorkit::open_bytes(&bytes).unwrap();
    assert!(!file.metadata().unwrap().contains_key("tensorkit.padding"));
}

#[test]
fn serialize_tensors_gives_the_bytes_save_tensors_writes() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    // A dtype every writable format holds (GGUF has no unsigned integers).
    let w = tensorkit::Tensor::from_elements(&[3], &[1i16, 2, -32768]).unwrap();
    for format in Format::writable_any() {
        let options = WriteOptions::for_format(format);
        let bytes = tensorkit::serialize_tensors([("w", w.view())], &options).unwrap();
        let path = dir.path().join("w.out");
        tensorkit::save_tensors(&path, [("w", w.view())], &options).unwrap();
        // Tensogram stamps each message with a time and a UUID; the rest are deterministic.
        if format != Format::TENSOGRAM {
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{format:?}");
        }
        let back = tensorkit::open_bytes(&bytes).unwrap();
        assert_eq!(back.format(), format);
        assert_eq!(back.get("w").unwrap().to_tensor().unwrap(), w);
    }
    let no_format = tensorkit::serialize_tensors([("w", w.view())], &WriteOptions::default());
    assert_eq!(no_format.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let sharded = WriteOptions {
        max_shard_size: Some(1),
        ..WriteOptions::for_format(Format::SAFETENSORS)
    };
    let e = tensorkit::serialize_tensors([("w", w.view())], &sharded).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn read_options_reach_every_reader() {
    let _running = crate::running();
    let appended = tensor_testkit::testdata().join("ztensor/reference/zt2_appended.zt");
    assert_eq!(tensorkit::open(&appended).unwrap().len(), 2);
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    assert!(tensorkit::open_with(&appended, &strict).is_err());
    let tight = ReadOptions {
        limits: tensorkit::Limits::default().with_max_header_bytes(16),
        ..ReadOptions::default()
    };
    let e = tensorkit::open_with(&appended, &tight).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded);
}

#[test]
fn validate_and_verify_report_what_a_file_carries() {
    use tensorkit::{Level, ValidateOptions};
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let t = tensorkit::Tensor::from_elements(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let limits = tensorkit::Limits::default();
    // zTensor 2 carries a digest per blob: verified; safetensors carries none.
    let zt = dir.path().join("t.zt");
    tensorkit::save_tensors(&zt, [("t", t.view())], &WriteOptions::default()).unwrap();
    let v = tensorkit::verify(&zt, &limits).unwrap();
    assert!(v.problem.is_none(), "{:?}", v.problems);
    assert_eq!(
        (v.checks, v.verified, v.tensors_read),
        (tensorkit::Checks::Checksums, 1, Some(1))
    );
    let st = dir.path().join("t.safetensors");
    tensorkit::save_tensors(&st, [("t", t.view())], &WriteOptions::default()).unwrap();
    let v = tensorkit::verify(&st, &limits).unwrap();
    assert_eq!(
        (v.checks, v.tensors_read),
        (tensorkit::Checks::None, Some(1))
    );
    assert_eq!(v.problem.map(|e| e.kind()), Some(ErrorKind::MissingHash));
    // A damaged blob: validate reports it as a problem of the file, not an error.
    let mut bytes = std::fs::read(&zt).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == 2.0f32.to_le_bytes())
        .unwrap();
    bytes[at] ^= 1;
    std::fs::write(&zt, &bytes).unwrap();
    let options = ValidateOptions {
        level: Level::Full,
        canonical: false,
    };
    let found = tensorkit::validate(&zt, options, &limits).unwrap();
    assert!(found.failed(), "{:?}", found.problems);
    assert!(tensorkit::verify(&zt, &limits).unwrap().problem.is_some());
}

#[test]
fn alignment_is_chosen_where_the_format_allows_it() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let t = tensorkit::Tensor::from_elements(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let zt = dir.path().join("t.zt");
    let aligned = WriteOptions {
        alignment: Some(4096),
        ..WriteOptions::default()
    };
    tensorkit::save_tensors(&zt, [("t", t.view())], &aligned).unwrap();
    let bytes = std::fs::read(&zt).unwrap();
    // The blob at 4096 instead of the canonical 65536: a smaller file, read back the same.
    assert!(bytes.len() < 65536, "{} bytes", bytes.len());
    assert_eq!(&bytes[4096..4108], t.data());
    let file = tensorkit::open(&zt).unwrap();
    assert_eq!(file.get("t").unwrap().to_tensor().unwrap(), t);
    // Not a power of two, or below zTensor 2's minimum: refused, no file left.
    for bad in [5000, 2048] {
        let path = dir.path().join(format!("bad{bad}.zt"));
        let options = WriteOptions {
            alignment: Some(bad),
            ..WriteOptions::default()
        };
        assert!(tensorkit::save_tensors(&path, [("t", t.view())], &options).is_err());
        assert!(!path.exists());
    }
    // Formats with a fixed layout refuse it.
    let st = dir.path().join("t.safetensors");
    let e = tensorkit::save_tensors(&st, [("t", t.view())], &aligned).unwrap_err();
    assert!(e.to_string().contains("alignment"), "{e}");
    assert!(!st.exists());
}

/// A zero-copy view costs nothing however large the tensor: a zTensor checksum or digest,
/// or a Tensogram data frame's hash, is checked when the elements are copied out
/// (`to_tensor`, `read_into`) or when asked (`verify`), not when the file is opened or
/// viewed.
#[test]
fn digests_and_frame_hashes_are_checked_on_copies_and_when_asked_not_for_views() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let data = crate::damaged_elements();
    for format in [Format::ZTENSOR_0_1, Format::ZTENSOR_2, Format::TENSOGRAM] {
        let path = dir.path().join(format!("damaged-{}", format.id()));
        crate::damaged(&path, format);

        let file = tensorkit::open(&path).unwrap();
        let (sound, damaged) = (file.get("t1").unwrap(), file.get("t2").unwrap());
        let id = format.id();
        assert_eq!(damaged.view().unwrap().byte_len(), 65536, "{id}");
        sound.verify().unwrap();
        assert_eq!(
            sound.to_tensor().unwrap().data(),
            &data[65_536..131_072],
            "{id}"
        );
        let mut out = vec![0u8; 65536];
        let failures = [
            damaged.verify().unwrap_err(),
            damaged.to_tensor().unwrap_err(),
            damaged.read_into(&mut out).unwrap_err(),
            file.verify().unwrap_err(),
        ];
        for e in failures {
            assert_eq!(e.kind(), ErrorKind::ChecksumMismatch, "{id}: {e}");
            assert!(e.to_string().contains("t2"), "{id}: {e}");
        }
        // Opened not to verify, the damaged bytes are what it reads.
        let options = ReadOptions {
            verify: tensorkit::Verify::Never,
            ..ReadOptions::default()
        };
        let unchecked = tensorkit::open_with(&path, &options).unwrap();
        let t = unchecked.get("t2").unwrap().to_tensor().unwrap();
        assert_ne!(t.data(), &data[2 * 65536..3 * 65536], "{id}");
        unchecked.verify().unwrap();
    }
}

/// A tensor large enough to be checked on another core while it is copied out (from 256 KiB)
/// is checked all the same: damage is the error of `to_tensor` and `read_into`, and a sound
/// one arrives exactly.
#[test]
fn large_tensors_are_checked_while_they_are_copied() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..256 * 1024u32).flat_map(u32::to_le_bytes).collect();
    let view =
        tensorkit::TensorView::new(&data, Dtype::Uint32, &[256 * 1024], ByteOrder::Little).unwrap();
    for format in [Format::ZTENSOR_0_1, Format::ZTENSOR_2, Format::TENSOGRAM] {
        let id = format.id();
        let path = dir.path().join(format!("large-{id}"));
        let options = tensorkit::WriteOptions::for_format(format);
        tensorkit::save_tensors(&path, [("big", view.clone())], &options).unwrap();
        let mut out = vec![0u8; data.len()];
        {
            let file = tensorkit::open(&path).unwrap();
            let big = file.get("big").unwrap();
            assert_eq!(big.to_tensor().unwrap().data(), &data[..], "{id}");
            big.read_into(&mut out).unwrap();
            assert_eq!(out, data, "{id}");
        }
        let mut bytes = std::fs::read(&path).unwrap();
        let needle = &data[600_000..600_008];
        let at = bytes.windows(8).position(|w| w == needle).unwrap();
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let file = tensorkit::open(&path).unwrap();
        let big = file.get("big").unwrap();
        for e in [
            big.to_tensor().unwrap_err(),
            big.read_into(&mut out).unwrap_err(),
        ] {
            assert_eq!(e.kind(), ErrorKind::ChecksumMismatch, "{id}: {e}");
            assert!(e.to_string().contains("big"), "{id}: {e}");
        }
    }
}

/// Saving tensors read from a damaged file fails with the checksum error naming the tensor,
/// whatever the target (the checks run on another core while the output is written), and
/// leaves no file; tensors from a sound file arrive exactly, whether the kernel copied them
/// from the source's mapping or they were written from memory.
#[test]
fn a_damaged_source_is_never_saved_and_a_sound_one_arrives_exactly() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let data = crate::damaged_elements();
    let targets = [
        Format::SAFETENSORS,
        Format::BINTENSORS,
        Format::ZTENSOR_0_1,
        Format::ZTENSOR_2,
        Format::TENSOGRAM,
    ];
    for format in [Format::ZTENSOR_0_1, Format::ZTENSOR_2, Format::TENSOGRAM] {
        let path = dir.path().join(format!("damaged-{}", format.id()));
        crate::damaged(&path, format);
        let file = tensorkit::open(&path).unwrap();
        for target in targets {
            let out = dir
                .path()
                .join(format!("from-{}.{}", format.id(), target.id()));
            let e = tensorkit::save(&out, &file, &WriteOptions::for_format(target)).unwrap_err();
            let what = format!("{} to {}", format.id(), target.id());
            assert_eq!(e.kind(), ErrorKind::ChecksumMismatch, "{what}: {e}");
            assert!(e.to_string().contains("t2"), "{what}: {e}");
            assert!(!out.exists(), "{what}");
        }
    }
    for format in targets {
        let path = dir.path().join(format!("sound.{}", format.id()));
        crate::save_four(&path, format, &data);
        let file = tensorkit::open(&path).unwrap();
        for target in targets {
            let out = dir
                .path()
                .join(format!("{}-to.{}", format.id(), target.id()));
            tensorkit::save(&out, &file, &WriteOptions::for_format(target)).unwrap();
            let back = tensorkit::open(&out).unwrap();
            for i in 0..4 {
                let t = back.get(&format!("t{i}")).unwrap().to_tensor().unwrap();
                assert!(
                    t.data() == &data[i * 65536..(i + 1) * 65536],
                    "{} to {}: t{i}",
                    format.id(),
                    target.id()
                );
            }
        }
    }
}

#[test]
fn a_set_put_together_from_several_files_writes_their_tensors_under_new_names() {
    let dir = tempfile::tempdir().unwrap();
    let st = tensor_testkit::conformance("safetensors").join("all_dtypes.safetensors");
    let tgm = tensor_testkit::conformance("tensogram").join("multi_object_mixed.tgm");
    let (a, b) = (
        tensorkit::open(&st).unwrap(),
        tensorkit::open(&tgm).unwrap(),
    );
    let mut set = tensorkit::TensorSet::new(Format::TENSOGRAM, tensorkit::Limits::default());
    assert!(set.is_empty());
    let mut expected = Vec::new();
    for (prefix, f) in [("a", &a), ("b", &b)] {
        for t in f.tensors() {
            let name = format!("{prefix}.{}", t.name());
            expected.push((
                name.clone(),
                t.dtype(),
                t.shape().to_vec(),
                t.to_tensor().unwrap(),
            ));
            set.push(t, name);
        }
    }
    assert_eq!(set.len(), a.len() + b.len());
    // Where a tensor sat in its file (Tensogram's message and object) does not come along.
    assert!(set.tensors().all(|t| t.location().is_empty()));
    set.metadata_mut()
        .get_or_insert_with(Default::default)
        .insert("put_together".into(), "yes".into());
    let out = dir.path().join("both.tgm");
    tensorkit::save_set(&out, &set, &WriteOptions::default()).unwrap();
    let back = tensorkit::open(&out).unwrap();
    assert_eq!(back.format(), Format::TENSOGRAM);
    assert_eq!(back.metadata().unwrap()["put_together"], "yes");
    assert_eq!(back.len(), expected.len());
    for (name, dtype, shape, values) in expected {
        let t = back.get(&name).unwrap();
        assert_eq!((t.dtype(), t.shape()), (dtype, &shape[..]), "{name}");
        assert_eq!(t.to_tensor().unwrap(), values, "{name}");
    }
}
