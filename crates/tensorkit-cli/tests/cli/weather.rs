//! The verbs weather pipelines script with, on forecast files built here: `-w` filters and
//! `-p` columns (`ls`, `get`), `copy` into templated names, `merge --strategy`, and
//! `reshuffle`; outputs are read back, Tensogram ones byte for byte against their sources.

use crate::support::{expect_error_contract, tensorkit};
use libtest_mimic::{Failed, Trial};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{EncodeOptions, GlobalMetadata, Map, MetaValue, StreamEncoder, TgmFile};
use tensorkit::{ByteOrder, Dtype};

const PARAMS: [&str; 3] = ["2t", "10u", "msl"];
const STEPS: [u64; 3] = [0, 6, 12];

/// `base` entry `{"mars": {"param": p, "step": s}}`.
fn mars(param: &str, step: u64) -> Map {
    let inner = MetaValue::Map(vec![
        (MetaValue::from("param"), MetaValue::from(param)),
        (MetaValue::from("step"), MetaValue::from(step)),
    ]);
    Map::from([("mars".to_owned(), inner)])
}

fn field(param: usize, step: u64) -> (DataObjectDescriptor, Vec<u8>) {
    let values: Vec<u8> = (0..32)
        .flat_map(|i| (i as f32 + 100.0 * param as f32 + step as f32).to_le_bytes())
        .collect();
    (
        DataObjectDescriptor::new(Dtype::Float32, &[4, 8], ByteOrder::Little),
        values,
    )
}

/// A forecast file: one message per (step, param), `centre` in each message's `_extra_`
/// (`hostile` as the last message's param, when given); returns the messages' bytes.
fn forecast(path: &Path, hostile: Option<&str>) -> Vec<Vec<u8>> {
    let mut messages = Vec::new();
    for &step in &STEPS {
        for (p, param) in PARAMS.iter().enumerate() {
            let last = step == 12 && p == 2;
            let param = hostile.filter(|_| last).unwrap_or(param);
            let meta = GlobalMetadata {
                base: vec![mars(param, step)],
                extra: Map::from([("centre".to_owned(), MetaValue::from("ecmf"))]),
                ..GlobalMetadata::default()
            };
            let (d, data) = field(p, step);
            messages.push(
                tensorkit::frame::serialize(&meta, &[d], &[&data], &EncodeOptions::default())
                    .unwrap(),
            );
        }
    }
    std::fs::write(path, messages.concat()).unwrap();
    messages
}

fn run(args: &[&str]) -> Result<String, Failed> {
    let out = tensorkit(args);
    if !out.status.success() {
        return Err(format!(
            "{args:?}: exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs a command that must fail by the error contract; returns its error line.
fn refused(args: &[&str]) -> Result<String, Failed> {
    let out = tensorkit(args);
    expect_error_contract(&out, false)?;
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn filters_list_and_pick() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let fc = dir.path().join("fc.tgm");
    forecast(&fc, None);
    let listed = run(&[
        "ls",
        s(&fc),
        "-w",
        "mars.param=2t/msl",
        "-w",
        "mars.step!=0",
    ])?;
    let rows: Vec<&str> = listed
        .lines()
        .map(|l| l.split('\t').next_back().unwrap())
        .collect();
    if listed.lines().count() != 4 || rows.iter().any(|r| *r != "object=0") {
        return Err(format!("ls -w: {listed}").into());
    }
    let table = run(&[
        "ls",
        s(&fc),
        "-p",
        "mars.param,mars.step,centre,nope",
        "-w",
        "mars.step=6",
    ])?;
    let want = "name\tmars.param\tmars.step\tcentre\tnope\n\
                tensor_3\t2t\t6\tecmf\t-\n\
                tensor_4\t10u\t6\tecmf\t-\n\
                tensor_5\tmsl\t6\tecmf\t-\n";
    if table != want {
        return Err(format!("ls -p:\n{table}").into());
    }
    let json: serde_json::Value = serde_json::from_str(&run(&[
        "ls",
        s(&fc),
        "--json",
        "-p",
        "mars.step",
        "-w",
        "mars.param=10u",
    ])?)?;
    let steps: Vec<&serde_json::Value> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["keys"]["mars.step"])
        .collect();
    if steps != ["0", "6", "12"] {
        return Err(format!("ls --json: {json}").into());
    }
    let got = run(&["get", s(&fc), "-w", "mars.param=msl", "-w", "mars.step=12"])?;
    if !got.starts_with("# tensor_8 float32 [4, 8]\n212.0 213.0") {
        return Err(format!("get -w: {got}").into());
    }
    let said = refused(&["get", s(&fc), "-w", "mars.param=msl"])?;
    if !said.contains("several tensors match") {
        return Err(said.into());
    }
    expect_error_contract(&tensorkit(&["get", s(&fc), "-w", "mars.param=sst"]), false)?;
    expect_error_contract(&tensorkit(&["ls", s(&fc), "-w", "mars.param"]), false)?;
    Ok(())
}

fn copy_splits_by_template_byte_for_byte() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let fc = dir.path().join("fc.tgm");
    let messages = forecast(&fc, Some("../../escape"));
    let template = dir
        .path()
        .join("by/[mars.param]_[mars.step]_[mars.class].tgm");
    let said = run(&["copy", s(&fc), s(&template), "-w", "mars.param!=10u"])?;
    if !said.contains("copied 6 of 9 messages into 6 files") {
        return Err(said.into());
    }
    for &step in &STEPS {
        for (p, param) in PARAMS.iter().enumerate() {
            let out = dir.path().join(format!("by/{param}_{step}_unknown.tgm"));
            let i = STEPS.iter().position(|&x| x == step).unwrap() * 3 + p;
            match (std::fs::read(&out), *param) {
                (Ok(_), "10u") => return Err("10u was copied".into()),
                (Err(_), "10u") => {}
                (Err(_), "msl") if step == 12 => {}
                (Ok(bytes), _) if bytes == messages[i] => {}
                (other, _) => return Err(format!("{}: {other:?}", out.display()).into()),
            }
        }
    }
    // The hostile param became one component inside the template's directory.
    let escaped = dir.path().join("by/_._.._escape_12_unknown.tgm");
    if std::fs::read(&escaped).ok().as_ref() != Some(&messages[8]) {
        return Err(format!("{}: not the last message", escaped.display()).into());
    }
    let one = dir.path().join("two.tgm");
    run(&["copy", s(&fc), s(&one), "-w", "mars.param=2t"])?;
    if std::fs::read(&one)? != [&messages[0][..], &messages[3], &messages[6]].concat() {
        return Err("copy into one file is not the messages byte for byte".into());
    }
    // Into another format, tensor by tensor.
    let st = dir.path().join("st/[mars.param].safetensors");
    run(&["copy", s(&fc), s(&st), "-w", "mars.step=6"])?;
    let back = tensorkit::open(dir.path().join("st/10u.safetensors"))?;
    let t = back.tensors().next().ok_or("empty")?.to_tensor()?;
    if back.len() != 1 || t.data()[..4] != 106.0f32.to_le_bytes() {
        return Err("the safetensors copy does not hold 10u at step 6".into());
    }
    Ok(())
}

fn merge_settles_metadata_by_strategy() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let mut files = Vec::new();
    for (i, centre) in ["ecmf", "kwbc"].iter().enumerate() {
        let path = dir.path().join(format!("{i}.safetensors"));
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let v = tensorkit::TensorView::new(&data, Dtype::Float32, &[2], ByteOrder::Little)?;
        let options = tensorkit::WriteOptions {
            metadata: Some(serde_json::from_str(&format!(
                r#"{{"centre": "{centre}", "run": "00"}}"#
            ))?),
            ..tensorkit::WriteOptions::default()
        };
        tensorkit::save_tensors(&path, [(format!("t{i}"), v)], &options)?;
        files.push(path);
    }
    let out = dir.path().join("m.safetensors");
    let said = refused(&["merge", s(&files[0]), s(&files[1]), "-o", s(&out)])?;
    if !said.contains("\"centre\"") || out.exists() {
        return Err(said.into());
    }
    for (strategy, want) in [("first", "ecmf"), ("last", "kwbc")] {
        run(&[
            "merge",
            s(&files[0]),
            s(&files[1]),
            "-o",
            s(&out),
            "--strategy",
            strategy,
        ])?;
        let merged = tensorkit::open(&out)?;
        let meta = merged.metadata().ok_or("no metadata")?;
        if meta["centre"] != want || meta["run"] != "00" || merged.len() != 2 {
            return Err(format!("--strategy {strategy}: {meta:?}").into());
        }
    }
    Ok(())
}

/// A streamed file: each message's index and metadata in its footer.
fn streamed(path: &Path) -> Vec<Vec<u8>> {
    let mut messages = Vec::new();
    for &step in &STEPS {
        let meta = GlobalMetadata {
            extra: Map::from([("step".to_owned(), MetaValue::from(step))]),
            ..GlobalMetadata::default()
        };
        let mut enc = StreamEncoder::new(
            Cursor::new(Vec::new()),
            &meta,
            EncodeOptions {
                preceders: true,
                ..EncodeOptions::default()
            },
        )
        .unwrap();
        for (p, _) in PARAMS.iter().enumerate() {
            let (mut d, data) = field(p, step);
            d.compression = "zstd".into();
            enc.write_preceder(&mars(PARAMS[p], step)).unwrap();
            enc.write_object(&d, &data).unwrap();
        }
        messages.push(enc.finish().unwrap().into_inner());
    }
    std::fs::write(path, messages.concat()).unwrap();
    messages
}

fn reshuffle_regroups_without_decoding() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("streamed.tgm");
    streamed(&input);
    let flat = dir.path().join("flat.tgm");
    run(&["reshuffle", s(&input), "-o", s(&flat)])?;
    let file = TgmFile::map(&flat, &tensorkit::ReadOptions::default())?;
    for r in file.ranges() {
        let flags = u16::from_be_bytes([file.bytes()[r.start + 10], file.bytes()[r.start + 11]]);
        if flags & tensorkit::frame::wire::flags::HEADER_INDEX == 0 {
            return Err(
                format!("a message at {} still has its index in the footer", r.start).into(),
            );
        }
    }
    same_objects(&input, &flat)?;
    // Regrouped by param (one message each) and ordered by it.
    let grouped = dir.path().join("grouped.tgm");
    let said = run(&[
        "reshuffle",
        s(&input),
        "-o",
        s(&grouped),
        "--group-by",
        "mars.param",
        "--sort-by",
        "mars.param",
    ])?;
    if !said.contains("9 objects") || !said.contains("into 3 messages") {
        return Err(said.into());
    }
    let table = run(&["ls", s(&grouped), "-p", "mars.param,mars.step,step"])?;
    let firsts: Vec<&str> = table
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    if firsts != ["10u", "10u", "10u", "2t", "2t", "2t", "msl", "msl", "msl"] {
        return Err(format!("grouping: {table}").into());
    }
    // `step` was each message's own `_extra_` key: it moved into the objects' entries.
    if !table.contains("tensor_0\t10u\t0\t0") || !table.contains("tensor_8\tmsl\t12\t12") {
        return Err(format!("extra keys: {table}").into());
    }
    same_objects(&input, &grouped)?;
    let valid = run(&["validate", s(&grouped)])?;
    if !valid.contains("valid") {
        return Err(valid.into());
    }
    // Damage is refused, and no output is left.
    let mut bytes = std::fs::read(&input)?;
    let at = bytes.len() / 6;
    bytes[at] ^= 0x40;
    let damaged = dir.path().join("damaged.tgm");
    std::fs::write(&damaged, &bytes)?;
    let out = dir.path().join("never.tgm");
    expect_error_contract(
        &tensorkit(&["reshuffle", s(&damaged), "-o", s(&out)]),
        false,
    )?;
    if out.exists() {
        return Err("a refused reshuffle left its output".into());
    }
    Ok(())
}

/// Every object of `a` is in `b` with the same values, matched by (param, step).
fn same_objects(a: &Path, b: &Path) -> Result<(), Failed> {
    let values = |p: &PathBuf| -> Result<Vec<(String, Vec<u8>)>, Failed> {
        let f = tensorkit::open(p)?;
        let mut out = Vec::new();
        for t in f.tensors() {
            let mars = t.attributes().iter().find(|(k, _)| k == "mars");
            let key = format!("{mars:?}");
            out.push((key, t.to_tensor()?.data().to_vec()));
        }
        out.sort();
        Ok(out)
    };
    if values(&a.to_path_buf())? != values(&b.to_path_buf())? {
        return Err(format!("{} and {} hold different objects", a.display(), b.display()).into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let t = |name: &str, f: fn() -> Result<(), Failed>| Trial::test(format!("weather::{name}"), f);
    vec![
        t("filters_list_and_pick", filters_list_and_pick),
        t(
            "copy_splits_by_template_byte_for_byte",
            copy_splits_by_template_byte_for_byte,
        ),
        t(
            "merge_settles_metadata_by_strategy",
            merge_settles_metadata_by_strategy,
        ),
        t(
            "reshuffle_regroups_without_decoding",
            reshuffle_regroups_without_decoding,
        ),
    ]
}
