//! Damaged files, derived from a good fixture: every one must fail with exit 2 and the error
//! contract, never a panic.

use crate::support::{expect_error_contract, tensorkit, testdata};
use libtest_mimic::{Failed, Trial};
use std::path::Path;

/// A damaged file and the error kind it must produce.
struct Case {
    name: String,
    bytes: Vec<u8>,
    kind: &'static str,
}

fn good_file() -> Vec<u8> {
    std::fs::read(testdata().join("safetensors/conformance/all_dtypes.safetensors"))
        .expect("fixture all_dtypes.safetensors")
}

fn with_header(json: &str, data: &[u8]) -> Vec<u8> {
    let mut b = (json.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(json.as_bytes());
    b.extend_from_slice(data);
    b
}

fn cases() -> Vec<Case> {
    let good = good_file();
    let header_len = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    let mut v = Vec::new();
    for cut in [
        0,
        1,
        7,
        8,
        9,
        100,
        8 + header_len - 1,
        8 + header_len + 1,
        good.len() - 1,
    ] {
        v.push(Case {
            name: format!("truncated_at_{cut}"),
            bytes: good[..cut].to_vec(),
            kind: "truncated",
        });
    }
    let mut past_end = good.clone();
    past_end[..8].copy_from_slice(&(good.len() as u64).to_le_bytes());
    v.push(Case {
        name: "header_length_past_end".into(),
        bytes: past_end,
        kind: "truncated",
    });
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    v.push(Case {
        name: "header_length_u64_max".into(),
        bytes: huge,
        kind: "limit_exceeded",
    });
    let mut bad_json = good.clone();
    bad_json[8 + header_len / 2] = b'}';
    v.push(Case {
        name: "malformed_header_json".into(),
        bytes: bad_json,
        kind: "malformed",
    });
    let mut not_utf8 = good.clone();
    not_utf8[8 + 3] = 0xFF;
    v.push(Case {
        name: "header_not_utf8".into(),
        bytes: not_utf8,
        kind: "malformed",
    });
    v.push(Case {
        name: "repeated_key".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
            &[1, 2],
        ),
        kind: "malformed",
    });
    v.push(Case {
        name: "offsets_overlap".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}"#,
            &[0; 3],
        ),
        kind: "malformed",
    });
    v.push(Case {
        name: "shape_overflow".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"F64","shape":[1099511627776,1099511627776],"data_offsets":[0,8]}}"#,
            &[0; 8],
        ),
        kind: "malformed",
    });
    v.push(Case {
        name: "span_mismatch".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#,
            &[0; 8],
        ),
        kind: "malformed",
    });
    v.push(Case {
        name: "trailing_bytes".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
            &[0; 5],
        ),
        kind: "malformed",
    });
    v.push(Case {
        name: "unsupported_dtype".into(),
        bytes: with_header(
            r#"{"a":{"dtype":"F2","shape":[2],"data_offsets":[0,1]}}"#,
            &[0; 1],
        ),
        kind: "unsupported",
    });
    v.push(Case {
        name: "not_a_tensor_file".into(),
        bytes: b"hello, world\n".to_vec(),
        kind: "unsupported",
    });
    v
}

fn check(case: &Case, dir: &Path) -> Result<(), Failed> {
    let path = dir.join(format!("{}.bin", case.name));
    std::fs::write(&path, &case.bytes)?;
    let p = path.to_string_lossy();
    for json in [false, true] {
        let args: Vec<&str> = if json {
            vec!["inspect", "--json", &p]
        } else {
            vec!["inspect", &p]
        };
        let kind = expect_error_contract(&tensorkit(&args), json)?;
        if kind != case.kind {
            return Err(format!("kind {kind}, expected {}", case.kind).into());
        }
    }
    Ok(())
}

/// Every malformed fixture fails with the error contract, with and without `--json` —
/// except a BinTensors file in the pre-release layout, which reads as `bintensors-legacy`.
fn bad_fixture(file: &Path) -> Result<(), Failed> {
    let p = file.to_string_lossy();
    let out = tensorkit(&["inspect", "--json", &p]);
    let legacy = file.extension().is_some_and(|e| e == "bt") && p.contains("legacy");
    if legacy && out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        return if v["format"] == "bintensors-legacy" {
            Ok(())
        } else {
            Err(format!("read as {}", v["format"]).into())
        };
    }
    expect_error_contract(&out, true)?;
    // The table reads only the header: damage it cannot see without decoding (a corrupt
    // zstd stream) must then show in `verify`.
    let table = tensorkit(&["inspect", &p]);
    if table.status.success() {
        let verify = tensorkit(&["verify", &p]);
        if verify.status.code() != Some(2) {
            return Err(format!(
                "inspect reads it as sound and verify exits {:?}",
                verify.status.code()
            )
            .into());
        }
        return Ok(());
    }
    expect_error_contract(&table, false)?;
    Ok(())
}

/// One trial per malformed fixture of every format.
fn bad_fixture_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (format, dir, ext) in [
        ("bintensors", "bintensors/conformance/bad", "bt"),
        ("ztensor", "ztensor/conformance/bad", "zt"),
        ("ztensor-2", "ztensor/conformance/v2/bad", "zt"),
    ] {
        let files = crate::support::files_with_extension(&testdata().join(dir), ext);
        assert!(!files.is_empty(), "no fixtures in {dir}");
        for f in files {
            let name = tensor_testkit::stem(&f);
            trials.push(Trial::test(
                format!("hostile::{format}::{name}"),
                move || bad_fixture(&f),
            ));
        }
    }
    trials
}

pub(crate) fn trials() -> Vec<Trial> {
    cases()
        .into_iter()
        .map(|case| {
            Trial::test(format!("hostile::safetensors::{}", case.name), move || {
                let dir = tempfile::tempdir()?;
                check(&case, dir.path())
            })
        })
        .chain([Trial::test("hostile::missing_file", || {
            let kind = expect_error_contract(
                &tensorkit(&["inspect", "--json", "/nonexistent/x.safetensors"]),
                true,
            )?;
            if kind == "io" {
                Ok(())
            } else {
                Err(format!("kind {kind}").into())
            }
        })])
        .chain([
            Trial::test("hostile::duplicate_names", duplicate_names),
            Trial::test("hostile::rank_past_a_format", rank_past_a_format),
            Trial::test(
                "hostile::every_command_applies_the_same_limits",
                every_command_applies_the_same_limits,
            ),
            Trial::test(
                "hostile::attributes_named_like_ztensor_0_1_keys",
                attributes_named_like_ztensor_0_1_keys,
            ),
        ])
        .chain(bad_fixture_trials())
        .chain(malicious_trials())
        .collect()
}

/// Files the fuzzers found (`testdata/<format>/malicious/`): reading them, every tensor
/// included, ends in a result or an error — exit 0, 2 (or 3 from `verify` with nothing to
/// verify), never a crash. The `verify` and `validate` commands read them whole as well.
fn malicious_trials() -> Vec<Trial> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(testdata())
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(rd) = std::fs::read_dir(entry.path().join("malicious")) {
            files.extend(rd.flatten().map(|e| e.path()));
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no malicious regression files");
    files
        .into_iter()
        .map(|f| {
            let name = format!(
                "hostile::malicious::{}",
                f.file_name().unwrap_or_default().to_string_lossy()
            );
            Trial::test(name, move || {
                let path = f.to_string_lossy().into_owned();
                for args in [
                    vec!["inspect", "--json", &path],
                    vec!["verify", &path],
                    vec!["validate", &path],
                    vec!["ls", &path],
                ] {
                    let out = tensorkit(&args);
                    if !matches!(out.status.code(), Some(0 | 2 | 3)) {
                        return Err(format!(
                            "{args:?}: exit {:?}: {}",
                            out.status.code(),
                            String::from_utf8_lossy(&out.stderr)
                        )
                        .into());
                    }
                }
                // What a writer makes of it reads back, or the writer refuses it (the
                // writers fuzz target's findings live here too).
                let dir = tempfile::tempdir()?;
                for to in [
                    "safetensors",
                    "bintensors",
                    "ztensor-0.1",
                    "ztensor-2",
                    "tensogram",
                ] {
                    let out = dir.path().join(format!("out-{to}"));
                    let o = tensorkit(&[
                        "convert",
                        "--quiet",
                        "--to",
                        to,
                        &path,
                        &out.to_string_lossy(),
                    ]);
                    match o.status.code() {
                        Some(0) => {
                            let back = tensorkit(&["inspect", "--json", &out.to_string_lossy()]);
                            if !back.status.success() {
                                return Err(format!(
                                    "{to}: our own output does not read: {}",
                                    String::from_utf8_lossy(&back.stderr)
                                )
                                .into());
                            }
                        }
                        Some(2) => {}
                        other => return Err(format!("convert --to {to}: exit {other:?}").into()),
                    }
                }
                Ok(())
            })
        })
        .collect()
}

/// A Tensogram file concatenated with itself is valid and repeats every name: converting it
/// to a format that needs unique names is an error naming the tensor (never a panic inside
/// a third-party writer), and `--duplicates suffix` keeps the repeats apart.
fn duplicate_names() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let one =
        std::fs::read(testdata().join("tensogram/conformance/base_shorter_than_objects.tgm"))?;
    let twice = dir.path().join("twice.tgm");
    std::fs::write(&twice, [one.clone(), one].concat())?;
    let input = twice.to_string_lossy().into_owned();
    if !tensorkit(&["validate", &input]).status.success() {
        return Err("a file concatenated with itself is valid".into());
    }
    for to in [
        "safetensors",
        "bintensors",
        "bintensors-legacy",
        "ztensor-0.1",
        "ztensor-2",
    ] {
        let out = dir.path().join(format!("out-{to}"));
        let o = tensorkit(&["convert", "--to", to, &input, &out.to_string_lossy()]);
        expect_error_contract(&o, false)?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        if !stderr.contains("two tensors named") || out.exists() {
            return Err(format!("{to}: {stderr}").into());
        }
        let o = tensorkit(&[
            "convert",
            "--to",
            to,
            "--duplicates",
            "suffix",
            &input,
            &out.to_string_lossy(),
        ]);
        if !o.status.success() {
            return Err(format!(
                "{to} --duplicates suffix: {}",
                String::from_utf8_lossy(&o.stderr)
            )
            .into());
        }
        let ls = String::from_utf8_lossy(&tensorkit(&["ls", &out.to_string_lossy()]).stdout)
            .into_owned();
        if !ls.contains("~m1\t") {
            return Err(format!("{to}: no suffixed repeat in {ls}").into());
        }
    }
    // Tensogram names are metadata and may repeat.
    let out = dir.path().join("again.tgm");
    if !tensorkit(&["convert", &input, &out.to_string_lossy()])
        .status
        .success()
    {
        return Err("tensogram to tensogram keeps repeated names".into());
    }
    Ok(())
}

/// Found by the `writers` fuzz target: a BinTensors tensor of rank 129 (with no elements)
/// was written into a zTensor 2 file that readers refuse (rank 64 at most). The writer now
/// refuses it, naming the tensor, and leaves no file.
fn rank_past_a_format() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let input = testdata().join("bintensors/malicious/rank_129_tensor.bt");
    let out = dir.path().join("out.zt");
    let o = tensorkit(&[
        "convert",
        "--to",
        "ztensor-2",
        &input.to_string_lossy(),
        &out.to_string_lossy(),
    ]);
    expect_error_contract(&o, false)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !stderr.contains("rank 129") || out.exists() {
        return Err(stderr.into_owned().into());
    }
    Ok(())
}

/// A Tensogram message of a few hundred bytes whose one object claims 2^31 float64 values of
/// a constant field (simple packing with 0 bits): every command refuses it at once as
/// `limit_exceeded`, `validate` as every other (it once ran past 60 s while `inspect`
/// refused), and says which options bound the work.
fn every_command_applies_the_same_limits() -> Result<(), Failed> {
    use tensorkit::frame::descriptor::{DataObjectDescriptor, ParamValue};
    let mut d = DataObjectDescriptor::new(
        tensorkit::dtype::Dtype::Float64,
        &[1 << 31],
        tensorkit::ByteOrder::Little,
    );
    d.encoding = "simple_packing".into();
    for (k, v) in [
        ("sp_bits_per_value", ParamValue::from(0u64)),
        ("sp_reference_value", ParamValue::from(1.5)),
        ("sp_binary_scale_factor", ParamValue::from(0i64)),
        ("sp_decimal_scale_factor", ParamValue::from(0i64)),
    ] {
        d.params.insert(k.into(), v);
    }
    let empty: &[u8] = &[];
    let bytes = tensorkit::frame::serialize_pre_encoded(
        &tensorkit::frame::GlobalMetadata::default(),
        &[d],
        &[empty],
        &tensorkit::frame::EncodeOptions::default(),
    )?;
    if bytes.len() > 1024 {
        return Err(format!("{} bytes", bytes.len()).into());
    }
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("bomb.tgm");
    std::fs::write(&file, &bytes)?;
    let f = file.to_string_lossy();
    let npy = dir.path().join("x.npy");
    let out = dir.path().join("x.safetensors");
    // Under the memory limit of any machine, so that only the ratio can refuse it.
    for args in [
        vec!["inspect", "--json", &f],
        vec!["get", &f, "#0", "-o", &npy.to_string_lossy()],
        vec!["verify", &f],
        vec!["convert", &f, &out.to_string_lossy()],
        vec![
            "--max-memory",
            "64GiB",
            "get",
            &f,
            "#0",
            "-o",
            &npy.to_string_lossy(),
        ],
    ] {
        let o = tensorkit(&args);
        let kind = expect_error_contract(&o, false).map_err(|e| format!("{args:?}: {e}"))?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        if kind != "limit_exceeded" || !stderr.contains("--max-ratio") {
            return Err(format!("{args:?}: {kind}: {stderr}").into());
        }
    }
    if npy.exists() || out.exists() {
        return Err("a refused command left a file".into());
    }
    let o = tensorkit(&["--max-memory", "64GiB", "validate", &f]);
    let said = String::from_utf8_lossy(&o.stdout);
    if o.status.code() != Some(2) || !said.contains("note: bounded by --max-memory") {
        return Err(format!("validate: {said}").into());
    }
    Ok(())
}

/// A Tensogram object whose attributes use zTensor 0.1's own index keys (`sparse_format`
/// holding a number, `layout`, `checksum`): converted to zTensor 0.1, the attributes are
/// left out and said so, and the file reads back (the writer once wrote them, and our own
/// reader refused the file).
fn attributes_named_like_ztensor_0_1_keys() -> Result<(), Failed> {
    use tensorkit::frame::{GlobalMetadata, Map, MetaValue};
    let t: Vec<u8> = [1.0f32, 2.0, 3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let d = tensorkit::frame::descriptor::DataObjectDescriptor::new(
        tensorkit::dtype::Dtype::Float32,
        &[3],
        tensorkit::ByteOrder::Little,
    );
    let mut entry = Map::new();
    entry.insert("name".into(), MetaValue::from("t"));
    entry.insert("sparse_format".into(), MetaValue::from(5u64));
    entry.insert("layout".into(), MetaValue::from("coo"));
    entry.insert("checksum".into(), MetaValue::from("none"));
    entry.insert("units".into(), MetaValue::from("K"));
    let meta = GlobalMetadata {
        base: vec![entry],
        ..GlobalMetadata::default()
    };
    let bytes = tensorkit::frame::serialize(
        &meta,
        &[d],
        &[&t[..]],
        &tensorkit::frame::EncodeOptions::default(),
    )?;
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("attrs.tgm");
    std::fs::write(&src, bytes)?;
    let out = dir.path().join("attrs.zt");
    let o = tensorkit(&[
        "convert",
        "--to",
        "ztensor-0.1",
        &src.to_string_lossy(),
        &out.to_string_lossy(),
    ]);
    let said = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() || !said.contains("\"sparse_format\"") {
        return Err(format!("{said}{}", String::from_utf8_lossy(&o.stderr)).into());
    }
    let back = tensorkit(&["inspect", "--json", &out.to_string_lossy()]);
    let v: serde_json::Value = serde_json::from_slice(&back.stdout)?;
    if !back.status.success() || v["tensors"][0]["attributes"]["units"] != "K" {
        return Err(format!("read back: {v}").into());
    }
    Ok(())
}
