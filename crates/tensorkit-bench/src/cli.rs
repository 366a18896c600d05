//! (i) The CLI at the speed of the library: `tensorkit convert` of one large tensor between
//! every two uncompressed formats, next to `cp` of the same file; (j) `tensorkit edit` of one
//! metadata key of a large file, in place and as a copy next to `cp`.

use crate::measure::{Scale, as_bytes, field, row};
use crate::workloads::{time_new_file, write_all};
use serde_json::{Value, json};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The formats `convert` is timed between: the name `--to` takes, and the writer of
/// [`write_all`] that made the source file.
const FORMATS: [(&str, &str); 5] = [
    ("safetensors", "safetensors crate"),
    ("bintensors", "tensorkit BinTensors"),
    ("ztensor-0.1", "tensorkit zTensor 0.1"),
    ("ztensor-2", "tensorkit zTensor 2"),
    ("tensogram", "tensorkit Tensogram"),
];

/// The start of the implementation name of a row timed with `--fsync`.
pub(crate) const FSYNCED: &str = "tensorkit --fsync convert";

/// The `tensorkit` binary built beside this one (`cargo xtask bench` builds both).
fn cli() -> PathBuf {
    let exe = std::env::current_exe().expect("the bench's own path");
    let cli = exe.with_file_name(format!("tensorkit{}", std::env::consts::EXE_SUFFIX));
    assert!(
        cli.exists(),
        "group (i) runs {}: build it first (cargo build --release -p tensorkit-cli)",
        cli.display()
    );
    cli
}

/// Runs `cmd`, which must succeed, and returns what it printed.
fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("run a command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `tensorkit edit PATH --set SET`, which must have been made as `method` says (`in-place`
/// or `copy`): a timing of the other kind would be a timing of something else.
fn edit_as(cli: &Path, path: &Path, set: &str, method: &str) {
    let out = run(Command::new(cli)
        .arg("edit")
        .arg(path)
        .args(["--set", set, "--json"]));
    let report: Value = serde_json::from_slice(&out).expect("an edit report");
    assert_eq!(report["method"], method, "{report}");
}

/// Times `what` writing `dst` as [`time_new_file`] does, `runs` times after a first run
/// that warms the page cache with the source.
fn timed(runs: usize, dst: &Path, what: &mut dyn FnMut()) -> Vec<f64> {
    time_new_file(dst, what);
    (0..runs).map(|_| time_new_file(dst, what)).collect()
}

/// (i) For each source format: `cp` of the file, `tensorkit convert` to each other format,
/// and, durably, `cp` followed by an fsync of the copy next to `tensorkit --fsync convert`
/// to the next format in [`FORMATS`].
pub(crate) fn convert(scale: Scale, dir: &Path) -> Vec<Value> {
    let cli = cli();
    let n = scale.big_tensor / 4;
    let one = vec![("big".to_owned(), as_bytes(&field(n)), vec![n as u64])];
    let files = write_all(dir, "convert", &one, 0);
    let dst = dir.join("converted");
    let mut rows = Vec::new();
    for (k, (from, writer)) in FORMATS.into_iter().enumerate() {
        let (_, src, _) = files
            .iter()
            .find(|(who, _, _)| *who == writer)
            .expect("every format written");
        let bytes = std::fs::metadata(src).expect("source").len();
        let case = format!("convert a {} MiB {from} file", scale.big_tensor >> 20);
        let extra = json!({"from": from});
        let cp = timed(scale.runs, &dst, &mut || {
            run(Command::new("cp").arg(src).arg(&dst));
        });
        rows.push(row("i", &case, "cp", &cp, Some(bytes), extra.clone()));
        let synced = timed(scale.runs, &dst, &mut || {
            run(Command::new("cp").arg(src).arg(&dst));
            File::open(&dst).and_then(|f| f.sync_all()).expect("sync");
        });
        rows.push(row(
            "i",
            &case,
            "cp, then fsync",
            &synced,
            Some(bytes),
            extra.clone(),
        ));
        let (next, _) = FORMATS[(k + 1) % FORMATS.len()];
        let t = timed(scale.runs, &dst, &mut || {
            run(Command::new(&cli)
                .args(["--fsync", "convert"])
                .arg(src)
                .arg(&dst)
                .args(["--to", next]));
        });
        rows.push(row(
            "i",
            &case,
            &format!("{FSYNCED} → {next}"),
            &t,
            Some(bytes),
            json!({"from": from, "to": next}),
        ));
        for (to, _) in FORMATS.iter().filter(|(to, _)| *to != from) {
            let t = timed(scale.runs, &dst, &mut || {
                run(Command::new(&cli)
                    .arg("convert")
                    .arg(src)
                    .arg(&dst)
                    .args(["--to", to]));
            });
            rows.push(row(
                "i",
                &case,
                &format!("tensorkit convert → {to}"),
                &t,
                Some(bytes),
                json!({"from": from, "to": to}),
            ));
        }
    }
    let _ = std::fs::remove_file(&dst);
    for (_, path, _) in files {
        let _ = std::fs::remove_file(path);
    }
    rows
}

/// A safetensors file of about `bytes` bytes: one `uint8` tensor (a repeating pattern,
/// written a chunk at a time) and a metadata key `note`.
fn large_safetensors(path: &Path, bytes: usize) {
    use std::io::Write as _;
    let mut json = format!(
        r#"{{"__metadata__":{{"note":"a"}},"t":{{"dtype":"U8","shape":[{bytes}],"data_offsets":[0,{bytes}]}}}}"#
    )
    .into_bytes();
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut f = std::io::BufWriter::new(File::create(path).expect("scratch file"));
    f.write_all(&(json.len() as u64).to_le_bytes())
        .and_then(|()| f.write_all(&json))
        .expect("write");
    let chunk: Vec<u8> = (0..64usize << 20).map(|i| (i * 31 % 251) as u8).collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    f.into_inner().expect("flush").sync_all().expect("sync");
}

/// (j) `tensorkit edit` of one metadata key of a large safetensors file: in place (a new
/// value as long as the old, alternating, so that every run changes the file), and a value
/// too long for the header, so that every run copies the file, next to `cp` of it over an
/// existing copy.
pub(crate) fn edit(scale: Scale, dir: &Path) -> Vec<Value> {
    let cli = cli();
    let path = dir.join("edit.safetensors");
    large_safetensors(&path, scale.edit_file);
    let bytes = std::fs::metadata(&path).expect("the file").len();
    let size = format!("{} MiB", scale.edit_file >> 20);
    let mut rows = Vec::new();
    let in_place = format!("edit one metadata key of a {size} safetensors file, in place");
    let mut k = 0usize;
    let t = crate::measure::time_for(scale.runs.max(20), 1.0, || {
        k += 1;
        let value = if k.is_multiple_of(2) {
            "note=a"
        } else {
            "note=b"
        };
        edit_as(&cli, &path, value, "in-place");
    });
    rows.push(row(
        "j",
        &in_place,
        "tensorkit edit (in place)",
        &t,
        Some(bytes),
        Value::Null,
    ));
    let copy = format!("edit one metadata key of a {size} safetensors file, header too small");
    // An edit that copies replaces the file, so `cp` replaces one too: it copies over a
    // copy made beforehand (truncating it, as an edit's rename frees the old file), each
    // run synced to disk afterwards, outside the timing, as the edits are.
    let dst = dir.join("copied");
    run(Command::new("cp").arg(&path).arg(&dst));
    let cp: Vec<f64> = (0..scale.runs)
        .map(|_| {
            let start = std::time::Instant::now();
            run(Command::new("cp").arg(&path).arg(&dst));
            let secs = start.elapsed().as_secs_f64();
            File::open(&dst).and_then(|f| f.sync_all()).expect("sync");
            secs
        })
        .collect();
    let _ = std::fs::remove_file(&dst);
    rows.push(row("j", &copy, "cp", &cp, Some(bytes), Value::Null));
    let mut len = 0usize;
    let mut edit_copy = || {
        // Longer every time by more than the room a copy leaves (1 KiB, and under 4 KiB
        // more to keep the data's offset within a page): every run copies.
        len += 8000;
        edit_as(&cli, &path, &format!("note={}", "x".repeat(len)), "copy");
    };
    edit_copy();
    let t: Vec<f64> = (0..scale.runs)
        .map(|_| {
            let start = std::time::Instant::now();
            edit_copy();
            let secs = start.elapsed().as_secs_f64();
            File::open(&path).and_then(|f| f.sync_all()).expect("sync");
            secs
        })
        .collect();
    rows.push(row(
        "j",
        &copy,
        "tensorkit edit (copy)",
        &t,
        Some(bytes),
        Value::Null,
    ));
    let _ = std::fs::remove_file(&path);
    rows
}
