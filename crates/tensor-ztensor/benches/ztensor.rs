//! zTensor 0.1 against the `safetensors` crate on the same tensors: opening a 2000-tensor file
//! and taking a zero-copy view of one; writing one 256 MiB float32 tensor into the page cache;
//! loading it into an owned buffer and into a buffer the caller reuses. One thread.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::collections::HashMap;
use std::hint::black_box;
use std::io::BufWriter;
use tensor_core::{ByteOrder, MmapSource};
use tensor_dtype::{Dtype, TensorView};
use tensor_ztensor::v0_1::{TensorOptions, Writer, ZTensor};

const BIG: usize = 256 << 20;

fn open_many(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..32 * 1024)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    let names: Vec<String> = (0..2000)
        .map(|i| format!("model.layers.{i:04}.weight"))
        .collect();
    let zt = dir.path().join("many.zt");
    let views: Vec<(&str, TensorView<'_>, TensorOptions)> = names
        .iter()
        .map(|n| {
            (
                n.as_str(),
                TensorView::new(&data, Dtype::Float32, &[128, 256], ByteOrder::Little).unwrap(),
                TensorOptions::default(),
            )
        })
        .collect();
    std::fs::write(&zt, tensor_ztensor::v0_1::serialize(views).unwrap()).unwrap();
    let st = dir.path().join("many.safetensors");
    let st_views: HashMap<String, safetensors::tensor::TensorView<'_>> = names
        .iter()
        .map(|n| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(
                    safetensors::Dtype::F32,
                    vec![128, 256],
                    &data,
                )
                .unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(&st_views, None, &st).unwrap();

    let mut group = c.benchmark_group("open_2000_and_view_one");
    group.bench_function("tensorkit_ztensor_0.1", |b| {
        b.iter(|| {
            let map = MmapSource::open(&zt).unwrap();
            let f = ZTensor::open(&map).unwrap();
            let i = f.position("model.layers.1000.weight").unwrap();
            let d = f.read(i).unwrap();
            black_box(d.view().unwrap().typed::<f32>().unwrap()[100])
        });
    });
    group.bench_function("safetensors_crate", |b| {
        b.iter(|| {
            let map = MmapSource::open(&st).unwrap();
            let f = safetensors::SafeTensors::deserialize(&map).unwrap();
            let t = f.tensor("model.layers.1000.weight").unwrap();
            black_box(t.data()[400])
        });
    });
    group.finish();
}

fn big(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..BIG / 4)
        .flat_map(|i| (i as f32 * 0.25).to_le_bytes())
        .collect();
    let view = TensorView::new(
        &data,
        Dtype::Float32,
        &[(BIG / 4) as u64],
        ByteOrder::Little,
    )
    .unwrap();
    let zt = dir.path().join("big.zt");
    let st = dir.path().join("big.safetensors");
    // The load benchmarks read these even when the write benchmarks are filtered out.
    std::fs::write(
        &zt,
        tensor_ztensor::v0_1::serialize([("big", view.clone(), TensorOptions::default())]).unwrap(),
    )
    .unwrap();
    let sv0 = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![BIG / 4], &data)
        .unwrap();
    safetensors::serialize_to_file([("big", &sv0)], None, &st).unwrap();

    let mut g = c.benchmark_group("write_256MiB_page_cache");
    g.throughput(Throughput::Bytes(BIG as u64));
    g.sample_size(10);
    // Each write goes to a new file, as writers do (a temporary name, then a rename); the
    // previous one is removed outside the timing, since freeing its cached pages is not
    // part of writing.
    let fresh = dir.path().join("fresh.zt");
    let remove = || {
        let _ = std::fs::remove_file(&fresh);
    };
    g.bench_function("tensorkit_ztensor_0.1", |b| {
        b.iter_batched(
            remove,
            |()| {
                let file = std::fs::File::create(&fresh).unwrap();
                let mut w = Writer::new(BufWriter::with_capacity(1 << 20, file)).unwrap();
                w.add("big", &view, &TensorOptions::default()).unwrap();
                black_box(w.finish().unwrap().1)
            },
            criterion::BatchSize::PerIteration,
        );
    });
    g.bench_function("safetensors_crate", |b| {
        let sv =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![BIG / 4], &data)
                .unwrap();
        b.iter_batched(
            remove,
            |()| safetensors::serialize_to_file([("big", &sv)], None, &fresh).unwrap(),
            criterion::BatchSize::PerIteration,
        );
    });
    g.finish();

    let mut g = c.benchmark_group("load_256MiB");
    g.throughput(Throughput::Bytes(BIG as u64));
    g.sample_size(10);
    g.bench_function("tensorkit_ztensor_0.1_owned", |b| {
        b.iter(|| {
            let map = MmapSource::open(&zt).unwrap();
            let f = ZTensor::open(&map).unwrap();
            black_box(f.read(0).unwrap().into_tensor().unwrap().data().len())
        });
    });
    g.bench_function("tensorkit_ztensor_0.1_into_fresh_huge_page_buffer", |b| {
        b.iter(|| {
            let map = MmapSource::open(&zt).unwrap();
            let f = ZTensor::open(&map).unwrap();
            let mut out = tensor_core::buffer::LargeBuffer::zeroed(BIG).unwrap();
            f.read_into(0, &mut out).unwrap();
            black_box(out[12345])
        });
    });
    let mut reused = vec![1u8; BIG];
    g.bench_function("tensorkit_ztensor_0.1_into_reused_buffer", |b| {
        b.iter(|| {
            let map = MmapSource::open(&zt).unwrap();
            let f = ZTensor::open(&map).unwrap();
            f.read_into(0, &mut reused).unwrap();
            black_box(reused[12345])
        });
    });
    g.bench_function("safetensors_crate_owned", |b| {
        b.iter(|| {
            let map = MmapSource::open(&st).unwrap();
            let f = safetensors::SafeTensors::deserialize(&map).unwrap();
            black_box(f.tensor("big").unwrap().data().to_vec().len())
        });
    });
    g.finish();
}

criterion_group!(benches, open_many, big);
criterion_main!(benches);
