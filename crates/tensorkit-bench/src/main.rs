//! The side-by-side benchmark suite: the same workloads through tensorkit and its Rust peers
//! on the same data in one run, printed as JSON for `cargo xtask bench` to turn into
//! `docs/benchmarks.md`. Run it in a release build:
//!
//! ```text
//! cargo run --release -p tensorkit-bench -- [--quick] [--only GROUPS] > results.json
//! ```
//!
//! Workloads: (a) open a 2000-tensor file and read one tensor, (b) save and load one large
//! float32 tensor, (c) Tensogram pipelines on a large float32 field, (d) szip against the
//! `tensogram-szip` crate, (e) the machine's memcpy and page-cache read bandwidth, (f) the
//! files of (a) read over HTTP with 20 ms per request, against downloading them first, (g)
//! one thread against every core, (h) how open, get-one and load-all grow with the number of
//! tensors and the size of one, (i) `tensorkit convert` of the large tensor between every two
//! uncompressed formats against `cp` (it runs the `tensorkit` binary built beside this one),
//! (j) `tensorkit edit` of one metadata key of a large safetensors file, in place and, when
//! the header does not fit, as a copy against `cp`.
#![forbid(unsafe_code)]

use serde_json::{Value, json};
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

use measure::{Scale, row, time};

mod cli;
mod measure;
mod remote;
mod scaling;
mod threads;
mod workloads;

/// (e) The machine's limits: memcpy between two warm buffers, and `read()` of a file that
/// is in the page cache into a warm buffer.
fn limits(scale: Scale, dir: &Path) -> Vec<Value> {
    let src = vec![1u8; scale.probe];
    let mut dst = vec![2u8; scale.probe];
    let copy = time(scale.runs, || dst.copy_from_slice(&src));
    let path = dir.join("probe.bin");
    std::fs::write(&path, &src).expect("scratch file");
    let read = time(scale.runs, || {
        let mut f = std::fs::File::open(&path).expect("scratch file");
        f.read_exact(&mut dst).expect("read");
    });
    let bytes = Some(scale.probe as u64);
    vec![
        row(
            "e",
            "memcpy between warm buffers",
            "machine",
            &copy,
            bytes,
            Value::Null,
        ),
        row(
            "e",
            "read() from the page cache into a warm buffer",
            "machine",
            &read,
            bytes,
            Value::Null,
        ),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let scale = if quick {
        Scale {
            runs: 3,
            small_tensor: 16 << 10,
            big_tensor: 128 << 20,
            field: 10_000_000,
            szip_samples: 1 << 20,
            probe: 256 << 20,
            edit_file: 256 << 20,
        }
    } else {
        Scale {
            runs: 5,
            small_tensor: 128 << 10,
            big_tensor: 1 << 30,
            field: 100_000_000,
            szip_samples: 4 << 20,
            probe: 1 << 30,
            edit_file: 4 << 30,
        }
    };
    let dir = tempfile::tempdir_in(
        std::env::var_os("TENSORKIT_BENCH_DIR").unwrap_or_else(|| std::env::temp_dir().into()),
    )
    .expect("a scratch directory");
    // `--only ab` runs only the named groups (while working on one of them); the report
    // generated for docs/benchmarks.md always runs them all.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map_or_else(|| "eabcdgfhij".to_owned(), Clone::clone);
    let started = Instant::now();
    let mut rows = Vec::new();
    for group in only.chars() {
        rows.extend(match group {
            'e' => limits(scale, dir.path()),
            'a' => workloads::many_tensors(scale, dir.path()),
            'b' => workloads::big_tensor(scale, dir.path()),
            'c' => workloads::pipelines(scale),
            'd' => workloads::szip(scale),
            'g' => threads::threads(scale),
            'f' => remote::remote(scale, dir.path()),
            'h' => scaling::scaling(scale, dir.path(), quick),
            'i' => cli::convert(scale, dir.path()),
            'j' => cli::edit(scale, dir.path()),
            other => panic!("--only: there is no group {other:?} (groups: eabcdgfhij)"),
        });
    }
    let out = json!({
        "quick": quick,
        "scale": {
            "runs": scale.runs, "small_tensor_bytes": scale.small_tensor, "big_tensor_bytes": scale.big_tensor,
            "field_elements": scale.field, "szip_samples": scale.szip_samples, "probe_bytes": scale.probe,
            "edit_file_bytes": scale.edit_file,
        },
        "duration_s": started.elapsed().as_secs_f64(),
        "rows": rows,
    });
    let stdout = std::io::stdout();
    let mut w = BufWriter::new(stdout.lock());
    let _ = writeln!(
        w,
        "{}",
        serde_json::to_string_pretty(&out).unwrap_or_default()
    );
}
