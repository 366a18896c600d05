//! Wire version 2, as tensogram 0.14 to 0.16 wrote it: read, every hash it carries checked,
//! and migrated to version 3 (see docs/formats/tensogram.md, "Wire version 2").
//!
//! Version 2 differs from 3 in its framing alone: a 16-byte postamble, frames that end with
//! `ENDF` and no hash slot (data frames with `cbor_offset` + `ENDF`), data frames of type 4,
//! the per-object hash inside the descriptor (`hash: {type, value}`, over the encoded
//! payload), hash and index frames with `hash_type` and `object_count`, and a `version` key in
//! the global metadata. Descriptors, pipelines and payloads are the same, so migrating
//! re-frames each object's payload untouched: the values decode bit for bit as before.
//!
//! ```
//! # fn main() -> Result<(), tensor_frame::Error> {
//! # let v3 = tensor_frame::serialize(&Default::default(), &[], &[], &Default::default())?;
//! // A file of version 2 messages (or a mix of 2 and 3) becomes version 3 bytes.
//! let bytes: &[u8] = &v3;
//! if tensor_frame::v2::holds_v2(bytes) {
//!     let migrated = tensor_frame::v2::migrate(bytes, &Default::default())?;
//!     println!("{} v2 messages, {} hashes checked", migrated.v2_messages, migrated.hashes_verified);
//! }
//! # Ok(())
//! # }
//! ```

use crate::encode::{EncodeOptions, serialize_pre_encoded};
use crate::error::{Error, Result};
use crate::metadata::{GlobalMetadata, Map, RESERVED};
use crate::provenance::Provenance;
use crate::wire::{
    CBOR_AFTER_PAYLOAD, END_MAGIC, FRAME_END, FRAME_HEADER_LEN, MAGIC, PREAMBLE_LEN, be_u16,
    be_u64, flags::PRECEDER_METADATA,
};
use tensor_core::Limits;
use tensor_core::cbor::{Decoder, Value};
use tensor_descriptor::DataObjectDescriptor;

/// The version number in a version 2 preamble.
pub const VERSION: u16 = 2;
/// Bytes in a version 2 postamble: `first_footer_offset` and the end magic.
pub const POSTAMBLE_LEN: u64 = 16;
/// The smallest frame: a header and `ENDF`.
const MIN_FRAME: u64 = FRAME_HEADER_LEN + 4;
/// The smallest data frame: a header, `cbor_offset` and `ENDF`.
const MIN_DATA_FRAME: u64 = FRAME_HEADER_LEN + 12;

/// Whether `bytes` start with a version 2 message.
#[must_use]
pub fn is_v2(bytes: &[u8]) -> bool {
    bytes.len() >= 10 && bytes[..8] == *MAGIC && u16::from_be_bytes([bytes[8], bytes[9]]) == VERSION
}

/// Whether any message of the file `bytes` is a version 2 message. Messages are followed
/// by the lengths their preambles give (a streamed version 3 message, whose preamble gives
/// none, by opening it); a file that cannot be followed to its end is left to the version 3
/// reader to explain. Costs a few bytes per message.
#[must_use]
pub fn holds_v2(bytes: &[u8]) -> bool {
    let mut pos = 0usize;
    while bytes.len() - pos >= PREAMBLE_LEN as usize {
        let rest = &bytes[pos..];
        if rest[..8] != *MAGIC {
            return false;
        }
        if is_v2(rest) {
            return true;
        }
        let total = usize::try_from(be_u64(rest, 16)).unwrap_or(usize::MAX);
        let len = match total {
            0 => match crate::Message::open(rest) {
                Ok(m) => m.bytes().len(),
                Err(_) => return false,
            },
            n if n <= rest.len() => n,
            _ => return false,
        };
        if len == 0 {
            return false;
        }
        pos += len;
    }
    false
}

/// An object's hash as a version 2 descriptor records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredHash {
    /// The algorithm's name (`xxh3`, the only one version 2 writers use).
    pub algorithm: String,
    /// The digest as hex text.
    pub value: String,
}

/// One data object of a version 2 message.
#[derive(Clone, Debug)]
pub struct Object<'a> {
    /// The descriptor, without its `hash` key.
    pub descriptor: DataObjectDescriptor,
    /// The encoded payload.
    pub payload: &'a [u8],
    /// The hash the descriptor recorded, if any.
    pub hash: Option<StoredHash>,
    /// The frame's offset from the message start.
    pub offset: u64,
}

/// A version 2 message, parsed and checked.
#[derive(Clone, Debug)]
pub struct Message<'a> {
    /// The global metadata with every preceder merged into its object's `base` entry (the
    /// preceder's keys win), `base` padded to one entry per object, and the `version` key
    /// dropped.
    pub metadata: GlobalMetadata,
    /// The objects, in order.
    pub objects: Vec<Object<'a>>,
    /// The message's bytes.
    pub bytes: &'a [u8],
    /// Whether the preamble left the length out (a streamed message).
    pub streamed: bool,
    /// The aggregate hashes the hash frame lists (hex text), when there is one.
    pub hash_list: Option<Vec<String>>,
    /// What a conforming writer would not have produced but the reference reads anyway.
    pub notes: Vec<String>,
}

/// Where the message at the start of `bytes` ends: from the preamble's length, or, for a
/// streamed message, by walking its frames to the postamble.
fn message_end(bytes: &[u8], total: u64) -> Result<usize> {
    let len = bytes.len() as u64;
    if total != 0 {
        if total < PREAMBLE_LEN + POSTAMBLE_LEN || total > len {
            return Err(Error::framing(
                16,
                format!("the preamble gives the message {total} bytes; {len} are there"),
            ));
        }
        let end = usize::try_from(total).map_err(|_| Error::framing(16, "length overflows"))?;
        if bytes[end - 8..end] != *END_MAGIC {
            return Err(Error::framing(
                total - 8,
                "the message does not end with 39277777",
            ));
        }
        return Ok(end);
    }
    let mut pos = PREAMBLE_LEN;
    loop {
        // The postamble may follow the last frame directly, unpadded.
        if pos + POSTAMBLE_LEN <= len && is_postamble(bytes, pos) {
            return Ok(pos as usize + POSTAMBLE_LEN as usize);
        }
        pos = skip_padding(bytes, pos, len)?;
        if pos + POSTAMBLE_LEN > len {
            return Err(Error::framing(
                pos,
                "the streamed message ends before its postamble",
            ));
        }
        let at = pos as usize;
        if bytes[at..at + 2] == *b"FR" {
            let flen = be_u64(bytes, at + 8);
            if flen < MIN_FRAME || flen > len - pos {
                return Err(Error::framing(
                    pos,
                    format!("a frame of {flen} bytes does not fit"),
                ));
            }
            pos += flen;
        } else if is_postamble(bytes, pos) {
            return Ok(at + 16);
        } else {
            return Err(Error::framing(pos, "neither a frame nor the postamble"));
        }
    }
}

/// Whether the 16 bytes at `pos` (which must be there) are a postamble: an offset, then
/// the end magic.
fn is_postamble(bytes: &[u8], pos: u64) -> bool {
    let at = pos as usize;
    bytes[at + 8..at + 16] == *END_MAGIC
}

/// `pos` moved past the zero bytes that pad a frame to the next multiple of 8, never past
/// `end`: tensogram 0.14–0.16 write a buffered message's postamble straight after its last
/// frame, unpadded, and the postamble's first bytes (the high bytes of an offset) are zeros
/// that are not padding.
fn skip_padding(bytes: &[u8], mut pos: u64, end: u64) -> Result<u64> {
    let aligned = pos.next_multiple_of(8).min(end);
    while pos < aligned && bytes[pos as usize] == 0 {
        pos += 1;
    }
    if pos < aligned && bytes[pos as usize..].first() != Some(&b'F') {
        return Err(Error::framing(pos, "non-zero bytes between frames"));
    }
    Ok(pos)
}

/// Decodes one CBOR item that fills `bytes`, within the limits.
fn cbor(bytes: &[u8], what: &str, limits: &Limits) -> Result<Value> {
    limits.check_header_bytes(bytes.len() as u64)?;
    Ok(crate::metadata::decode_cbor(bytes, what)?.0)
}

/// A version 2 metadata frame's map as version 3 metadata: without `version`.
fn metadata(bytes: &[u8], limits: &Limits) -> Result<GlobalMetadata> {
    let v = cbor(bytes, "global metadata", limits)?;
    let Value::Map(entries) = v else {
        return Err(Error::Metadata("global metadata: not a map".into()));
    };
    let kept: Vec<(Value, Value)> = entries
        .into_iter()
        .filter(|(k, _)| k.as_text() != Some("version"))
        .collect();
    GlobalMetadata::from_value(Value::Map(kept))
}

/// The `offsets` of an index frame.
fn index_offsets(bytes: &[u8], limits: &Limits) -> Result<Vec<u64>> {
    let v = cbor(bytes, "index frame", limits)?;
    let offsets = v
        .get("offsets")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Metadata("index frame: `offsets` must be an array".into()))?;
    offsets
        .iter()
        .map(|o| {
            o.as_u64()
                .ok_or_else(|| Error::Metadata("index frame: an offset is not an integer".into()))
        })
        .collect()
}

/// The `hashes` of a hash frame (with its `hash_type`).
fn hash_list(bytes: &[u8], limits: &Limits) -> Result<(String, Vec<String>)> {
    let v = cbor(bytes, "hash frame", limits)?;
    let algorithm = v
        .get("hash_type")
        .and_then(Value::as_text)
        .ok_or_else(|| Error::Metadata("hash frame: `hash_type` must be text".into()))?;
    let hashes = v
        .get("hashes")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Metadata("hash frame: `hashes` must be an array".into()))?
        .iter()
        .map(|h| {
            h.as_text()
                .map(str::to_owned)
                .ok_or_else(|| Error::Metadata("hash frame: a hash is not text".into()))
        })
        .collect::<Result<Vec<String>>>()?;
    Ok((algorithm.to_owned(), hashes))
}

/// A data frame's descriptor and payload.
fn data_object<'a>(
    frame: &'a [u8],
    flags: u16,
    offset: u64,
    index: usize,
    limits: &Limits,
) -> Result<Object<'a>> {
    let footer = frame.len() - 12;
    let cbor_offset = be_u64(frame, footer);
    if cbor_offset < FRAME_HEADER_LEN || cbor_offset > footer as u64 {
        return Err(Error::framing(
            offset + footer as u64,
            format!("object {index}: cbor_offset {cbor_offset} lies outside [16, {footer}]"),
        ));
    }
    let at = cbor_offset as usize;
    let after = flags & CBOR_AFTER_PAYLOAD != 0;
    let region = &frame[at..footer];
    let mut d = Decoder::new(region);
    let value = d
        .value()
        .map_err(|e| Error::Metadata(format!("object {index}: descriptor: {e}")))?;
    let used = region.len() - d.remaining();
    if after && d.remaining() != 0 {
        return Err(Error::Metadata(format!(
            "object {index}: {} bytes follow the descriptor",
            d.remaining()
        )));
    }
    limits.check_header_bytes(used as u64)?;
    let payload = if after {
        &frame[FRAME_HEADER_LEN as usize..at]
    } else {
        &region[used..]
    };
    let packed = value.get("encoding").and_then(Value::as_text) == Some("simple_packing");
    let Value::Map(entries) = value else {
        return Err(Error::Metadata(format!(
            "object {index}: the descriptor is not a map"
        )));
    };
    let mut hash = None;
    let mut kept = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        match k.as_text() {
            Some("hash") => {
                let get = |k: &str| v.get(k).and_then(Value::as_text).map(str::to_owned);
                let (Some(algorithm), Some(value)) = (get("type"), get("value")) else {
                    return Err(Error::Metadata(format!(
                        "object {index}: `hash` must be a map of text `type` and `value`"
                    )));
                };
                hash = Some(StoredHash { algorithm, value });
            }
            // Version 3 prefixes simple packing's parameters with `sp_`.
            Some(
                name @ ("reference_value"
                | "binary_scale_factor"
                | "decimal_scale_factor"
                | "bits_per_value"),
            ) if packed => kept.push((Value::Text(format!("sp_{name}")), v)),
            _ => kept.push((k, v)),
        }
    }
    let descriptor =
        DataObjectDescriptor::from_value(Value::Map(kept)).map_err(|source| Error::Descriptor {
            object: index,
            source,
        })?;
    Ok(Object {
        descriptor,
        payload,
        hash,
        offset,
    })
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Header,
    Body,
    Footer,
}

impl<'a> Message<'a> {
    /// Parses the version 2 message at the start of `bytes` (which may continue with more
    /// messages): every frame's bounds, `ENDF`, type and order, the index against the frames
    /// found, preceders, and each descriptor. Hashes are checked by [`verify`](Self::verify).
    pub fn parse(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        if !is_v2(bytes) || bytes.len() < (PREAMBLE_LEN + POSTAMBLE_LEN) as usize {
            return Err(Error::framing(0, "not a version 2 Tensogram message"));
        }
        let message_flags = be_u16(bytes, 10);
        let total = be_u64(bytes, 16);
        let end = message_end(bytes, total)?;
        let bytes = &bytes[..end];
        let body_end = end as u64 - POSTAMBLE_LEN;
        let first_footer = be_u64(bytes, body_end as usize);
        let mut notes = Vec::new();
        if first_footer < PREAMBLE_LEN || first_footer > body_end {
            return Err(Error::framing(
                body_end,
                format!("first_footer_offset {first_footer} lies outside the message"),
            ));
        }
        let mut phase = Phase::Header;
        let mut meta: Option<GlobalMetadata> = None;
        let mut index: Option<Vec<u64>> = None;
        let mut hashes: Option<(String, Vec<String>)> = None;
        let mut objects = Vec::new();
        let mut preceders: Vec<(usize, Map)> = Vec::new();
        let mut pending: Option<Map> = None;
        let mut pos = PREAMBLE_LEN;
        loop {
            pos = skip_padding(bytes, pos, body_end)?;
            if pos >= body_end {
                break;
            }
            let at = pos as usize;
            if bytes.len() - at < FRAME_HEADER_LEN as usize || bytes[at..at + 2] != *b"FR" {
                return Err(Error::framing(pos, "expected a frame (FR)"));
            }
            let kind = be_u16(bytes, at + 2);
            let frame_flags = be_u16(bytes, at + 6);
            let flen = be_u64(bytes, at + 8);
            let min = if kind == 4 { MIN_DATA_FRAME } else { MIN_FRAME };
            if flen < min || flen > body_end - pos {
                return Err(Error::framing(
                    pos,
                    format!(
                        "a frame of type {kind} claims {flen} bytes; at least {min} and at most {} fit",
                        body_end - pos
                    ),
                ));
            }
            let frame = &bytes[at..at + flen as usize];
            if frame[frame.len() - 4..] != *FRAME_END {
                return Err(Error::framing(
                    pos + flen - 4,
                    "the frame does not end with ENDF",
                ));
            }
            let body = &frame[FRAME_HEADER_LEN as usize..frame.len() - 4];
            let this = match kind {
                1..=3 => Phase::Header,
                4 | 8 => Phase::Body,
                5..=7 => Phase::Footer,
                other => return Err(Error::framing(pos, format!("unknown frame type {other}"))),
            };
            if this < phase {
                return Err(Error::framing(
                    pos,
                    format!("a frame of type {kind} after the frames of a later section"),
                ));
            }
            if pending.is_some() && kind != 4 {
                return Err(Error::framing(
                    pos,
                    "a preceder metadata frame is not followed by a data object",
                ));
            }
            if this == Phase::Footer && phase != Phase::Footer && pos != first_footer {
                return Err(Error::framing(
                    body_end,
                    format!(
                        "first_footer_offset {first_footer} does not point at the first footer \
                         frame, at {pos}"
                    ),
                ));
            }
            phase = this;
            match kind {
                1 | 7 => meta = Some(metadata(body, limits)?),
                2 | 6 => index = Some(index_offsets(body, limits)?),
                3 | 5 => hashes = Some(hash_list(body, limits)?),
                8 => {
                    let mut p = metadata(body, limits)?;
                    if p.base.len() != 1 {
                        return Err(Error::Metadata(format!(
                            "a preceder's base holds {} entries, not 1",
                            p.base.len()
                        )));
                    }
                    let mut entry = p.base.remove(0);
                    entry.remove(RESERVED);
                    pending = Some(entry);
                }
                _ => {
                    limits.check_tensor_count(objects.len() as u64 + 1)?;
                    let o = data_object(frame, frame_flags, pos, objects.len(), limits)?;
                    if let Some(p) = pending.take() {
                        preceders.push((objects.len(), p));
                    }
                    objects.push(o);
                }
            }
            pos += flen;
        }
        if pending.is_some() {
            return Err(Error::framing(
                pos,
                "a preceder metadata frame ends the data objects",
            ));
        }
        if phase != Phase::Footer && first_footer != body_end {
            return Err(Error::framing(
                body_end,
                format!(
                    "first_footer_offset {first_footer} points inside the message, which has \
                     no footer frames (it should be the postamble's offset, {body_end})"
                ),
            ));
        }
        if message_flags & PRECEDER_METADATA != 0 && preceders.is_empty() {
            notes.push(
                "the preamble announces preceder metadata frames, but there are none \
                 (tensogram 0.16's streaming encoder sets the flag regardless)"
                    .to_owned(),
            );
        }
        let mut metadata =
            meta.ok_or_else(|| Error::Metadata("the message has no metadata frame".into()))?;
        if metadata.base.len() > objects.len() {
            return Err(Error::Metadata(format!(
                "base has {} entries for {} objects",
                metadata.base.len(),
                objects.len()
            )));
        }
        metadata.base.resize_with(objects.len(), Map::new);
        for (i, p) in preceders {
            metadata.base[i].extend(p);
        }
        if let Some(offsets) = &index {
            let found: Vec<u64> = objects.iter().map(|o| o.offset).collect();
            if *offsets != found {
                return Err(Error::framing(
                    0,
                    format!(
                        "the index gives {} objects at {:?}; the frames hold {} at {:?}",
                        offsets.len(),
                        &offsets[..offsets.len().min(4)],
                        found.len(),
                        &found[..found.len().min(4)]
                    ),
                ));
            }
        }
        let hash_list = match hashes {
            Some((algorithm, list)) => {
                if list.len() != objects.len() {
                    return Err(Error::Metadata(format!(
                        "the hash frame lists {} hashes for {} objects",
                        list.len(),
                        objects.len()
                    )));
                }
                if algorithm == "xxh3" {
                    Some(list)
                } else {
                    notes.push(format!("hash frame algorithm {algorithm:?} is not checked"));
                    None
                }
            }
            None => None,
        };
        Ok(Message {
            metadata,
            objects,
            bytes,
            streamed: total == 0,
            hash_list,
            notes,
        })
    }

    /// Checks every object's hash (the descriptor's, over the encoded payload) and the
    /// hash frame's; returns how many hashes matched. A hash of an algorithm other than
    /// `xxh3` is not checked, as the reference does not check it either.
    pub fn verify(&self) -> Result<usize> {
        let mut checked = 0;
        for (i, o) in self.objects.iter().enumerate() {
            let actual = crate::hash::xxh3(o.payload);
            let listed = self.hash_list.as_ref().map(|l| l[i].as_str());
            let stored = o
                .hash
                .as_ref()
                .filter(|h| h.algorithm == "xxh3")
                .map(|h| h.value.as_str());
            for (value, frame) in [(stored, "data object"), (listed, "hash")] {
                let Some(value) = value else { continue };
                let expected = tensor_core::hex::decode_u64(value.as_bytes()).ok_or_else(|| {
                    Error::Metadata(format!("object {i}: hash {value:?} is not 16 hex digits"))
                })?;
                if expected != actual {
                    return Err(Error::HashMismatch {
                        frame,
                        offset: o.offset,
                        object: Some(i),
                        expected,
                        actual,
                    });
                }
                checked += 1;
            }
        }
        Ok(checked)
    }

    /// The same message in wire version 3: the objects' payloads and descriptors as they
    /// are (the `hash` key aside: version 3 hashes every frame), the metadata as it is, the
    /// provenance the version 2 writer recorded kept; index and hashes in the header.
    pub fn to_v3(&self) -> Result<Vec<u8>> {
        let mut meta = self.metadata.clone();
        for entry in &mut meta.base {
            entry.remove(RESERVED);
        }
        let provenance = Provenance::recorded(&meta.reserved).unwrap_or_else(Provenance::now);
        meta.reserved = Map::new();
        let descriptors: Vec<DataObjectDescriptor> =
            self.objects.iter().map(|o| o.descriptor.clone()).collect();
        let payloads: Vec<&[u8]> = self.objects.iter().map(|o| o.payload).collect();
        let opts = EncodeOptions {
            provenance,
            ..EncodeOptions::default()
        };
        serialize_pre_encoded(&meta, &descriptors, &payloads, &opts)
    }
}

/// What goes into a migrated file must be what version 3 readers accept, whether it was
/// migrated or copied: the message validated to the metadata level (every frame's bounds
/// and markers, every object's pipeline, stored size and limits). Damage is refused, never
/// carried into a file that looks freshly written.
fn sound_v3(message: &[u8], level: crate::Level, limits: &Limits) -> Result<()> {
    let report = crate::validate(
        message,
        crate::ValidateOptions {
            level,
            canonical: false,
        },
        limits,
    );
    // A codec this build lacks is a warning there, not an error.
    match report
        .issues
        .iter()
        .find(|i| i.severity == crate::Severity::Error)
    {
        Some(i) => Err(Error::framing(i.offset.unwrap_or(0), i.detail.clone())),
        None => Ok(()),
    }
}

/// A file migrated to wire version 3, and what was found on the way.
#[derive(Clone, Debug, Default)]
pub struct Migration {
    /// The file in wire version 3: version 2 messages re-framed, version 3 ones as they were.
    pub bytes: Vec<u8>,
    /// Version 2 messages migrated.
    pub v2_messages: usize,
    /// Version 3 messages copied as they were.
    pub v3_messages: usize,
    /// Objects in the version 2 messages.
    pub v2_objects: usize,
    /// Version 2 hashes checked (descriptor and hash-frame hashes).
    pub hashes_verified: usize,
    /// What the reference reads but a conforming writer would not produce, by message.
    pub notes: Vec<String>,
}

/// Migrates the file `bytes` — version 2 messages, possibly mixed with version 3 ones — to
/// wire version 3, checking every version 2 hash on the way. Nothing is decoded: payloads
/// move as they are, so the values are bit for bit the same.
pub fn migrate(bytes: &[u8], limits: &Limits) -> Result<Migration> {
    limits.check_total_bytes(bytes.len() as u64)?;
    let mut out = Migration::default();
    tensor_core::buffer::try_reserve(&mut out.bytes, bytes.len(), "a migrated file")?;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let at = |e: Error| match e {
            Error::Framing { offset, reason } => Error::Framing {
                offset,
                reason: format!("message at file offset {pos}: {reason}"),
            },
            other => other,
        };
        if is_v2(rest) {
            let m = Message::parse(rest, limits).map_err(at)?;
            out.hashes_verified += m.verify().map_err(at)?;
            let v3 = m.to_v3()?;
            // Every object decoded (in bounded runs) against its descriptor: a version 2
            // descriptor is not covered by the payload hashes, and an encoded payload's size
            // does not say its shape or dtype.
            sound_v3(&v3, crate::Level::Full, limits).map_err(at)?;
            out.bytes.extend_from_slice(&v3);
            out.v2_messages += 1;
            out.v2_objects += m.objects.len();
            out.notes.extend(
                m.notes
                    .iter()
                    .map(|n| format!("message at offset {pos}: {n}")),
            );
            pos += m.bytes.len();
        } else {
            let m = crate::Message::open_with(rest, &limits.into()).map_err(at)?;
            sound_v3(m.bytes(), crate::Level::Default, limits).map_err(at)?;
            out.bytes.extend_from_slice(m.bytes());
            out.v3_messages += 1;
            pos += m.bytes().len();
        }
    }
    Ok(out)
}
