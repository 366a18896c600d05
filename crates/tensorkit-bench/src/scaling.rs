//! (h) Scaling: opening a file, getting one tensor from it and loading all of it, as the
//! number of tensors grows (10 to 100 000 tensors of 1 KiB) and as one tensor grows (1 MiB
//! to 4 GiB), for every format through the front door, next to the safetensors crate. The
//! report checks each step for growth faster than the work.

use crate::measure::{Scale, row, time_rounds};
use crate::workloads::write_some;
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::Path;

/// The size axis's yardstick (see [`measure`]): the report judges growth against it.
const MACHINE: &str = "this machine: read() into a new buffer";

/// Elements of each tensor on the count axis (1 KiB of float32).
const SMALL: usize = 256;

/// What each reader does: open and parse, open and copy one tensor out, open and copy
/// every tensor out. Returns a byte count so nothing is optimised away.
#[derive(Clone, Copy)]
enum Work {
    Open,
    GetOne,
    LoadAll,
}

impl Work {
    const ALL: [Work; 3] = [Work::Open, Work::GetOne, Work::LoadAll];

    fn case(self) -> &'static str {
        match self {
            Work::Open => "scaling: open",
            Work::GetOne => "scaling: get one",
            Work::LoadAll => "scaling: load all",
        }
    }
}

/// A timed job of [`measure`]: who, which case, how many bytes it delivers, and the job.
type Job<'a> = (
    &'a str,
    &'static str,
    Option<u64>,
    Box<dyn FnMut() -> usize + 'a>,
);

fn run(who: &str, path: &Path, one: &str, work: Work) -> usize {
    if who == "safetensors crate" {
        let m = tensorkit::bytes::MmapSource::open(path).expect("map");
        let f = safetensors::SafeTensors::deserialize(&m).expect("read");
        return match work {
            Work::Open => f.len(),
            Work::GetOne => black_box(f.tensor(one).expect("tensor").data().to_vec()).len(),
            Work::LoadAll => f
                .tensors()
                .iter()
                .map(|(_, t)| black_box(t.data().to_vec()).len())
                .sum(),
        };
    }
    let f = tensorkit::open(path).expect("open");
    match work {
        Work::Open => f.len(),
        Work::GetOne => black_box(f.get(one).expect("tensor").to_tensor().expect("load"))
            .data()
            .len(),
        Work::LoadAll => f
            .tensors()
            .map(|t| black_box(t.to_tensor().expect("load")).data().len())
            .sum(),
    }
}

/// Writes `tensors` in every format, one format at a time (a 4 GiB tensor in five formats
/// would not fit on the disk at once), and times every [`Work`] of every reader of each file
/// in rounds (see [`time_rounds`]), for `budget` seconds per reader and work at least.
/// Along the size axis the rounds also time the yardstick: this machine reading the same
/// file with `read()` into a new buffer, so that steps the memory itself takes (caches, page
/// faults, the host's slow pages) are not laid at the readers' door. Every row names the
/// file it read (`extra.file`, the writer's name).
fn measure(
    scale: Scale,
    budget: f64,
    dir: &Path,
    tensors: &[(String, Vec<u8>, Vec<u64>)],
    axis: &str,
    rows: &mut Vec<Value>,
) {
    let one = &tensors[tensors.len() / 2].0;
    let bytes: u64 = tensors.iter().map(|t| t.1.len() as u64).sum();
    // Large files are read fewer times (twice in each direction, see [`time_rounds`]): the
    // load dominates.
    let runs = if bytes > 1 << 30 { 4 } else { scale.runs };
    for writer in [
        "safetensors crate",
        "tensorkit BinTensors",
        "tensorkit zTensor 0.1",
        "tensorkit zTensor 2",
        "tensorkit Tensogram",
    ] {
        let files = write_some(dir, "scale", tensors, &|w| w == writer, 0);
        for (who, path, _) in &files {
            let mut readers = vec![*who];
            if *who == "safetensors crate" {
                readers.push("tensorkit safetensors");
            }
            let mut jobs: Vec<Job<'_>> = Vec::new();
            if axis == "size" {
                jobs.push((
                    MACHINE,
                    Work::LoadAll.case(),
                    Some(bytes),
                    Box::new(|| black_box(std::fs::read(path).expect("read")).len()),
                ));
            }
            for r in readers {
                for work in Work::ALL {
                    let b = match work {
                        Work::Open => None,
                        Work::GetOne => Some(tensors[0].1.len() as u64),
                        Work::LoadAll => Some(bytes),
                    };
                    jobs.push((r, work.case(), b, Box::new(move || run(r, path, one, work))));
                }
            }
            let extra = json!({
                "axis": axis,
                "tensors": tensors.len(),
                "tensor_bytes": tensors[0].1.len(),
                "file": who,
            });
            // Those that fill plain pages (read(), the safetensors crate's vectors) and those
            // that fill huge pages (tensorkit's owned buffers) are timed in rounds of their
            // own, plain first: on this machine a new buffer of huge pages takes many times as
            // long to fill right after one of plain pages of the same size has been freed,
            // which would fall on whichever reader came next.
            let (mut plain, mut huge): (Vec<Job<'_>>, Vec<Job<'_>>) = jobs
                .into_iter()
                .partition(|j| j.0 == MACHINE || j.0 == "safetensors crate");
            for kind in [&mut plain, &mut huge] {
                let mut run_them: Vec<&mut dyn FnMut() -> usize> =
                    kind.iter_mut().map(|j| &mut *j.3 as _).collect();
                let times = time_rounds(runs, budget, &mut run_them);
                for ((r, case, b, _), t) in kind.iter().zip(&times) {
                    rows.push(row("h", case, r, t, *b, extra.clone()));
                }
            }
            let _ = std::fs::remove_file(path);
        }
    }
}

/// (h) Both axes.
pub(crate) fn scaling(scale: Scale, dir: &Path, quick: bool) -> Vec<Value> {
    let mut rows = Vec::new();
    // Quick steps are timed for a third of a second at least, so that their medians hold
    // still: the growth verdicts compare them.
    let budget = if quick { 0.0 } else { 0.3 };
    let counts: &[usize] = if quick {
        &[10, 100, 1000]
    } else {
        &[10, 100, 1000, 10_000, 100_000]
    };
    let small: Vec<u8> = crate::measure::as_bytes(&crate::measure::field(SMALL));
    for &n in counts {
        let tensors: Vec<(String, Vec<u8>, Vec<u64>)> = (0..n)
            .map(|i| {
                let mut t = small.clone();
                t[..4].copy_from_slice(&(i as f32).to_le_bytes());
                (format!("layer.{i}.weight"), t, vec![SMALL as u64])
            })
            .collect();
        measure(scale, budget, dir, &tensors, "count", &mut rows);
    }
    let sizes: &[usize] = if quick {
        &[1 << 20, 16 << 20]
    } else {
        &[1 << 20, 16 << 20, 256 << 20, 1 << 30, 4 << 30]
    };
    for &size in sizes {
        let tensors = vec![(
            "big".to_owned(),
            crate::measure::as_bytes(&crate::measure::field(size / 4)),
            vec![(size / 4) as u64],
        )];
        measure(scale, budget, dir, &tensors, "size", &mut rows);
    }
    rows
}
