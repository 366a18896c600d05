//! Corruption is caught: every single-bit flip of a small hashed message is reported by
//! checksum-level validation, and a decode with hash verification never returns the
//! original message's objects as if nothing had happened while the damage goes unnoticed.

use libtest_mimic::{Failed, Trial};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;
use tensor_frame::MetaValue as Value;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{
    EncodeOptions, GlobalMetadata, HashFrames, Level, Map, ValidateOptions, encode, validate,
};

fn message(hash_frames: HashFrames) -> Result<Vec<u8>, Failed> {
    let mut a = DataObjectDescriptor::new(Dtype::Float32, &[6], ByteOrder::Little);
    a.compression = "zstd".into();
    let b = DataObjectDescriptor::new(Dtype::Int16, &[2, 2], ByteOrder::Big);
    let xa: Vec<u8> = [1.5f32, 2.0, 2.5, 3.0, 3.5, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let xb: Vec<u8> = [7i16, -7, 8, -8]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let meta = GlobalMetadata {
        base: vec![Map::from([("name".to_owned(), Value::from("t"))])],
        ..GlobalMetadata::default()
    };
    let opts = EncodeOptions {
        hash_frames,
        ..crate::roundtrip::opts()
    };
    Ok(encode(&meta, &[a, b], &[&xa, &xb], &opts)?)
}

fn every_flip_is_reported(hash_frames: HashFrames) -> Result<(), Failed> {
    let good = message(hash_frames)?;
    let opts = ValidateOptions {
        level: Level::Checksum,
        canonical: false,
    };
    let limits = Limits::default();
    if !validate(&good, opts, &limits).issues.is_empty() {
        return Err("the intact message does not validate cleanly".into());
    }
    let mut missed = Vec::new();
    for bit in 0..good.len() * 8 {
        let mut bad = good.clone();
        bad[bit / 8] ^= 0x80 >> (bit % 8);
        if validate(&bad, opts, &limits).is_ok() {
            missed.push(bit);
        }
    }
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} flips pass validation, e.g. bits {:?} (bytes {:?})",
            missed.len(),
            good.len() * 8,
            &missed[..missed.len().min(8)],
            missed.iter().map(|b| b / 8).take(8).collect::<Vec<_>>()
        )
        .into())
    }
}

pub(crate) fn trials() -> Vec<Trial> {
    [
        ("header", HashFrames::Auto),
        ("footer", HashFrames::Footer),
        ("none", HashFrames::None),
    ]
    .into_iter()
    .map(|(name, h)| {
        Trial::test(format!("bitflip::hash_frame_{name}"), move || {
            every_flip_is_reported(h)
        })
    })
    .collect()
}
