//! The reference's fixtures: every message found where the reference found it, every frame,
//! metadata map, descriptor and decoded value as the sidecar records, every buffered message
//! re-encoded to the reference's exact bytes, and every malformed file refused with the
//! error class its sidecar names.

use libtest_mimic::{Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::cbor::json::to_json;
use tensor_core::{ByteOrder, Limits};
use tensor_frame::descriptor::DataObjectDescriptor;
use tensor_frame::{
    Class, DecodeOptions, EncodeOptions, Error, GlobalMetadata, HashFrames, IndexFrame, Level,
    MaskMethod, Message, Provenance, ValidateOptions, scan, scan_backward, serialize,
    serialize_pre_encoded, validate, wire,
};

fn ranges_json(r: &[std::ops::Range<usize>]) -> Json {
    Json::Array(
        r.iter()
            .map(|r| serde_json::json!([r.start, r.len()]))
            .collect(),
    )
}

fn u(v: &Json, what: &str) -> Result<u64, Failed> {
    v.as_u64()
        .ok_or_else(|| format!("sidecar: {what} is not an integer").into())
}

fn same(ours: &Json, theirs: &Json, what: &str) -> Result<(), Failed> {
    if ours == theirs {
        Ok(())
    } else {
        Err(format!("{what}: ours {ours} differs from the reference's {theirs}").into())
    }
}

/// The metadata as the sidecar's `metadata` object shows it.
fn metadata_json(m: &GlobalMetadata) -> Json {
    let map = |m: &tensor_frame::Map| {
        Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), to_json(&tensor_core::cbor::Value::from(v))))
                .collect(),
        )
    };
    serde_json::json!({
        "base": m.base.iter().map(map).collect::<Vec<_>>(),
        "extra": map(&m.extra),
        "reserved": map(&m.reserved),
    })
}

fn check_message(file: &[u8], m: &Json, limits: &Limits) -> Result<(), Failed> {
    let off = u(&m["offset"], "offset")? as usize;
    let msg = Message::open_with(&file[off..], &limits.into())?;
    same(
        &Json::from(msg.bytes().len()),
        &m["length"],
        "message length",
    )?;
    same(
        &Json::from(msg.preamble().flags),
        &m["preamble"]["flags"],
        "flags",
    )?;
    same(
        &Json::from(msg.preamble().total_length),
        &m["preamble"]["total_length"],
        "total_length",
    )?;
    same(
        &Json::from(msg.postamble().first_footer_offset),
        &m["postamble"]["first_footer_offset"],
        "first_footer_offset",
    )?;
    let frames = msg.frames()?;
    let theirs = m["frames"].as_array().ok_or("frames")?;
    if frames.len() != theirs.len() {
        return Err(format!(
            "{} frames, the reference has {}",
            frames.len(),
            theirs.len()
        )
        .into());
    }
    for (f, t) in frames.iter().zip(theirs) {
        same(&Json::from(f.offset), &t["offset"], "frame offset")?;
        same(&Json::from(f.header.frame_type), &t["type"], "frame type")?;
        same(
            &Json::from(f.frame_type.name()),
            &t["type_name"],
            "frame type name",
        )?;
        same(&Json::from(f.header.flags), &t["flags"], "frame flags")?;
        same(
            &Json::from(f.header.total_length),
            &t["total_length"],
            "frame length",
        )?;
        let hash = f.stored_hash(msg.bytes()).map(|h| format!("{h:016x}"));
        same(&serde_json::to_value(hash)?, &t["hash"], "frame hash")?;
    }
    same(&metadata_json(msg.metadata()?), &m["metadata"], "metadata")?;
    msg.verify_hashes()?;
    let report = validate(
        msg.bytes(),
        ValidateOptions {
            level: Level::Full,
            canonical: true,
        },
        limits,
    );
    if !report.is_ok() {
        return Err(format!("validation finds errors: {:?}", report.issues).into());
    }
    for (j, o) in m["objects"].as_array().ok_or("objects")?.iter().enumerate() {
        check_object(&msg, j, o)?;
    }
    Ok(())
}

fn check_object(msg: &Message<'_>, j: usize, o: &Json) -> Result<(), Failed> {
    let obj = msg.object(j)?;
    same(
        &to_json(&obj.descriptor().to_value()),
        &o["descriptor"],
        "descriptor",
    )?;
    same(
        &Json::from(obj.payload_region().len()),
        &o["payload_region_length"],
        "payload region",
    )?;
    let opts = DecodeOptions {
        verify_hash: obj.stored_hash().is_some(),
        ..DecodeOptions::default()
    };
    let decoded = match msg.decode_object(j, opts) {
        Err(Error::Unsupported { name, .. }) => {
            let required = o["descriptor"]["compression"].as_str().unwrap_or_default();
            if name == required && tensor_frame::UNSUPPORTED_CODECS.contains(&required) {
                return Ok(());
            }
            return Err(format!("object {j}: {name} reported unsupported").into());
        }
        other => other?,
    };
    let le = decoded.into_byte_order(ByteOrder::Little);
    if tensor_testkit::sha256_hex(le.data()) != o["decoded"]["sha256_le"] {
        return Err(format!("object {j}: decoded values differ from the reference").into());
    }
    check_ranges(&obj, le.data())?;
    // The masks, as decode_with_masks reports them.
    let masks = obj.masks(&Limits::default())?;
    let mut ours = serde_json::Map::new();
    for (kind, bits) in masks {
        let set: Vec<u64> = (0..obj.descriptor().element_count())
            .filter(|&i| bits[(i / 8) as usize] & (0x80 >> (i % 8)) != 0)
            .collect();
        ours.insert(kind.name().into(), serde_json::to_value(set)?);
    }
    same(&Json::Object(ours), &o["masks"], "masks")
}

/// Ranges of the object decode to the same elements as the whole object (`whole`, little
/// endian), masks and byte order included; packed dtypes refuse ranges.
fn check_ranges(obj: &tensor_frame::ObjectFrame<'_>, whole: &[u8]) -> Result<(), Failed> {
    let dtype = obj.descriptor().dtype;
    let n = obj.descriptor().element_count();
    let opts = DecodeOptions {
        native_byte_order: false,
        ..DecodeOptions::default()
    };
    let limits = Limits::default();
    if dtype.is_packed() || dtype == tensor_dtype::Dtype::Bitmask {
        if obj.decode_range(opts, &limits, 0, n.min(1)).is_ok() {
            return Err(format!("a range of packed {dtype} elements was not refused").into());
        }
        return Ok(());
    }
    let width = dtype.byte_width() as u64;
    for (first, count) in [
        (0, n),
        (n / 3, n / 3),
        (n.saturating_sub(1), n.min(1)),
        (n / 2, 0),
    ] {
        let (bytes, order) = obj.decode_range(opts, &limits, first, count)?;
        let mut bytes = bytes;
        if order == ByteOrder::Big {
            tensor_core::byte_order::swap_in_place(&mut bytes, dtype.swap_width())?;
        }
        let span = (first * width) as usize..((first + count) * width) as usize;
        if bytes != whole[span] {
            return Err(format!("elements {first}+{count} differ from the whole object's").into());
        }
    }
    if obj.decode_range(opts, &limits, n, 1).is_ok() {
        return Err("a range past the end was not refused".into());
    }
    Ok(())
}

/// Options that reproduce a buffered message's layout from its sidecar.
fn options_for(m: &Json) -> Result<EncodeOptions, Failed> {
    let fl = u(&m["preamble"]["flags"], "flags")? as u16;
    let has = |f: u16| fl & f != 0;
    let r = &m["metadata"]["reserved"];
    let text = |v: &Json| v.as_str().unwrap_or_default().to_owned();
    Ok(EncodeOptions {
        hashing: has(wire::flags::HASHES_PRESENT),
        hash_frames: match (
            has(wire::flags::HEADER_HASHES),
            has(wire::flags::FOOTER_HASHES),
        ) {
            (true, true) => HashFrames::Both,
            (true, false) => HashFrames::Header,
            (false, true) => HashFrames::Footer,
            (false, false) => HashFrames::None,
        },
        index: if has(wire::flags::HEADER_INDEX) {
            IndexFrame::Header
        } else if has(wire::flags::FOOTER_INDEX) {
            IndexFrame::Footer
        } else {
            IndexFrame::None
        },
        provenance: Provenance::fixed(
            &text(&r["encoder"]["name"]),
            &text(&r["encoder"]["version"]),
            &text(&r["time"]),
            &text(&r["uuid"]),
        ),
        allow_nan: true,
        allow_inf: true,
        ..EncodeOptions::default()
    })
}

/// Re-encodes a buffered message twice — from its payloads as they are, and from its decoded
/// values through the pipeline — and compares both with the reference's bytes.
fn check_reencode(file: &[u8], m: &Json, limits: &Limits) -> Result<(), Failed> {
    let off = u(&m["offset"], "offset")? as usize;
    let msg = Message::open_with(&file[off..], &limits.into())?;
    let mut opts = options_for(m)?;
    let caller = msg.metadata()?.without_reserved();
    let descriptors: Vec<DataObjectDescriptor> = (0..msg.len())
        .map(|i| Ok(msg.object(i)?.descriptor().clone()))
        .collect::<Result<_, Error>>()?;
    let regions: Vec<&[u8]> = (0..msg.len())
        .map(|i| Ok(msg.object(i)?.payload_region()))
        .collect::<Result<_, Error>>()?;
    let again = serialize_pre_encoded(&caller, &descriptors, &regions, &opts)?;
    if again != msg.bytes() {
        return Err(first_difference(
            "pre-encoded re-encode",
            &again,
            msg.bytes(),
        ));
    }
    // Through the pipelines: the decoded values in the stored byte order, NaN/Inf put back.
    let wire_order = DecodeOptions {
        native_byte_order: false,
        ..DecodeOptions::default()
    };
    let mut data = Vec::new();
    let mut raw_descriptors = Vec::new();
    for (i, d) in descriptors.iter().enumerate() {
        if tensor_frame::UNSUPPORTED_CODECS.contains(&d.compression.as_str()) {
            return Ok(());
        }
        data.push(msg.decode_object(i, wire_order)?.into_data());
        let mut d = d.clone();
        if let Some(masks) = d.masks.take()
            && let Some(e) = masks.masks.values().find(|e| e.method != "none")
        {
            opts.mask_method = MaskMethod::from_name(&e.method).ok_or("mask method")?;
        }
        raw_descriptors.push(d);
    }
    let slices: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
    let again = serialize(&caller, &raw_descriptors, &slices, &opts)?;
    if again != msg.bytes() {
        return Err(first_difference("pipeline re-encode", &again, msg.bytes()));
    }
    Ok(())
}

fn first_difference(what: &str, ours: &[u8], theirs: &[u8]) -> Failed {
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    format!(
        "{what}: {} bytes against the reference's {}, first difference at byte {at}",
        ours.len(),
        theirs.len()
    )
    .into()
}

fn check_positive(path: &Path) -> Result<(), Failed> {
    let file = std::fs::read(path)?;
    let sidecar = tensor_testkit::sidecar(path)?;
    let limits = Limits::strict();
    same(&ranges_json(&scan(&file)), &sidecar["scan"], "forward scan")?;
    same(
        &ranges_json(&scan_backward(&file)),
        &sidecar["scan"],
        "backward scan",
    )?;
    for m in sidecar["messages"].as_array().ok_or("messages")? {
        check_message(&file, m, &limits)?;
        if m["mode"] == "buffered" {
            check_reencode(&file, m, &limits)?;
        }
    }
    Ok(())
}

fn classes(expected: &str) -> Vec<&str> {
    let head = expected.split(" (").next().unwrap_or(expected);
    head.split('/').map(str::trim).collect()
}

fn check_negative(path: &Path) -> Result<(), Failed> {
    let file = std::fs::read(path)?;
    let sidecar = tensor_testkit::sidecar(path)?;
    let expected = sidecar["expected_error_class"].as_str().ok_or("class")?;
    let accept = classes(expected);
    let api = sidecar["api"].as_str().ok_or("api")?;
    let limits = Limits::strict();
    let class_ok = |c: Class| accept.contains(&c.name());
    if api.starts_with("validate") {
        let report = validate(
            &file,
            ValidateOptions {
                level: Level::Checksum,
                canonical: false,
            },
            &limits,
        );
        return if report.issues.iter().any(|i| i.class.is_some_and(class_ok)) {
            Ok(())
        } else {
            Err(format!("validation does not report {expected}: {:?}", report.issues).into())
        };
    }
    let opts = DecodeOptions {
        verify_hash: api.contains("verify_hash=True"),
        ..DecodeOptions::default()
    };
    match tensor_frame::decode(&file, opts, &limits) {
        Ok(_) => Err(format!("decoding succeeds; expected {expected}").into()),
        Err(e) if class_ok(e.class()) => {
            // Validation finds the same problem.
            let report = validate(
                &file,
                ValidateOptions {
                    level: Level::Full,
                    canonical: false,
                },
                &limits,
            );
            // A valid unhashed message is only an error when verification is asked for.
            if report.is_ok() && e.class() != Class::MissingHash {
                return Err(format!("decode fails with {e}, but validation finds no error").into());
            }
            Ok(())
        }
        Err(e) => Err(format!("expected {expected}, got {} ({e})", e.class().name()).into()),
    }
}

/// One trial per fixture.
pub(crate) fn trials() -> Vec<Trial> {
    let dir = tensor_testkit::conformance("tensogram");
    let positive = tensor_testkit::files_with_extension(&dir, "tgm");
    let negative = tensor_testkit::files_with_extension(&dir.join("bad"), "tgm");
    assert!(
        positive.len() >= 40 && negative.len() >= 20,
        "tensogram fixtures missing"
    );
    let trial = |prefix: &str, f: PathBuf, check: fn(&Path) -> Result<(), Failed>| {
        Trial::test(
            format!("{prefix}::{}", tensor_testkit::stem(&f)),
            move || check(&f),
        )
    };
    positive
        .into_iter()
        .map(|f| trial("conformance", f, check_positive))
        .chain(
            negative
                .into_iter()
                .map(|f| trial("conformance::bad", f, check_negative)),
        )
        .collect()
}
