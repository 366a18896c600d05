//! Opening a file of 2000 tensors (128 KiB of float32 each, 256 MiB in all) and listing its
//! names, and parsing the header alone, side by side with the `safetensors` crate on the
//! same tensors. One thread, warm page cache.

use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;
use tensor_bintensors::{BinTensors, Layout};
use tensor_core::{ByteOrder, MmapSource};
use tensor_dtype::{Dtype, TensorView};

const COUNT: usize = 2000;
const ELEMENTS: usize = 32 * 1024;

fn write_files(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let data: Vec<u8> = (0..ELEMENTS)
        .flat_map(|i| (i as f32 * 0.001).to_le_bytes())
        .collect();
    let names: Vec<String> = (0..COUNT)
        .map(|i| format!("model.layers.{i:04}.weight"))
        .collect();
    let views: Vec<(&str, TensorView<'_>)> = names
        .iter()
        .map(|n| {
            (
                n.as_str(),
                TensorView::new(&data, Dtype::Float32, &[128, 256], ByteOrder::Little).unwrap(),
            )
        })
        .collect();
    let bt = dir.join("many.bt");
    std::fs::write(
        &bt,
        tensor_bintensors::serialize(views, None, Layout::Release).unwrap(),
    )
    .unwrap();
    let st = dir.join("many.safetensors");
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
    (bt, st)
}

fn open(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (bt, st) = write_files(dir.path());
    let mut g = c.benchmark_group("open_and_list_2000_tensors");
    g.bench_function("tensorkit_bintensors", |b| {
        b.iter(|| {
            let map = MmapSource::open(&bt).unwrap();
            let f = BinTensors::open(&map).unwrap();
            black_box(f.names().map(str::len).sum::<usize>())
        });
    });
    g.bench_function("safetensors_crate", |b| {
        b.iter(|| {
            let map = MmapSource::open(&st).unwrap();
            let f = safetensors::SafeTensors::deserialize(&map).unwrap();
            black_box(f.names().iter().map(|n| n.len()).sum::<usize>())
        });
    });
    g.finish();

    let bt_map = MmapSource::open(&bt).unwrap();
    let st_map = MmapSource::open(&st).unwrap();
    let mut g = c.benchmark_group("header_parse_2000_tensors");
    g.bench_function("tensorkit_bintensors", |b| {
        b.iter(|| black_box(BinTensors::open(&bt_map).unwrap().len()));
    });
    g.bench_function("safetensors_crate", |b| {
        b.iter(|| black_box(safetensors::SafeTensors::read_metadata(&st_map).unwrap().0));
    });
    g.finish();

    let mut g = c.benchmark_group("open_and_read_one_tensor");
    g.bench_function("tensorkit_bintensors_zero_copy", |b| {
        b.iter(|| {
            let map = MmapSource::open(&bt).unwrap();
            let f = BinTensors::open(&map).unwrap();
            let t = f.tensor("model.layers.1000.weight").unwrap();
            black_box(t.view.typed::<f32>().unwrap()[ELEMENTS - 1])
        });
    });
    g.finish();
}

criterion_group!(benches, open);
criterion_main!(benches);
