//! Property-based round trips: anything we serialize parses back to itself, and no corrupted
//! or truncated buffer makes the parser panic.

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tensor_core::ByteOrder;
use tensor_stdlib_meta::{IndexMode, MetaData, MetaDataRef, Order, StdlibDtype};

fn meta() -> impl Strategy<Value = MetaData> {
    let mode = prop::sample::select(IndexMode::ALL.to_vec());
    (
        any::<bool>(),
        prop::sample::select(StdlibDtype::NAMED.to_vec()),
        prop::collection::vec((0u64..1 << 40, any::<i64>()), 0..8),
        0u64..1 << 50,
        any::<bool>(),
        mode.clone(),
        prop::collection::vec(mode, 0..10),
        any::<i32>(),
    )
        .prop_map(
            |(big, dtype, dims, offset, col, mode, submodes, flags)| MetaData {
                byte_order: if big {
                    ByteOrder::Big
                } else {
                    ByteOrder::Little
                },
                dtype,
                shape: dims.iter().map(|d| d.0).collect(),
                strides: dims.iter().map(|d| d.1).collect(),
                offset,
                order: if col {
                    Order::ColumnMajor
                } else {
                    Order::RowMajor
                },
                mode,
                submodes,
                flags,
            },
        )
}

fn serialize_then_parse() -> Result<(), Failed> {
    let mut runner = TestRunner::new(Config::with_cases(256));
    runner
        .run(&meta(), |m| {
            let bytes = m.serialize().unwrap();
            prop_assert_eq!(bytes.len() as u64, m.byte_length());
            prop_assert_eq!(MetaDataRef::open(&bytes).unwrap().to_owned(), m);
            Ok(())
        })
        .map_err(|e| e.to_string().into())
}

fn corruption_never_panics() -> Result<(), Failed> {
    let mut runner = TestRunner::new(Config::with_cases(512));
    runner
        .run(
            &(
                meta(),
                any::<prop::sample::Index>(),
                any::<u8>(),
                any::<prop::sample::Index>(),
            ),
            |(m, at, byte, cut)| {
                let mut bytes = m.serialize().unwrap();
                let i = at.index(bytes.len());
                bytes[i] = byte;
                let _ = MetaDataRef::open(&bytes);
                let _ = MetaDataRef::open(&bytes[..cut.index(bytes.len())]);
                Ok(())
            },
        )
        .map_err(|e| e.to_string().into())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("proptest::serialize_then_parse", serialize_then_parse),
        Trial::test("proptest::corruption_never_panics", corruption_never_panics),
    ]
}
