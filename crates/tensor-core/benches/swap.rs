//! Byte-swap throughput for each element width, in place and copying (64 MiB, one thread).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tensor_core::byte_order;

fn swaps(c: &mut Criterion) {
    const LEN: usize = 64 << 20;
    let src: Vec<u8> = (0..LEN).map(|i| i as u8).collect();
    let mut dst = vec![0u8; LEN];
    let mut group = c.benchmark_group("byte_swap");
    group.throughput(Throughput::Bytes(LEN as u64));
    group.sample_size(20);
    for width in [2usize, 4, 8] {
        group.bench_function(format!("in_place/{width}"), |b| {
            b.iter(|| byte_order::swap_in_place(black_box(&mut dst), width).unwrap());
        });
        group.bench_function(format!("copy/{width}"), |b| {
            b.iter(|| byte_order::swap_copy(black_box(&src), black_box(&mut dst), width).unwrap());
        });
    }
    group.finish();
}

criterion_group!(benches, swaps);
criterion_main!(benches);
