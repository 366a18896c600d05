//! Integration tests of tensor-stdlib-meta: one trial per conformance fixture (decode to the
//! recorded fields, encode back to the exact bytes, reject every `bad/` buffer with its
//! class) and property-based round trips.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tensor_core::ByteOrder;
use tensor_stdlib_meta::{
    Error, IndexMode, MetaData, MetaDataRef, Order, StdlibDtype, StridedArray,
};

mod roundtrip;

fn fixtures() -> PathBuf {
    tensor_testkit::conformance("stdlib")
}

use tensor_testkit::files_with_extension as sorted_files;

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// The meta data a valid fixture's JSON describes.
fn expected(j: &Value) -> Result<MetaData, Failed> {
    let dtype = StdlibDtype::from_enum(j["dtype_enum"].as_i64().ok_or("dtype_enum")? as i16)
        .ok_or("dtype enum")?;
    if dtype.name() != j["dtype"] {
        return Err(format!("dtype name {} vs {}", dtype.name(), j["dtype"]).into());
    }
    Ok(MetaData {
        byte_order: if j["endianness"] == 1 {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        },
        dtype,
        shape: i64s(&j["shape"]).into_iter().map(|d| d as u64).collect(),
        strides: i64s(&j["strides_bytes"]),
        offset: j["offset_bytes"].as_u64().ok_or("offset_bytes")?,
        order: Order::from_name(j["order"].as_str().ok_or("order")?).ok_or("order name")?,
        mode: IndexMode::from_name(j["mode"].as_str().ok_or("mode")?).ok_or("mode name")?,
        submodes: j["submodes"]
            .as_array()
            .ok_or("submodes")?
            .iter()
            .map(|m| {
                m.as_str()
                    .and_then(IndexMode::from_name)
                    .ok_or("submode name")
            })
            .collect::<Result<_, _>>()?,
        flags: j["flags"].as_i64().ok_or("flags")? as i32,
    })
}

fn check_valid(bin: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(bin)?;
    let j: Value = tensor_testkit::sidecar(bin)?;
    let want = expected(&j)?;
    let got = MetaDataRef::open(&bytes)?.to_owned();
    if got != want {
        return Err(format!("decoded {got:?}\nexpected {want:?}").into());
    }
    if got.byte_length() != j["byte_length"].as_u64().unwrap_or(0)
        || got.is_readonly() != (j["readonly"] == true)
    {
        return Err("byte_length or readonly differ".into());
    }
    let encoded = want.serialize()?;
    if encoded != bytes {
        return Err("encoding the recorded fields does not give the fixture's bytes".into());
    }
    // The bounds-checked view accepts a buffer exactly as large as the array reaches.
    if let (Some(_), Some(bpe)) = (want.dtype.to_dtype(), want.dtype.bytes_per_element()) {
        let span = tensor_dtype::shape::reachable_span(
            &want.shape,
            &want.strides,
            want.offset,
            bpe as usize,
        )?;
        let len = span.map_or(0, |(_, hi)| hi as usize);
        if len < (1 << 24) {
            let data = vec![0u8; len];
            StridedArray::new(&want, &data)?;
            if len > 0 && StridedArray::new(&want, &data[..len - 1]).is_ok() {
                return Err("a buffer one byte short was accepted".into());
            }
        }
    }
    Ok(())
}

fn class(e: &Error) -> &'static str {
    match e {
        Error::Truncated { .. } => "Truncated",
        Error::InvalidNdims(_) => "InvalidNdims",
        Error::InvalidNsubmodes(_) => "InvalidNsubmodes",
        Error::UnknownDtype(_) => "UnknownDType",
        Error::UnknownOrder { .. } => "UnknownOrder",
        Error::UnknownIndexMode { .. } => "UnknownIndexMode",
        Error::InvalidEndianness(_) => "InvalidEndianness",
        Error::InvalidShape { .. } => "InvalidShape",
        Error::TrailingBytes { .. } => "TrailingBytes",
        _ => "other",
    }
}

fn check_bad(bin: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(bin)?;
    let j: Value = tensor_testkit::sidecar(bin)?;
    let acceptable: Vec<&str> = j["acceptable_errors"]
        .as_array()
        .ok_or("acceptable_errors")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    match MetaDataRef::open(&bytes) {
        Ok(m) => Err(format!("accepted: {:?}", m.to_owned()).into()),
        Err(e) if acceptable.contains(&class(&e)) => Ok(()),
        Err(e) => Err(format!("{} ({e}), expected one of {acceptable:?}", class(&e)).into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let dir = fixtures();
    let mut trials = Vec::new();
    for (sub, bad) in [("", false), ("derived_be", false), ("bad", true)] {
        let files = sorted_files(&dir.join(sub), "bin");
        assert!(
            !files.is_empty(),
            "no fixtures in {}",
            dir.join(sub).display()
        );
        for bin in files {
            let name = tensor_testkit::stem(&bin);
            let label = if sub.is_empty() {
                format!("conformance::{name}")
            } else {
                format!("conformance::{sub}::{name}")
            };
            trials.push(Trial::test(label, move || {
                if bad {
                    check_bad(&bin)
                } else {
                    check_valid(&bin)
                }
            }));
        }
    }
    trials.extend(roundtrip::trials());
    libtest_mimic::run(&args, trials).exit();
}
