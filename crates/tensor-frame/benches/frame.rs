//! Tensogram speed targets (issue 4), one thread:
//! - pipeline `none` on a 100 M-element float32 field: encode and decode ≥ 3 GB/s;
//! - a file of 2000 objects: open it and decode object 1000 in under 1 ms;
//! - hash verification ≥ 8 GB/s.
//!
//! `TENSOGRAM_BENCH_ELEMENTS` shrinks the field for a quick run (default 100 000 000).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tensor_core::{ByteOrder, Limits, MmapSource};
use tensor_dtype::Dtype;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{
    DecodeOptions, EncodeOptions, GlobalMetadata, Message, serialize, serialize_into,
};

fn elements() -> usize {
    std::env::var("TENSOGRAM_BENCH_ELEMENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000_000)
}

/// A smooth temperature-like field.
fn field(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| {
            (250.0 + 30.0 * ((i % 1440) as f32 * 0.004).sin() + (i / 1440) as f32 * 1e-4)
                .to_le_bytes()
        })
        .collect()
}

fn big_field(c: &mut Criterion) {
    let count = elements();
    let data = field(count);
    let desc = DataObjectDescriptor::new(Dtype::Float32, &[count as u64], ByteOrder::Little);
    let meta = GlobalMetadata::default();
    let opts = EncodeOptions::default();
    let mut g = c.benchmark_group("tensogram_none_f32");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Bytes(data.len() as u64));
    let descs = std::slice::from_ref(&desc);
    let mut msg = Vec::new();
    let encode = |msg: &mut Vec<u8>| serialize_into(&meta, descs, &[&data], &opts, msg).unwrap();
    encode(&mut msg);
    g.bench_function("encode_into_reused_buffer", |b| b.iter(|| encode(&mut msg)));
    let m = Message::open(&msg).unwrap();
    let o = m.object(0).unwrap();
    let mut dst = vec![0u8; data.len()];
    g.bench_function("decode_into_caller_buffer", |b| {
        b.iter(|| {
            o.decode_into(&mut dst, DecodeOptions::default(), &Limits::default())
                .unwrap()
        });
    });
    g.bench_function("verify_hash", |b| b.iter(|| o.verify_hash().unwrap()));
    g.bench_function("open_and_view_zero_copy", |b| {
        b.iter(|| {
            let m = Message::open(black_box(&msg)).unwrap();
            black_box(m.object(0).unwrap().view().unwrap().byte_len())
        });
    });
    g.finish();
}

fn random_access(c: &mut Criterion) {
    let base = field(32 * 1024);
    let values: Vec<Vec<u8>> = (0..2000u16)
        .map(|i| {
            let mut v = base.clone();
            v[..4].copy_from_slice(&f32::from(i).to_le_bytes());
            v
        })
        .collect();
    let descs: Vec<DataObjectDescriptor> = (0..2000)
        .map(|_| DataObjectDescriptor::new(Dtype::Float32, &[32 * 1024], ByteOrder::Little))
        .collect();
    let slices: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    let meta = GlobalMetadata {
        base: (0..2000)
            .map(|i| tensor_frame::Map::from([("name".to_owned(), format!("field_{i}").into())]))
            .collect(),
        ..GlobalMetadata::default()
    };
    let bytes = serialize(&meta, &descs, &slices, &EncodeOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2000.tgm");
    std::fs::write(&path, &bytes).unwrap();
    let mut g = c.benchmark_group("tensogram_2000_objects");
    let mut dst = vec![0u8; 32 * 1024 * 4];
    g.bench_function("open_mmap_and_decode_object_1000", |b| {
        b.iter(|| {
            let map = MmapSource::open(&path).unwrap();
            let m = Message::open(&map).unwrap();
            let opts = DecodeOptions {
                verify_hash: true,
                ..DecodeOptions::default()
            };
            m.object(1000)
                .unwrap()
                .decode_into(&mut dst, opts, &Limits::default())
                .unwrap();
        });
    });
    g.finish();
}

criterion_group!(benches, big_field, random_access);
criterion_main!(benches);
