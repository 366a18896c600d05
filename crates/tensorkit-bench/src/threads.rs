//! Workload (g): every core against one.
//!
//! Each case is timed on rayon's default pool of every core and on a one-thread pool, and
//! each row records how many cores were busy while it ran (process CPU time over wall time):
//! a "one thread" that keeps a second core busy is not a one-core baseline. Each case names
//! its baseline (`one_core` in the row's extras), the same work done on one core; `cargo
//! xtask bench` holds the every-core row against it.

use crate::measure::{Scale, as_bytes, field, row, time};
use rustix::time::{ClockId, clock_gettime};
use serde_json::{Value, json};
use std::time::Instant;
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Message};
use tensorkit::{ByteOrder, Dtype};

/// The implementation name of a row timed on a one-thread pool.
const ONE_THREAD: &str = "tensorkit, 1 thread";

/// The one-core baseline of zstd: libzstd's own single-threaded encoder, the whole input in
/// one call (no workers, so nothing runs beside the caller).
const ZSTD_ALONE: &str = "libzstd, single-threaded";

/// The CPU time this process has used, in seconds (every thread's).
fn cpu_seconds() -> f64 {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// One case of (g), timed one way after another; its rows go to `rows`.
struct Trial<'a> {
    rows: &'a mut Vec<Value>,
    case: &'a str,
    bytes: Option<u64>,
    runs: usize,
}

impl Trial<'_> {
    /// Times `work` like [`time`] and adds its row, with how many cores were busy meanwhile
    /// on average: `threads` is the pool it ran on, `one_core` marks the case's baseline.
    fn timed(&mut self, who: &str, threads: usize, one_core: bool, work: &(dyn Fn() + Sync)) {
        let (cpu, wall) = (cpu_seconds(), Instant::now());
        let times = time(self.runs, work);
        let cores = (cpu_seconds() - cpu) / wall.elapsed().as_secs_f64();
        let extra = json!({ "threads": threads, "cores": cores, "one_core": one_core });
        self.rows
            .push(row("g", self.case, who, &times, self.bytes, extra));
    }
}

/// (g) Both cores against one: zstd's multithreaded encoder on one large field, and the
/// objects of one Tensogram message decoded in parallel (`decode_all_parallel`).
///
/// The zstd encoder makes the same frame for any number of workers, so on a one-thread pool
/// it still hands the input to one worker thread while the calling thread cuts jobs and
/// gathers their output: that row keeps part of a second core busy. Its baseline is
/// therefore libzstd's single-threaded encoder at the same level, given the whole input in
/// one call, as a one-core program would call it (tensorkit's own single-threaded
/// `compress` streams the input and is slower). The message is decoded on the pool's
/// threads alone, so its one-thread row is its own baseline.
pub(crate) fn threads(scale: Scale) -> Vec<Value> {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let n = rayon::current_num_threads();
    let every = format!("tensorkit, {n} threads");
    let values = field(scale.field);
    let data = as_bytes(&values);
    let mut rows = Vec::new();

    let mut zstd = Trial {
        rows: &mut rows,
        case: "zstd-3 encode of one field",
        bytes: Some(data.len() as u64),
        runs: scale.runs,
    };
    zstd.timed(ZSTD_ALONE, 1, true, &|| {
        zstd::bulk::compress(&data, 3).expect("zstd");
    });
    let encode = || {
        tensorkit::pipeline::zstd::compress_large(&data, 3).expect("zstd");
    };
    zstd.timed(ONE_THREAD, 1, false, &|| one.install(encode));
    zstd.timed(&every, n, false, &encode);

    // Eight objects of an eighth of the field each, packed to 16 bits and szip-coded.
    let param = |k: &str, v: u64| (k.to_owned(), tensorkit::bytes::ciborium::Value::from(v));
    let part = data.len() / 8 / 4 * 4;
    let descs: Vec<DataObjectDescriptor> = (0..8)
        .map(|_| {
            let mut d =
                DataObjectDescriptor::new(Dtype::Float32, &[(part / 4) as u64], ByteOrder::Little);
            d.encoding = "simple_packing".into();
            d.compression = "szip".into();
            d.params.extend([
                param("sp_bits_per_value", 16),
                param("szip_rsi", 128),
                param("szip_block_size", 32),
                param("szip_flags", 8),
            ]);
            d
        })
        .collect();
    let parts: Vec<&[u8]> = (0..8).map(|i| &data[i * part..(i + 1) * part]).collect();
    let opts = EncodeOptions {
        beyond_reference: true,
        ..EncodeOptions::default()
    };
    let mut msg = Vec::new();
    tensorkit::frame::serialize_into(&GlobalMetadata::default(), &descs, &parts, &opts, &mut msg)
        .expect("encode");
    let m = Message::open_with(&msg, &tensorkit::ReadOptions::default()).expect("open");
    let mut decode = Trial {
        rows: &mut rows,
        case: "decode an 8-object message (simple_packing 16 + szip)",
        bytes: Some((part * 8) as u64),
        runs: scale.runs,
    };
    let work = || {
        m.decode_all_parallel(DecodeOptions::default())
            .expect("decode");
    };
    decode.timed(ONE_THREAD, 1, true, &|| one.install(work));
    decode.timed(&every, n, false, &work);
    rows
}
