//! Wire version 2 files written by tensogram 0.14.0 and 0.16.1 (`testdata/tensogram/
//! reference/v2`, made by `scripts/reference/tensogram_v2.py`): each migrates to version 3
//! with every hash checked, and the version 3 message decodes to exactly what the writer
//! decoded (SHA-256 of each object's little-endian elements), keeping names, `base` and
//! `_extra_`. Damage to a payload is caught by its hash.

use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use tensor_core::{ByteOrder, Limits};
use tensor_frame::v2;
use tensor_frame::{DecodeOptions, Level, Message, TgmFile, ValidateOptions, validate};

fn fixtures() -> Vec<PathBuf> {
    tensor_testkit::files_with_extension(
        &tensor_testkit::testdata().join("tensogram/reference/v2"),
        "tgm",
    )
}

fn migrates_as_written(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let want = tensor_testkit::sidecar(path)?;
    if !v2::holds_v2(&bytes) || !v2::is_v2(&bytes) {
        return Err("not recognised as version 2".into());
    }
    let m = v2::migrate(&bytes, &Limits::default())?;
    let messages = want["messages"].as_array().ok_or("sidecar: messages")?;
    let writer = want["writer"].as_str().unwrap_or_default();
    if m.v2_messages != messages.len() || m.v3_messages != 0 {
        return Err(format!(
            "{} v2 messages migrated, {} expected",
            m.v2_messages,
            messages.len()
        )
        .into());
    }
    let hashed = !path.to_string_lossy().contains("nohash");
    if hashed == (m.hashes_verified == 0) {
        return Err(format!("{} hashes verified", m.hashes_verified).into());
    }
    // The version 3 file is sound, canonical, and hashed throughout.
    let report = validate(
        &m.bytes,
        ValidateOptions {
            level: Level::Full,
            canonical: true,
        },
        &Limits::default(),
    );
    if !report.issues.is_empty() {
        return Err(format!("the migrated file: {:?}", report.issues).into());
    }
    let file = TgmFile::new(&m.bytes[..], &tensor_core::ReadOptions::default());
    if file.len() != messages.len() {
        return Err(format!("{} messages after migration", file.len()).into());
    }
    for (range, want) in file.ranges().iter().zip(messages) {
        let msg = Message::open(&m.bytes[range.clone()])?;
        msg.verify_hashes()?;
        let meta = msg.metadata()?;
        let objects = want["objects"].as_array().ok_or("sidecar: objects")?;
        if msg.len() != objects.len() {
            return Err(format!("{} objects, {} expected", msg.len(), objects.len()).into());
        }
        for (i, o) in objects.iter().enumerate() {
            let t = msg.decode_object(
                i,
                DecodeOptions {
                    native_byte_order: false,
                    ..DecodeOptions::default()
                },
            )?;
            let mut le = t.data().to_vec();
            if t.byte_order() == ByteOrder::Big {
                tensor_core::byte_order::swap_in_place(&mut le, t.dtype().swap_width())?;
            }
            let shape: Vec<u64> = serde_json::from_value(o["shape"].clone())?;
            if t.shape() != shape || t.dtype().name() != o["dtype"] {
                return Err(format!(
                    "object {i}: {} {:?}, expected {} {shape:?}",
                    t.dtype(),
                    t.shape(),
                    o["dtype"]
                )
                .into());
            }
            if tensor_testkit::sha256_hex(&le) != o["sha256"] {
                return Err(format!("object {i}: the values differ from the writer's").into());
            }
            let base = &want["base"][i];
            for (k, v) in base.as_object().into_iter().flatten() {
                let ours = meta.base[i]
                    .get(k)
                    .map(|x| tensor_core::cbor::json::to_json(&x.into()));
                if ours.as_ref() != Some(v) {
                    return Err(
                        format!("object {i}: base key {k:?} is {ours:?}, expected {v}").into(),
                    );
                }
            }
        }
        for (k, v) in want["extra"].as_object().into_iter().flatten() {
            let ours = meta
                .extra
                .get(k)
                .map(|x| tensor_core::cbor::json::to_json(&x.into()));
            if ours.as_ref() != Some(v) {
                return Err(format!("_extra_ {k:?} is {ours:?}, expected {v}").into());
            }
        }
        if meta.extra.contains_key("version") {
            return Err("the version 2 `version` key was kept".into());
        }
        let encoder = meta
            .reserved
            .get("encoder")
            .map(|e| tensor_core::cbor::json::to_json(&e.into()));
        let version = writer.trim_start_matches("tensogram ");
        if encoder.as_ref().and_then(|e| e["version"].as_str()) != Some(version) {
            return Err(format!("provenance {encoder:?}, written by {writer}").into());
        }
    }
    Ok(())
}

/// Every byte of every payload is covered: a flipped payload byte is a hash mismatch (in
/// a file with hashes), never a different value read as sound.
fn damage_is_caught(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let first = v2::Message::parse(&bytes, &Limits::default())?;
    for o in &first.objects {
        if o.payload.is_empty() {
            continue;
        }
        let at = o.payload.as_ptr() as usize - bytes.as_ptr() as usize + o.payload.len() / 2;
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        match v2::migrate(&damaged, &Limits::default()) {
            Err(tensor_frame::Error::HashMismatch { .. }) => {}
            other => {
                return Err(
                    format!("damage at {at}: {:?}", other.map(|m| m.hashes_verified)).into(),
                );
            }
        }
    }
    Ok(())
}

/// Cut anywhere but between two messages, a version 2 file is an error, never a panic or a
/// shorter file.
fn every_cut_is_refused(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let mut boundaries = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        at += v2::Message::parse(&bytes[at..], &Limits::default())?
            .bytes
            .len();
        boundaries.push(at);
    }
    for cut in (0..bytes.len()).step_by(7) {
        if boundaries.contains(&cut) {
            continue;
        }
        if v2::migrate(&bytes[..cut], &Limits::default()).is_ok_and(|m| !m.bytes.is_empty()) {
            return Err(format!("cut at {cut} of {} migrated", bytes.len()).into());
        }
    }
    Ok(())
}

/// A file that mixes version 3 and version 2 messages: the version 3 message is copied as
/// it is, the version 2 one migrated, in their order.
fn mixed_file() -> Result<(), Failed> {
    let v3 = tensor_frame::serialize(
        &tensor_frame::GlobalMetadata::default(),
        &[tensor_frame::descriptor::DataObjectDescriptor::new(
            tensor_dtype::Dtype::Uint8,
            &[3],
            ByteOrder::Little,
        )],
        &[&[1, 2, 3]],
        &tensor_frame::EncodeOptions::default(),
    )?;
    let v2_file = fixtures()
        .into_iter()
        .find(|f| f.to_string_lossy().ends_with("_raw.tgm"))
        .ok_or("no raw fixture")?;
    let mut bytes = v3.clone();
    bytes.extend(std::fs::read(&v2_file)?);
    if !v2::holds_v2(&bytes) || v2::holds_v2(&v3) {
        return Err("holds_v2 does not follow the messages".into());
    }
    let m = v2::migrate(&bytes, &Limits::default())?;
    if (m.v3_messages, m.v2_messages) != (1, 1) || m.bytes[..v3.len()] != v3[..] {
        return Err(format!("{} v3, {} v2 messages", m.v3_messages, m.v2_messages).into());
    }
    let file = TgmFile::new(&m.bytes[..], &tensor_core::ReadOptions::default());
    if file.len() != 2 || file.unclaimed_bytes() != 0 {
        return Err(format!("{} messages after migration", file.len()).into());
    }
    Ok(())
}

/// A postamble whose `first_footer_offset` points anywhere but at the first footer frame (or
/// at itself, when there is none) is refused: into the preamble, at the first frame, one
/// byte off.
fn a_misplaced_first_footer_offset_is_refused() -> Result<(), Failed> {
    for name in ["v2_0.16.1_nohash.tgm", "v2_0.16.1_streamed.tgm"] {
        let path = tensor_testkit::testdata()
            .join("tensogram/reference/v2")
            .join(name);
        let bytes = std::fs::read(&path)?;
        let at = bytes.len() - 16;
        let stored = u64::from_be_bytes(bytes[at..at + 8].try_into()?);
        for wrong in [0, 8, 24, stored - 1, stored + 1] {
            let mut damaged = bytes.clone();
            damaged[at..at + 8].copy_from_slice(&wrong.to_be_bytes());
            if v2::migrate(&damaged, &Limits::default()).is_ok() {
                return Err(
                    format!("{name}: first_footer_offset {wrong} (not {stored}) migrated").into(),
                );
            }
        }
    }
    Ok(())
}

/// Found by the `v2_migration` fuzz target: a version 3 message whose data frame lacks its
/// ENDF was copied into the migrated file as it was, which validation then refused. Every
/// message that goes into a migrated file is checked as version 3 readers check it; after a
/// version 2 message, the damaged one is refused too; so is a migrated object of a dtype no
/// version 3 reader takes (found the same way).
fn a_damaged_version_3_message_is_not_carried_over() -> Result<(), Failed> {
    let damaged = std::fs::read(
        tensor_testkit::testdata().join("tensogram/malicious/v3_data_frame_without_endf.tgm"),
    )?;
    let v2 =
        std::fs::read(tensor_testkit::testdata().join("tensogram/reference/v2/v2_0.16.1_raw.tgm"))?;
    for file in [damaged.clone(), [v2, damaged].concat()] {
        if v2::migrate(&file, &Limits::default()).is_ok() {
            return Err("a damaged version 3 message was carried into a migrated file".into());
        }
    }
    // A version 2 descriptor of dtype "float63": no version 3 reader takes it.
    let unknown =
        std::fs::read(tensor_testkit::testdata().join("tensogram/malicious/v2_unknown_dtype.tgm"))?;
    if v2::migrate(&unknown, &Limits::default()).is_ok() {
        return Err("an object of an unknown dtype was migrated".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let files = fixtures();
    assert!(files.len() >= 10, "tensogram v2 fixtures missing");
    let mut trials = vec![
        Trial::test("v2::mixed_file", mixed_file),
        Trial::test(
            "v2::a_misplaced_first_footer_offset_is_refused",
            a_misplaced_first_footer_offset_is_refused,
        ),
        Trial::test(
            "v2::a_damaged_version_3_message_is_not_carried_over",
            a_damaged_version_3_message_is_not_carried_over,
        ),
    ];
    for f in files {
        let stem = tensor_testkit::stem(&f);
        let g = f.clone();
        trials.push(Trial::test(format!("v2::migrate::{stem}"), move || {
            migrates_as_written(&g)
        }));
        if !stem.contains("nohash") {
            let g = f.clone();
            trials.push(Trial::test(format!("v2::damage::{stem}"), move || {
                damage_is_caught(&g)
            }));
        }
        trials.push(Trial::test(format!("v2::cuts::{stem}"), move || {
            every_cut_is_refused(&f)
        }));
    }
    trials
}
