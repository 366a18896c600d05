//! Corruption is caught: every single-bit flip of a small hashed message is reported by
//! checksum-level validation, and a decode with hash verification never returns the
//! original message's objects as if nothing had happened while the damage goes unnoticed.

use libtest_mimic::{Failed, Trial};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;
use tensor_frame::MetaValue as Value;
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{
    EncodeOptions, GlobalMetadata, HashFrames, Level, Map, ValidateOptions, serialize, validate,
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
    Ok(serialize(&meta, &[a, b], &[&xa, &xb], &opts)?)
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

/// What a reader that checks the metadata frames' hashes, then decodes each object with its
/// own hash verified, gets from `bytes`: an error, or the metadata and the objects.
fn read_object_by_object(bytes: &[u8]) -> Option<(GlobalMetadata, Vec<tensor_dtype::Tensor>)> {
    let msg = tensor_frame::Message::open_with(bytes, &tensor_core::ReadOptions::default()).ok()?;
    msg.verify_metadata_hashes().ok()?;
    let opts = tensor_frame::DecodeOptions {
        verify_hash: true,
        ..tensor_frame::DecodeOptions::default()
    };
    let objects = (0..msg.len())
        .map(|i| msg.decode_object(i, opts))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some((msg.metadata().ok()?.clone(), objects))
}

/// Every flip that object-by-object reading does not refuse leaves what it reads unchanged.
fn object_by_object_reading_never_passes_damage(hash_frames: HashFrames) -> Result<(), Failed> {
    let good = message(hash_frames)?;
    let want = read_object_by_object(&good).ok_or("the intact message does not read")?;
    for bit in 0..good.len() * 8 {
        let mut bad = good.clone();
        bad[bit / 8] ^= 0x80 >> (bit % 8);
        if read_object_by_object(&bad).is_some_and(|got| got != want) {
            return Err(format!("flipping bit {bit} changes what is read, unnoticed").into());
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let by_object = Trial::test(
        "bitflip::object_by_object_reading_never_passes_damage",
        || object_by_object_reading_never_passes_damage(HashFrames::Auto),
    );
    std::iter::once(by_object)
        .chain(
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
            }),
        )
        .collect()
}
