//! The figures the report is made of: a row's median, best and throughput, how they are
//! printed, and the machine's own limits ((e)) they are held against.

use serde_json::Value;

/// A duration for people: µs, ms or s with three significant digits.
pub(super) fn secs(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.3} µs", s * 1e6).replace(".000", "")
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

pub(super) fn rate(bytes: f64, s: f64) -> String {
    let r = bytes / s;
    if r >= 1e9 {
        format!("{:.2} GB/s", r / 1e9)
    } else {
        format!("{:.0} MB/s", r / 1e6)
    }
}

pub(super) fn find<'a>(rows: &'a [Value], case: &str, who: &str) -> Option<&'a Value> {
    rows.iter()
        .find(|r| r["case"].as_str().is_some_and(|c| c.starts_with(case)) && r["impl"] == who)
}

pub(super) fn median(r: &Value) -> f64 {
    r["median_s"].as_f64().unwrap_or(f64::NAN)
}

pub(super) fn throughput(r: &Value) -> Option<f64> {
    Some(r["bytes"].as_f64()? / median(r))
}

/// The fastest of a row's runs.
pub(super) fn best(r: &Value) -> f64 {
    r["min_s"].as_f64().unwrap_or(f64::NAN)
}

/// [`throughput`] of the fastest run.
pub(super) fn throughput_at_best(r: &Value) -> Option<f64> {
    Some(r["bytes"].as_f64()? / best(r))
}

/// The case of group (b)'s saves, and of the machine's `write()` timed in the same rounds.
pub(super) const SAVE: &str = "save one large";
pub(super) const WRITE_PROBE: &str = "write() of the large tensor";

/// A save within this factor of the machine's own `write()` of the same bytes, best against
/// best in the same rounds, is at the floor: the best of fifteen rounds of one writer moves
/// by about 3 % from one run to the next on this machine.
pub(super) const FLOOR: f64 = 1.05;

/// This run's limits (group (e)), as bandwidths: memcpy between warm buffers, `read()` from
/// the page cache, and `write()` into a new file (its best, as saves are compared).
#[derive(Clone, Copy)]
pub(super) struct Machine {
    pub memcpy: f64,
    pub read: f64,
    pub write: f64,
}

impl Machine {
    /// The limits group (e)'s rows measured.
    pub(super) fn of(rows: &[Value]) -> Machine {
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
pub(super) fn peer_of(group: &str, who: &str) -> Option<&'static str> {
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
