//! `tensorkit convert` round trips between every pair of formats, on the conformance
//! fixtures: what comes back has the same names, dtypes, shapes, values and metadata; a
//! conversion the target cannot hold fails, says why, and leaves no file; a BinTensors file
//! that went through another format comes back byte for byte.

use crate::support::{
    expect_error_contract, files_with_extension, inspect_json, tensorkit, testdata,
};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::Path;

fn convert_args(input: &Path, output: &Path, to: Option<&str>) -> std::process::Output {
    let (i, o) = (input.to_string_lossy(), output.to_string_lossy());
    let mut args = vec!["convert", &*i, &*o];
    if let Some(t) = to {
        args.extend(["--to", t]);
    }
    tensorkit(&args)
}

fn convert(input: &Path, output: &Path, to: Option<&str>) -> Result<(), Failed> {
    let out = convert_args(input, output, to);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    Ok(())
}

/// The tensors of `inspect --json`, by name. Writers store bools as 0/1, so for a bool
/// tensor the values are compared, not the digest. Unnamed tensors get the names writers
/// give them (`tensor_<i>`), and where a tensor sat (Tensogram's message and object) is
/// left out.
fn tensors(v: &Value) -> Value {
    let mut tensors: Vec<Value> = v["tensors"].as_array().cloned().unwrap_or_default();
    for (i, t) in tensors.iter_mut().enumerate() {
        let Some(o) = t.as_object_mut() else { continue };
        if o.get("dtype").is_some_and(|d| d == "bool") {
            o.remove("sha256_le");
        }
        if o.get("name").is_none_or(Value::is_null) {
            o.insert("name".into(), Value::from(format!("tensor_{i}")));
        }
        o.remove("message");
        o.remove("object");
        // How a format stores a tensor is not what it holds.
        o.remove("stored_as");
        o.remove("stored");
        // Formats without per-tensor attributes drop them (and say so).
        o.remove("attributes");
    }
    tensors.sort_by_key(|t| t["name"].to_string());
    Value::Array(tensors)
}

/// A target format: its id, the dtypes it cannot store, whether it keeps metadata, and
/// whether its metadata holds only strings.
#[allow(clippy::struct_excessive_bools)] // One switch per property of a format.
struct Target {
    id: &'static str,
    lacks: &'static [&'static str],
    keeps_metadata: bool,
    string_metadata: bool,
    /// Names must be 1 to 1024 bytes without NUL (zTensor 2).
    strict_names: bool,
    /// An empty metadata map survives (Tensogram leaves empty maps out).
    keeps_empty_metadata: bool,
    /// Every tensor ends on a byte: an odd number of 4-bit floats cannot be stored.
    whole_bytes: bool,
}

const BINTENSORS_LACKS: &[&str] = &[
    "complex64",
    "complex128",
    "bitmask",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0",
    "float6_e2m3",
    "float6_e3m2",
    "float4_e2m1",
];

const TARGETS: [Target; 6] = [
    Target {
        id: "safetensors",
        lacks: &["complex128", "bitmask"],
        keeps_metadata: true,
        string_metadata: true,
        strict_names: false,
        keeps_empty_metadata: true,
        whole_bytes: true,
    },
    Target {
        id: "bintensors",
        lacks: BINTENSORS_LACKS,
        keeps_metadata: true,
        string_metadata: true,
        strict_names: false,
        keeps_empty_metadata: true,
        whole_bytes: false,
    },
    Target {
        id: "bintensors-legacy",
        lacks: BINTENSORS_LACKS,
        keeps_metadata: true,
        string_metadata: true,
        strict_names: false,
        keeps_empty_metadata: true,
        whole_bytes: false,
    },
    Target {
        id: "ztensor-0.1",
        lacks: &[
            "float8_e4m3",
            "float8_e5m2",
            "float8_e4m3fnuz",
            "float8_e5m2fnuz",
            "float8_e8m0",
            "float6_e2m3",
            "float6_e3m2",
            "float4_e2m1",
            "complex64",
            "complex128",
            "bitmask",
        ],
        keeps_metadata: false,
        string_metadata: false,
        strict_names: false,
        keeps_empty_metadata: true,
        whole_bytes: false,
    },
    Target {
        id: "ztensor-2",
        lacks: &["bitmask", "float6_e2m3", "float6_e3m2"],
        keeps_metadata: true,
        string_metadata: false,
        strict_names: true,
        keeps_empty_metadata: true,
        whole_bytes: false,
    },
    Target {
        id: "tensogram",
        lacks: &["float4_e2m1", "float6_e2m3", "float6_e3m2"],
        keeps_metadata: true,
        string_metadata: false,
        strict_names: false,
        keeps_empty_metadata: false,
        whole_bytes: false,
    },
];

pub(crate) fn round_trip(file: &Path) -> Result<(), Failed> {
    round_trip_except(file, &[])
}

/// [`round_trip`] through every target but those in `skip`.
fn round_trip_except(file: &Path, skip: &[&str]) -> Result<(), Failed> {
    let original = inspect_json(file)?;
    let dtypes: Vec<&str> = original["tensors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["dtype"].as_str())
        .collect();
    let non_string_metadata = original["metadata"]
        .as_object()
        .is_some_and(|m| m.values().any(|v| !v.is_string()));
    let odd_names = original["tensors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .any(|n| n.is_empty() || n.len() > 1024 || n.contains('\0'));
    let split_bytes = original["tensors"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| {
            let n: u64 = t["shape"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .product();
            let bits = match t["dtype"].as_str() {
                Some("float4_e2m1") => 4,
                Some("float6_e2m3" | "float6_e3m2") => 6,
                _ => 8,
            };
            !(n * bits).is_multiple_of(8)
        });
    let dir = tempfile::tempdir()?;
    for target in TARGETS.iter().filter(|t| !skip.contains(&t.id)) {
        let out = dir.path().join(format!("converted.{}", target.id));
        let refuse = dtypes.iter().any(|d| target.lacks.contains(d))
            || (target.whole_bytes && split_bytes)
            || (target.string_metadata && non_string_metadata)
            || (target.strict_names && odd_names);
        if refuse {
            let kind = expect_error_contract(&convert_args(file, &out, Some(target.id)), false)?;
            if kind != "unsupported" || out.exists() {
                return Err(format!(
                    "into {}: kind {kind}, file left behind: {}",
                    target.id,
                    out.exists()
                )
                .into());
            }
            continue;
        }
        convert(file, &out, Some(target.id))?;
        let got = inspect_json(&out)?;
        if tensors(&got) != tensors(&original) {
            return Err(format!(
                "through {}: {} != {}",
                target.id,
                tensors(&got),
                tensors(&original)
            )
            .into());
        }
        let empty_map = original["metadata"]
            .as_object()
            .is_some_and(serde_json::Map::is_empty);
        let metadata_kept = target.keeps_metadata && (target.keeps_empty_metadata || !empty_map);
        if metadata_kept
            && got["metadata"] != original["metadata"]
            && !original["metadata"].is_null()
        {
            return Err(format!(
                "through {}: metadata {} != {}",
                target.id, got["metadata"], original["metadata"]
            )
            .into());
        }
        // And back to the original format (zTensor 1.x is read only: back to 2).
        let back_to = match original["format"].as_str() {
            Some("ztensor-1") => "ztensor-2",
            Some(f) => f,
            None => return Err("no format".into()),
        };
        let back = dir.path().join(format!("back.{}", target.id));
        convert(&out, &back, Some(back_to))?;
        if tensors(&inspect_json(&back)?) != tensors(&original) {
            return Err(format!("back from {}: tensors changed", target.id).into());
        }
        // A BinTensors file comes back byte for byte, unless the target dropped its metadata.
        if file.extension().is_some_and(|e| e == "bt")
            && (metadata_kept || original["metadata"].is_null())
        {
            let sidecar: Value = tensor_testkit::sidecar(file)?;
            if sidecar["writer_reproducible"] == true
                && std::fs::read(&back)? != std::fs::read(file)?
            {
                return Err(
                    format!("back from {}: the BinTensors bytes changed", target.id).into(),
                );
            }
        }
    }
    Ok(())
}

fn refuses_unknown_targets() -> Result<(), Failed> {
    let file = testdata().join("safetensors/conformance/scalar_f32.safetensors");
    let dir = tempfile::tempdir()?;
    for (out, to) in [
        ("x.unknown", None),
        ("x.bt", Some("pickle")),
        ("x.zt", Some("ztensor-1")),
    ] {
        let kind = expect_error_contract(&convert_args(&file, &dir.path().join(out), to), false)?;
        if kind != "invalid_argument" {
            return Err(format!("{out} {to:?}: kind {kind}").into());
        }
    }
    if std::fs::read_dir(dir.path())?.count() != 0 {
        return Err("a failed conversion left a file behind".into());
    }
    Ok(())
}

/// `--alignment` places zTensor 2 blobs where asked; formats with a fixed layout and values
/// that are not powers of two of at least 4096 are refused, leaving no file.
fn alignment_places_ztensor_2_blobs() -> Result<(), Failed> {
    let file = testdata().join("safetensors/conformance/scalar_f32.safetensors");
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("a.zt");
    let (i, o) = (file.to_string_lossy(), out.to_string_lossy());
    let run = tensorkit(&["convert", &i, &o, "--alignment", "1MiB"]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    let bytes = std::fs::read(&out)?;
    // The one tensor (3.5f32) is the first blob: zero padding after the 8-byte magic up to
    // 1 MiB, then its bytes.
    let at = 1 << 20;
    if bytes
        .get(8..at)
        .is_none_or(|pad| pad.iter().any(|&b| b != 0))
        || bytes.get(at..at + 4) != Some(&3.5f32.to_le_bytes()[..])
    {
        return Err("the blob does not start at 1 MiB".into());
    }
    if tensors(&inspect_json(&out)?) != tensors(&inspect_json(&file)?) {
        return Err("the aligned file reads back differently".into());
    }
    for (name, alignment) in [
        ("b.bt", "4096"),
        ("c.safetensors", "64KiB"),
        ("d.zt", "5000"),
        ("e.zt", "2048"),
    ] {
        let o = dir.path().join(name);
        let run = tensorkit(&[
            "convert",
            &i,
            &o.to_string_lossy(),
            "--alignment",
            alignment,
        ]);
        let kind = expect_error_contract(&run, false)?;
        if kind != "invalid_argument" || o.exists() {
            return Err(format!(
                "{name} --alignment {alignment}: kind {kind}, file left: {}",
                o.exists()
            )
            .into());
        }
    }
    if std::fs::read_dir(dir.path())?.count() != 1 {
        return Err("a refused conversion left a file behind".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (format, dir, ext) in crate::conformance::FIXTURE_SETS {
        for file in files_with_extension(&testdata().join(dir), ext) {
            let name = tensor_testkit::stem(&file);
            trials.push(Trial::test(
                format!("convert::{format}::{name}"),
                move || round_trip(&file),
            ));
        }
    }
    trials.push(Trial::test(
        "convert::refuses_unknown_targets",
        refuses_unknown_targets,
    ));
    trials.push(Trial::test(
        "convert::alignment_places_ztensor_2_blobs",
        alignment_places_ztensor_2_blobs,
    ));
    trials.push(Trial::test(
        "convert::non_finite_bits_survive",
        non_finite_bits_survive,
    ));
    trials.push(Trial::test(
        "convert::threads_change_speed_not_bytes",
        threads_change_speed_not_bytes,
    ));
    trials.push(Trial::test(
        "convert::fsync_changes_durability_not_bytes",
        fsync_changes_durability_not_bytes,
    ));
    trials
}

/// `--threads N` chooses how many threads work; the payload written is the same bytes
/// whatever N (zstd's multithreaded encoder, used for a payload this large, promises it),
/// and it reads back bit for bit. `--threads 0` is refused.
fn threads_change_speed_not_bytes() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let n = 10 << 20; // 40 MiB of float32: above zstd's parallel threshold
    let data: Vec<u8> = (0..n as u32)
        .flat_map(|i| ((i % 4099) as f32 * 0.25).to_le_bytes())
        .collect();
    let header = format!(
        r#"{{"t":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        data.len()
    );
    let input = dir.path().join("big.safetensors");
    std::fs::write(&input, crate::support::safetensors_file(&header, &data))?;
    let mut written = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = dir.path().join(format!("t{threads}.tgm"));
        let run = tensorkit(&[
            "--threads",
            threads,
            "convert",
            &input.to_string_lossy(),
            &out.to_string_lossy(),
            "--pipeline",
            "zstd:3",
        ]);
        if !run.status.success() {
            return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
        }
        // From the zstd frame on: the metadata before it records when the file was
        // written (`_reserved_.time`, `uuid`), as the reference's encoder does.
        let bytes = std::fs::read(&out)?;
        let frame = bytes
            .windows(4)
            .position(|w| w == [0x28, 0xb5, 0x2f, 0xfd])
            .ok_or("no zstd frame")?;
        written.push(bytes[frame..].to_vec());
    }
    if written.windows(2).any(|w| w[0] != w[1]) {
        return Err("the payloads differ with the number of threads".into());
    }
    if written[0].len() >= data.len() / 2 {
        return Err(format!("{} bytes: not compressed", written[0].len()).into());
    }
    let back = dir.path().join("back.safetensors");
    let run = tensorkit(&[
        "convert",
        &dir.path().join("t2.tgm").to_string_lossy(),
        &back.to_string_lossy(),
    ]);
    if !run.status.success() || !std::fs::read(&back)?.ends_with(&data) {
        return Err("the compressed file does not read back bit for bit".into());
    }
    let refused = tensorkit(&["--threads", "0", "inspect", &input.to_string_lossy()]);
    if refused.status.success() {
        return Err("--threads 0 was accepted".into());
    }
    Ok(())
}

/// `--fsync` (before or after the command) syncs each written file before renaming it into
/// place; the files are the same bytes as without it, and a split's tensors and manifest
/// all appear.
fn fsync_changes_durability_not_bytes() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("in.safetensors");
    let data: Vec<u8> = (0..3000u32)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let header = concat!(
        r#"{"a":{"dtype":"F32","shape":[1000],"data_offsets":[0,4000]},"#,
        r#""b":{"dtype":"F32","shape":[2000],"data_offsets":[4000,12000]}}"#
    );
    std::fs::write(&input, crate::support::safetensors_file(header, &data))?;
    let input = input.to_string_lossy().into_owned();
    for to in ["bintensors", "ztensor-0.1", "safetensors"] {
        let mut written = Vec::new();
        for (name, before, after) in [
            ("plain", None, None),
            ("before", Some("--fsync"), None),
            ("after", None, Some("--fsync")),
        ] {
            let out = dir.path().join(name).to_string_lossy().into_owned();
            let args: Vec<&str> = before
                .into_iter()
                .chain(["convert", &input, &out, "--to", to])
                .chain(after)
                .collect();
            let run = tensorkit(&args);
            if !run.status.success() {
                return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
            }
            written.push(std::fs::read(&out)?);
        }
        if written.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("{to}: --fsync changed the bytes written").into());
        }
    }
    let parts = dir.path().join("parts");
    let run = tensorkit(&[
        "--fsync",
        "split",
        &input,
        "--out-dir",
        &parts.to_string_lossy(),
    ]);
    if !run.status.success() {
        return Err(String::from_utf8_lossy(&run.stderr).into_owned().into());
    }
    let mut names: Vec<String> = std::fs::read_dir(&parts)?
        .map(|e| Ok(e?.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<_>>()?;
    names.sort();
    if names.len() != 3 || names.iter().any(|n| n.contains(".tkw-")) {
        return Err(format!("the split wrote {names:?}").into());
    }
    Ok(())
}

/// Lossless means bit for bit: NaN with a sign and a payload, signalling NaN and ±Inf come
/// back from every format with the same bits (found by the `writers` fuzz target: Tensogram
/// output used to canonicalise them through masks). Tensogram's masks, which its reference
/// needs, would change such NaNs: refused by default, canonicalised on request.
fn non_finite_bits_survive() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let f32_bits: [u32; 6] = [
        0xffff_fffe,
        0x7fc0_0001,
        0x7f80_0001,
        0x7f80_0000,
        0xff80_0000,
        0x3f80_0000,
    ];
    let f64_bits: [u64; 3] = [
        0xfff8_0000_dead_beef,
        0x7ff0_0000_0000_0001,
        0x8000_0000_0000_0000,
    ];
    // complex64 inf-infj, -NaN with a payload + 0j: each part keeps its own bits.
    let c64_bits: [u32; 4] = [0x7f80_0000, 0xff80_0000, 0xffc0_0001, 0x0000_0000];
    let mut data: Vec<u8> = f32_bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    data.extend(f64_bits.iter().flat_map(|b| b.to_le_bytes()));
    data.extend(c64_bits.iter().flat_map(|b| b.to_le_bytes()));
    let header = r#"{"c":{"dtype":"C64","shape":[2],"data_offsets":[48,64]},"d":{"dtype":"F64","shape":[3],"data_offsets":[24,48]},"s":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}}"#;
    let bytes = crate::support::safetensors_file(header, &data);
    let file = dir.path().join("non_finite.safetensors");
    std::fs::write(&file, bytes)?;
    // Bit for bit through every format that stores values as they are.
    round_trip_except(&file, &["tensogram"])?;
    // Tensogram by default stores them in its masks, as tensogram does, so that its full
    // validation passes. Masks give a complex number with one non-finite part back as NaN or
    // Inf in both parts: refused, naming the tensor, rather than changed (canonical NaN,
    // asked for, waives NaN bits only).
    let tgm = dir.path().join("masked.tgm");
    let (f, t) = (file.to_string_lossy(), tgm.to_string_lossy());
    let refused = tensorkit(&["convert", &f, &t, "--canonical-nan"]);
    let kind = expect_error_contract(&refused, false)?;
    if kind != "unsupported" || !String::from_utf8_lossy(&refused.stderr).contains("\"c\"") {
        return Err(format!(
            "complex: {kind}: {}",
            String::from_utf8_lossy(&refused.stderr)
        )
        .into());
    }
    // Real floats: masks give NaN back as the canonical quiet NaN, so a NaN with its sign
    // bit set or another payload is refused by default, naming its tensor and element.
    let header = r#"{"d":{"dtype":"F64","shape":[3],"data_offsets":[24,48]},"s":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}}"#;
    let real = dir.path().join("real.safetensors");
    std::fs::write(&real, crate::support::safetensors_file(header, &data[..48]))?;
    let refused = convert_args(&real, &tgm, None);
    let kind = expect_error_contract(&refused, false)?;
    let said = String::from_utf8_lossy(&refused.stderr);
    if kind != "unsupported"
        || !said.contains("element 0 of tensor \"s\"")
        || !said.contains("sign bit")
        || !said.contains("--canonical-nan")
        || tgm.exists()
    {
        return Err(format!("payload NaN: {kind}: {said}").into());
    }
    // --canonical-nan stores them as that NaN: the same values (NaN where NaN, ±Inf and
    // signs as they were), the payloads gone, tensogram's full validation passing.
    let (f, t) = (real.to_string_lossy(), tgm.to_string_lossy());
    let out = tensorkit(&["convert", &f, &t, "--canonical-nan", "-q"]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    let diff = tensorkit(&["diff", &f, &t]);
    if !diff.status.success() {
        return Err(format!("masked: {}", String::from_utf8_lossy(&diff.stdout)).into());
    }
    let validated = tensorkit(&["validate", &t, "--level", "full"]);
    let said = String::from_utf8_lossy(&validated.stdout);
    if !validated.status.success() || said.contains("nan_detected") || said.contains("inf_detected")
    {
        return Err(format!("masked: {said}").into());
    }
    let listed = inspect_json(&tgm)?;
    if listed["tensors"] == inspect_json(&real)?["tensors"] {
        return Err("masked: NaN payloads survived where masks were expected".into());
    }
    // NaN already canonical, and ±Inf, need no opt-in.
    let canonical: Vec<u8> = [0x7fc0_0000u32, 0x7f80_0000, 0xff80_0000, 0x8000_0000]
        .iter()
        .flat_map(|b| b.to_le_bytes())
        .collect();
    let header = r#"{"s":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
    let plain = dir.path().join("canonical.safetensors");
    std::fs::write(&plain, crate::support::safetensors_file(header, &canonical))?;
    let plain_tgm = dir.path().join("canonical.tgm");
    convert(&plain, &plain_tgm, None)?;
    if tensors(&inspect_json(&plain_tgm)?) != tensors(&inspect_json(&plain)?) {
        return Err("canonical NaN and ±Inf: the bits changed".into());
    }
    // --allow-extensions keeps them bit for bit in lossless objects, complex ones too.
    let f = file.to_string_lossy();
    let kept = dir.path().join("kept.tgm");
    let out = tensorkit(&[
        "convert",
        &f,
        &kept.to_string_lossy(),
        "--allow-extensions",
        "-q",
    ]);
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned().into());
    }
    if tensors(&inspect_json(&kept)?) != tensors(&inspect_json(&file)?) {
        return Err("--allow-extensions: the bits changed".into());
    }
    Ok(())
}
