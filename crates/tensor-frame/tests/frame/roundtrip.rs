//! Round trips through both encoders, random access, preceders, files of many messages, and
//! proptest over dtypes, shapes and pipelines.

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use std::io::Cursor;
use tensor_core::atomic::Durability;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;
use tensor_frame::MetaValue as Value;
use tensor_frame::descriptor::{DataObjectDescriptor, ParamValue};
use tensor_frame::{
    DecodeOptions, EncodeOptions, GlobalMetadata, HashFrames, IndexFrame, Level, Map, Message,
    MessageReader, Provenance, StreamEncoder, TgmFile, ValidateOptions, scan, scan_backward,
    serialize, validate, wire,
};

/// Options with fixed provenance, so that output does not change from run to run.
pub(crate) fn opts() -> EncodeOptions {
    EncodeOptions {
        provenance: Provenance::fixed(
            "tensorkit",
            "test",
            "2026-11-22T00:00:00Z",
            "00000000-0000-4000-8000-000000000000",
        ),
        ..EncodeOptions::default()
    }
}

fn named(names: &[&str]) -> GlobalMetadata {
    GlobalMetadata {
        base: names
            .iter()
            .map(|n| Map::from([("name".to_owned(), Value::from(*n))]))
            .collect(),
        ..GlobalMetadata::default()
    }
}

fn f32_object(values: &[f32]) -> (DataObjectDescriptor, Vec<u8>) {
    (
        DataObjectDescriptor::new(Dtype::Float32, &[values.len() as u64], ByteOrder::Little),
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
}

fn clean(bytes: &[u8]) -> Result<(), Failed> {
    let r = validate(
        bytes,
        ValidateOptions {
            level: Level::Full,
            canonical: true,
        },
        &Limits::default(),
    );
    if r.issues.is_empty() {
        Ok(())
    } else {
        Err(format!("validation reports {:?}", r.issues).into())
    }
}

fn decoded_f32(m: &Message<'_>, i: usize) -> Result<Vec<f32>, Failed> {
    let t = m.decode_object(
        i,
        DecodeOptions {
            verify_hash: true,
            ..DecodeOptions::default()
        },
    )?;
    Ok(t.view().typed::<f32>()?.into_owned())
}

/// An object read from its frame's bytes alone (`object_in`, as a remote reader fetches
/// it) is the object read from the whole message; a frame of the wrong length, another
/// object's frame of a different length and a damaged frame are refused or caught.
fn object_from_its_own_frame() -> Result<(), Failed> {
    let (d0, x0) = f32_object(&[1.0, 2.0, 3.0, 4.0]);
    let (d1, x1) = f32_object(&[5.0; 9]);
    let bytes = serialize(&named(&["a", "b"]), &[d0, d1], &[&x0, &x1], &opts())?;
    let m = Message::open(&bytes)?;
    for i in 0..2 {
        let (offset, length) = m.object_span(i);
        let frame = &bytes[offset as usize..(offset + length) as usize];
        let own = m.object_in(i, frame)?;
        let whole = m.object(i)?;
        if own.payload() != whole.payload() || own.descriptor() != whole.descriptor() {
            return Err(format!("object {i} differs read from its own frame").into());
        }
        own.verify_hash()?;
        if m.object_in(i, &frame[..frame.len() - 8]).is_ok() {
            return Err("a short frame was accepted".into());
        }
        let mut damaged = frame.to_vec();
        damaged[40] ^= 1;
        if m.object_in(i, &damaged)
            .and_then(|o| o.verify_hash())
            .is_ok()
        {
            return Err(format!("damage in object {i}'s frame went unnoticed").into());
        }
    }
    let (o0, l0) = m.object_span(0);
    if m.object_in(1, &bytes[o0 as usize..(o0 + l0) as usize])
        .is_ok()
    {
        return Err("object 0's frame was read as object 1".into());
    }
    Ok(())
}

/// Objects of two messages regrouped into one (`regroup_to`): payloads framed as they are,
/// compressed ones included, under the new metadata, the hashes fresh; an object whose
/// stored hash does not match is refused, not framed as sound.
fn objects_regroup_into_one_message() -> Result<(), Failed> {
    let (d0, x0) = f32_object(&[1.0, 2.0, 3.0, 4.0]);
    let (mut d1, x1) = f32_object(&[5.0; 9]);
    d1.compression = "zstd".into();
    let one = serialize(&named(&["a"]), &[d0], &[&x0], &opts())?;
    let two = serialize(&named(&["b"]), &[d1], &[&x1], &opts())?;
    let (m1, m2) = (Message::open(&one)?, Message::open(&two)?);
    let mut out = Cursor::new(Vec::new());
    tensor_frame::regroup_to(&[(&m2, 0), (&m1, 0)], &named(&["b2", "a2"]), &mut out)?;
    let bytes = out.into_inner();
    let m = Message::open(&bytes)?;
    m.verify_metadata_hashes()?;
    let meta = m.metadata()?;
    let names = [meta.get(0, "name"), meta.get(1, "name")];
    if names != [Some(&Value::from("b2")), Some(&Value::from("a2"))] {
        return Err(format!("names {names:?}").into());
    }
    let b = m.object(0)?;
    b.verify_hash()?;
    if b.descriptor().compression != "zstd" || b.payload() != m2.object(0)?.payload() {
        return Err("the compressed payload was not kept as it was".into());
    }
    let a = m
        .object(1)?
        .decode(DecodeOptions::default(), &Limits::default())?;
    if a.data() != x0.as_slice() {
        return Err("object a decodes differently".into());
    }
    let mut damaged = one.clone();
    let (offset, length) = m1.object_span(0);
    damaged[(offset + length / 2) as usize] ^= 1;
    let bad = Message::open(&damaged)?;
    let refused =
        tensor_frame::regroup_to(&[(&bad, 0)], &named(&["a"]), &mut Cursor::new(Vec::new()));
    if refused.is_ok() {
        return Err("a damaged object was regrouped".into());
    }
    // Objects that came without hashes leave without them.
    let unhashed = EncodeOptions {
        hashing: false,
        ..opts()
    };
    let (d2, x2) = f32_object(&[7.0; 3]);
    let plain = serialize(&named(&["c"]), &[d2], &[&x2], &unhashed)?;
    let mut out = Cursor::new(Vec::new());
    tensor_frame::regroup_to(&[(&Message::open(&plain)?, 0)], &named(&["c"]), &mut out)?;
    let regrouped = out.into_inner();
    if Message::open(&regrouped)?
        .object(0)?
        .stored_hash()
        .is_some()
    {
        return Err("an unhashed object was given a hash".into());
    }
    if tensor_frame::regroup_to(&[], &named(&[]), &mut Cursor::new(Vec::new())).is_ok() {
        return Err("a message of no objects was regrouped".into());
    }
    Ok(())
}

/// A data frame and a metadata frame read on their own, with no message around them
/// (`object_frame`, `metadata_frame`: what a virtual store's chunks are), give what the
/// message gives; one frame's bytes taken for the other's kind, a frame cut short and a
/// damaged metadata frame are refused.
fn frames_read_on_their_own() -> Result<(), Failed> {
    let (d0, x0) = f32_object(&[1.0, 2.0, 3.0, 4.0]);
    let (d1, x1) = f32_object(&[5.0; 9]);
    let bytes = serialize(&named(&["a", "b"]), &[d0, d1], &[&x0, &x1], &opts())?;
    let m = Message::open(&bytes)?;
    let limits = Limits::default();
    let (mo, ml) = m.metadata_span();
    let meta_frame = &bytes[mo as usize..(mo + ml) as usize];
    let meta = tensor_frame::metadata_frame(meta_frame, &limits)?;
    if meta.base != m.metadata()?.base || m.has_preceders() {
        return Err("the metadata frame read alone differs from the message's".into());
    }
    for i in 0..2 {
        let (offset, length) = m.object_span(i);
        let frame = &bytes[offset as usize..(offset + length) as usize];
        let alone = tensor_frame::object_frame(frame, &limits)?;
        alone.verify_hash()?;
        if alone.decode(DecodeOptions::default(), &limits)?
            != m.decode_object(i, DecodeOptions::default())?
        {
            return Err(format!("object {i} decodes differently from its frame alone").into());
        }
        if tensor_frame::metadata_frame(frame, &limits).is_ok() {
            return Err("a data frame was read as metadata".into());
        }
        if tensor_frame::object_frame(&frame[..frame.len() - 8], &limits).is_ok() {
            return Err("a data frame cut short was accepted".into());
        }
    }
    if tensor_frame::object_frame(meta_frame, &limits).is_ok() {
        return Err("a metadata frame was read as a data object".into());
    }
    let mut damaged = meta_frame.to_vec();
    let at = damaged.len() / 2;
    damaged[at] ^= 0x20;
    if tensor_frame::metadata_frame(&damaged, &limits).is_ok() {
        return Err("damage in a hashed metadata frame went unnoticed".into());
    }
    Ok(())
}

fn streaming_unknown_length() -> Result<(), Failed> {
    let (d0, x0) = f32_object(&[1.0, 2.0, 3.0, 4.0]);
    let mut d1 = DataObjectDescriptor::new(Dtype::Int16, &[2, 2], ByteOrder::Big);
    d1.compression = "zstd".into();
    let x1: Vec<u8> = [1i16, -2, 3, -4]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let mut s = StreamEncoder::new(Vec::new(), &named(&["a", "b"]), opts())?;
    s.write_object(&d0, &x0)?;
    s.write_object(&d1, &x1)?;
    let bytes = s.finish()?;
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    assert_eq!(m.preamble().total_length, 0);
    assert_eq!(m.postamble().total_length, 0);
    assert_eq!(m.len(), 2);
    assert_eq!(decoded_f32(&m, 0)?, [1.0, 2.0, 3.0, 4.0]);
    let b = m.decode_object(1, DecodeOptions::default())?;
    assert_eq!(&*b.view().typed::<i16>()?, &[1, -2, 3, -4]);
    assert_eq!(m.metadata()?.get(1, "name"), Some(&Value::from("b")));
    assert!(m.metadata()?.base[1].contains_key("_reserved_"));
    assert_eq!(
        m.metadata()?.reserved.get("uuid"),
        Some(&Value::from("00000000-0000-4000-8000-000000000000"))
    );
    // Footer: hash, index, metadata, in the order of the specification.
    let kinds: Vec<u16> = m.frames()?.iter().map(|f| f.header.frame_type).collect();
    assert_eq!(kinds, [1, 9, 9, 5, 6, 7]);
    clean(&bytes)?;
    // Found by both scans, and by the reader, followed by another message.
    let mut file = bytes.clone();
    file.extend_from_slice(&bytes);
    assert_eq!(scan(&file), [0..bytes.len(), bytes.len()..file.len()]);
    assert_eq!(scan_backward(&file), scan(&file));
    let read: Vec<Vec<u8>> =
        MessageReader::new(Cursor::new(&file), &Limits::default()).collect::<Result<_, _>>()?;
    assert_eq!(read, [bytes.clone(), bytes.clone()]);
    // An object already encoded goes out as it is: its frame is the one the pipeline made.
    let zstd = m.object(1)?;
    let mut again = StreamEncoder::new(Vec::new(), &named(&["b"]), opts())?;
    again.write_object_pre_encoded(zstd.descriptor(), zstd.payload())?;
    let again = again.finish()?;
    let m2 = Message::open_with(&again, &tensor_core::ReadOptions::default())?;
    assert_eq!(m2.object(0)?.payload(), zstd.payload());
    let b = m2.decode_object(0, DecodeOptions::default())?;
    assert_eq!(&*b.view().typed::<i16>()?, &[1, -2, 3, -4]);
    clean(&again)?;
    Ok(())
}

fn streaming_backfilled_with_preceders() -> Result<(), Failed> {
    let (d0, x0) = f32_object(&[5.0; 3]);
    let o = EncodeOptions {
        preceders: true,
        ..opts()
    };
    let mut sink = Cursor::new(b"prefix: not a message".to_vec());
    sink.set_position(21);
    let mut s = StreamEncoder::new(sink, &named(&["first"]), o)?;
    s.write_preceder(&Map::from([
        ("name".to_owned(), Value::from("override")),
        ("step".to_owned(), Value::from(6u64)),
    ]))?;
    assert!(
        s.write_preceder(&Map::new()).is_err(),
        "two preceders in a row"
    );
    s.write_object(&d0, &x0)?;
    s.write_object(&d0, &x0)?;
    let file = s.finish_backfilled()?.into_inner();
    let msg = &file[21..];
    let m = Message::open_with(msg, &tensor_core::ReadOptions::default())?;
    assert_eq!(m.preamble().total_length, msg.len() as u64);
    assert_eq!(m.postamble().total_length, msg.len() as u64);
    assert_eq!(m.metadata()?.get(0, "name"), Some(&Value::from("override")));
    assert_eq!(m.metadata()?.get(0, "step"), Some(&Value::from(6u64)));
    assert_eq!(m.metadata()?.base.len(), 2);
    assert_eq!(scan(&file), vec![(21..file.len())]);
    clean(msg)?;
    // A stream that ends without objects is still a valid message, its flags true.
    let empty = StreamEncoder::new(Vec::new(), &named(&[]), opts())?.finish()?;
    let m = Message::open_with(&empty, &tensor_core::ReadOptions::default())?;
    assert!(m.is_empty());
    clean(&empty)?;
    // A preceder without an object after it is refused at finish.
    let mut s = StreamEncoder::new(
        Vec::new(),
        &GlobalMetadata::default(),
        EncodeOptions {
            preceders: true,
            ..opts()
        },
    )?;
    s.write_preceder(&Map::new())?;
    assert!(s.finish().is_err());
    Ok(())
}

fn buffered_layouts() -> Result<(), Failed> {
    let objects: Vec<(DataObjectDescriptor, Vec<u8>)> =
        (0..50).map(|i| f32_object(&[i as f32; 7])).collect();
    let descs: Vec<DataObjectDescriptor> = objects.iter().map(|o| o.0.clone()).collect();
    let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
    let names: Vec<String> = (0..50).map(|i| format!("t{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    for index in [IndexFrame::Header, IndexFrame::Footer, IndexFrame::None] {
        for hash_frames in [
            HashFrames::Auto,
            HashFrames::None,
            HashFrames::Footer,
            HashFrames::Both,
        ] {
            for preceders in [false, true] {
                let o = EncodeOptions {
                    index,
                    hash_frames,
                    preceders,
                    ..opts()
                };
                let bytes = serialize(&named(&refs), &descs, &data, &o)?;
                // Written after something else: the message starts where the writer stands.
                let mut streamed = std::io::Cursor::new(b"before".to_vec());
                streamed.set_position(6);
                let n = tensor_frame::write(&named(&refs), &descs, &data, &o, &mut streamed)?;
                assert_eq!(streamed.position(), 6 + n);
                assert_eq!(
                    (n, &streamed.get_ref()[6..]),
                    (bytes.len() as u64, &bytes[..])
                );
                let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
                assert_eq!(m.len(), 50);
                assert_eq!(decoded_f32(&m, 37)?, [37.0; 7]);
                assert_eq!(m.metadata()?.get(37, "name"), Some(&Value::from("t37")));
                assert_eq!(m.index().is_some(), index != IndexFrame::None);
                clean(&bytes)?;
            }
        }
    }
    // Hashing off: no slot is filled and verification reports the missing hash.
    let o = EncodeOptions {
        hashing: false,
        hash_frames: HashFrames::None,
        ..opts()
    };
    let bytes = serialize(&GlobalMetadata::default(), &descs[..1], &data[..1], &o)?;
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    assert_eq!(m.preamble().flags & wire::flags::HASHES_PRESENT, 0);
    assert!(matches!(
        m.decode_object(
            0,
            DecodeOptions {
                verify_hash: true,
                ..DecodeOptions::default()
            }
        ),
        Err(tensor_frame::Error::MissingHash { object: 0 })
    ));
    // Mismatched counts, a long base and client-written _reserved_ are refused.
    assert!(serialize(&GlobalMetadata::default(), &descs[..2], &data[..1], &opts()).is_err());
    assert!(serialize(&named(&["a", "b"]), &descs[..1], &data[..1], &opts()).is_err());
    let mut bad = named(&["a"]);
    bad.base[0].insert("_reserved_".into(), Value::Null);
    assert!(serialize(&bad, &descs[..1], &data[..1], &opts()).is_err());
    Ok(())
}

fn nan_needs_masks() -> Result<(), Failed> {
    let (desc, data) = f32_object(&[1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2.0]);
    let err = serialize(
        &GlobalMetadata::default(),
        std::slice::from_ref(&desc),
        &[&data],
        &opts(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("element 1"), "{err}");
    let o = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        ..opts()
    };
    let bytes = serialize(&GlobalMetadata::default(), &[desc], &[&data], &o)?;
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    let v = decoded_f32(&m, 0)?;
    assert!(v[1].is_nan() && v[2] == f32::INFINITY && v[3] == f32::NEG_INFINITY && v[4] == 2.0);
    let zeros = m.decode_object(
        0,
        DecodeOptions {
            restore_non_finite: false,
            ..DecodeOptions::default()
        },
    )?;
    assert_eq!(&*zeros.view().typed::<f32>()?, &[1.0, 0.0, 0.0, 0.0, 2.0]);
    clean(&bytes)
}

/// A writer that only counts what it is given.
struct Counting(std::rc::Rc<std::cell::Cell<usize>>);

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.set(self.0.get() + buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One non-finite element of each float kind, little-endian: a NaN float32, a -Inf float64,
/// a +Inf float16, a complex64 with a NaN part.
fn non_finite_elements() -> [(Dtype, Vec<u8>); 4] {
    [
        (Dtype::Float32, f32::NAN.to_le_bytes().to_vec()),
        (Dtype::Float64, f64::NEG_INFINITY.to_le_bytes().to_vec()),
        (Dtype::Float16, half::f16::INFINITY.to_le_bytes().to_vec()),
        (
            Dtype::Complex64,
            [1f32.to_le_bytes(), f32::NAN.to_le_bytes()].concat(),
        ),
    ]
}

/// Raw payloads are checked for NaN and ±Inf while they are written (one pass over the
/// data): the refusal is the same whichever encoder meets it, names the object and the
/// element however deep into the payload it lies — past the first pieces the writer hashes
/// on another core, in every float dtype — and, hashing on or off, no message is made.
/// The streaming encoder checks before it writes, so a refused object leaves nothing.
fn non_finite_refused_wherever_it_lies() -> Result<(), Failed> {
    for (dtype, bad) in non_finite_elements() {
        let w = dtype.byte_width();
        // 4.4 MB: more than one of the writer's 4 MiB pieces; `at` in each of them.
        let n = 4_400_000 / w as u64;
        for at in [0, n * 99 / 100, n - 1] {
            let mut bytes = vec![0u8; (n as usize) * w];
            let byte = at as usize * w;
            bytes[byte..byte + w].copy_from_slice(&bad);
            let finite = DataObjectDescriptor::new(Dtype::Float32, &[2], ByteOrder::Little);
            let descs = [
                finite,
                DataObjectDescriptor::new(dtype, &[n], ByteOrder::Little),
            ];
            let data: [&[u8]; 2] = [&[0; 8], &bytes];
            for hashing in [true, false] {
                let o = EncodeOptions {
                    hashing,
                    hash_frames: if hashing {
                        HashFrames::Auto
                    } else {
                        HashFrames::None
                    },
                    ..opts()
                };
                let meta = GlobalMetadata::default();
                let mut out = std::io::Cursor::new(Vec::new());
                for e in [
                    serialize(&meta, &descs, &data, &o).unwrap_err(),
                    tensor_frame::write(&meta, &descs, &data, &o, &mut out).unwrap_err(),
                    tensor_frame::write_streamed(
                        &meta,
                        &descs,
                        &mut |k| {
                            Ok(tensor_frame::ObjectBytes::Raw(std::borrow::Cow::Owned(
                                data[k].to_vec(),
                            )))
                        },
                        &o,
                        &mut out,
                    )
                    .unwrap_err(),
                ] {
                    let said = e.to_string();
                    assert_eq!(e.object(), Some(1), "{dtype} at {at}: {said}");
                    assert!(
                        said.contains(&format!("element {at} is ")),
                        "{dtype} at {at}: {said}"
                    );
                }
            }
            let written = std::rc::Rc::new(std::cell::Cell::new(0));
            let sink = Counting(written.clone());
            let mut stream = StreamEncoder::new(sink, &GlobalMetadata::default(), opts())?;
            stream.write_object(&descs[0], data[0])?;
            let before = written.get();
            let e = stream.write_object(&descs[1], data[1]).unwrap_err();
            assert!(e.to_string().contains(&format!("element {at} is ")), "{e}");
            assert_eq!(written.get(), before, "{dtype} at {at}");
        }
    }
    Ok(())
}

/// `keep_non_finite`: a lossless pipeline stores NaN and ±Inf bit for bit — signs and NaN
/// payloads included — with no masks; lossy packing cannot hold them at all.
fn non_finite_values_kept_bit_for_bit() -> Result<(), Failed> {
    let bits: [u32; 5] = [
        0x3f80_0000,
        0xffff_fffe,
        0x7f80_0000,
        0x7fc0_0001,
        0xff80_0000,
    ];
    let data: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let o = EncodeOptions {
        keep_non_finite: true,
        ..opts()
    };
    for compression in ["none", "zstd", "lz4"] {
        let mut d = DataObjectDescriptor::new(Dtype::Float32, &[5], ByteOrder::Little);
        d.compression = compression.into();
        if compression == "zstd" {
            d.params.insert("zstd_level".into(), Value::from(3u64));
        }
        let bytes = serialize(&named(&["x"]), std::slice::from_ref(&d), &[&data], &o)?;
        let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
        let t = m.decode_object(0, DecodeOptions::default())?;
        assert_eq!(t.data(), data.as_slice(), "{compression}");
        assert!(m.object(0)?.descriptor().masks.is_none(), "{compression}");
    }
    // Packing cannot hold them, masked or not.
    let mut d = DataObjectDescriptor::new(Dtype::Float32, &[5], ByteOrder::Little);
    d.encoding = "simple_packing".into();
    d.params
        .insert("sp_bits_per_value".into(), Value::from(16u64));
    assert!(serialize(&named(&["x"]), std::slice::from_ref(&d), &[&data], &o).is_err());
    let o = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        ..o
    };
    assert!(serialize(&named(&["x"]), &[d], &[&data], &o).is_err());
    Ok(())
}

fn files_of_many_messages() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("archive.tgm");
    for i in 0..3 {
        let (d, x) = f32_object(&[i as f32; 4]);
        // Synced or left to the kernel, the bytes are the same.
        let durability = if i == 1 {
            Durability::Synced
        } else {
            Durability::Cached
        };
        let message = serialize(&named(&["x"]), &[d], &[&x], &opts())?;
        tensor_frame::append(&path, &message, durability)?;
    }
    // Damage between messages costs only itself.
    let mut bytes = std::fs::read(&path)?;
    let first = scan(&bytes)[0].clone();
    let mut damaged = bytes[first.clone()].to_vec();
    damaged[first.len() - 3] ^= 0xff; // the end magic
    bytes.splice(0..0, damaged);
    bytes.extend_from_slice(b"TENSOGRM trailing garbage");
    std::fs::write(&path, &bytes)?;
    let f = TgmFile::map(&path, &tensor_core::ReadOptions::default())?;
    assert_eq!(f.len(), 3);
    assert!(f.unclaimed_bytes() > 0);
    let values: Vec<f32> = f
        .messages()
        .map(|m| Ok(decoded_f32(&m?, 0)?[0]))
        .collect::<Result<_, Failed>>()?;
    assert_eq!(values, [0.0, 1.0, 2.0]);
    assert_eq!(scan_backward(&bytes), f.ranges());
    assert!(!validate(&bytes, ValidateOptions::default(), &Limits::default()).is_ok());
    Ok(())
}

/// Decoding into a caller's buffer, and (with the `parallel` feature) on several threads,
/// gives what a plain decode gives.
fn caller_buffers_and_threads_agree() -> Result<(), Failed> {
    let objects: Vec<(DataObjectDescriptor, Vec<u8>)> = (0..40)
        .map(|i| f32_object(&[i as f32 * 0.5; 100]))
        .collect();
    let descs: Vec<DataObjectDescriptor> = objects.iter().map(|o| o.0.clone()).collect();
    let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
    let bytes = serialize(&GlobalMetadata::default(), &descs, &data, &opts())?;
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    let all = m.decode_all(DecodeOptions::default())?;
    let mut dst = vec![0u8; 400];
    for (i, t) in all.iter().enumerate() {
        m.object(i)?
            .decode_into(&mut dst, DecodeOptions::default(), &Limits::default())?;
        assert_eq!(dst.as_slice(), t.data());
    }
    assert!(
        m.object(0)?
            .decode_into(
                &mut dst[..399],
                DecodeOptions::default(),
                &Limits::default()
            )
            .is_err()
    );
    #[cfg(feature = "parallel")]
    assert_eq!(m.decode_all_parallel(DecodeOptions::default())?, all);
    Ok(())
}

/// Candidate preambles of unknown length nested in each other's frames, all leading into one
/// long chain of frames that never reaches a postamble: the scan follows the chain once, not
/// once per candidate, and still finds the real message after it.
fn nested_streamed_candidates() -> Result<(), Failed> {
    let preamble = |out: &mut Vec<u8>| {
        out.extend_from_slice(wire::MAGIC);
        out.extend_from_slice(&[0, 3, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&0u64.to_be_bytes());
    };
    let header = |out: &mut Vec<u8>, len: u64| {
        out.extend_from_slice(b"FR\0\x01\0\x01\0\0");
        out.extend_from_slice(&len.to_be_bytes());
    };
    let mut buf = Vec::new();
    preamble(&mut buf);
    for _ in 0..20_000 {
        // A 68-byte frame whose body holds a candidate preamble and a 28-byte inner frame
        // ending where the outer one ends, sharing its hash slot and ENDF.
        header(&mut buf, 68);
        preamble(&mut buf);
        header(&mut buf, 28);
        buf.extend_from_slice(&[0; 8]);
        buf.extend_from_slice(b"ENDF\0\0\0\0");
    }
    buf.extend_from_slice(&[0; 64]);
    let (d, x) = f32_object(&[1.0]);
    let real = serialize(&GlobalMetadata::default(), &[d], &[&x], &opts())?;
    let at = buf.len();
    buf.extend_from_slice(&real);
    assert_eq!(scan(&buf), vec![at..buf.len()]);
    assert_eq!(scan_backward(&buf), vec![at..buf.len()]);
    Ok(())
}

fn random_access_reads_only_the_object() -> Result<(), Failed> {
    let objects: Vec<(DataObjectDescriptor, Vec<u8>)> =
        (0..2000).map(|i| f32_object(&[i as f32; 16])).collect();
    let descs: Vec<DataObjectDescriptor> = objects.iter().map(|o| o.0.clone()).collect();
    let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
    let mut bytes = serialize(&GlobalMetadata::default(), &descs, &data, &opts())?;
    // Spoil object 5's frame: with the index, object 1000 is still reached without
    // looking at it; a full decode finds the damage.
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    let at = m.index().ok_or("index")?.offsets[5] as usize;
    bytes[at] = b'X';
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    assert_eq!(decoded_f32(&m, 1000)?, [1000.0; 16]);
    assert!(m.decode_all(DecodeOptions::default()).is_err());
    assert!(m.object(2000).is_err());
    Ok(())
}

/// A dtype, its element bytes, and a pipeline that suits it.
fn arb_object() -> impl Strategy<Value = (DataObjectDescriptor, Vec<u8>)> {
    // Every dtype a descriptor can name.
    let dtypes = prop::sample::select(tensor_frame::descriptor::DTYPES.to_vec());
    (
        dtypes,
        prop::collection::vec(0u64..6, 0..3),
        any::<bool>(),
        0usize..4,
        any::<u64>(),
    )
        .prop_map(|(dtype, shape, big, codec, seed)| {
            let order = if big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            let mut d = DataObjectDescriptor::new(dtype, &shape, order);
            let n = d.element_count();
            let len = dtype.payload_bytes(n).unwrap() as usize;
            let mut x = seed;
            let mut data: Vec<u8> = (0..len)
                .map(|_| {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    (x >> 56) as u8 & 0x3f
                })
                .collect();
            if dtype == Dtype::Bitmask && !n.is_multiple_of(8) && len > 0 {
                data[len - 1] &= 0xffu8 << (8 - n % 8);
            }
            match (codec, dtype) {
                (1, _) => d.compression = "zstd".into(),
                (2, _) => d.compression = "lz4".into(),
                (3, Dtype::Bitmask) => d.compression = "rle".into(),
                (3, _) if dtype.byte_width() > 1 => {
                    d.filter = "shuffle".into();
                    d.params.insert(
                        "shuffle_element_size".into(),
                        Value::from(dtype.byte_width() as u64),
                    );
                }
                _ => {}
            }
            (d, data)
        })
}

fn proptest_round_trips() -> Result<(), Failed> {
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 200,
        ..Default::default()
    });
    runner
        .run(&prop::collection::vec(arb_object(), 0..4), |objects| {
            let descs: Vec<DataObjectDescriptor> = objects.iter().map(|o| o.0.clone()).collect();
            let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
            let bytes = serialize(&GlobalMetadata::default(), &descs, &data, &opts()).unwrap();
            let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default()).unwrap();
            let wire_order = DecodeOptions {
                native_byte_order: false,
                verify_hash: true,
                ..DecodeOptions::default()
            };
            for (i, (_, x)) in objects.iter().enumerate() {
                let t = m.decode_object(i, wire_order).unwrap();
                prop_assert_eq!(t.data(), x.as_slice());
            }
            let mut streamed =
                StreamEncoder::new(Vec::new(), &GlobalMetadata::default(), opts()).unwrap();
            for (d, x) in &objects {
                streamed.write_object(d, x).unwrap();
            }
            let streamed = streamed.finish().unwrap();
            let s = Message::open_with(&streamed, &tensor_core::ReadOptions::default()).unwrap();
            for (i, (_, x)) in objects.iter().enumerate() {
                let t = s.decode_object(i, wire_order).unwrap();
                prop_assert_eq!(t.data(), x.as_slice());
            }
            Ok(())
        })
        .map_err(|e| Failed::from(e.to_string()))
}

/// `write_streamed` writes exactly what the buffered encoder writes, whether the data is
/// lent (borrowed) or produced anew (owned) for each object, and refuses data whose length
/// changes between the two times it is asked for.
fn streamed_data_encodes_like_buffered() -> Result<(), Failed> {
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 100,
        ..Default::default()
    });
    runner
        .run(&prop::collection::vec(arb_object(), 0..4), |objects| {
            let descs: Vec<DataObjectDescriptor> = objects.iter().map(|o| o.0.clone()).collect();
            let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
            let meta = GlobalMetadata::default();
            let buffered = serialize(&meta, &descs, &data, &opts()).unwrap();
            for lend in [false, true] {
                let mut out = std::io::Cursor::new(Vec::new());
                let mut asked = 0;
                let n = tensor_frame::write_streamed(
                    &meta,
                    &descs,
                    &mut |i| {
                        asked += 1;
                        Ok(tensor_frame::ObjectBytes::Raw(if lend {
                            std::borrow::Cow::Borrowed(data[i])
                        } else {
                            std::borrow::Cow::Owned(data[i].to_vec())
                        }))
                    },
                    &opts(),
                    &mut out,
                )
                .unwrap();
                prop_assert_eq!(n, out.get_ref().len() as u64);
                prop_assert!(*out.get_ref() == buffered, "lend = {}", lend);
                prop_assert!(asked >= objects.len());
            }
            Ok(())
        })
        .map_err(|e| Failed::from(e.to_string()))?;
    // Raw data produced anew is asked for twice; a different length the second time fails,
    // and different bytes of the same length are what the frame holds and its hash covers.
    let (d, x) = f32_object(&[1.0, 2.0, 3.0]);
    for (grow, fails) in [(true, true), (false, false)] {
        let mut calls = 0;
        let mut out = std::io::Cursor::new(Vec::new());
        let r = tensor_frame::write_streamed(
            &named(&["x"]),
            std::slice::from_ref(&d),
            &mut |_| {
                calls += 1;
                let mut v = x.clone();
                if calls > 1 {
                    if grow {
                        v.extend_from_slice(&[0; 4]);
                    } else {
                        v[..4].copy_from_slice(&9f32.to_le_bytes());
                    }
                }
                Ok(tensor_frame::ObjectBytes::Raw(std::borrow::Cow::Owned(v)))
            },
            &opts(),
            &mut out,
        );
        assert!(calls >= 2, "asked {calls} times");
        assert_eq!(r.is_err(), fails, "{r:?}");
        if let Err(e) = r {
            assert!(
                e.to_string().contains("payload bytes the second time"),
                "{e}"
            );
        } else {
            let bytes = out.into_inner();
            clean(&bytes)?;
            let m = Message::open(&bytes)?;
            assert_eq!(decoded_f32(&m, 0)?, [9.0, 2.0, 3.0]);
        }
    }
    // A payload given pre-encoded is framed as it is: for an object without stages, the
    // same message as encoding its elements; for a packed object, what decodes to the
    // values its payload packs.
    let (d, x) = f32_object(&[1.0, 2.0, 3.0]);
    let buffered = serialize(&named(&["x"]), std::slice::from_ref(&d), &[&x], &opts()).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    tensor_frame::write_streamed(
        &named(&["x"]),
        &[d],
        &mut |_| {
            Ok(tensor_frame::ObjectBytes::PreEncoded(
                std::borrow::Cow::Borrowed(&x),
            ))
        },
        &opts(),
        &mut out,
    )
    .unwrap();
    assert_eq!(out.get_ref(), &buffered);
    let mut packed = DataObjectDescriptor::new(Dtype::Float64, &[3], ByteOrder::Little);
    packed.encoding = "simple_packing".into();
    for (k, v) in [
        ("sp_bits_per_value", ParamValue::from(8u64)),
        ("sp_reference_value", ParamValue::from(10.0)),
        ("sp_binary_scale_factor", ParamValue::from(-1i64)),
        ("sp_decimal_scale_factor", ParamValue::from(0i64)),
    ] {
        packed.params.insert(k.into(), v);
    }
    let mut out = std::io::Cursor::new(Vec::new());
    tensor_frame::write_streamed(
        &named(&["p"]),
        &[packed],
        &mut |_| {
            Ok(tensor_frame::ObjectBytes::PreEncoded(
                std::borrow::Cow::Owned(vec![0, 1, 6]),
            ))
        },
        &opts(),
        &mut out,
    )
    .unwrap();
    let back = Message::open(out.get_ref())
        .unwrap()
        .decode_object(0, DecodeOptions::default())
        .unwrap();
    assert_eq!(&*back.view().typed::<f64>().unwrap(), &[10.0, 10.5, 13.0]);
    Ok(())
}

/// A source that hands each object over in runs of `run` elements (raw objects) or whole
/// (the rest), counting how many times it is asked for each.
struct InRuns<'a> {
    data: &'a [&'a [u8]],
    descs: &'a [DataObjectDescriptor],
    run: usize,
    asked: Vec<usize>,
}

impl<'a> InRuns<'a> {
    fn new(data: &'a [&'a [u8]], descs: &'a [DataObjectDescriptor], run: usize) -> Self {
        InRuns {
            data,
            descs,
            run,
            asked: vec![0; data.len()],
        }
    }
}

impl<'a> tensor_frame::ObjectSource<'a> for InRuns<'a> {
    fn bytes(&mut self, i: usize) -> tensor_frame::Result<tensor_frame::ObjectBytes<'a>> {
        let data: &'a [&'a [u8]] = self.data;
        Ok(tensor_frame::ObjectBytes::Raw(std::borrow::Cow::Borrowed(
            data[i],
        )))
    }

    fn streams(&self, _: usize) -> bool {
        true
    }

    fn runs(
        &mut self,
        i: usize,
        sink: &mut dyn FnMut(&[u8]) -> tensor_frame::Result<()>,
    ) -> tensor_frame::Result<()> {
        self.asked[i] += 1;
        let width = self.descs[i].dtype.byte_width().max(1);
        self.data[i].chunks(self.run * width).try_for_each(sink)
    }
}

/// Objects handed over in runs are written exactly as the buffered encoder writes them —
/// NaN and ±Inf found run by run into the same masks, wherever they lie — while objects a
/// stage encodes are asked for whole; NaN and ±Inf not allowed are refused at the element
/// they are, and runs that do not add up to the shape are refused.
fn objects_in_runs_encode_like_buffered() -> Result<(), Failed> {
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 100,
        ..Default::default()
    });
    runner
        .run(
            &(prop::collection::vec(arb_object(), 0..4), 1usize..40),
            |(objects, run)| {
                let descs: Vec<DataObjectDescriptor> =
                    objects.iter().map(|o| o.0.clone()).collect();
                let data: Vec<&[u8]> = objects.iter().map(|o| o.1.as_slice()).collect();
                let meta = GlobalMetadata::default();
                for allow in [false, true] {
                    let opts = EncodeOptions {
                        allow_nan: allow,
                        allow_inf: allow,
                        ..opts()
                    };
                    let buffered = serialize(&meta, &descs, &data, &opts).unwrap();
                    let mut source = InRuns::new(&data, &descs, run);
                    let mut out = std::io::Cursor::new(Vec::new());
                    tensor_frame::write_from(&meta, &descs, &mut source, &opts, &mut out).unwrap();
                    prop_assert!(*out.get_ref() == buffered);
                    // Raw objects in runs: twice where NaN and ±Inf are looked for first
                    // (floats, allowed), once where they are refused as the frame is written.
                    for (d, asked) in descs.iter().zip(&source.asked) {
                        let raw = d.compression == "none" && d.filter == "none";
                        let float = matches!(
                            d.dtype,
                            Dtype::Float16
                                | Dtype::Bfloat16
                                | Dtype::Float32
                                | Dtype::Float64
                                | Dtype::Complex64
                                | Dtype::Complex128
                        );
                        let want = match (raw, allow && float) {
                            (false, _) => 0,
                            (true, false) => 1,
                            (true, true) => 2,
                        };
                        prop_assert_eq!(*asked, want, "{:?}", d);
                    }
                }
                Ok(())
            },
        )
        .map_err(|e| Failed::from(e.to_string()))?;
    let allowed = EncodeOptions {
        allow_nan: true,
        allow_inf: true,
        ..opts()
    };
    let le = ByteOrder::Little;
    for (dtype, bad) in non_finite_elements() {
        let w = dtype.byte_width();
        let n = 1000u64;
        let mut bytes: Vec<u8> = (0..n).flat_map(|_| vec![0x11u8; w]).collect();
        for at in [0usize, 63, 64, 500, 999] {
            bytes[at * w..(at + 1) * w].copy_from_slice(&bad);
        }
        let descs = [DataObjectDescriptor::new(dtype, &[n], le)];
        let data: [&[u8]; 1] = [&bytes];
        let meta = GlobalMetadata::default();
        for opts in [allowed.clone(), opts()] {
            let buffered = serialize(&meta, &descs, &data, &opts);
            let mut source = InRuns::new(&data, &descs, 64);
            let mut out = std::io::Cursor::new(Vec::new());
            let streamed = tensor_frame::write_from(&meta, &descs, &mut source, &opts, &mut out);
            match buffered {
                Ok(buffered) => {
                    streamed?;
                    assert_eq!(out.get_ref(), &buffered, "{dtype}");
                    let m = Message::open(out.get_ref())?;
                    assert!(m.object(0)?.descriptor().masks.is_some(), "{dtype}");
                }
                Err(e) => {
                    let said = streamed.unwrap_err().to_string();
                    assert!(said.contains("element 0 is "), "{dtype}: {said}");
                    assert!(e.to_string().contains("element 0 is "), "{dtype}: {e}");
                }
            }
        }
        // Runs that hold more, or fewer, bytes than the shape.
        for m in [n - 1, n + 1] {
            let descs = [DataObjectDescriptor::new(dtype, &[m], le)];
            let mut source = InRuns::new(&data, &descs, 64);
            let mut out = std::io::Cursor::new(Vec::new());
            let e = tensor_frame::write_from(&meta, &descs, &mut source, &allowed, &mut out)
                .unwrap_err()
                .to_string();
            assert!(e.contains("bytes"), "{dtype} [{m}]: {e}");
        }
    }
    Ok(())
}

fn simple_packing_computes_its_parameters() -> Result<(), Failed> {
    let values: Vec<f64> = (0..1000)
        .map(|i| 250.0 + (f64::from(i) * 0.37).sin() * 30.0)
        .collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut d = DataObjectDescriptor::new(Dtype::Float64, &[1000], ByteOrder::Little);
    d.encoding = "simple_packing".into();
    d.compression = "szip".into();
    for (k, v) in [
        ("sp_bits_per_value", 16u64),
        ("szip_rsi", 32),
        ("szip_block_size", 16),
        ("szip_flags", 8),
    ] {
        d.params.insert(k.into(), Value::from(v));
    }
    let bytes = serialize(&GlobalMetadata::default(), &[d], &[&data], &opts())?;
    let m = Message::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    let o = m.object(0)?;
    let e = o
        .descriptor()
        .param_i64("sp_binary_scale_factor")?
        .ok_or("bsf")?;
    assert!(
        o.descriptor()
            .param_u64s("szip_block_offsets")?
            .is_some_and(|v| v.len() == 2)
    );
    let back = m.decode_object(0, DecodeOptions::default())?;
    let half_step = 2f64.powi(e as i32 - 1);
    for (a, b) in values.iter().zip(back.view().typed::<f64>()?.iter()) {
        assert!((a - b).abs() <= half_step, "{a} vs {b}");
    }
    clean(&bytes)
}

pub(crate) fn trials() -> Vec<Trial> {
    let t =
        |name: &str, f: fn() -> Result<(), Failed>| Trial::test(format!("roundtrip::{name}"), f);
    vec![
        t("object_from_its_own_frame", object_from_its_own_frame),
        t(
            "objects_regroup_into_one_message",
            objects_regroup_into_one_message,
        ),
        t("frames_read_on_their_own", frames_read_on_their_own),
        t("streaming_unknown_length", streaming_unknown_length),
        t(
            "streaming_backfilled_with_preceders",
            streaming_backfilled_with_preceders,
        ),
        t("buffered_layouts", buffered_layouts),
        t("nan_needs_masks", nan_needs_masks),
        t(
            "non_finite_refused_wherever_it_lies",
            non_finite_refused_wherever_it_lies,
        ),
        t(
            "non_finite_values_kept_bit_for_bit",
            non_finite_values_kept_bit_for_bit,
        ),
        t("files_of_many_messages", files_of_many_messages),
        t(
            "random_access_reads_only_the_object",
            random_access_reads_only_the_object,
        ),
        t("proptest_round_trips", proptest_round_trips),
        t("nested_streamed_candidates", nested_streamed_candidates),
        t(
            "caller_buffers_and_threads_agree",
            caller_buffers_and_threads_agree,
        ),
        t(
            "simple_packing_computes_its_parameters",
            simple_packing_computes_its_parameters,
        ),
        t(
            "streamed_data_encodes_like_buffered",
            streamed_data_encodes_like_buffered,
        ),
        t(
            "objects_in_runs_encode_like_buffered",
            objects_in_runs_encode_like_buffered,
        ),
    ]
}
