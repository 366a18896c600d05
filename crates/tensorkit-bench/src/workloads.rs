//! Workloads (a) to (d).

use crate::measure::{Scale, as_bytes, field, row, time};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use tensorkit::frame::descriptor::DataObjectDescriptor;
use tensorkit::frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Map, Message};
use tensorkit::{ByteOrder, Dtype, Limits, TensorView};

fn map(path: &Path) -> tensorkit::bytes::MmapSource {
    tensorkit::bytes::MmapSource::open(path).expect("benchmark file")
}

fn create(path: &Path) -> BufWriter<File> {
    BufWriter::with_capacity(1 << 20, File::create(path).expect("benchmark file"))
}

/// Times `write` making a new file at `path`, in seconds. The file is removed first, as the
/// atomic writers make a new one (truncating a file whose pages are cached costs more than
/// the write itself on this kind of machine), and flushed to disk afterwards, outside the
/// timing, so the next write does not wait for this one's writeback (the kernel throttles
/// writers once enough pages are dirty).
pub(crate) fn time_new_file(path: &Path, write: &mut dyn FnMut()) -> f64 {
    let _ = std::fs::remove_file(path);
    let t = std::time::Instant::now();
    write();
    let secs = t.elapsed().as_secs_f64();
    File::open(path).and_then(|f| f.sync_all()).expect("sync");
    secs
}

/// A writer for [`write_some`]: its name, the file extension, and how it writes a file.
type Writer<'w> = (&'static str, &'static str, Box<dyn Fn(&Path) + 'w>);

/// The writer that stands for the machine itself among the others: the tensors' bytes
/// written one after the other with plain `write()` calls, no format around them. No file
/// format can be saved faster; group (e) reports it and the save targets are judged
/// against it.
pub(crate) const WRITE_PROBE: &str = "machine";

/// Writes `tensors` in every format into `dir` with the given stem; returns the paths.
/// The writers run in turn starting from the one at position `first` (modulo their number),
/// and the results come back in the usual order: callers that time several rounds start
/// each round from the next writer, so that none always writes first or last: on this
/// machine a write into new page-cache pages can take several times as long as the same
/// write a moment later (the memory a removed file frees goes back to the host, and comes
/// back slowly), and a fixed order would lay that at the same writers' door every round.
pub(crate) fn write_all(
    dir: &Path,
    stem: &str,
    tensors: &[(String, Vec<u8>, Vec<u64>)],
    first: usize,
) -> Vec<(&'static str, PathBuf, f64)> {
    write_some(dir, stem, tensors, &|w| w != WRITE_PROBE, first)
}

/// [`write_all`] for the writers `keep` names only; [`WRITE_PROBE`] is one of them.
pub(crate) fn write_some(
    dir: &Path,
    stem: &str,
    tensors: &[(String, Vec<u8>, Vec<u64>)],
    keep: &dyn Fn(&str) -> bool,
    first: usize,
) -> Vec<(&'static str, PathBuf, f64)> {
    let views: Vec<(&str, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s)| {
            (
                n.as_str(),
                TensorView::new(d, Dtype::Float32, s, ByteOrder::Little).expect("view"),
            )
        })
        .collect();
    let writers: Vec<Writer<'_>> = vec![
        (
            WRITE_PROBE,
            "raw",
            Box::new(|p: &Path| {
                let mut f = File::create(p).expect("benchmark file");
                for (_, d, _) in tensors {
                    f.write_all(d).expect("write");
                }
            }),
        ),
        (
            "safetensors crate",
            "safetensors",
            Box::new(|p: &Path| {
                let st: HashMap<String, safetensors::tensor::TensorView<'_>> = tensors
                    .iter()
                    .map(|(n, d, s)| {
                        let shape = s.iter().map(|&x| x as usize).collect();
                        (
                            n.clone(),
                            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape, d)
                                .expect("view"),
                        )
                    })
                    .collect();
                safetensors::serialize_to_file(&st, None, p).expect("safetensors write");
            }),
        ),
        (
            "tensorkit BinTensors",
            "bt",
            Box::new(|p: &Path| {
                tensorkit::bintensors::write(
                    &mut create(p),
                    views.iter().cloned(),
                    None,
                    tensorkit::bintensors::Layout::Release,
                )
                .expect("write");
            }),
        ),
        (
            "tensorkit zTensor 0.1",
            "zt",
            Box::new(|p: &Path| {
                let items = views.iter().map(|(n, v)| {
                    (
                        *n,
                        v.clone(),
                        tensorkit::ztensor::v0_1::TensorOptions::default(),
                    )
                });
                tensorkit::ztensor::v0_1::write(&mut create(p), items).expect("write");
            }),
        ),
        (
            "tensorkit zTensor 2",
            "zt2",
            Box::new(|p: &Path| {
                let items = views.iter().map(|(n, v)| (*n, v.clone(), None));
                tensorkit::ztensor::v2::write(&mut create(p), items, None).expect("write");
            }),
        ),
        (
            "tensorkit Tensogram",
            "tgm",
            Box::new(|p: &Path| {
                let descs: Vec<DataObjectDescriptor> = views
                    .iter()
                    .map(|(_, v)| {
                        DataObjectDescriptor::new(Dtype::Float32, v.shape(), ByteOrder::Little)
                    })
                    .collect();
                let meta = GlobalMetadata {
                    base: views
                        .iter()
                        .map(|(n, _)| Map::from([("name".to_owned(), (*n).into())]))
                        .collect(),
                    ..GlobalMetadata::default()
                };
                let data: Vec<&[u8]> = tensors.iter().map(|t| t.1.as_slice()).collect();
                tensorkit::frame::write(
                    &meta,
                    &descs,
                    &data,
                    &EncodeOptions::default(),
                    &mut create(p),
                )
                .expect("write");
            }),
        ),
    ];
    let n = writers.len();
    let mut out: Vec<Option<(&'static str, PathBuf, f64)>> = vec![None; n];
    for k in (0..n).map(|k| (k + first) % n) {
        let (who, ext, write) = &writers[k];
        if keep(who) {
            let path = dir.join(format!("{stem}.{ext}"));
            let secs = time_new_file(&path, &mut || write(&path));
            out[k] = Some((who, path, secs));
        }
    }
    out.into_iter().flatten().collect()
}

/// Opens `path` as `who` does and returns tensor `name`'s bytes (borrowed from the map or
/// decoded), copied into `dst`.
fn read_one(who: &str, path: &Path, name: &str, index: usize, dst: &mut Vec<u8>) {
    let m = map(path);
    dst.clear();
    match who {
        "safetensors crate" => {
            let f = safetensors::SafeTensors::deserialize(&m).expect("read");
            dst.extend_from_slice(f.tensor(name).expect("tensor").data());
        }
        "tensorkit safetensors" => {
            let f = tensorkit::safetensors::SafeTensors::open(&m).expect("read");
            let t = f.tensor(name).expect("tensor");
            dst.extend_from_slice(t.view.contiguous_bytes().expect("contiguous"));
        }
        "tensorkit BinTensors" => {
            let f = tensorkit::bintensors::BinTensors::open(&m).expect("read");
            dst.extend_from_slice(
                f.tensor(name)
                    .expect("tensor")
                    .view
                    .contiguous_bytes()
                    .expect("contiguous"),
            );
        }
        "tensorkit zTensor 0.1" => {
            let f = tensorkit::ztensor::v0_1::ZTensor::open(&m).expect("read");
            dst.extend_from_slice(
                &f.read(f.position(name).expect("tensor"))
                    .expect("read")
                    .data,
            );
        }
        "tensorkit zTensor 2" => {
            let f = tensorkit::ztensor::AnyZTensor::open(&m).expect("read");
            dst.extend_from_slice(
                &f.read(f.position(name).expect("tensor"))
                    .expect("read")
                    .data,
            );
        }
        "tensorkit Tensogram" => {
            let msg = Message::open_with(&m, &tensorkit::ReadOptions::default()).expect("read");
            let o = msg.object(index).expect("object");
            dst.resize(o.decoded_len().expect("size") as usize, 0);
            o.decode_into(
                dst,
                DecodeOptions {
                    verify_hash: true,
                    ..DecodeOptions::default()
                },
                &Limits::default(),
            )
            .expect("decode");
        }
        other => unreachable!("no reader called {other}"),
    }
}

/// (a) A file of 2000 float32 tensors: map it, parse it, copy tensor 1000 out.
pub(crate) fn many_tensors(scale: Scale, dir: &Path) -> Vec<Value> {
    let n = scale.small_tensor / 4;
    let base = as_bytes(&field(n));
    // Each tensor different (its first element is its number): a writer that stores equal
    // blobs once (zTensor 2) must not shrink the file.
    let tensors: Vec<(String, Vec<u8>, Vec<u64>)> = (0..2000)
        .map(|i| {
            let mut t = base.clone();
            t[..4].copy_from_slice(&(i as f32).to_le_bytes());
            (format!("layer.{i}.weight"), t, vec![n as u64])
        })
        .collect();
    let base = tensors[1000].1.clone();
    let files = write_all(dir, "many", &tensors, 0);
    let mut rows = Vec::new();
    let mut dst = Vec::new();
    let total = (2000 * scale.small_tensor) as u64;
    for (who, path, _) in &files {
        let mut readers = vec![*who];
        if *who == "safetensors crate" {
            readers.push("tensorkit safetensors");
        }
        for r in readers {
            let t = time(scale.runs * 4, || {
                read_one(r, path, "layer.1000.weight", 1000, &mut dst);
            });
            assert_eq!(dst, base, "{r} read the wrong bytes");
            rows.push(row(
                "a",
                "open a 2000-tensor file, read tensor 1000",
                r,
                &t,
                Some(scale.small_tensor as u64),
                json!({"file_bytes": total}),
            ));
        }
    }
    rows
}

/// (b) One large float32 tensor: save (page cache, no fsync), load into a fresh buffer,
/// and open as a zero-copy view.
pub(crate) fn big_tensor(scale: Scale, dir: &Path) -> Vec<Value> {
    let n = scale.big_tensor / 4;
    let data = as_bytes(&field(n));
    let one = vec![("big".to_owned(), data, vec![n as u64])];
    let bytes = Some(scale.big_tensor as u64);
    let mut rows = Vec::new();
    // Saving, timed over separate writes of each format and of the machine's own write()
    // (the floor), three times as many rounds as other cases take: on this machine some
    // writes into new page-cache pages take several times as long as the rest (0.3 against
    // 1 to 3 s, whoever writes; the host hands the pages back slowly), and a median of five
    // would follow them.
    let mut saves: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut files = Vec::new();
    for round in 0..scale.runs * 3 {
        files = write_some(dir, "big", &one, &|_| true, round);
        for (who, _, secs) in &files {
            saves.entry(who).or_default().push(*secs);
        }
    }
    let mut dst = Vec::new();
    for (who, path, _) in &files {
        if *who == WRITE_PROBE {
            rows.push(row(
                "e",
                "write() of the large tensor into a new file",
                who,
                &saves[who],
                bytes,
                Value::Null,
            ));
            let _ = std::fs::remove_file(path);
            continue;
        }
        rows.push(row(
            "b",
            "save one large float32 tensor (page cache, no fsync)",
            who,
            &saves[who],
            bytes,
            Value::Null,
        ));
        let mut readers = vec![*who];
        if *who == "safetensors crate" {
            readers.push("tensorkit safetensors");
        }
        for r in readers {
            // The path users call: the crate's own API for the peer, for tensorkit the
            // library front door (`open`, `get`, `to_tensor`) with its default buffers.
            let t = time(scale.runs, || {
                if r.starts_with("tensorkit") {
                    return tensorkit::open(path)
                        .expect("open")
                        .get("big")
                        .expect("tensor")
                        .to_tensor()
                        .expect("load")
                        .data()
                        .len() as u64;
                }
                dst = Vec::new();
                read_one(r, path, "big", 0, &mut dst);
                dst.len() as u64
            });
            rows.push(row(
                "b",
                "load it into a new buffer (owned)",
                r,
                &t,
                bytes,
                Value::Null,
            ));
        }
        if who.starts_with("tensorkit") {
            let t = time(scale.runs, || {
                let mut buf = tensorkit::bytes::buffer::LargeBuffer::zeroed(scale.big_tensor)
                    .expect("buffer");
                read_into(who, path, &mut buf);
                buf
            });
            rows.push(row(
                "b",
                "load it into a new huge-page buffer (LargeBuffer)",
                who,
                &t,
                bytes,
                Value::Null,
            ));
        }
        let t = time(scale.runs * 4, || zero_copy(who, path));
        rows.push(row(
            "b",
            "open it as a zero-copy view",
            who,
            &t,
            bytes,
            Value::Null,
        ));
    }
    rows
}

/// Reads the one tensor of `path` into `dst` the way `who` reads into a caller's buffer.
fn read_into(who: &str, path: &Path, dst: &mut [u8]) {
    let m = map(path);
    match who {
        "tensorkit BinTensors" => dst.copy_from_slice(
            tensorkit::bintensors::BinTensors::open(&m)
                .expect("read")
                .tensor("big")
                .expect("tensor")
                .view
                .contiguous_bytes()
                .expect("contiguous"),
        ),
        "tensorkit zTensor 0.1" => tensorkit::ztensor::v0_1::ZTensor::open(&m)
            .expect("read")
            .read_into(0, dst)
            .expect("read"),
        "tensorkit zTensor 2" => dst.copy_from_slice(
            &tensorkit::ztensor::AnyZTensor::open(&m)
                .expect("read")
                .read(0)
                .expect("read")
                .data,
        ),
        "tensorkit Tensogram" => {
            let msg = Message::open_with(&m, &tensorkit::ReadOptions::default()).expect("read");
            msg.object(0)
                .expect("object")
                .decode_into(dst, DecodeOptions::default(), &Limits::default())
                .expect("decode");
        }
        other => unreachable!("no reader called {other}"),
    }
}

/// Maps and parses `path` and returns the length of a view of its one tensor, without
/// copying.
fn zero_copy(who: &str, path: &Path) -> usize {
    match who {
        "safetensors crate" => safetensors::SafeTensors::deserialize(&map(path))
            .expect("read")
            .tensor("big")
            .expect("tensor")
            .data()
            .len(),
        "tensorkit BinTensors" => tensorkit::bintensors::BinTensors::open(&map(path))
            .expect("read")
            .tensor("big")
            .expect("tensor")
            .view
            .byte_len() as usize,
        "tensorkit zTensor 0.1" => {
            let m = map(path);
            let f = tensorkit::ztensor::v0_1::ZTensor::open(&m).expect("read");
            f.read(0).expect("read").data.len()
        }
        // The front door: a view does not read the elements, so the digest is checked only
        // when asked (`verify`) or when they are copied out.
        "tensorkit zTensor 2" => tensorkit::open(path)
            .expect("read")
            .get("big")
            .expect("tensor")
            .view()
            .expect("view")
            .byte_len() as usize,
        "tensorkit Tensogram" => {
            let m = map(path);
            let msg = Message::open_with(&m, &tensorkit::ReadOptions::default()).expect("read");
            msg.object(0)
                .expect("object")
                .view()
                .expect("raw")
                .byte_len() as usize
        }
        other => unreachable!("no reader called {other}"),
    }
}

/// A pipeline case: its name, encoding, filter, compression and parameters.
type Case = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Vec<(String, tensorkit::bytes::ciborium::Value)>,
);

/// (c) Tensogram pipelines on one float32 field: encode into a reused buffer, decode into a
/// reused buffer, size ratio, largest error.
pub(crate) fn pipelines(scale: Scale) -> Vec<Value> {
    let values = field(scale.field);
    let data = as_bytes(&values);
    let bytes = Some(data.len() as u64);
    let param = |k: &str, v: u64| (k.to_owned(), tensorkit::bytes::ciborium::Value::from(v));
    let cases: Vec<Case> = vec![
        ("none", "none", "none", "none", vec![]),
        (
            "zstd-3",
            "none",
            "none",
            "zstd",
            vec![param("zstd_level", 3)],
        ),
        (
            "shuffle + zstd-3",
            "none",
            "shuffle",
            "zstd",
            vec![param("shuffle_element_size", 4), param("zstd_level", 3)],
        ),
        ("lz4", "none", "none", "lz4", vec![]),
        (
            "simple_packing 16",
            "simple_packing",
            "none",
            "none",
            vec![param("sp_bits_per_value", 16)],
        ),
        (
            "simple_packing 16 + szip",
            "simple_packing",
            "none",
            "szip",
            vec![
                param("sp_bits_per_value", 16),
                param("szip_rsi", 128),
                param("szip_block_size", 32),
                param("szip_flags", 8),
            ],
        ),
    ];
    let mut rows = Vec::new();
    let mut msg = Vec::new();
    let mut out = vec![0u8; data.len()];
    for (name, encoding, filter, compression, params) in cases {
        let mut d =
            DataObjectDescriptor::new(Dtype::Float32, &[scale.field as u64], ByteOrder::Little);
        d.encoding = encoding.into();
        d.filter = filter.into();
        d.compression = compression.into();
        d.params.extend(params);
        let descs = [d];
        // Packing float32 is a tensorkit extension (the reference packs float64 only).
        let opts = EncodeOptions {
            beyond_reference: true,
            ..EncodeOptions::default()
        };
        let meta = GlobalMetadata::default();
        let enc = time(scale.runs, || {
            tensorkit::frame::serialize_into(&meta, &descs, &[&data], &opts, &mut msg)
                .expect("encode");
        });
        let m = Message::open_with(&msg, &tensorkit::ReadOptions::default()).expect("open");
        let o = m.object(0).expect("object");
        let stored = o.payload_region().len();
        let dec = time(scale.runs, || {
            o.decode_into(&mut out, DecodeOptions::default(), &Limits::default())
                .expect("decode");
        });
        let err = out
            .as_chunks::<4>()
            .0
            .iter()
            .zip(&values)
            .map(|(b, v)| (f32::from_le_bytes(*b) - v).abs())
            .fold(0f32, f32::max);
        let extra = json!({"stored_bytes": stored, "ratio": stored as f64 / data.len() as f64, "max_error": err});
        if name == "none" {
            let t = time(scale.runs, || o.verify_hash().expect("hash"));
            rows.push(row(
                "c",
                "verify the object's hash",
                "tensorkit Tensogram",
                &t,
                bytes,
                Value::Null,
            ));
        }
        rows.push(row(
            "c",
            &format!("encode, {name}"),
            "tensorkit Tensogram",
            &enc,
            bytes,
            extra.clone(),
        ));
        rows.push(row(
            "c",
            &format!("decode, {name}"),
            "tensorkit Tensogram",
            &dec,
            bytes,
            extra,
        ));
    }
    rows
}

/// (d) szip on 16-bit samples (a packed smooth field) against the `tensogram-szip` crate.
pub(crate) fn szip(scale: Scale) -> Vec<Value> {
    use tensorkit::pipeline::{SimplePacking, szip};
    let values: Vec<f64> = field(scale.szip_samples)
        .into_iter()
        .map(f64::from)
        .collect();
    let packing = SimplePacking::compute(values.iter().copied(), 16, 0).expect("packing");
    let mut data = Vec::new();
    packing
        .encode(values.iter().copied(), &mut data)
        .expect("packing");
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
    let (stream, _) = szip::encode(&ours, &data).expect("szip");
    let mut out = vec![0u8; data.len()];
    let bytes = Some(data.len() as u64);
    let ratio = json!({"ratio": stream.len() as f64 / data.len() as f64});
    // The other stages, on the same values: simple packing (float64 in and out, counted in
    // values) and the 4-byte shuffle (counted in bytes).
    let count = json!({"values": values.len()});
    let mut packed = Vec::with_capacity(data.len());
    let pack = time(scale.runs, || {
        packed.clear();
        packing
            .encode(values.iter().copied(), &mut packed)
            .expect("packing");
    });
    let mut unpacked = vec![0f64; values.len()];
    let unpack = time(scale.runs, || {
        packing
            .decode(&packed, values.len(), |i, v| unpacked[i] = v)
            .expect("packing");
    });
    let floats = as_bytes(&field(scale.szip_samples));
    let mut shuffled = vec![0u8; floats.len()];
    let shuffle = time(scale.runs, || {
        tensorkit::pipeline::shuffle::shuffle_into(&floats, &mut shuffled, 4).expect("shuffle");
    });
    let mut back = vec![0u8; floats.len()];
    let unshuffle = time(scale.runs, || {
        tensorkit::pipeline::shuffle::unshuffle_into(&shuffled, &mut back, 4).expect("shuffle");
    });
    let fbytes = Some(floats.len() as u64);
    vec![
        row(
            "d",
            "simple_packing encode, 16 bits, float64 in",
            "tensorkit",
            &pack,
            Some((values.len() * 8) as u64),
            count.clone(),
        ),
        row(
            "d",
            "simple_packing decode, 16 bits, float64 out",
            "tensorkit",
            &unpack,
            Some((values.len() * 8) as u64),
            count,
        ),
        row(
            "d",
            "shuffle, 4-byte elements",
            "tensorkit",
            &shuffle,
            fbytes,
            Value::Null,
        ),
        row(
            "d",
            "unshuffle, 4-byte elements",
            "tensorkit",
            &unshuffle,
            fbytes,
            Value::Null,
        ),
        row(
            "d",
            "szip encode, 16-bit samples",
            "tensorkit",
            &time(scale.runs, || szip::encode(&ours, &data).expect("szip")),
            bytes,
            ratio.clone(),
        ),
        row(
            "d",
            "szip encode, 16-bit samples",
            "tensogram-szip 0.24.0",
            &time(scale.runs, || {
                tensogram_szip::aec_compress(&data, &peer).expect("szip")
            }),
            bytes,
            Value::Null,
        ),
        row(
            "d",
            "szip decode, 16-bit samples",
            "tensorkit",
            &time(scale.runs, || {
                szip::decode_into(&ours, &stream, &mut out).expect("szip");
            }),
            bytes,
            ratio,
        ),
        row(
            "d",
            "szip decode, 16-bit samples",
            "tensogram-szip 0.24.0",
            &time(scale.runs, || {
                tensogram_szip::aec_decompress(&stream, data.len(), &peer).expect("szip")
            }),
            bytes,
            Value::Null,
        ),
    ]
}
