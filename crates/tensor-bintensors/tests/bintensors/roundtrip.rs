//! Property-based round trips: what we write reads back identically in both layouts, its
//! header decodes with bincode itself to the same structure, and corruption never panics.

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::BTreeMap;
use tensor_bintensors::{BinTensors, Layout, ReadOptions, serialize};
use tensor_core::ByteOrder;
use tensor_dtype::{Dtype, Tensor};

const DTYPES: [Dtype; 15] = [
    Dtype::Bool,
    Dtype::Uint8,
    Dtype::Int8,
    Dtype::Float8E5m2,
    Dtype::Float8E4m3,
    Dtype::Int16,
    Dtype::Uint16,
    Dtype::Float16,
    Dtype::Bfloat16,
    Dtype::Int32,
    Dtype::Uint32,
    Dtype::Float32,
    Dtype::Float64,
    Dtype::Int64,
    Dtype::Uint64,
];

type Case = (Vec<(String, Tensor)>, Option<BTreeMap<String, String>>);

fn tensors() -> impl Strategy<Value = Case> {
    let tensor = (
        prop::sample::select(DTYPES.to_vec()),
        prop::collection::vec(0u64..4, 0..4),
        any::<u64>(),
    )
        .prop_map(|(d, shape, seed)| {
            let n = tensor_dtype::shape::byte_len(d, &shape).unwrap() as usize;
            let mut data: Vec<u8> = (0..n)
                .map(|i| (seed.wrapping_mul(i as u64 + 1) >> 7) as u8)
                .collect();
            if d == Dtype::Bool {
                // Writers store bools as 0 or 1.
                for b in &mut data {
                    *b &= 1;
                }
            }
            Tensor::new(data, d, &shape, ByteOrder::Little).unwrap()
        });
    (
        prop::collection::btree_map("[a-zA-Z0-9_.é\u{0}]{0,12}", tensor, 0..8),
        prop::option::of(prop::collection::btree_map(
            "[a-z\u{263a}]{0,6}",
            "[ -~]{0,10}",
            0..4,
        )),
    )
        .prop_map(|(m, meta)| (m.into_iter().collect(), meta))
}

type WireMeta = Option<Vec<(String, String)>>;
type WireEntry = (String, (u32, Vec<u64>, (u64, u64)));

fn write_then_read() -> Result<(), Failed> {
    TestRunner::new(Config::with_cases(200))
        .run(&tensors(), |(tensors, meta)| {
            let views: Vec<(&str, tensor_dtype::TensorView<'_>)> = tensors
                .iter()
                .map(|(n, t)| (n.as_str(), t.view()))
                .collect();
            for layout in [Layout::Release, Layout::Legacy] {
                let bytes = serialize(views.iter().cloned(), meta.as_ref(), layout).unwrap();
                let f =
                    BinTensors::open_with(&bytes, &ReadOptions::default().strict(true)).unwrap();
                prop_assert_eq!(f.layout(), layout);
                prop_assert_eq!(f.len(), tensors.len());
                for (name, t) in &tensors {
                    let got = f.tensor(name).unwrap();
                    prop_assert_eq!(
                        got.view.to_tensor(),
                        t.clone().into_byte_order(ByteOrder::NATIVE)
                    );
                }
                let got_meta: Option<BTreeMap<String, String>> = f.metadata().map(|m| {
                    m.iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect()
                });
                prop_assert_eq!(&got_meta, &meta);
                if layout == Layout::Release {
                    // bincode itself reads our header as the reference's structure.
                    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
                    let ((wire_meta, entries), used): ((WireMeta, Vec<WireEntry>), usize) =
                        bincode::decode_from_slice(&bytes[8..8 + n], bincode::config::standard())
                            .unwrap();
                    prop_assert!(bytes[8 + used..8 + n].iter().all(|&b| b == b' '));
                    prop_assert_eq!(
                        wire_meta.map(|v| v.into_iter().collect::<BTreeMap<_, _>>()),
                        meta.clone()
                    );
                    let names: Vec<&str> = f.names().collect();
                    prop_assert_eq!(
                        entries.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
                        names
                    );
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string().into())
}

fn corruption_never_panics() -> Result<(), Failed> {
    TestRunner::new(Config::with_cases(500))
        .run(
            &(
                tensors(),
                any::<prop::sample::Index>(),
                any::<u8>(),
                any::<prop::sample::Index>(),
            ),
            |((tensors, meta), at, byte, cut)| {
                let views: Vec<(&str, tensor_dtype::TensorView<'_>)> = tensors
                    .iter()
                    .map(|(n, t)| (n.as_str(), t.view()))
                    .collect();
                let mut bytes =
                    serialize(views.iter().cloned(), meta.as_ref(), Layout::Release).unwrap();
                let i = at.index(bytes.len());
                bytes[i] = byte;
                if let Ok(f) = BinTensors::open(&bytes) {
                    for t in f.tensors() {
                        let _ = t.view.to_tensor();
                    }
                }
                let _ = BinTensors::open(&bytes[..cut.index(bytes.len())]);
                Ok(())
            },
        )
        .map_err(|e| e.to_string().into())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("proptest::write_then_read", write_then_read),
        Trial::test("proptest::corruption_never_panics", corruption_never_panics),
    ]
}
