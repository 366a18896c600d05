//! The speed targets: those of the format issues and those of the second speed round, each
//! held against its peer or the machine in the same run, with "met" or the shortfall.

use super::stats::{
    FLOOR, SAVE, WRITE_PROBE, best, find, median, peer_of, rate, secs, throughput,
    throughput_at_best,
};
use serde_json::Value;
use std::fmt::Write as _;

/// A speed target from the format issues: what, where its figure comes from, and the bar.
pub(super) struct Target {
    what: &'static str,
    case: &'static str,
    who: &'static str,
    /// `Seconds(max)`, `Rate(min bytes/s)`, `Values(min values/s)` or `Faster(min ratio)`.
    bar: Bar,
}

pub(super) enum Bar {
    Seconds(f64),
    Rate(f64),
    Values(f64),
    Faster(f64),
}

pub(super) const TARGETS: [Target; 25] = [
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

pub(super) fn targets(out: &mut String, rows: &[Value]) {
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
pub(super) struct Relative {
    what: &'static str,
    case: &'static str,
    who: &'static str,
    bar: Versus,
}

pub(super) enum Versus {
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

pub(super) const ROUND_TWO: [Relative; 19] = [
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
pub(super) fn threads_rows<'a>(rows: &'a [Value], case: &str) -> impl Iterator<Item = &'a Value> {
    rows.iter().filter(move |r| {
        r["group"] == "g" && r["case"].as_str().is_some_and(|c| c.starts_with(case))
    })
}

/// Group (g)'s row for every core: the one on the most threads.
pub(super) fn every_core<'a>(rows: &'a [Value], case: &str) -> Option<&'a Value> {
    threads_rows(rows, case).max_by_key(|r| r["extra"]["threads"].as_u64())
}

/// Group (g)'s one-core baseline of a case: the row the benchmark marks `one_core`, the same
/// work done on one core (tensorkit-bench's `threads` says how, case by case).
pub(super) fn one_core<'a>(rows: &'a [Value], case: &str) -> Option<&'a Value> {
    threads_rows(rows, case).find(|r| r["extra"]["one_core"] == true)
}

/// A save's verdict: met when its best time is at most the peer's best of the same
/// interleaved rounds, or within [`FLOOR`] of the machine's own `write()` of the same bytes
/// (no format can be saved faster than that, and two writers at it differ by the noise
/// alone). Best times, not medians: on this machine a write into new pages sometimes takes
/// several times as long whoever makes it (the host hands them back slowly), so medians
/// follow the host.
pub(super) fn save_verdict(rows: &[Value], r: &Value, peer: &str) -> (String, &'static str) {
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

pub(super) fn round_two(out: &mut String, rows: &[Value], memcpy: f64) {
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
pub(super) fn convert_target(out: &mut String, rows: &[Value]) {
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
