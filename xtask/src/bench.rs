//! `cargo xtask bench [--quick] [--with-python VENV] [--peer-script PATH] [--out FILE]`:
//! runs the benchmark suite (`tensorkit-bench`, release build) and, with `--with-python`,
//! the Python peers (`peer_bench.py` in that virtual environment, into which the pinned
//! peers it lacks are installed first: numpy, safetensors, ztensor, bintensors, tensogram,
//! eccodes, torch) and the Python package against them (`crates/tensorkit-py/bench/bench_python.py`, on a release build installed
//! into the same environment), and writes
//! `docs/benchmarks.md`: medians, min–max, ratios to the peers, fractions of the machine's
//! limits, and every speed target with "met" or the shortfall.

use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Options {
    quick: bool,
    python: Option<PathBuf>,
    peer_script: PathBuf,
    out: PathBuf,
}

fn parse(root: &Path, args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        python: None,
        peer_script: root.join("../shared/tools/peer_bench.py"),
        out: root.join("docs/benchmarks.md"),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |what: &str| it.next().cloned().ok_or(format!("{a} needs {what}"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--with-python" => o.python = Some(PathBuf::from(value("a virtual environment")?)),
            "--peer-script" => o.peer_script = PathBuf::from(value("a path")?),
            "--out" => o.out = PathBuf::from(value("a path")?),
            other => return Err(format!("bench: unknown option {other}")),
        }
    }
    Ok(o)
}

fn run_json(cmd: &mut Command, what: &str) -> Result<Value, String> {
    let out = cmd.output().map_err(|e| format!("running {what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{what} printed no JSON: {e}"))
}

/// A duration for people: µs, ms or s with three significant digits.
fn secs(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.3} µs", s * 1e6).replace(".000", "")
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

fn rate(bytes: f64, s: f64) -> String {
    let r = bytes / s;
    if r >= 1e9 {
        format!("{:.2} GB/s", r / 1e9)
    } else {
        format!("{:.0} MB/s", r / 1e6)
    }
}

fn find<'a>(rows: &'a [Value], case: &str, who: &str) -> Option<&'a Value> {
    rows.iter()
        .find(|r| r["case"].as_str().is_some_and(|c| c.starts_with(case)) && r["impl"] == who)
}

fn median(r: &Value) -> f64 {
    r["median_s"].as_f64().unwrap_or(f64::NAN)
}

fn throughput(r: &Value) -> Option<f64> {
    Some(r["bytes"].as_f64()? / median(r))
}

/// The fastest of a row's runs.
fn best(r: &Value) -> f64 {
    r["min_s"].as_f64().unwrap_or(f64::NAN)
}

/// [`throughput`] of the fastest run.
fn throughput_at_best(r: &Value) -> Option<f64> {
    Some(r["bytes"].as_f64()? / best(r))
}

/// The case of group (b)'s saves, and of the machine's `write()` timed in the same rounds.
const SAVE: &str = "save one large";
const WRITE_PROBE: &str = "write() of the large tensor";

/// A save within this factor of the machine's own `write()` of the same bytes, best against
/// best in the same rounds, is at the floor: the best of fifteen rounds of one writer moves
/// by about 3 % from one run to the next on this machine.
const FLOOR: f64 = 1.05;

/// This run's limits (group (e)), as bandwidths: memcpy between warm buffers, `read()` from
/// the page cache, and `write()` into a new file (its best, as saves are compared).
#[derive(Clone, Copy)]
struct Machine {
    memcpy: f64,
    read: f64,
    write: f64,
}

impl Machine {
    fn of(rows: &[Value]) -> Machine {
        let limit = |case: &str| {
            find(rows, case, "machine")
                .and_then(throughput)
                .unwrap_or(f64::NAN)
        };
        Machine {
            memcpy: limit("memcpy"),
            read: limit("read()"),
            write: find(rows, WRITE_PROBE, "machine")
                .and_then(throughput_at_best)
                .unwrap_or(f64::NAN),
        }
    }
}

/// The peer a row is compared with, in the same group and case.
fn peer_of(group: &str, who: &str) -> Option<&'static str> {
    match (group, who) {
        ("a" | "b", w) if w.starts_with("tensorkit") => Some("safetensors crate"),
        ("d", "tensorkit") => Some("tensogram-szip 0.24.0"),
        ("f", "tensorkit (range requests)") => Some("download first"),
        ("i", w) if w.starts_with("tensorkit --fsync") => Some("cp, then fsync"),
        ("i", w) if w.starts_with("tensorkit") => Some("cp"),
        ("j", "tensorkit edit (copy)") => Some("cp"),
        _ => None,
    }
}

const GROUPS: [(&str, &str); 8] = [
    ("a", "(a) Open a 2000-tensor file and read one tensor"),
    ("b", "(b) Save and load one large float32 tensor"),
    ("c", "(c) Tensogram pipelines on one float32 field"),
    (
        "d",
        "(d) Encoding stages: szip against `tensogram-szip`, simple packing, shuffle",
    ),
    (
        "g",
        "(g) Both cores: every core against one (rayon's pool; `--threads` in the CLI), with the cores each row kept busy",
    ),
    (
        "f",
        "(f) Remote: the files of (a) behind a local HTTP server that adds 20 ms to every request, through range requests against downloading them first",
    ),
    (
        "i",
        "(i) The CLI: `tensorkit convert` of the large tensor between every two uncompressed formats, against `cp` of the same file",
    ),
    (
        "j",
        "(j) `tensorkit edit` of one metadata key of a large safetensors file: in place, and as a copy (the header too small) against `cp` of the same file",
    ),
];

fn table(out: &mut String, group: &str, rows: &[Value], machine: Machine) {
    let files = matches!(group, "a" | "b" | "i" | "j");
    let limit = if files { machine.read } else { machine.memcpy };
    let limit_name = match group {
        "b" => "page-cache read (saves: write())",
        "a" | "i" | "j" => "page-cache read",
        _ => "memcpy",
    };
    let _ = writeln!(
        out,
        "| case | implementation | median | min – max | throughput | vs peer | of {limit_name} |"
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for r in rows.iter().filter(|r| r["group"] == group) {
        let who = r["impl"].as_str().unwrap_or_default();
        let case = r["case"].as_str().unwrap_or_default();
        let tp = throughput(r);
        // Saves are compared best against best (see [`save_verdict`]), the rest by median.
        let save = case.starts_with(SAVE);
        // Group (g) holds each row against its case's one-core baseline.
        let peer = if group == "g" {
            one_core(rows, case)
        } else {
            peer_of(group, who).and_then(|p| find(rows, case, p))
        };
        let vs = peer
            .filter(|p| p["impl"] != r["impl"])
            .map_or_else(String::new, |p| {
                if save {
                    format!("{:.2}×", best(p) / best(r))
                } else {
                    format!("{:.2}×", median(p) / median(r))
                }
            });
        let tp = tp.filter(|_| !case.contains("zero-copy"));
        let fraction = if save {
            throughput_at_best(r).map_or_else(String::new, |t| {
                format!("{:.0} %", 100.0 * t / machine.write)
            })
        } else {
            tp.filter(|_| !case.contains("2000-tensor"))
                .map_or_else(String::new, |t| format!("{:.0} %", 100.0 * t / limit))
        };
        let mut extra = String::new();
        if let Some(ratio) = r["extra"]["ratio"].as_f64() {
            let _ = write!(extra, "; size {:.1} %", 100.0 * ratio);
        }
        if let Some(e) = r["extra"]["max_error"].as_f64() {
            let _ = write!(extra, ", max error {e:.2e}");
        }
        if let Some(c) = r["extra"]["cores"].as_f64() {
            let _ = write!(extra, "; {c:.2} cores busy");
        }
        if let (Some(n), Some(b)) = (
            r["extra"]["requests"].as_u64(),
            r["extra"]["bytes_received"].as_u64(),
        ) {
            let _ = write!(
                extra,
                "; {n} request{}, {:.2} MB received",
                if n == 1 { "" } else { "s" },
                b as f64 / 1e6
            );
        }
        let _ = writeln!(
            out,
            "| {case}{extra} | {who} | {} | {} – {} | {} | {vs} | {fraction} |",
            secs(median(r)),
            secs(r["min_s"].as_f64().unwrap_or(f64::NAN)),
            secs(r["max_s"].as_f64().unwrap_or(f64::NAN)),
            tp.map_or_else(String::new, |t| rate(t, 1.0)),
        );
    }
}

/// A speed target from the format issues: what, where its figure comes from, and the bar.
struct Target {
    what: &'static str,
    case: &'static str,
    who: &'static str,
    /// `Seconds(max)`, `Rate(min bytes/s)`, `Values(min values/s)` or `Faster(min ratio)`.
    bar: Bar,
}

enum Bar {
    Seconds(f64),
    Rate(f64),
    Values(f64),
    Faster(f64),
}

const TARGETS: [Target; 25] = [
    Target {
        what: "BinTensors: open a 2000-tensor file (≤ 350 µs)",
        case: "open a 2000",
        who: "tensorkit BinTensors",
        bar: Bar::Seconds(350e-6),
    },
    Target {
        what: "BinTensors: at least 2× the safetensors crate on the same file",
        case: "open a 2000",
        who: "tensorkit BinTensors",
        bar: Bar::Faster(2.0),
    },
    Target {
        what: "zTensor: open a 2000-tensor file and read one tensor (< 1 ms)",
        case: "open a 2000",
        who: "tensorkit zTensor 0.1",
        bar: Bar::Seconds(1e-3),
    },
    Target {
        what: "zTensor: write one large float32 tensor (≥ 3 GB/s)",
        case: SAVE,
        who: "tensorkit zTensor 0.1",
        bar: Bar::Rate(3e9),
    },
    Target {
        what: "zTensor: load it into a fresh buffer (≥ 3 GB/s)",
        case: "load it into a new huge-page",
        who: "tensorkit zTensor 0.1",
        bar: Bar::Rate(3e9),
    },
    Target {
        what: "Tensogram: encode, pipeline none (≥ 3 GB/s)",
        case: "encode, none",
        who: "tensorkit Tensogram",
        bar: Bar::Rate(3e9),
    },
    Target {
        what: "Tensogram: decode, pipeline none (≥ 3 GB/s)",
        case: "decode, none",
        who: "tensorkit Tensogram",
        bar: Bar::Rate(3e9),
    },
    Target {
        what: "Tensogram: hash verification (≥ 8 GB/s)",
        case: "verify the object",
        who: "tensorkit Tensogram",
        bar: Bar::Rate(8e9),
    },
    Target {
        what: "Tensogram: open a 2000-object file and decode object 1000 (< 1 ms)",
        case: "open a 2000",
        who: "tensorkit Tensogram",
        bar: Bar::Seconds(1e-3),
    },
    Target {
        what: "szip encode, 16-bit samples (≥ 200 MB/s)",
        case: "szip encode",
        who: "tensorkit",
        bar: Bar::Rate(200e6),
    },
    Target {
        what: "szip decode, 16-bit samples (≥ 200 MB/s)",
        case: "szip decode",
        who: "tensorkit",
        bar: Bar::Rate(200e6),
    },
    Target {
        what: "simple packing encode, 16 bits (≥ 400 M values/s)",
        case: "simple_packing encode",
        who: "tensorkit",
        bar: Bar::Values(400e6),
    },
    Target {
        what: "simple packing decode, 16 bits (≥ 1 G values/s)",
        case: "simple_packing decode",
        who: "tensorkit",
        bar: Bar::Values(1e9),
    },
    Target {
        what: "shuffle, 4-byte elements (≥ 4 GB/s)",
        case: "shuffle, 4",
        who: "tensorkit",
        bar: Bar::Rate(4e9),
    },
    Target {
        what: "unshuffle, 4-byte elements (≥ 4 GB/s)",
        case: "unshuffle, 4",
        who: "tensorkit",
        bar: Bar::Rate(4e9),
    },
    Target {
        what: "Remote, 20 ms per request: inspect a 2000-tensor safetensors file (< 100 ms)",
        case: "inspect a 2000-tensor file, safetensors",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: get one tensor of a 2000-tensor safetensors file (< 100 ms)",
        case: "get one tensor of a 2000-tensor file, safetensors",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: inspect a 2000-tensor BinTensors file (< 100 ms)",
        case: "inspect a 2000-tensor file, BinTensors",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: get one tensor of a 2000-tensor BinTensors file (< 100 ms)",
        case: "get one tensor of a 2000-tensor file, BinTensors",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: inspect a 2000-tensor zTensor 0.1 file (< 100 ms)",
        case: "inspect a 2000-tensor file, zTensor 0.1",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: get one tensor of a 2000-tensor zTensor 0.1 file (< 100 ms)",
        case: "get one tensor of a 2000-tensor file, zTensor 0.1",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: inspect a 2000-tensor zTensor 2 file (< 100 ms)",
        case: "inspect a 2000-tensor file, zTensor 2",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: get one tensor of a 2000-tensor zTensor 2 file (< 100 ms)",
        case: "get one tensor of a 2000-tensor file, zTensor 2",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: inspect a 2000-tensor Tensogram file (< 100 ms)",
        case: "inspect a 2000-tensor file, Tensogram",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
    Target {
        what: "Remote, 20 ms per request: get one tensor of a 2000-tensor Tensogram file (< 100 ms)",
        case: "get one tensor of a 2000-tensor file, Tensogram",
        who: "tensorkit (range requests)",
        bar: Bar::Seconds(0.1),
    },
];

fn targets(out: &mut String, rows: &[Value]) {
    out.push_str("| target | measured | verdict |\n|---|---:|---|\n");
    for t in &TARGETS {
        let Some(r) = find(rows, t.case, t.who) else {
            let _ = writeln!(out, "| {} | — | not measured |", t.what);
            continue;
        };
        let m = median(r);
        let (shown, met, short) = match t.bar {
            Bar::Seconds(max) => (secs(m), m <= max, format!("{:.1}× too slow", m / max)),
            Bar::Rate(min) => {
                // Saves at their best, as everywhere (see [`save_verdict`]).
                let v = if t.case == SAVE {
                    throughput_at_best(r)
                } else {
                    throughput(r)
                }
                .unwrap_or(0.0);
                (
                    rate(v, 1.0),
                    v >= min,
                    format!("{:.0} % of the target", 100.0 * v / min),
                )
            }
            Bar::Values(min) => {
                let v = r["extra"]["values"].as_f64().unwrap_or(0.0) / m;
                (
                    format!("{:.0} M values/s", v / 1e6),
                    v >= min,
                    format!("{:.0} % of the target", 100.0 * v / min),
                )
            }
            Bar::Faster(min) => {
                let peer = find(rows, t.case, "safetensors crate").map_or(f64::NAN, median);
                let v = peer / m;
                (format!("{v:.1}×"), v >= min, format!("{v:.1}× only"))
            }
        };
        let verdict = if met {
            "met".to_owned()
        } else {
            format!("shortfall: {short}")
        };
        let _ = writeln!(out, "| {} | {shown} | {verdict} |", t.what);
    }
}

/// A target of the second speed round, stated against a peer in the same run or as a
/// fraction of the machine's limits measured in the same run.
struct Relative {
    what: &'static str,
    case: &'static str,
    who: &'static str,
    bar: Versus,
}

enum Versus {
    /// At least this many times as fast as the named peer (its median over ours).
    Peer(f64, &'static str),
    /// Group (g)'s row for every core at least this many times as fast as the case's
    /// one-core baseline (medians).
    OneCore(f64),
    /// A save at least as fast as the named peer, or at the machine's floor: see
    /// [`save_verdict`].
    Save(&'static str),
    /// Throughput of at least this fraction of the memcpy bandwidth.
    Memcpy(f64),
    /// At most this many seconds.
    Seconds(f64),
}

const ROUND_TWO: [Relative; 19] = [
    Relative {
        what: "Edit one metadata key of a 4 GiB safetensors file in place (< 10 ms)",
        case: "edit one metadata key",
        who: "tensorkit edit (in place)",
        bar: Versus::Seconds(10e-3),
    },
    Relative {
        what: "Edit one key when the header has no room: within 1.3× `cp` of the file (≥ 0.77× its speed)",
        case: "edit one metadata key",
        who: "tensorkit edit (copy)",
        bar: Versus::Peer(1.0 / 1.3, "cp"),
    },
    Relative {
        what: "safetensors through tensorkit: open a 2000-tensor file, read one (≥ 1.0× the safetensors crate)",
        case: "open a 2000",
        who: "tensorkit safetensors",
        bar: Versus::Peer(1.0, "safetensors crate"),
    },
    Relative {
        what: "zTensor 2: open a 2000-tensor file, read one (≤ 0.5 ms)",
        case: "open a 2000",
        who: "tensorkit zTensor 2",
        bar: Versus::Seconds(0.5e-3),
    },
    Relative {
        what: "zTensor 2: zero-copy view of the large tensor (≤ 2× the safetensors crate)",
        case: "open it as a zero-copy view",
        who: "tensorkit zTensor 2",
        bar: Versus::Peer(0.5, "safetensors crate"),
    },
    Relative {
        what: "owned load through the front door, safetensors (≥ 1.0× the safetensors crate)",
        case: "load it into a new buffer (owned)",
        who: "tensorkit safetensors",
        bar: Versus::Peer(1.0, "safetensors crate"),
    },
    Relative {
        what: "owned load through the front door, zTensor 2 (≥ 1.0× the safetensors crate)",
        case: "load it into a new buffer (owned)",
        who: "tensorkit zTensor 2",
        bar: Versus::Peer(1.0, "safetensors crate"),
    },
    Relative {
        what: "owned load through the front door, Tensogram (≥ 1.0× the safetensors crate)",
        case: "load it into a new buffer (owned)",
        who: "tensorkit Tensogram",
        bar: Versus::Peer(1.0, "safetensors crate"),
    },
    Relative {
        what: "save one large tensor, BinTensors (≥ 1.0× the safetensors crate)",
        case: SAVE,
        who: "tensorkit BinTensors",
        bar: Versus::Save("safetensors crate"),
    },
    Relative {
        what: "save one large tensor, zTensor 0.1 (≥ 1.0× the safetensors crate)",
        case: SAVE,
        who: "tensorkit zTensor 0.1",
        bar: Versus::Save("safetensors crate"),
    },
    Relative {
        what: "save one large tensor, zTensor 2 (≥ 1.0× the safetensors crate)",
        case: SAVE,
        who: "tensorkit zTensor 2",
        bar: Versus::Save("safetensors crate"),
    },
    Relative {
        what: "save one large tensor, Tensogram (≥ 1.0× the safetensors crate)",
        case: SAVE,
        who: "tensorkit Tensogram",
        bar: Versus::Save("safetensors crate"),
    },
    Relative {
        what: "simple_packing encode, 16 bits (≥ 30 % of memcpy)",
        case: "simple_packing encode",
        who: "tensorkit",
        bar: Versus::Memcpy(0.30),
    },
    Relative {
        what: "simple_packing decode, 16 bits (≥ 60 % of memcpy)",
        case: "simple_packing decode",
        who: "tensorkit",
        bar: Versus::Memcpy(0.60),
    },
    Relative {
        what: "shuffle, 4-byte elements (≥ 40 % of memcpy)",
        case: "shuffle,",
        who: "tensorkit",
        bar: Versus::Memcpy(0.40),
    },
    Relative {
        what: "unshuffle, 4-byte elements (≥ 40 % of memcpy)",
        case: "unshuffle,",
        who: "tensorkit",
        bar: Versus::Memcpy(0.40),
    },
    Relative {
        what: "verify a Tensogram object's hash (≥ 70 % of memcpy)",
        case: "verify the object's hash",
        who: "tensorkit Tensogram",
        bar: Versus::Memcpy(0.70),
    },
    Relative {
        what: "zstd-3 encode of a large field, every core (≥ 1.8× one core)",
        case: "zstd-3 encode of one field",
        who: "",
        bar: Versus::OneCore(1.8),
    },
    Relative {
        what: "decode a multi-object message, every core (≥ 1.8× one core)",
        case: "decode an 8-object message",
        who: "",
        bar: Versus::OneCore(1.8),
    },
];

/// Group (g)'s rows of a case.
fn threads_rows<'a>(rows: &'a [Value], case: &str) -> impl Iterator<Item = &'a Value> {
    rows.iter().filter(move |r| {
        r["group"] == "g" && r["case"].as_str().is_some_and(|c| c.starts_with(case))
    })
}

/// Group (g)'s row for every core: the one on the most threads.
fn every_core<'a>(rows: &'a [Value], case: &str) -> Option<&'a Value> {
    threads_rows(rows, case).max_by_key(|r| r["extra"]["threads"].as_u64())
}

/// Group (g)'s one-core baseline of a case: the row the benchmark marks `one_core`, the same
/// work done on one core (tensorkit-bench's `threads` says how, case by case).
fn one_core<'a>(rows: &'a [Value], case: &str) -> Option<&'a Value> {
    threads_rows(rows, case).find(|r| r["extra"]["one_core"] == true)
}

/// A save's verdict: met when its best time is at most the peer's best of the same
/// interleaved rounds, or within [`FLOOR`] of the machine's own `write()` of the same bytes
/// (no format can be saved faster than that, and two writers at it differ by the noise
/// alone). Best times, not medians: on this machine a write into new pages sometimes takes
/// several times as long whoever makes it (the host hands them back slowly), so medians
/// follow the host.
fn save_verdict(rows: &[Value], r: &Value, peer: &str) -> (String, &'static str) {
    let ours = best(r);
    let theirs = find(rows, SAVE, peer).map(best);
    let vs = theirs.unwrap_or(f64::NAN) / ours;
    let floor = find(rows, WRITE_PROBE, "machine").map_or(f64::NAN, best);
    let shown = format!(
        "{vs:.2}× (best {} against {}; write() {})",
        secs(ours),
        theirs.map_or_else(|| "—".into(), secs),
        secs(floor)
    );
    let verdict = if vs >= 1.0 {
        "met"
    } else if ours <= floor * FLOOR {
        "met: at this machine's write()"
    } else {
        "not met"
    };
    (shown, verdict)
}

fn round_two(out: &mut String, rows: &[Value], memcpy: f64) {
    out.push_str("| target | measured | verdict |\n|---|---:|---|\n");
    for t in &ROUND_TWO {
        let r = if t.who.is_empty() {
            every_core(rows, t.case)
        } else {
            find(rows, t.case, t.who)
        };
        let Some(r) = r else {
            let _ = writeln!(out, "| {} | — | not measured |", t.what);
            continue;
        };
        let m = median(r);
        let said = |met: bool| if met { "met" } else { "not met" };
        // At least `min` times as fast as `peer` (its median over ours).
        let against = |min: f64, peer: Option<&Value>| {
            let v = peer.map_or(f64::NAN, median) / m;
            (format!("{v:.2}×"), said(v >= min))
        };
        let (shown, verdict) = match t.bar {
            Versus::Peer(min, peer) => against(min, find(rows, t.case, peer)),
            Versus::OneCore(min) => against(min, one_core(rows, t.case)),
            Versus::Save(peer) => save_verdict(rows, r, peer),
            Versus::Memcpy(min) => {
                let v = throughput(r).unwrap_or(0.0) / memcpy;
                (format!("{:.0} %", 100.0 * v), said(v >= min))
            }
            Versus::Seconds(max) => (secs(m), said(m <= max)),
        };
        let _ = writeln!(out, "| {} | {shown} | {verdict} |", t.what);
    }
    convert_target(out, rows);
}

/// The CLI target of the second round: `convert` between any two uncompressed formats within
/// 1.5× the time of `cp` (group (i)); the slowest pair decides. The `--fsync` rows wait for
/// the disk and are held against `cp, then fsync` in the table instead.
fn convert_target(out: &mut String, rows: &[Value]) {
    let what =
        "CLI: `convert` of the large tensor between any two uncompressed formats (≤ 1.5× `cp`)";
    let worst = rows
        .iter()
        .filter(|r| r["group"] == "i")
        .filter_map(|r| {
            let peer = peer_of("i", r["impl"].as_str()?).filter(|p| *p == "cp")?;
            let cp = find(rows, r["case"].as_str()?, peer)?;
            Some((median(r) / median(cp), r))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match worst {
        None => {
            let _ = writeln!(out, "| {what} | — | not measured |");
        }
        Some((ratio, r)) => {
            let pair = format!(
                "{} → {}",
                r["extra"]["from"].as_str().unwrap_or_default(),
                r["extra"]["to"].as_str().unwrap_or_default()
            );
            let verdict = if ratio <= 1.5 { "met" } else { "not met" };
            let _ = writeln!(
                out,
                "| {what} | {ratio:.2}× `cp` (slowest: {pair}) | {verdict} |"
            );
        }
    }
}

/// The yardstick of group (h)'s size axis: this machine's own `read()` of the same file.
const MACHINE: &str = "this machine: read() into a new buffer";

/// The readers of group (h), in table order. A reader that also wrote a file (all but
/// "tensorkit safetensors", which reads the safetensors crate's) gives that file its name.
const SCALING_READERS: [&str; 6] = [
    "safetensors crate",
    "tensorkit safetensors",
    "tensorkit BinTensors",
    "tensorkit zTensor 0.1",
    "tensorkit zTensor 2",
    "tensorkit Tensogram",
];

/// Group (h) along one axis (`count` or `size`): a row per reader and work, a column per
/// step, and a verdict on growth. Each cell is the fastest of its runs: the machine's noise
/// (the host's slow pages above all) only ever adds time. A step that multiplies the work by
/// k may take at most 1.5·k times as long (for "open" along the size axis the work is the
/// header alone, so k = 1). Along the size axis, where the machine's own `read()` of the
/// file a reader read, timed in the same rounds, grows faster than the bytes (caches give
/// out, page faults grow), k is that growth instead; its row stands above the file's
/// readers. Times under 100 µs are too noisy to judge and are left out of the verdict.
fn scaling(out: &mut String, rows: &[Value], axis: &str) {
    let ours: Vec<&Value> = rows
        .iter()
        .filter(|r| r["group"] == "h" && r["extra"]["axis"] == axis)
        .collect();
    let step = |r: &Value| {
        let key = if axis == "count" {
            "tensors"
        } else {
            "tensor_bytes"
        };
        r["extra"][key].as_u64().unwrap_or(0)
    };
    let mut steps: Vec<u64> = ours.iter().map(|r| step(r)).collect();
    steps.sort_unstable();
    steps.dedup();
    if steps.is_empty() {
        out.push_str("Not measured in this run.\n");
        return;
    }
    let label = |s: u64| {
        if axis == "count" {
            s.to_string()
        } else if s >= 1 << 30 {
            format!("{} GiB", s >> 30)
        } else {
            format!("{} MiB", s >> 20)
        }
    };
    let _ = write!(out, "| implementation | work |");
    for &s in &steps {
        let _ = write!(out, " {} |", label(s));
    }
    out.push_str(" growth |\n|---|---|");
    out.push_str(&"---:|".repeat(steps.len()));
    out.push_str("---|\n");
    // At each step, the row that `keep` picks.
    let at_steps = |keep: &dyn Fn(&Value) -> bool| -> Vec<Option<&Value>> {
        steps
            .iter()
            .map(|&s| ours.iter().find(|r| keep(r) && step(r) == s).copied())
            .collect()
    };
    // The yardstick's time for the file `r` read, at `r`'s step.
    let machine = |r: &Value| {
        ours.iter()
            .find(|m| {
                m["impl"] == MACHINE
                    && m["extra"]["file"] == r["extra"]["file"]
                    && step(m) == step(r)
            })
            .map(|m| best(m))
    };
    let line = |out: &mut String, who: &str, work: &str, times: &[Option<f64>], verdict: &str| {
        let _ = write!(out, "| {who} | {work} |");
        for t in times {
            let _ = write!(out, " {} |", t.map_or_else(|| "—".into(), secs));
        }
        let _ = writeln!(out, " {verdict} |");
    };
    for who in SCALING_READERS {
        let read = at_steps(&|m| m["impl"] == MACHINE && m["extra"]["file"] == who);
        if read.iter().any(Option::is_some) {
            let times: Vec<Option<f64>> = read.iter().map(|r| r.map(best)).collect();
            let work = format!("read() of {who}'s file");
            line(
                out,
                MACHINE,
                &work,
                &times,
                "the yardstick of the rows below",
            );
        }
        for work in ["open", "get one", "load all"] {
            let case = format!("scaling: {work}");
            let cells = at_steps(&|r| r["impl"] == who && r["case"] == case.as_str());
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let times: Vec<Option<f64>> = cells.iter().map(|r| r.map(best)).collect();
            // The worst step: how many times the yardstick's growth it took, at which step,
            // and whether the yardstick was the machine's read() rather than the work.
            let mut worst: Option<(f64, usize, bool)> = None;
            for i in 1..steps.len() {
                let (Some(ra), Some(rb)) = (cells[i - 1], cells[i]) else {
                    continue;
                };
                let (a, b) = (best(ra), best(rb));
                if a < 1e-4 || b < 1e-4 {
                    continue;
                }
                let (k, by_machine) = if axis == "size" && work == "open" {
                    (1.0, false)
                } else {
                    let work_growth = steps[i] as f64 / steps[i - 1] as f64;
                    match (machine(ra), machine(rb)) {
                        (Some(ma), Some(mb)) if axis == "size" && mb / ma > work_growth => {
                            (mb / ma, true)
                        }
                        _ => (work_growth, false),
                    }
                };
                let excess = (b / a) / k;
                if worst.is_none_or(|(w, _, _)| excess > w) {
                    worst = Some((excess, i, by_machine));
                }
            }
            let yardstick = |by_machine: bool| {
                if by_machine {
                    "the growth of this machine's read()"
                } else {
                    "the work's growth"
                }
            };
            let verdict = match worst {
                Some((e, i, m)) if e > 1.5 => format!(
                    "super-linear: {} → {} took {:.1}× {}",
                    label(steps[i - 1]),
                    label(steps[i]),
                    e,
                    yardstick(m)
                ),
                Some((e, _, m)) => format!("linear (worst step {e:.2}× {})", yardstick(m)),
                None => "too fast to judge".into(),
            };
            line(out, who, work, &times, &verdict);
        }
    }
}

fn peers(out: &mut String, peer: &Value) {
    let _ = writeln!(
        out,
        "Versions: {}.\n",
        peer["versions"]
            .as_object()
            .map(|m| m
                .iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default()
    );
    for t in peer["tables"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "**{}**\n", t["title"].as_str().unwrap_or_default());
        let cols: Vec<&str> = t["cols"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let _ = writeln!(out, "| {} |", cols.join(" | "));
        let _ = writeln!(out, "|{}|", vec!["---"; cols.len()].join("|"));
        for r in t["rows"].as_array().into_iter().flatten() {
            let cells: Vec<String> = r
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                .collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
    }
}

/// The peers every Python row is measured against, and maturin to build the package, as pip
/// names them (module, requirement): the versions the reference fixtures were written with.
const PYTHON_PEERS: [(&str, &str); 9] = [
    ("numpy", "numpy"),
    ("safetensors", "safetensors==0.8.0"),
    ("ztensor", "ztensor==2.1.2"),
    ("bintensors", "bintensors==0.2.0"),
    ("tensogram", "tensogram==0.24.0"),
    ("eccodes", "eccodes==2.50.0"),
    ("torch", "torch==2.15.0"),
    ("gguf", "gguf==0.19.0"),
    ("maturin", "maturin>=1.9.4,<2"),
];

/// Installs into `venv`, from `PyPI`, whichever of [`PYTHON_PEERS`] it lacks, so that no row
/// goes missing from a run for want of its peer.
fn install_peers(venv: &Path) -> Result<(), String> {
    let python = venv.join("bin/python");
    let missing: Vec<&str> = PYTHON_PEERS
        .iter()
        .filter(|(module, _)| {
            !Command::new(&python)
                .args(["-c", &format!("import {module}")])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(|&(_, requirement)| requirement)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let ok = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .args(&missing)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "installing {} into {}",
            missing.join(", "),
            venv.display()
        ))
    }
}

/// Installs a release build of the Python package into `venv` (with maturin) and runs its
/// benchmark against the peers there.
fn python_package(root: &Path, venv: &Path, quick: bool) -> Result<Value, String> {
    let python = venv.join("bin/python");
    let built = Command::new(&python)
        .current_dir(root)
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", root.join("target/python-release"))
        .args(["-m", "maturin", "develop", "--release", "--quiet"])
        .args(["-m", "crates/tensorkit-py/Cargo.toml"])
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("running maturin: {e}"))?;
    if !built.success() {
        return Err(format!("maturin develop --release failed: {built}"));
    }
    let scale: &[&str] = if quick {
        &[
            "--runs",
            "3",
            "--big-mib",
            "128",
            "--small-mib",
            "32",
            "--tg-mib",
            "64",
            "--torch-mib",
            "256",
            "--gguf-mib",
            "64",
        ]
    } else {
        &[
            "--runs",
            "5",
            "--big-mib",
            "1024",
            "--small-mib",
            "64",
            "--tg-mib",
            "256",
        ]
    };
    let mut cmd = Command::new(&python);
    cmd.current_dir(root)
        .arg("crates/tensorkit-py/bench/bench_python.py")
        .args(scale);
    run_json(&mut cmd, "the Python package's benchmark")
}

/// The Python package's rows: workload, ours, the peer's, the ratio, the target and whether
/// it was met.
fn package_table(out: &mut String, p: &Value) {
    let versions = p["versions"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let s = &p["scale"];
    let _ = writeln!(
        out,
        "Versions: {versions}. Machine: {}. Data: {} tensors in {} MiB (safetensors); one float32 tensor of {} MiB (safetensors and `.npy`); a Tensogram message of {} float64 fields, {} MiB decoded (16-bit simple packing, szip and zstd alternately, written by tensogram); a torch checkpoint of {} tensors in {} MiB.\n",
        p["machine"].as_str().unwrap_or_default(),
        s["small_n"],
        s["small_mib"],
        s["big_mib"],
        s["tg_objects"],
        s["tg_mib"],
        s["torch_n"],
        s["torch_mib"],
    );
    out.push_str("| workload | tensorkit | peer | peer's median | vs peer | target | met |\n|---|---:|---|---:|---:|---|---|\n");
    for r in p["rows"].as_array().into_iter().flatten() {
        let med = |v: &Value| v["median_s"].as_f64().map_or_else(String::new, secs);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r["case"].as_str().unwrap_or_default(),
            med(&r["ours"]),
            r["peer_name"].as_str().unwrap_or_default(),
            med(&r["peer"]),
            r["speedup"]
                .as_f64()
                .map_or_else(String::new, |x| format!("{x:.2}×")),
            match r["note"].as_str() {
                Some(note) => format!("{} ({note})", r["target"].as_str().unwrap_or_default()),
                None => r["target"].as_str().unwrap_or_default().to_owned(),
            },
            if r["met"].as_bool() == Some(true) {
                "yes"
            } else {
                "**no**"
            },
        );
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or_default().trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let rustc = Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores; {rustc}")
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<String, String> {
    let o = parse(root, args)?;
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Group (i) runs the CLI binary built beside the suite's.
    let built = Command::new(&cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--release",
            "--package",
            "tensorkit-cli",
        ])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !built.success() {
        return Err(format!("building the tensorkit CLI failed: {built}"));
    }
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "run",
        "--quiet",
        "--release",
        "--package",
        "tensorkit-bench",
        "--",
    ]);
    if o.quick {
        cmd.arg("--quick");
    }
    let ours = run_json(&mut cmd, "the benchmark suite")?;
    let peer = match &o.python {
        None => None,
        Some(venv) => {
            install_peers(venv)?;
            if !o.peer_script.exists() {
                return Err(format!(
                    "{} not found; give --peer-script",
                    o.peer_script.display()
                ));
            }
            let json = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
            let scale: [&str; 10] = if o.quick {
                [
                    "--runs",
                    "3",
                    "--big-mib",
                    "128",
                    "--small-n",
                    "2000",
                    "--small-mib",
                    "32",
                    "--tg-elems",
                    "10000000",
                ]
            } else {
                [
                    "--runs",
                    "3",
                    "--big-mib",
                    "1024",
                    "--small-n",
                    "2000",
                    "--small-mib",
                    "256",
                    "--tg-elems",
                    "100000000",
                ]
            };
            let status = Command::new(venv.join("bin/python"))
                .arg(&o.peer_script)
                .args(["--sections", "big,small,tg"])
                .args(scale)
                .arg("--json")
                .arg(json.path())
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("running the Python peers: {e}"))?;
            if !status.success() {
                return Err(format!("the Python peers failed: {status}"));
            }
            let text = std::fs::read(json.path()).map_err(|e| e.to_string())?;
            Some(serde_json::from_slice::<Value>(&text).map_err(|e| e.to_string())?)
        }
    };
    let package = match &o.python {
        None => None,
        Some(venv) => Some(python_package(root, venv, o.quick)?),
    };
    let rows: Vec<Value> = ours["rows"].as_array().cloned().unwrap_or_default();
    let limits = Machine::of(&rows);
    let mut md = String::new();
    md.push_str("# Benchmarks\n\n");
    let _ = writeln!(
        md,
        "Generated by `cargo xtask bench{}{}` — do not edit by hand. Machine: {}. Mode: {}; \
         the run took {:.0} s ({:.0} s of it the Rust suite). rayon's default pool of every \
         core unless a row names its threads, warm page cache, release build for the default \
         target. Each figure is the median of {} runs (more for the sub-millisecond cases), \
         with the fastest and slowest.\n",
        if o.quick { " --quick" } else { "" },
        if o.python.is_some() {
            " --with-python VENV"
        } else {
            ""
        },
        machine(),
        if o.quick {
            "quick (smaller data, fewer runs)"
        } else {
            "full"
        },
        started.elapsed().as_secs_f64(),
        ours["duration_s"].as_f64().unwrap_or(0.0),
        ours["scale"]["runs"],
    );
    let s = &ours["scale"];
    let mib = |k: &str| s[k].as_f64().unwrap_or(0.0) / f64::from(1 << 20);
    let _ = writeln!(
        md,
        "Data: 2000 tensors of {:.3} MiB; one tensor of {:.0} MiB; a field of {} float32 values; \
         {} 16-bit samples for szip.\n",
        mib("small_tensor_bytes"),
        mib("big_tensor_bytes"),
        s["field_elements"],
        s["szip_samples"],
    );
    md.push_str(
        "## (e) The machine's limits\n\n| probe | median | best | bandwidth (median) | \
         bandwidth (best) |\n|---|---:|---:|---:|---:|\n",
    );
    for r in rows.iter().filter(|r| r["group"] == "e") {
        let shown = |t: Option<f64>| t.map_or_else(String::new, |t| rate(t, 1.0));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            r["case"].as_str().unwrap_or_default(),
            secs(median(r)),
            secs(best(r)),
            shown(throughput(r)),
            shown(throughput_at_best(r))
        );
    }
    md.push_str("\nFile workloads ((a), (b)) are shown as a fraction of the page-cache read() bandwidth; in-memory ones ((c), (d)) of memcpy. Readers that map the file copy from the page cache without the read() system call and can pass 100 %. Saves write a new file (the old one is removed first, as an atomic rename does), are timed up to the last write(), and the file is synced before the next one starts: the figure is the page-cache write speed, not the disk's. The writers take turns going first, over three times as many rounds as other cases, since some writes into new pages on this machine take several times as long whoever makes them; among them, taking its turn like the others, is the machine's own write() of the same bytes with no format around them ((e)), which no writer can beat. \"vs peer\" is the peer's median over ours: above 1× we are faster; for saves it is the peer's best over ours, and their fraction is of the best write() ((e)), since their medians follow the host's slow pages. Remote cases ((f)) are wall-clock times from opening the URL to the last byte needed, the server's 20 ms per request included; \"download first\" fetches the whole file with one GET into a local file, then opens that. The CLI cases ((i)) time whole processes: `tensorkit convert` reads, checks every digest or hash the source carries (on the second core, while it writes), writes a temporary file (stored tensors copied from the source by the kernel, as `cp` does) and renames it into place, leaving the writing back to disk to the kernel as `cp` does; `tensorkit --fsync convert` also syncs the file before the rename and is held against \"cp, then fsync\"; each output file is removed before a run and synced after it, outside the timing.\n\n");
    for (g, title) in GROUPS {
        let _ = writeln!(md, "## {title}\n");
        table(&mut md, g, &rows, limits);
        md.push('\n');
    }
    md.push_str("## (h) Scaling: open, get one tensor, load all\n\nThrough the front door (`tensorkit::open`, `get`, `to_tensor`) for every format, next to the safetensors crate's own API; every reader of a file timed in the same rounds, each cell the fastest of its runs (five at least, and a third of a second's), since the machine's noise only ever adds time. By number of tensors (1 KiB float32 each):\n\n");
    scaling(&mut md, &rows, "count");
    md.push_str(
        "\nBy the size of one float32 tensor. Above each file's readers, this machine reading \
         that file with read() into a new buffer, in the same rounds as they are: where it \
         grows faster than the bytes (a tensor that no longer fits in the caches, page faults \
         for a new buffer, the host's slow pages), a reader's step is judged against that \
         growth, since no reader can beat the memory it runs on:\n\n",
    );
    scaling(&mut md, &rows, "size");
    md.push('\n');
    md.push_str("## Targets from the format issues\n\n");
    targets(&mut md, &rows);
    md.push('\n');
    md.push_str("## Targets of the second speed round\n\nStated against a peer measured in this run, or as a fraction of this run's memcpy bandwidth ((e)); \"every core\" rows are (g)'s.\n\n");
    round_two(&mut md, &rows, limits.memcpy);
    md.push('\n');
    md.push_str("## Python peers, same machine, same run\n\n");
    match &peer {
        Some(p) => {
            md.push_str("Timed by `peer_bench.py` (what users of those packages run today; their figures include Python's overhead). Sections: one large tensor, many small ones, Tensogram pipelines.\n\n");
            peers(&mut md, p);
        }
        None => md.push_str("Not included in this run (`--with-python VENV` adds them).\n"),
    }
    md.push_str("\n## The Python package against the Python peers, same machine, same run\n\n");
    match &package {
        Some(p) => {
            md.push_str("Timed by `crates/tensorkit-py/bench/bench_python.py` on a release build of the package installed into the same virtual environment as the peers; every figure includes Python's own overhead on both sides. \"vs peer\" is the peer's median over ours: above 1× we are faster.\n\n");
            package_table(&mut md, p);
        }
        None => md.push_str("Not included in this run (`--with-python VENV` adds it).\n"),
    }
    std::fs::write(&o.out, &md).map_err(|e| format!("writing {}: {e}", o.out.display()))?;
    Ok(format!(
        "bench: wrote {} in {:.0} s",
        o.out.display(),
        started.elapsed().as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(group: &str, case: &str, who: &str, median: f64, bytes: Option<u64>) -> Value {
        json!({"group": group, "case": case, "impl": who, "median_s": median, "min_s": median, "max_s": median, "bytes": bytes, "extra": {"values": 1e9}})
    }

    #[test]
    fn targets_say_met_or_by_how_much_they_fall_short() {
        let rows = vec![
            r(
                "a",
                "open a 2000-tensor file",
                "tensorkit BinTensors",
                100e-6,
                Some(1),
            ),
            r(
                "a",
                "open a 2000-tensor file",
                "safetensors crate",
                1e-3,
                Some(1),
            ),
            r(
                "c",
                "encode, none",
                "tensorkit Tensogram",
                1.0,
                Some(1_500_000_000),
            ),
        ];
        let mut out = String::new();
        targets(&mut out, &rows);
        assert!(
            out.contains("| BinTensors: open a 2000-tensor file (≤ 350 µs) | 100 µs | met |"),
            "{out}"
        );
        assert!(out.contains("| 10.0× | met |"), "{out}");
        assert!(
            out.contains("1.50 GB/s | shortfall: 50 % of the target |"),
            "{out}"
        );
        assert!(
            out.contains("| szip encode, 16-bit samples (≥ 200 MB/s) | — | not measured |"),
            "{out}"
        );
    }

    #[test]
    fn tables_compare_with_the_peer_and_the_limit() {
        let rows = vec![
            r(
                "b",
                "load it into a new buffer (owned)",
                "safetensors crate",
                2.0,
                Some(2_000_000_000),
            ),
            r(
                "b",
                "load it into a new buffer (owned)",
                "tensorkit BinTensors",
                1.0,
                Some(2_000_000_000),
            ),
        ];
        let mut out = String::new();
        let machine = Machine {
            memcpy: 10e9,
            read: 4e9,
            write: 4e9,
        };
        table(&mut out, "b", &rows, machine);
        assert!(
            out.contains(
                "| tensorkit BinTensors | 1.000 s | 1.000 s – 1.000 s | 2.00 GB/s | 2.00× | 50 % |"
            ),
            "{out}"
        );
        assert_eq!(secs(2.5e-6), "2.500 µs");
        assert_eq!(rate(250e6, 1.0), "250 MB/s");
    }

    #[test]
    fn both_cores_are_held_against_the_marked_one_core_row() {
        let g = |who: &str, median: f64, threads: u64, cores: f64, one_core: bool| {
            json!({"group": "g", "case": "zstd-3 encode of one field", "impl": who,
                   "median_s": median, "min_s": median, "max_s": median,
                   "bytes": 400_000_000u64,
                   "extra": {"threads": threads, "cores": cores, "one_core": one_core}})
        };
        let rows = vec![
            g("libzstd, single-threaded", 2.0, 1, 1.0, true),
            g("tensorkit, 1 thread", 1.7, 1, 1.22, false),
            g("tensorkit, 2 threads", 1.0, 2, 1.85, false),
        ];
        let machine = Machine {
            memcpy: 10e9,
            read: 4e9,
            write: 4e9,
        };
        let mut out = String::new();
        table(&mut out, "g", &rows, machine);
        // Every row against the baseline, not against the one-thread row; cores are shown.
        assert!(
            out.contains("| zstd-3 encode of one field; 1.85 cores busy | tensorkit, 2 threads | 1.000 s | 1.000 s – 1.000 s | 400 MB/s | 2.00× |"),
            "{out}"
        );
        assert!(out.contains("1.22 cores busy | tensorkit, 1 thread | 1.700 s | 1.700 s – 1.700 s | 235 MB/s | 1.18× |"), "{out}");
        assert!(
            out.contains(
                "| libzstd, single-threaded | 2.000 s | 2.000 s – 2.000 s | 200 MB/s |  |"
            ),
            "{out}"
        );
        let mut out = String::new();
        round_two(&mut out, &rows, 10e9);
        assert!(
            out.contains(
                "| zstd-3 encode of a large field, every core (≥ 1.8× one core) | 2.00× | met |"
            ),
            "{out}"
        );
        // Against a faster one-core baseline the same two-thread row falls short.
        let slower = [
            &rows[1..],
            &[g("libzstd, single-threaded", 1.7, 1, 1.0, true)],
        ]
        .concat();
        let mut out = String::new();
        round_two(&mut out, &slower, 10e9);
        assert!(
            out.contains("(≥ 1.8× one core) | 1.70× | not met |"),
            "{out}"
        );
    }

    #[test]
    fn saves_are_judged_best_against_best_or_against_the_machines_write() {
        // Medians that the host's slow pages spoil, best times that do not.
        let save = |who: &str, best: f64, median: f64| {
            json!({"group": "b", "case": "save one large float32 tensor", "impl": who,
                   "median_s": median, "min_s": best, "max_s": 3.0, "bytes": 1_000_000_000u64})
        };
        let probe = json!({"group": "e", "case": "write() of the large tensor into a new file",
                           "impl": "machine", "median_s": 1.9, "min_s": 0.24, "max_s": 3.0,
                           "bytes": 1_000_000_000u64});
        let mut rows = vec![
            probe,
            save("safetensors crate", 0.242, 0.3),
            save("tensorkit BinTensors", 0.240, 1.8),
            save("tensorkit zTensor 0.1", 0.250, 0.25),
            save("tensorkit zTensor 2", 0.300, 0.3),
        ];
        let says = |rows: &[Value], who: &str| {
            let r = find(rows, SAVE, who).unwrap();
            save_verdict(rows, r, "safetensors crate")
        };
        assert_eq!(
            says(&rows, "tensorkit BinTensors"),
            (
                "1.01× (best 240.000 ms against 242.000 ms; write() 240.000 ms)".into(),
                "met"
            )
        );
        assert_eq!(
            says(&rows, "tensorkit zTensor 0.1").1,
            "met: at this machine's write()"
        );
        assert_eq!(says(&rows, "tensorkit zTensor 2").1, "not met");
        let mut out = String::new();
        table(&mut out, "b", &rows, Machine::of(&rows));
        assert!(
            out.contains(
                "| tensorkit BinTensors | 1.800 s | 240.000 ms – 3.000 s | 556 MB/s | 1.01× \
                 | 100 % |"
            ),
            "{out}"
        );
        // Without the machine's write(), a save slower than the peer is not met.
        rows.remove(0);
        assert_eq!(says(&rows, "tensorkit zTensor 0.1").1, "not met");
    }

    #[test]
    fn the_convert_target_names_the_slowest_pair_against_cp() {
        let i = |case: &str, who: &str, t: f64, to: &str| {
            json!({"group": "i", "case": case, "impl": who, "median_s": t,
                   "extra": {"from": "bintensors", "to": to}})
        };
        let case = "convert a 1024 MiB bintensors file";
        let mut rows = vec![
            i(case, "cp", 1.0, ""),
            i(case, "cp, then fsync", 2.0, ""),
            i(case, "tensorkit convert → safetensors", 1.2, "safetensors"),
            // Against `cp, then fsync` (0.9×), not `cp` (1.8×): it does not decide.
            i(
                case,
                "tensorkit --fsync convert → ztensor-0.1",
                1.8,
                "ztensor-0.1",
            ),
        ];
        let mut out = String::new();
        convert_target(&mut out, &rows);
        assert!(
            out.contains("| 1.20× `cp` (slowest: bintensors → safetensors) | met |"),
            "{out}"
        );
        rows.push(i(case, "tensorkit convert → tensogram", 3.0, "tensogram"));
        out.clear();
        convert_target(&mut out, &rows);
        assert!(
            out.contains("| 3.00× `cp` (slowest: bintensors → tensogram) | not met |"),
            "{out}"
        );
        out.clear();
        convert_target(&mut out, &[]);
        assert!(out.contains("| — | not measured |"), "{out}");
    }

    #[test]
    fn scaling_flags_growth_faster_than_the_work() {
        // A row of `who` doing `work` on the file `file` wrote; its fastest run took `t`, its
        // median twice as long (the fastest decides).
        let h = |work: &str, who: &str, file: &str, axis: &str, step: u64, t: f64| {
            let key = if axis == "count" {
                "tensors"
            } else {
                "tensor_bytes"
            };
            json!({"group": "h", "case": format!("scaling: {work}"), "impl": who,
                   "median_s": 2.0 * t, "min_s": t,
                   "extra": {"axis": axis, key: step, "file": file}})
        };
        let bt = "tensorkit BinTensors";
        let zt = "tensorkit zTensor 2";
        let tgm = "tensorkit Tensogram";
        let rows = vec![
            // Linear: ten times the tensors, ten times the time.
            h("open", bt, bt, "count", 1000, 1e-3),
            h("open", bt, bt, "count", 10_000, 1e-2),
            // Quadratic: ten times the tensors, a hundred times the time.
            h("open", zt, zt, "count", 1000, 1e-3),
            h("open", zt, zt, "count", 10_000, 1e-1),
            // Opening reads the header alone: it must not grow with the tensor's size.
            h("open", tgm, tgm, "size", 1 << 20, 1e-3),
            h("open", tgm, tgm, "size", 1 << 30, 1e-1),
            // Where the machine's own read() of a file grows faster than the bytes, the
            // readers of that file are judged against it: 2.5× the machine's growth is
            // flagged, 1.2× is not. The read() of another file does not count.
            h("load all", MACHINE, bt, "size", 1 << 20, 1e-3),
            h("load all", MACHINE, bt, "size", 1 << 30, 2.0),
            h("load all", bt, bt, "size", 1 << 20, 1e-3),
            h("load all", bt, bt, "size", 1 << 30, 5.0),
            h("get one", bt, bt, "size", 1 << 20, 1e-3),
            h("get one", bt, bt, "size", 1 << 30, 2.4),
            h("load all", MACHINE, tgm, "size", 1 << 20, 1e-3),
            h("load all", MACHINE, tgm, "size", 1 << 30, 4.0),
            h("load all", tgm, tgm, "size", 1 << 20, 1e-3),
            h("load all", tgm, tgm, "size", 1 << 30, 5.0),
            h("load all", zt, zt, "size", 1 << 20, 1e-3),
            h("load all", zt, zt, "size", 1 << 30, 1.0),
        ];
        let mut out = String::new();
        scaling(&mut out, &rows, "count");
        assert!(out.contains("| 1000 | 10000 |"), "{out}");
        assert!(!out.contains(MACHINE), "{out}");
        // The row of `who` in `out` carries `verdict`.
        let says = |out: &str, who: &str, verdict: &str| {
            let row = out.lines().find(|l| l.contains(who)).unwrap_or_default();
            assert!(row.contains(verdict), "{who}: {out}");
        };
        says(&out, "BinTensors", "linear (worst step 1.00×");
        says(&out, "zTensor 2", "super-linear: 1000 → 10000 took 10.0×");
        let mut out = String::new();
        scaling(&mut out, &rows, "size");
        assert!(out.contains("| 1 MiB | 1 GiB |"), "{out}");
        // Cells show the fastest run.
        says(
            &out,
            "| tensorkit BinTensors | load all",
            "| 1.000 ms | 5.000 s |",
        );
        says(&out, "| tensorkit Tensogram | open", "super-linear");
        says(
            &out,
            "| tensorkit Tensogram | load all",
            "linear (worst step 1.25× the growth of this machine's read())",
        );
        says(
            &out,
            "| this machine: read() into a new buffer | read() of tensorkit BinTensors's file",
            "the yardstick of the rows below",
        );
        says(
            &out,
            "| tensorkit BinTensors | load all",
            "super-linear: 1 MiB → 1 GiB took 2.5× the growth of this machine's read()",
        );
        says(
            &out,
            "| tensorkit BinTensors | get one",
            "linear (worst step 1.20× the growth of this machine's read())",
        );
        // zTensor 2's file has no read() of its own: the work's growth judges it.
        says(
            &out,
            "| tensorkit zTensor 2 | load all",
            "linear (worst step 0.98× the work's growth)",
        );
        // Each file's yardstick stands above its readers.
        let at = |s: &str| out.find(s).unwrap_or(usize::MAX);
        assert!(at("read() of tensorkit BinTensors's file") < at("| tensorkit BinTensors |"));
        assert!(at("| tensorkit BinTensors |") < at("read() of tensorkit Tensogram's file"));
        let mut out = String::new();
        scaling(&mut out, &[], "count");
        assert_eq!(out, "Not measured in this run.\n");
    }
}
