//! Group (h): how open, get one tensor and load all grow with the number of tensors and
//! with a tensor's size, each step judged against this machine reading the same file.

use super::stats::{best, secs};
use serde_json::Value;
use std::fmt::Write as _;

/// The yardstick of group (h)'s size axis: this machine's own `read()` of the same file.
pub(super) const MACHINE: &str = "this machine: read() into a new buffer";

/// The readers of group (h), in table order. A reader that also wrote a file (all but
/// "tensorkit safetensors", which reads the safetensors crate's) gives that file its name.
pub(super) const SCALING_READERS: [&str; 6] = [
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
pub(super) fn scaling(out: &mut String, rows: &[Value], axis: &str) {
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
