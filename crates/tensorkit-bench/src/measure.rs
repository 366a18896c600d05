//! How big and how often each workload runs, how it is timed, and the rows it reports.

use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Instant;

/// How big and how often.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale {
    /// Repetitions per measurement.
    pub(crate) runs: usize,
    /// Bytes of each of the 2000 small tensors.
    pub(crate) small_tensor: usize,
    /// Bytes of the one large tensor.
    pub(crate) big_tensor: usize,
    /// Elements of the Tensogram field.
    pub(crate) field: usize,
    /// 16-bit samples for szip.
    pub(crate) szip_samples: usize,
    /// Bytes for the bandwidth probes.
    pub(crate) probe: usize,
    /// Bytes of the file group (j) edits.
    pub(crate) edit_file: usize,
}

/// Times `f` `runs` times after one warm-up run; returns the durations in seconds.
pub(crate) fn time<T>(runs: usize, f: impl FnMut() -> T) -> Vec<f64> {
    time_for(runs, 0.0, f)
}

/// [`time`], with more runs where `runs` of them take less than `budget` seconds: at
/// least `runs`, then on until `budget` has passed (at most 1000). A median of five
/// millisecond runs can follow one disturbance of the machine; one of fifty does not.
pub(crate) fn time_for<T>(runs: usize, budget: f64, mut f: impl FnMut() -> T) -> Vec<f64> {
    let mut job = || {
        black_box(f());
        0
    };
    time_rounds(runs, budget, &mut [&mut job]).swap_remove(0)
}

/// [`time_for`] for several jobs, in rounds: each round times every job once, forwards and
/// backwards in turn, so that a slow spell of the machine falls on all of them alike rather
/// than on whichever was being timed, and no job always comes after the same one (on this
/// machine a new buffer's huge pages take several times as long to fill right after a
/// buffer of plain pages has been freed than after one of huge pages). Each job runs once
/// untimed first; rounds go on until there are `runs` of them and `budget` seconds per job
/// have passed (at most 1000). Returns each job's durations in seconds, in the jobs' order.
pub(crate) fn time_rounds(
    runs: usize,
    budget: f64,
    jobs: &mut [&mut dyn FnMut() -> usize],
) -> Vec<Vec<f64>> {
    let start = Instant::now();
    for job in jobs.iter_mut() {
        black_box(job());
    }
    let n = jobs.len();
    let mut times = vec![Vec::with_capacity(runs); n];
    let mut round = 0;
    while round < runs || (round < 1000 && start.elapsed().as_secs_f64() < budget * n as f64) {
        for k in 0..n {
            let k = if round % 2 == 0 { k } else { n - 1 - k };
            let t = Instant::now();
            black_box(jobs[k]());
            times[k].push(t.elapsed().as_secs_f64());
        }
        round += 1;
    }
    times
}

/// One result row.
pub(crate) fn row(
    group: &str,
    case: &str,
    who: &str,
    times: &[f64],
    bytes: Option<u64>,
    extra: Value,
) -> Value {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let mut v = json!({
        "group": group,
        "case": case,
        "impl": who,
        "median_s": t[t.len() / 2],
        "min_s": t[0],
        "max_s": t[t.len() - 1],
        "runs": t.len(),
        "bytes": bytes,
    });
    v["extra"] = extra;
    v
}

/// A smooth temperature-like float32 field with a little noise.
pub(crate) fn field(n: usize) -> Vec<f32> {
    let mut x = 0x9e37_79b9_u32;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let noise = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            250.0
                + 30.0 * ((i % 1440) as f32 * 0.004).sin()
                + (i / 1440) as f32 * 1e-4
                + 0.05 * noise
        })
        .collect()
}

pub(crate) fn as_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}
