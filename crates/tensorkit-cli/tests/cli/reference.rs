//! Files the reference packages wrote (`testdata/<format>/reference/`, made by
//! `scripts/reference/interop.py`): every dtype safetensors 0.8 and zTensor 2 define, a
//! zTensor 2 file `ztensor.Writer` appended to, and ztensor's canonical bytes.

use crate::convert::round_trip;
use crate::support::{expect_error_contract, inspect_json, tensorkit};
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tensor_testkit::{files_with_extension, sha256_hex};

/// The formats whose `reference/` folders hold the files these trials read.
const FORMATS: [&str; 3] = ["safetensors", "ztensor", "tensogram"];

/// `testdata/<format>/reference/<name>`.
fn reference(format: &str, name: &str) -> PathBuf {
    tensor_testkit::reference(format).join(name)
}

/// Names, dtypes, shapes and bytes as the sidecar records them; values as `get` prints them.
fn matches_sidecar(file: &Path) -> Result<(), Failed> {
    let sidecar = tensor_testkit::sidecar(file)?;
    let ours = inspect_json(file)?;
    let listed = ours["tensors"].as_array().ok_or("no tensors")?;
    let expected = sidecar["tensors"].as_object().ok_or("no sidecar tensors")?;
    if listed.len() != expected.len() {
        return Err(format!(
            "{} tensors, the sidecar has {}",
            listed.len(),
            expected.len()
        )
        .into());
    }
    for t in listed {
        let name = t["name"].as_str().ok_or("unnamed tensor")?;
        let e = expected
            .get(name)
            .ok_or_else(|| format!("{name:?} is not in the sidecar"))?;
        if t["dtype"] != e["dtype"] || t["shape"] != e["shape"] {
            return Err(format!(
                "{name}: {} {} != {} {}",
                t["dtype"], t["shape"], e["dtype"], e["shape"]
            )
            .into());
        }
        let bytes: Vec<u8> = (0..e["hex"].as_str().unwrap_or("").len() / 2)
            .map(|i| u8::from_str_radix(&e["hex"].as_str().unwrap_or("")[2 * i..2 * i + 2], 16))
            .collect::<Result<_, _>>()?;
        if t["sha256_le"] != sha256_hex(&bytes) {
            return Err(format!("{name}: the bytes differ from the reference's").into());
        }
        if let Some(values) = e["values"].as_array() {
            let out = tensorkit(&["get", &file.to_string_lossy(), name]);
            let text = String::from_utf8_lossy(&out.stdout);
            let printed: Vec<&str> = text
                .lines()
                .skip(1)
                .flat_map(str::split_whitespace)
                .collect();
            let wanted: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
            // Python writes `1e+38` where Rust writes `1e38`: compare the numbers.
            let number = |s: &&str| match *s {
                "NaN" => f64::NAN.to_bits(),
                other => other.parse::<f64>().map_or(0, f64::to_bits),
            };
            let same = printed.len() == wanted.len()
                && printed.iter().map(number).eq(wanted.iter().map(number));
            if !same {
                return Err(format!(
                    "{name}: get printed {printed:?}, the reference says {wanted:?}"
                )
                .into());
            }
        }
    }
    Ok(())
}

/// Our zTensor 2 writer lays out the same tensors byte for byte as ztensor's canonical
/// writer, whatever order the source holds them in; `.zt` means zTensor 2.
fn canonical_bytes() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("ours.zt");
    let src = reference("ztensor", "zt2_canonical.safetensors");
    let o = tensorkit(&["convert", &src.to_string_lossy(), &out.to_string_lossy()]);
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
    }
    if std::fs::read(&out)? != std::fs::read(reference("ztensor", "zt2_canonical.zt"))? {
        return Err("our zTensor 2 bytes differ from ztensor 2.1's canonical writer".into());
    }
    Ok(())
}

/// An appended file reads as the reference reads it (its tensors and bytes are checked
/// against the sidecar too); `validate` warns about the leftover manifest.
fn appended_file() -> Result<(), Failed> {
    let file = reference("ztensor", "zt2_appended.zt");
    let o = tensorkit(&["validate", &file.to_string_lossy()]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    if !o.status.success() || !said.contains("unreferenced blob") {
        return Err(format!("validate: {:?} {said}", o.status.code()).into());
    }
    let o = tensorkit(&["inspect", &file.to_string_lossy()]);
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
    }
    Ok(())
}

/// An attribute key the reference refuses (empty, from a safetensors metadata key) is
/// refused by our writer too, naming it, and no file is left.
fn empty_attribute_key() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let header =
        r#"{"__metadata__":{"":"empty key"},"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    let bytes = crate::support::safetensors_file(header, &[7]);
    let src = dir.path().join("empty_key.safetensors");
    std::fs::write(&src, bytes)?;
    let out = dir.path().join("out.zt");
    let o = tensorkit(&["convert", &src.to_string_lossy(), &out.to_string_lossy()]);
    let kind = expect_error_contract(&o, false)?;
    let stderr = String::from_utf8_lossy(&o.stderr);
    // In words, not in program notation (it once said `the key Text("")`).
    if kind != "unsupported"
        || !stderr.contains("an empty key")
        || stderr.contains("Text(")
        || out.exists()
    {
        return Err(format!("kind {kind}: {stderr}").into());
    }
    Ok(())
}

/// `--pipeline` output opens in tensogram with the values tensorkit reads: for every
/// pipeline the sidecar records, the tensors we read from a fresh conversion hash to what
/// tensogram 0.24 decoded from ours (`scripts/reference/interop.py`).
fn pipelines_decode_as_the_reference_decodes() -> Result<(), Failed> {
    let src = reference("safetensors", "mixed.safetensors");
    let sidecar = tensor_testkit::sidecar(&src)?;
    let dir = tempfile::tempdir()?;
    let pipelines = sidecar["tensogram_decodes"]
        .as_object()
        .ok_or("no pipelines")?;
    for (spec, expected) in pipelines {
        let out = dir.path().join("out.tgm");
        let o = tensorkit(&[
            "convert",
            &src.to_string_lossy(),
            &out.to_string_lossy(),
            "--pipeline",
            spec,
        ]);
        if !o.status.success() {
            return Err(format!("{spec}: {}", String::from_utf8_lossy(&o.stderr)).into());
        }
        let said = String::from_utf8_lossy(&o.stdout);
        if spec.starts_with("simple_packing")
            && !said.contains("left out: simple_packing for 1 tensor (\"w\")")
        {
            return Err(
                format!("{spec}: the float32 tensor's fallback is not reported: {said}").into(),
            );
        }
        for t in inspect_json(&out)?["tensors"]
            .as_array()
            .ok_or("no tensors")?
        {
            let name = t["name"].as_str().unwrap_or_default();
            if t["sha256_le"] != expected[name] {
                return Err(
                    format!("{spec}: {name} reads differently from tensogram's decode").into(),
                );
            }
        }
    }
    Ok(())
}

/// A mask compressed with blosc2 (which tensorkit does not build): `validate` warns that it
/// could not check the object, and reading it is refused as unsupported. (Named `.tgm.bin`
/// so that the per-file trials leave it alone.)
fn blosc2_mask() -> Result<(), Failed> {
    let file = reference("tensogram", "tgm_blosc2_mask.tgm.bin");
    let o = tensorkit(&["validate", &file.to_string_lossy()]);
    let said = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() || !said.contains("valid") {
        return Err(format!("validate said {said:?}").into());
    }
    // [1, NaN, 3] a hundred times: the NaN mask, compressed with blosc2, puts them back.
    let out = tensorkit(&["get", &file.to_string_lossy(), "m"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let values: Vec<&str> = text
        .lines()
        .skip(1)
        .flat_map(str::split_whitespace)
        .collect();
    let want: Vec<&str> = ["1.0", "NaN", "3.0"].repeat(100);
    if !out.status.success() || values != want {
        return Err(format!("get printed {text:?}").into());
    }
    Ok(())
}

/// A Hugging Face shard set (`huggingface_hub`'s index and shards) is one file to every
/// command: listed, converted into one file, compared.
fn shard_index_is_one_file() -> Result<(), Failed> {
    let index = reference("safetensors", "sharded/model.safetensors.index.json");
    let o = tensorkit(&["ls", &index.to_string_lossy()]);
    let text = String::from_utf8_lossy(&o.stdout);
    if !o.status.success()
        || text.lines().count() != 4
        || !text.contains("lm_head.bias\tint64\t[5]")
    {
        return Err(format!("ls: {text} {}", String::from_utf8_lossy(&o.stderr)).into());
    }
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("one.tgm");
    let o = tensorkit(&["convert", &index.to_string_lossy(), &out.to_string_lossy()]);
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned().into());
    }
    let o = tensorkit(&["diff", &index.to_string_lossy(), &out.to_string_lossy()]);
    if !o.status.success() {
        return Err(format!("diff: {}", String::from_utf8_lossy(&o.stdout)).into());
    }
    // And back into shards of at most 300 bytes: three shards and an index.
    let sharded = dir.path().join("again.safetensors");
    let o = tensorkit(&[
        "convert",
        &out.to_string_lossy(),
        &sharded.to_string_lossy(),
        "--max-shard-size",
        "300",
    ]);
    let again = dir.path().join("again.safetensors.index.json");
    if !o.status.success() || !dir.path().join("again-00003-of-00003.safetensors").exists() {
        return Err(format!("sharded convert: {}", String::from_utf8_lossy(&o.stderr)).into());
    }
    let o = tensorkit(&["diff", &index.to_string_lossy(), &again.to_string_lossy()]);
    if !o.status.success() {
        return Err(format!(
            "diff of the shard sets: {}",
            String::from_utf8_lossy(&o.stdout)
        )
        .into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    let every = FORMATS.iter().flat_map(|f| {
        ["safetensors", "zt", "tgm"]
            .into_iter()
            .map(move |ext| (tensor_testkit::reference(f), ext))
    });
    for (dir, ext) in every {
        for file in files_with_extension(&dir, ext) {
            let name = tensor_testkit::stem(&file);
            let has_tensors =
                tensor_testkit::sidecar(&file).is_ok_and(|s| s["tensors"].is_object());
            if has_tensors {
                let f = file.clone();
                trials.push(Trial::test(
                    format!("reference::values::{name}"),
                    move || matches_sidecar(&f),
                ));
            }
            trials.push(Trial::test(
                format!("reference::round_trip::{name}.{ext}"),
                move || round_trip(&file),
            ));
        }
    }
    trials.push(Trial::test("reference::canonical_bytes", canonical_bytes));
    trials.push(Trial::test(
        "reference::shard_index_is_one_file",
        shard_index_is_one_file,
    ));
    trials.push(Trial::test("reference::blosc2_mask", blosc2_mask));
    trials.push(Trial::test(
        "reference::pipelines_decode_as_the_reference_decodes",
        pipelines_decode_as_the_reference_decodes,
    ));
    trials.push(Trial::test("reference::six_bit_floats", six_bit_floats));
    trials.push(Trial::test("reference::appended_file", appended_file));
    trials.push(Trial::test(
        "reference::empty_attribute_key",
        empty_attribute_key,
    ));
    trials
}

/// Six-bit floats, which only the safetensors crate itself writes (its Python binding has no
/// name for them): read, printed and converted without changing a byte.
fn six_bit_floats() -> Result<(), Failed> {
    use safetensors::tensor::{Dtype, TensorView};
    let dir = tempfile::tempdir()?;
    let e2m3 = [0x08u8, 0xFA, 0x01]; // codes 0x08 0x28 0x1F 0x00: 1.0 -1.0 7.5 0.0
    let e3m2 = [0u8; 6];
    let tensors = [
        ("e2m3", TensorView::new(Dtype::F6_E2M3, vec![4], &e2m3)?),
        ("e3m2", TensorView::new(Dtype::F6_E3M2, vec![8], &e3m2)?),
    ];
    let file = dir.path().join("f6.safetensors");
    std::fs::write(&file, safetensors::serialize(tensors, None)?)?;
    let o = tensorkit(&["get", &file.to_string_lossy(), "e2m3"]);
    let text = String::from_utf8_lossy(&o.stdout);
    if !text.contains("float6_e2m3 [4]") || !text.contains("1.0 -1.0 7.5 0.0") {
        return Err(format!("get printed {text:?}").into());
    }
    round_trip(&file)
}
