//! Unit tests of the pipeline.

use super::*;
use tensor_core::{ErrorKind, Kinded};

fn chunked(p: &Pipeline, payload: &[u8], dtype: Dtype, n: u64, chunk: usize) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut largest = 0;
    p.decode_chunks(
        payload,
        dtype,
        ByteOrder::Little,
        n,
        &Limits::default(),
        chunk,
        &mut |c| {
            largest = largest.max(c.len());
            out.extend_from_slice(c);
            Ok(())
        },
    )?;
    assert!(
        largest <= chunk.max(dtype.payload_bytes(8)? as usize),
        "run of {largest}"
    );
    Ok(out)
}

#[test]
fn chunked_decoding_equals_whole_decoding_for_every_stage_chain() {
    let values: Vec<f64> = (0..1003)
        .map(|i| 280.0 + f64::from(i % 97) * 0.25)
        .collect();
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let n = values.len() as u64;
    let packing = |bits| {
        Encoding::SimplePacking(SimplePacking::compute(values.iter().copied(), bits, 0).unwrap())
    };
    let pipelines = [
        Pipeline::NONE,
        Pipeline {
            compression: Compression::Zstd { level: 3 },
            ..Pipeline::NONE
        },
        Pipeline {
            encoding: packing(16),
            ..Pipeline::NONE
        },
        Pipeline {
            encoding: packing(13),
            compression: Compression::Zstd { level: 1 },
            ..Pipeline::NONE
        },
        Pipeline {
            encoding: packing(0),
            ..Pipeline::NONE
        },
        Pipeline {
            filter: Filter::Shuffle { element_size: 8 },
            compression: Compression::Lz4,
            ..Pipeline::NONE
        },
    ];
    for p in pipelines.into_iter().filter(|p| p.compression.is_built()) {
        let enc = p.encode(&le, Dtype::Float64, ByteOrder::Little, n).unwrap();
        let whole = p
            .decode(
                &enc.payload,
                Dtype::Float64,
                ByteOrder::Little,
                n,
                &Limits::default(),
            )
            .unwrap();
        for chunk in [1, 64, 1000, 1 << 20] {
            assert_eq!(
                chunked(&p, &enc.payload, Dtype::Float64, n, chunk).unwrap(),
                whole,
                "{p:?} {chunk}"
            );
        }
    }
}

#[test]
fn ranges_equal_the_same_elements_of_whole_decoding_for_every_stage_chain() {
    let values: Vec<f64> = (0..203).map(|i| 280.0 + f64::from(i % 97) * 0.25).collect();
    let n = values.len() as u64;
    for dtype in [Dtype::Float64, Dtype::Float32] {
        let bytes: Vec<u8> = match dtype {
            Dtype::Float64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            _ => values
                .iter()
                .flat_map(|&v| (v as f32).to_le_bytes())
                .collect(),
        };
        let packing = |bits| {
            Encoding::SimplePacking(
                SimplePacking::compute(values.iter().copied(), bits, 0).unwrap(),
            )
        };
        let pipelines = [
            Pipeline::NONE,
            Pipeline {
                encoding: packing(13),
                ..Pipeline::NONE
            },
            Pipeline {
                encoding: packing(16),
                ..Pipeline::NONE
            },
            Pipeline {
                encoding: packing(0),
                ..Pipeline::NONE
            },
            Pipeline {
                compression: Compression::Zstd { level: 1 },
                ..Pipeline::NONE
            },
            Pipeline {
                encoding: packing(11),
                compression: Compression::Zstd { level: 1 },
                ..Pipeline::NONE
            },
            Pipeline {
                filter: Filter::Shuffle {
                    element_size: dtype.byte_width(),
                },
                compression: Compression::Lz4,
                ..Pipeline::NONE
            },
        ];
        let width = dtype.byte_width();
        for p in pipelines.into_iter().filter(|p| p.compression.is_built()) {
            let enc = p.encode(&bytes, dtype, ByteOrder::Little, n).unwrap();
            let limits = Limits::default();
            let whole = p
                .decode(&enc.payload, dtype, ByteOrder::Little, n, &limits)
                .unwrap();
            for first in (0..=n).step_by(7).chain([1, 8, 9, 15, 16, n - 1, n]) {
                for count in [0, 1, 2, 7, 8, 9, 17, n - first] {
                    if first + count > n {
                        continue;
                    }
                    let got = p
                        .decode_range(
                            &enc.payload,
                            dtype,
                            ByteOrder::Little,
                            n,
                            &limits,
                            first,
                            count,
                        )
                        .unwrap();
                    let (a, b) = (
                        (first * width as u64) as usize,
                        ((first + count) * width as u64) as usize,
                    );
                    assert!(got == whole[a..b], "{p:?} {dtype} {first}+{count}");
                }
            }
            let past = p.decode_range(&enc.payload, dtype, ByteOrder::Little, n, &limits, n - 1, 2);
            assert_eq!(past.unwrap_err().kind(), ErrorKind::InvalidArgument);
            let past = p.decode_range(
                &enc.payload,
                dtype,
                ByteOrder::Little,
                n,
                &limits,
                u64::MAX,
                2,
            );
            assert_eq!(past.unwrap_err().kind(), ErrorKind::InvalidArgument);
        }
    }
    // A payload cut short is refused, not sliced past its end.
    let p = Pipeline::NONE;
    let short = vec![0u8; 100];
    assert!(
        p.decode_range(
            &short,
            Dtype::Float64,
            ByteOrder::Little,
            20,
            &Limits::default(),
            0,
            1
        )
        .is_err()
    );
}

#[test]
fn chunked_decoding_refuses_what_whole_decoding_refuses() {
    let p = Pipeline {
        compression: Compression::Zstd { level: 3 },
        ..Pipeline::NONE
    };
    let data = vec![7u8; 4096];
    let enc = p
        .encode(&data, Dtype::Uint8, ByteOrder::Little, 4096)
        .unwrap()
        .payload;
    // Fewer and more elements than the stream holds.
    assert!(chunked(&p, &enc, Dtype::Uint8, 4095, 100).is_err());
    assert!(chunked(&p, &enc, Dtype::Uint8, 4097, 100).is_err());
    // A claim past the ratio limit is refused before anything is decoded.
    let mut called = false;
    let e = p
        .decode_chunks(
            &enc,
            Dtype::Uint8,
            ByteOrder::Little,
            1 << 40,
            &Limits::default().with_max_total_bytes(u64::MAX),
            100,
            &mut |_| {
                called = true;
                Ok(())
            },
        )
        .unwrap_err();
    assert!(!called);
    assert!(e.to_string().contains("exceeds the limit"), "{e}");
}

#[test]
fn whole_decoding_checks_limits_before_allocating() {
    // A shape rewritten to claim 16 GiB over a 20-byte zstd payload.
    let p = Pipeline {
        compression: Compression::Zstd { level: 3 },
        ..Pipeline::NONE
    };
    let enc = p
        .encode(&[0u8; 64], Dtype::Uint8, ByteOrder::Little, 64)
        .unwrap()
        .payload;
    let e = p
        .decode(
            &enc,
            Dtype::Uint8,
            ByteOrder::Little,
            16 << 30,
            &Limits::default().with_max_total_bytes(u64::MAX),
        )
        .unwrap_err();
    assert!(e.to_string().contains("decompressed bytes"), "{e}");
}

#[test]
fn stages_chain_and_sizes_are_enforced() {
    let values: Vec<f64> = (0..1000).map(|i| 280.0 + f64::from(i) * 0.01).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let p = Pipeline {
        encoding: Encoding::SimplePacking(
            SimplePacking::compute(values.iter().copied(), 16, 0).unwrap(),
        ),
        filter: Filter::Shuffle { element_size: 2 },
        compression: Compression::Zstd { level: 3 },
    };
    let payload = p
        .encode(&data, Dtype::Float64, ByteOrder::Big, 1000)
        .unwrap()
        .payload;
    assert!(payload.len() < 2000);
    let back = p
        .decode(
            &payload,
            Dtype::Float64,
            ByteOrder::Big,
            1000,
            &Limits::default(),
        )
        .unwrap();
    for (a, b) in values.iter().zip(back.as_chunks::<8>().0) {
        assert!((a - f64::from_be_bytes(*b)).abs() < 1e-3);
    }
    assert!(
        p.decode(
            &payload,
            Dtype::Float64,
            ByteOrder::Big,
            999,
            &Limits::default()
        )
        .is_err()
    );
    let lz = Pipeline {
        compression: Compression::Lz4,
        ..Pipeline::NONE
    };
    let raw: Vec<u8> = (0..=255).collect();
    if lz.compression.is_built() {
        let c = lz
            .encode(&raw, Dtype::Uint8, ByteOrder::Little, 256)
            .unwrap()
            .payload;
        assert_eq!(
            lz.decode(&c, Dtype::Uint8, ByteOrder::Little, 256, &Limits::default())
                .unwrap(),
            raw
        );
    } else {
        let err = lz
            .encode(&raw, Dtype::Uint8, ByteOrder::Little, 256)
            .unwrap_err();
        assert!(err.to_string().contains("cargo feature `lz4`"), "{err}");
    }
    let rle = Pipeline {
        compression: Compression::Rle,
        ..Pipeline::NONE
    };
    assert!(
        rle.encode(&raw, Dtype::Uint8, ByteOrder::Little, 256)
            .is_err()
    );
    assert!(
        Pipeline::NONE
            .decode(
                &raw[..10],
                Dtype::Uint8,
                ByteOrder::Little,
                256,
                &Limits::default()
            )
            .is_err()
    );
}

fn szip(rsi: u32, block_size: u32) -> Compression {
    Compression::Szip {
        rsi,
        block_size,
        flags: szip::PREPROCESS,
    }
}

#[test]
fn szip_params_follow_the_reference() {
    let sp = |bits| Pipeline {
        encoding: Encoding::SimplePacking(SimplePacking {
            bits_per_value: bits,
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
        }),
        filter: Filter::None,
        compression: szip(32, 16),
    };
    let p16 = sp(16).szip_params(Dtype::Float64).unwrap().unwrap();
    assert_eq!(
        (p16.bits_per_sample, p16.flags),
        (16, szip::PREPROCESS | szip::MSB)
    );
    let p20 = sp(20).szip_params(Dtype::Float64).unwrap().unwrap();
    assert_eq!(p20.flags, szip::PREPROCESS | szip::MSB | szip::THREE_BYTE);
    let shuffled = Pipeline {
        filter: Filter::Shuffle { element_size: 4 },
        compression: szip(32, 16),
        ..Pipeline::NONE
    };
    assert_eq!(
        shuffled
            .szip_params(Dtype::Float32)
            .unwrap()
            .unwrap()
            .bits_per_sample,
        8
    );
    let raw = Pipeline {
        compression: szip(32, 16),
        ..Pipeline::NONE
    };
    assert_eq!(
        raw.szip_params(Dtype::Uint16)
            .unwrap()
            .unwrap()
            .bits_per_sample,
        16
    );
    assert!(
        raw.szip_params(Dtype::Float64).is_err(),
        "64-bit samples are refused"
    );
    assert_eq!(Pipeline::NONE.szip_params(Dtype::Uint8).unwrap(), None);
}

#[test]
fn simple_packing_and_szip_round_trip_at_every_width_and_count() {
    for bits in 0..=32u32 {
        for n in [1usize, 7, 8, 1001] {
            let values: Vec<f64> = (0..n)
                .map(|i| 250.0 + ((i * 37) % 101) as f64 * 0.3)
                .collect();
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let packing = SimplePacking::compute(values.iter().copied(), bits, 0).unwrap();
            let p = Pipeline {
                encoding: Encoding::SimplePacking(packing),
                filter: Filter::None,
                compression: szip(4, 8),
            };
            let plain = Pipeline {
                compression: Compression::None,
                ..p
            };
            let n64 = n as u64;
            let enc = p
                .encode(&data, Dtype::Float64, ByteOrder::Little, n64)
                .unwrap();
            let back = p
                .decode(
                    &enc.payload,
                    Dtype::Float64,
                    ByteOrder::Little,
                    n64,
                    &Limits::default(),
                )
                .unwrap();
            let expected = plain
                .decode(
                    &plain
                        .encode(&data, Dtype::Float64, ByteOrder::Little, n64)
                        .unwrap()
                        .payload,
                    Dtype::Float64,
                    ByteOrder::Little,
                    n64,
                    &Limits::default(),
                )
                .unwrap();
            assert_eq!(back, expected, "{bits} bits, {n} values");
            let offsets = enc.szip_block_offsets.unwrap();
            assert_eq!(offsets.len(), if bits == 0 { 0 } else { n.div_ceil(32) });
        }
    }
}
