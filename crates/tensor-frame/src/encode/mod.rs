//! Writing messages in one go: objects through their pipelines, frames laid out with the
//! index sized in as many passes as it takes, hashes, metadata with provenance.

mod completion;
mod in_place;
mod layout;
mod options;
mod prepare;
mod source;

pub(crate) use completion::{check_caller_metadata, complete_metadata};
pub use in_place::metadata_in_place;
use layout::{assemble, emit_patched, nothing_deferred, plan, written};
pub use options::{EncodeOptions, HashFrames, IndexFrame};
pub(crate) use prepare::encode_object;
use source::Whole;
pub use source::{ObjectBytes, ObjectSource};

use crate::error::{Error, Result};
use crate::frame_out::EncodedObject;
use crate::metadata::GlobalMetadata;
use crate::nonfinite;
use crate::object;
use std::borrow::Cow;
use std::io::{Seek, Write};
use tensor_core::ByteOrder;
use tensor_descriptor::DataObjectDescriptor;
use tensor_dtype::Dtype;

/// Checks the caller's input and runs every object through its pipeline.
fn encode_objects<'a>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&'a [u8]],
    opts: &EncodeOptions,
) -> Result<Vec<EncodedObject<'a>>> {
    if descriptors.len() != data.len() {
        return Err(Error::InvalidArgument(format!(
            "{} descriptors but {} data slices",
            descriptors.len(),
            data.len()
        )));
    }
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    descriptors
        .iter()
        .zip(data)
        .enumerate()
        .map(|(i, (d, x))| encode_object(d, x, i, opts, true))
        .collect()
}

/// Encodes one message holding `descriptors[i]` over `data[i]` for every `i`, with the
/// global `metadata` (its `base[i]` is object `i`'s application metadata).
pub fn serialize(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    serialize_into(metadata, descriptors, data, opts, &mut out)?;
    Ok(out)
}

/// [`serialize`] into `out`, which is cleared first: a buffer reused from message to message
/// keeps its memory, so nothing new is allocated or faulted in for the payloads.
pub fn serialize_into(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    let objects = encode_objects(metadata, descriptors, data, opts)?;
    assemble(metadata, &objects, opts, out)
}

/// [`serialize`] straight to a writer, for messages too large to hold twice: only compressed
/// payloads are kept in memory, raw ones are copied from `data` as they are written, and
/// each frame is hashed while it is written. The header hash frame, which precedes the
/// data, is written with placeholders and filled in at the end, so `w` must be able to seek
/// (a file; for a pipe, encode the message with [`serialize`] or stream it with
/// [`StreamEncoder`](crate::StreamEncoder)). The message starts where `w` stands, and `w`
/// is left at its end. Returns the bytes written; on an error, what went to `w` is to be
/// discarded.
pub fn write<W: Write + Seek + ?Sized>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &[&[u8]],
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    let objects = encode_objects(metadata, descriptors, data, opts)?;
    emit_to(metadata, &objects, opts, w)
}

/// Writes the message of `objects` to `w` ([`emit_patched`]) and returns its length. With
/// the `paranoid` feature, what went to `w` must be the message the buffered encoder
/// writes and checks ([`assemble`]).
fn emit_to<W: Write + Seek + ?Sized>(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject<'_>],
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    let plan = plan(metadata, objects, opts)?;
    #[cfg(not(feature = "paranoid"))]
    emit_patched(&plan, objects, opts.hashing, w, &mut nothing_deferred)
        .map_err(|e| written(e, "writing a message"))?;
    #[cfg(feature = "paranoid")]
    {
        let mut mirror = crate::paranoid::Mirror::new(w)
            .map_err(|e| tensor_core::Error::io("writing a message", e))?;
        emit_patched(
            &plan,
            objects,
            opts.hashing,
            &mut mirror,
            &mut nothing_deferred,
        )
        .map_err(|e| written(e, "writing a message"))?;
        let mut again = Vec::new();
        assemble(metadata, objects, opts, &mut again)?;
        mirror.check(&again)?;
    }
    Ok(plan.total)
}

/// [`write()`] for data that is produced one object at a time (decoded from another file,
/// say): `data(i)` gives object `i`'s bytes, whole, and only one object's bytes are held at
/// a time. Bytes `data` lends (`Cow::Borrowed`, e.g. from a memory-mapped file) are used as
/// they are. Bytes it produces (`Cow::Owned`) are encoded at once and dropped: compressed
/// payloads are kept (they are what the file holds), while raw ones are asked for again
/// when their frame is written — so `data` must give the same bytes each time it is asked
/// (the length is checked; the frame's hash is that of the bytes written). Pre-encoded
/// payloads ([`ObjectBytes::PreEncoded`]) are kept as they are given. Returns the bytes
/// written. [`write_from`] takes raw objects in runs, never whole.
pub fn write_streamed<'d, W: Write + Seek + ?Sized>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &mut dyn FnMut(usize) -> Result<ObjectBytes<'d>>,
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    write_from(metadata, descriptors, &mut Whole(data), opts, w)
}

/// [`write_streamed`] from an [`ObjectSource`]: a raw object whose source
/// [`streams`](ObjectSource::streams) is never whole in memory — its runs are read once to
/// find its NaN and ±Inf (and build their masks), and again as its frame is written, so
/// the source must give the same bytes each time. Returns the bytes written.
pub fn write_from<'d, W: Write + Seek + ?Sized>(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    data: &mut dyn ObjectSource<'d>,
    opts: &EncodeOptions,
    w: &mut W,
) -> Result<u64> {
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    let mut objects: Vec<EncodedObject<'d>> = Vec::with_capacity(descriptors.len());
    // Per object: whether it is handed over in runs, and if so, the dtype and byte order of
    // elements to zero in them (those its masks stand for).
    let mut in_runs: Vec<Option<Option<(Dtype, ByteOrder)>>> = vec![None; descriptors.len()];
    let mut any_pre_encoded = false;
    for (i, d) in descriptors.iter().enumerate() {
        if data.streams(i)
            && let Some(r) = prepare::streamed_object(d, i, opts, data)?
        {
            objects.push(r.object);
            in_runs[i] = Some(r.zero);
            continue;
        }
        match data.bytes(i)? {
            ObjectBytes::PreEncoded(p) => {
                any_pre_encoded = true;
                objects.push(pre_encoded_object(d, Cow::Owned(p.into_owned()), i)?);
            }
            ObjectBytes::Raw(Cow::Borrowed(b)) => {
                objects.push(encode_object(d, b, i, opts, true)?);
            }
            ObjectBytes::Raw(Cow::Owned(v)) => {
                let o = encode_object(d, &v, i, opts, true)?;
                // Raw and unchanged (still `v`): asked for again when its frame is written.
                // Encoded payloads are kept.
                let raw = matches!(o.payload, Cow::Borrowed(_));
                let (payload, deferred) = if raw {
                    (Cow::Owned(Vec::new()), Some(o.payload.len() as u64))
                } else {
                    (Cow::Owned(o.payload.into_owned()), None)
                };
                objects.push(EncodedObject {
                    descriptor: o.descriptor,
                    payload,
                    deferred,
                    masks: o.masks,
                    cbor: o.cbor,
                    check_finite: o.check_finite,
                });
            }
        }
    }
    let plan = plan(metadata, &objects, opts)?;
    let mut failed = None;
    let mut fetch = |i: usize, put: &mut dyn FnMut(&[u8]) -> std::io::Result<()>| {
        // An error of `put` (the writer's) is carried through `data` and handed back as it is.
        let mut put_failed = None;
        let got = match in_runs[i] {
            Some(zero) => {
                let mut copy = Vec::new();
                data.runs(i, &mut |run: &[u8]| {
                    let run = match zero {
                        Some((dtype, order)) if nonfinite::any(run, dtype, order) => {
                            copy.clear();
                            copy.extend_from_slice(run);
                            nonfinite::zero(&mut copy, dtype, order);
                            &copy[..]
                        }
                        _ => run,
                    };
                    put(run).map_err(|e| {
                        put_failed = Some(e);
                        Error::InvalidArgument("the writer failed".into())
                    })
                })
            }
            None => data.bytes(i).and_then(|b| match b {
                ObjectBytes::Raw(bytes) | ObjectBytes::PreEncoded(bytes) => {
                    put(&bytes).map_err(|e| {
                        put_failed = Some(e);
                        Error::InvalidArgument("the writer failed".into())
                    })
                }
            }),
        };
        match (got, put_failed) {
            (_, Some(e)) => Err(e),
            (Ok(()), None) => Ok(()),
            (Err(e), None) => {
                failed = Some(e);
                Err(std::io::Error::other(
                    "the data could not be produced again",
                ))
            }
        }
    };
    #[cfg(feature = "paranoid")]
    let mut w = crate::paranoid::Mirror::new(w)
        .map_err(|e| tensor_core::Error::io("writing a message", e))?;
    #[cfg(feature = "paranoid")]
    let w = &mut w;
    let result = emit_patched(&plan, &objects, opts.hashing, w, &mut fetch);
    if let Some(e) = failed {
        return Err(e);
    }
    result.map_err(|e| written(e, "writing a message"))?;
    #[cfg(not(feature = "paranoid"))]
    let _ = any_pre_encoded;
    #[cfg(feature = "paranoid")]
    if !any_pre_encoded {
        // What went to `w` must be the message the buffered encoder checks and writes
        // (all objects' data at once: the paranoid mode's price). Pre-encoded payloads
        // are framed as they are given: there is nothing to encode again.
        let owned = (0..descriptors.len())
            .map(|i| {
                data.bytes(i).map(|b| match b {
                    ObjectBytes::Raw(b) | ObjectBytes::PreEncoded(b) => b.into_owned(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let slices: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let again = serialize(metadata, descriptors, &slices, opts)?;
        w.check(&again)?;
    }
    Ok(plan.total)
}

/// What can be checked of a payload said to be encoded already, before it is framed as it
/// is: a payload with no stage at all is exactly the elements' bytes, and szip's block
/// offsets (what range reads seek by) belong to szip and only increase.
fn check_pre_encoded(d: &DataObjectDescriptor, payload: &[u8], i: usize) -> Result<()> {
    // What the payload and its descriptor say disagrees: a malformed object, whether a
    // caller made it or a file being migrated held it.
    let refuse = |what: String| Err(Error::encoding(Some(i), what));
    let offsets = d
        .param_u64s("szip_block_offsets")
        .map_err(|source| Error::Descriptor { object: i, source })?;
    if let Some(offsets) = offsets {
        if d.compression != "szip" {
            return refuse(format!(
                "szip_block_offsets provided but compression is {:?}, not \"szip\"",
                d.compression
            ));
        }
        if offsets.windows(2).any(|w| w[0] >= w[1]) {
            return refuse(format!(
                "szip_block_offsets must be strictly increasing: {offsets:?}"
            ));
        }
    }
    let raw =
        d.encoding == "none" && d.filter == "none" && d.compression == "none" && d.masks.is_none();
    if raw {
        let want = d
            .dtype
            .payload_bytes(d.element_count())
            .map_err(|e| Error::Metadata(format!("object {i}: {e}")))?;
        if payload.len() as u64 != want {
            return refuse(format!(
                "a payload of {} bytes does not match expected {want} payload bytes ({} {:?} stored as it is)",
                payload.len(),
                d.dtype,
                d.shape
            ));
        }
    }
    Ok(())
}

/// Object `i`, its payload already encoded by `d`'s pipeline: the descriptor checked, the
/// payload framed as it is (codecs this build cannot run too).
pub(crate) fn pre_encoded_object<'a>(
    d: &DataObjectDescriptor,
    payload: Cow<'a, [u8]>,
    i: usize,
) -> Result<EncodedObject<'a>> {
    d.validate()
        .map_err(|source| Error::Descriptor { object: i, source })?;
    match object::pipeline(d, i) {
        Ok(_) | Err(Error::Unsupported { .. }) => {}
        Err(e) => return Err(e),
    }
    check_pre_encoded(d, &payload, i)?;
    let mut d = d.clone();
    d.byte_order.get_or_insert(ByteOrder::NATIVE);
    let cbor = d.encode();
    Ok(EncodedObject {
        descriptor: d,
        payload,
        deferred: None,
        masks: Vec::new(),
        cbor,
        check_finite: None,
    })
}

/// Encodes one message from payloads that are already encoded: each descriptor must carry
/// every parameter its pipeline needs (and `szip_block_offsets` for range access). The
/// payloads (with any mask blobs the descriptor's `masks` points into) are framed and hashed
/// as they are; codecs this build cannot run are framed too.
pub fn serialize_pre_encoded(
    metadata: &GlobalMetadata,
    descriptors: &[DataObjectDescriptor],
    payloads: &[&[u8]],
    opts: &EncodeOptions,
) -> Result<Vec<u8>> {
    if descriptors.len() != payloads.len() {
        return Err(Error::InvalidArgument(format!(
            "{} descriptors but {} payloads",
            descriptors.len(),
            payloads.len()
        )));
    }
    check_caller_metadata(metadata, Some(descriptors.len()))?;
    let objects: Vec<EncodedObject<'_>> = descriptors
        .iter()
        .zip(payloads)
        .enumerate()
        .map(|(i, (d, p))| pre_encoded_object(d, Cow::Borrowed(*p), i))
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    assemble(metadata, &objects, opts, &mut out)?;
    Ok(out)
}

/// The message `m` again with `metadata`, written to `w`: every object's descriptor and
/// encoded payload (mask blobs included) framed as they are and hashed, the provenance `m`
/// records kept. What an edit of a file's metadata, object names or attributes writes. The
/// encoder's own keys (`_reserved_`, at the top and in each `base` entry) are written anew
/// whatever `metadata` holds; `metadata.base` must have one entry per object.
///
/// The payloads are written from where they lie in `m` (a memory-mapped file's, say) while
/// they are hashed, never gathered in memory, so a message of any size takes the memory of
/// its header; the header hash frame is filled in at the end, so `w` must be able to seek
/// (as for [`write()`]). The message starts where `w` stands, and `w` is left at its end.
/// Returns the bytes written; on an error, what went to `w` is to be discarded.
pub fn reframe_to<W: Write + Seek + ?Sized>(
    m: &crate::Message<'_>,
    metadata: &GlobalMetadata,
    w: &mut W,
) -> Result<u64> {
    let frames = (0..m.len())
        .map(|i| m.object(i))
        .collect::<Result<Vec<_>>>()?;
    frame_objects_to(&frames, m, metadata, true, w)
}

/// One message of objects taken from other messages (of one file or several), written to
/// `w`: each object's descriptor and encoded payload framed as they are and hashed anew —
/// after its stored hash, where it has one, is checked, so that damage is never framed as
/// sound. `metadata.base` has one entry per object, in `objects`' order; the encoder's keys
/// are written anew, with the provenance the first object's message records. The objects are
/// hashed when any of them was (objects that came without hashes leave without them). What
/// `tensorkit reshuffle` writes: messages regrouped, nothing decoded.
pub fn regroup_to<W: Write + Seek + ?Sized>(
    objects: &[(&crate::Message<'_>, usize)],
    metadata: &GlobalMetadata,
    w: &mut W,
) -> Result<u64> {
    let Some(&(first, _)) = objects.first() else {
        return Err(Error::InvalidArgument(
            "a regrouped message needs at least one object".into(),
        ));
    };
    let frames = objects
        .iter()
        .map(|&(m, i)| {
            let o = m.object(i)?;
            if o.stored_hash().is_some() {
                o.verify_hash()?;
            }
            Ok(o)
        })
        .collect::<Result<Vec<_>>>()?;
    let hashing = frames.iter().any(|o| o.stored_hash().is_some());
    frame_objects_to(&frames, first, metadata, hashing, w)
}

/// `frames` framed as they are under `metadata` (the encoder's keys removed and written
/// anew), with the provenance `recorded_in` records, hashed or not.
fn frame_objects_to<W: Write + Seek + ?Sized>(
    frames: &[crate::ObjectFrame<'_>],
    recorded_in: &crate::Message<'_>,
    metadata: &GlobalMetadata,
    hashing: bool,
    w: &mut W,
) -> Result<u64> {
    let mut meta = metadata.clone();
    for entry in &mut meta.base {
        entry.remove(crate::metadata::RESERVED);
    }
    let provenance = crate::Provenance::recorded(&recorded_in.metadata()?.reserved)
        .unwrap_or_else(crate::Provenance::now);
    meta.reserved = crate::Map::new();
    check_caller_metadata(&meta, Some(frames.len()))?;
    let objects = frames
        .iter()
        .enumerate()
        .map(|(i, o)| pre_encoded_object(o.descriptor(), Cow::Borrowed(o.payload_region()), i))
        .collect::<Result<Vec<_>>>()?;
    let opts = EncodeOptions {
        hashing,
        provenance,
        ..EncodeOptions::default()
    };
    emit_to(&meta, &objects, &opts, w)
}
