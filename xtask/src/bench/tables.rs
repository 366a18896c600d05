//! The report's tables: each group's rows beside their peers', the Python peers' and the
//! Python package's.

use super::stats::{
    Machine, SAVE, best, find, median, peer_of, rate, secs, throughput, throughput_at_best,
};
use super::targets::one_core;
use serde_json::Value;
use std::fmt::Write as _;

pub(super) const GROUPS: [(&str, &str); 8] = [
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

pub(super) fn table(out: &mut String, group: &str, rows: &[Value], machine: Machine) {
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

pub(super) fn peers(out: &mut String, peer: &Value) {
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

/// The Python package's rows: workload, ours, the peer's, the ratio, the target and whether
/// it was met.
pub(super) fn package_table(out: &mut String, p: &Value) {
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
