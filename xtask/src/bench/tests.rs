//! The report's verdicts on made-up rows.

use super::scaling::{MACHINE, scaling};
use super::stats::{Machine, SAVE, find, rate, secs};
use super::tables::table;
use super::targets::{convert_target, round_two, save_verdict, targets};
use serde_json::{Value, json};

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
        out.contains("| libzstd, single-threaded | 2.000 s | 2.000 s – 2.000 s | 200 MB/s |  |"),
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
