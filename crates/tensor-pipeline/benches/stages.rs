//! Single-thread throughput of the encoding stages, with the pure-Rust peer where one exists:
//! simple packing at 16 bits, shuffle, and szip on 16-bit samples (ours against
//! `tensogram-szip`, on the same data and parameters).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tensor_pipeline::{SimplePacking, shuffle, szip};

/// A smooth field with a little noise, like a temperature grid.
fn field(n: usize) -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = i as f64 * 1e-4;
            270.0 + 20.0 * x.sin() + 5.0 * (x * 7.3).cos() + (state % 1000) as f64 * 1e-3
        })
        .collect()
}

fn simple_packing(c: &mut Criterion) {
    const N: usize = 4 << 20;
    let values = field(N);
    let packing = SimplePacking::compute(values.iter().copied(), 16, 0).unwrap();
    let mut packed = Vec::with_capacity(N * 2);
    packing.encode(values.iter().copied(), &mut packed).unwrap();
    let mut out = vec![0f64; N];
    let mut group = c.benchmark_group("simple_packing_16bit");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(20);
    group.bench_function("encode", |b| {
        b.iter(|| {
            packed.clear();
            packing
                .encode(black_box(&values).iter().copied(), &mut packed)
                .unwrap();
        });
    });
    group.bench_function("decode_f64", |b| {
        b.iter(|| packing.decode_f64(black_box(&packed), &mut out).unwrap());
    });
    group.finish();
}

fn shuffles(c: &mut Criterion) {
    const LEN: usize = 32 << 20;
    let src: Vec<u8> = (0..LEN).map(|i| (i * 31 / 7) as u8).collect();
    let mut dst = vec![0u8; LEN];
    let mut group = c.benchmark_group("shuffle");
    group.throughput(Throughput::Bytes(LEN as u64));
    group.sample_size(20);
    for size in [2usize, 4, 8] {
        group.bench_function(format!("shuffle/{size}"), |b| {
            b.iter(|| shuffle::shuffle_into(black_box(&src), &mut dst, size).unwrap());
        });
        group.bench_function(format!("unshuffle/{size}"), |b| {
            b.iter(|| shuffle::unshuffle_into(black_box(&src), &mut dst, size).unwrap());
        });
    }
    group.finish();
}

fn szips(c: &mut Criterion) {
    const N: usize = 4 << 20;
    let values = field(N);
    // The samples szip sees after simple packing at 16 bits: big-endian 16-bit containers.
    let packing = SimplePacking::compute(values.iter().copied(), 16, 0).unwrap();
    let mut data = Vec::with_capacity(N * 2);
    packing.encode(values.iter().copied(), &mut data).unwrap();
    let ours = szip::Params {
        bits_per_sample: 16,
        block_size: 32,
        rsi: 128,
        flags: szip::PREPROCESS | szip::MSB,
    };
    let peer = tensogram_szip::AecParams {
        bits_per_sample: 16,
        block_size: 32,
        rsi: 128,
        flags: tensogram_szip::AEC_DATA_PREPROCESS | tensogram_szip::AEC_DATA_MSB,
    };
    let (stream, _) = szip::encode(&ours, &data).unwrap();
    // Our stream is libaec's byte for byte; tensogram-szip's is a different (valid) coding
    // of the same samples, so each side decodes the other's stream.
    let (peer_stream, _) = tensogram_szip::aec_compress(&data, &peer).unwrap();
    let mut check = vec![0u8; data.len()];
    szip::decode_into(&ours, &peer_stream, &mut check).unwrap();
    assert!(check == data, "we decode tensogram-szip's stream");
    let peer_decoded = tensogram_szip::aec_decompress(&stream, data.len(), &peer).unwrap();
    assert!(peer_decoded == data, "tensogram-szip decodes our stream");
    let mut out = vec![0u8; data.len()];
    let mut group = c.benchmark_group("szip_16bit");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    group.bench_function("encode/tensorkit", |b| {
        b.iter(|| szip::encode(&ours, black_box(&data)).unwrap());
    });
    group.bench_function("encode/tensogram-szip", |b| {
        b.iter(|| tensogram_szip::aec_compress(black_box(&data), &peer).unwrap());
    });
    group.bench_function("decode/tensorkit", |b| {
        b.iter(|| szip::decode_into(&ours, black_box(&stream), &mut out).unwrap());
    });
    group.bench_function("decode/tensogram-szip", |b| {
        b.iter(|| tensogram_szip::aec_decompress(black_box(&stream), data.len(), &peer).unwrap());
    });
    group.finish();
}

criterion_group!(benches, simple_packing, shuffles, szips);
criterion_main!(benches);
