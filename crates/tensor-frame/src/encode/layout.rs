//! Laying a message out: frame sizes, the index sized to a fixed point, then the bytes.

use super::completion::complete_metadata;
use super::options::{EncodeOptions, HashFrames, IndexFrame};
use crate::error::{Error, Result};
use crate::frame_out::{EncodedObject, FiniteCheck, FrameOut, NonFinite, frame, write_frame};
use crate::metadata::{GlobalMetadata, HashList, Index};
use crate::wire::{
    self, FRAME_HEADER_LEN, FrameType, POSTAMBLE_LEN, PREAMBLE_LEN, Postamble, Preamble, VERSION,
    flags,
};
use std::io::{Seek, SeekFrom, Write};
use tensor_core::checked;
use tensor_descriptor::DataObjectDescriptor;

/// Bytes a frame with a `body_len`-byte body takes, padding included, when it starts aligned.
pub(super) fn padded_len(kind: FrameType, body_len: u64) -> u64 {
    let t = FRAME_HEADER_LEN + body_len + kind.footer_len();
    t + wire::padding(t)
}

/// The layout of a buffered message, decided before anything is written.
#[allow(clippy::struct_excessive_bools)] // One switch per optional frame.
pub(super) struct Plan {
    pub(super) meta_cbor: Vec<u8>,
    pub(super) preceders: Vec<Option<Vec<u8>>>,
    pub(super) index_cbor: Vec<u8>,
    pub(super) index_header: bool,
    pub(super) index_footer: bool,
    pub(super) hash_header: bool,
    pub(super) hash_footer: bool,
    pub(super) flags: u16,
    pub(super) total: u64,
    pub(super) first_footer: u64,
    /// Where the header hash frame starts (when there is one).
    pub(super) header_hash_at: u64,
}

/// Lays out a buffered message.
///
/// The index's integers depend on where the objects start, which depends on the index's
/// size: the layout is iterated until it settles. The hash list has the same size whatever
/// the hashes are, so its frame can be placed before they are known.
pub(super) fn plan(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject<'_>],
    opts: &EncodeOptions,
) -> Result<Plan> {
    if matches!(
        opts.hash_frames,
        HashFrames::Header | HashFrames::Both | HashFrames::Footer
    ) && !opts.hashing
    {
        return Err(Error::InvalidArgument(
            "an aggregate hash frame needs hashing on".into(),
        ));
    }
    let descs: Vec<&DataObjectDescriptor> = objects.iter().map(|o| &o.descriptor).collect();
    let full = complete_metadata(metadata, &descs, &opts.provenance, !opts.preceders);
    let meta_cbor = full.encode();
    let preceders: Vec<Option<Vec<u8>>> = (0..objects.len())
        .map(|i| {
            let entry = metadata.base.get(i).filter(|m| !m.is_empty());
            (opts.preceders && entry.is_some()).then(|| {
                GlobalMetadata {
                    base: vec![entry.cloned().unwrap_or_default()],
                    ..GlobalMetadata::default()
                }
                .encode()
            })
        })
        .collect();
    let some = !objects.is_empty();
    let (hash_header, hash_footer) = match (opts.hashing && some, opts.hash_frames) {
        (false, _) | (true, HashFrames::None) => (false, false),
        (true, HashFrames::Auto | HashFrames::Header) => (true, false),
        (true, HashFrames::Footer) => (false, true),
        (true, HashFrames::Both) => (true, true),
    };
    let hash_len = HashList::encode_xxh3(&vec![0; objects.len()]).len() as u64;
    let index_header = some && opts.index == IndexFrame::Header;
    let index_footer = some && opts.index == IndexFrame::Footer;
    let data_len =
        |o: &EncodedObject<'_>| FRAME_HEADER_LEN + o.body_len() + FrameType::NTensor.footer_len();
    let mut index_len = 0u64;
    let (index, end_of_body, header_hash_at) = loop {
        let mut pos = PREAMBLE_LEN + padded_len(FrameType::HeaderMetadata, meta_cbor.len() as u64);
        if index_header {
            pos += padded_len(FrameType::HeaderIndex, index_len);
        }
        let header_hash_at = pos;
        if hash_header {
            pos += padded_len(FrameType::HeaderHash, hash_len);
        }
        let mut ix = Index::default();
        for (o, pre) in objects.iter().zip(&preceders) {
            if let Some(p) = pre {
                pos += padded_len(FrameType::PrecederMetadata, p.len() as u64);
            }
            ix.offsets.push(pos);
            ix.lengths.push(data_len(o));
            pos = checked::add(
                pos,
                padded_len(FrameType::NTensor, o.body_len()),
                "message size",
            )?;
        }
        let len = ix.encode().len() as u64;
        if !index_header || len == index_len {
            break (ix, pos, header_hash_at);
        }
        index_len = len;
    };
    let index_cbor = index.encode();
    let mut total = end_of_body + POSTAMBLE_LEN;
    if hash_footer {
        total += padded_len(FrameType::FooterHash, hash_len);
    }
    if index_footer {
        total += padded_len(FrameType::FooterIndex, index_cbor.len() as u64);
    }
    let mut fl = flags::HEADER_METADATA;
    for (on, flag) in [
        (index_header, flags::HEADER_INDEX),
        (hash_header, flags::HEADER_HASHES),
        (
            preceders.iter().any(Option::is_some),
            flags::PRECEDER_METADATA,
        ),
        (hash_footer, flags::FOOTER_HASHES),
        (index_footer, flags::FOOTER_INDEX),
        (opts.hashing, flags::HASHES_PRESENT),
    ] {
        if on {
            fl |= flag;
        }
    }
    Ok(Plan {
        meta_cbor,
        preceders,
        index_cbor,
        index_header,
        index_footer,
        hash_header,
        hash_footer,
        flags: fl,
        total,
        first_footer: end_of_body,
        header_hash_at,
    })
}

/// Hands a deferred object's payload to the writer: `fetch(i, put)` calls `put` with object
/// `i`'s bytes.
type Fetch<'f> =
    dyn FnMut(usize, &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> + 'f;

/// For messages without deferred payloads.
pub(super) fn nothing_deferred(
    i: usize,
    _: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    Err(std::io::Error::other(format!("object {i} has no payload")))
}

/// A NaN or ±Inf found in object `i` while it was written, as the encoding error it is
/// (carried through the writer's `io::Error` to [`written`]); any other error as it is.
fn refused(e: std::io::Error, i: usize) -> std::io::Error {
    match e.downcast::<NonFinite>() {
        Ok(found) => std::io::Error::other(Error::encoding(Some(i), found.to_string())),
        Err(e) => e,
    }
}

/// The error of a write: one of ours carried through `io::Error` ([`refused`]), or the
/// writer's own, said to have happened while `doing`.
pub(super) fn written(e: std::io::Error, doing: &'static str) -> Error {
    match e.downcast::<Error>() {
        Ok(ours) => ours,
        Err(e) => tensor_core::Error::io(doing, e).into(),
    }
}

/// Writes a planned message to `w`, with zeros in the header hash frame, asking `fetch` for
/// deferred payloads. Returns the data frames' hashes, for [`emit_patched`] to list.
fn emit<W: Write + ?Sized>(
    plan: &Plan,
    objects: &[EncodedObject<'_>],
    hashing: bool,
    w: &mut W,
    fetch: &mut Fetch<'_>,
) -> std::io::Result<Vec<u64>> {
    let mut at = 0u64;
    w.write_all(
        &Preamble {
            version: VERSION,
            flags: plan.flags,
            total_length: plan.total,
        }
        .to_bytes(),
    )?;
    at += PREAMBLE_LEN;
    let frame_to = |w: &mut W, at: &mut u64, kind, parts: &[&[u8]], cbor: Option<u64>| {
        let (n, h) = write_frame(w, *at, kind, parts, hashing, cbor, None)?;
        *at += n;
        Ok::<u64, std::io::Error>(h)
    };
    frame_to(
        w,
        &mut at,
        FrameType::HeaderMetadata,
        &[&plan.meta_cbor],
        None,
    )?;
    if plan.index_header {
        frame_to(
            w,
            &mut at,
            FrameType::HeaderIndex,
            &[&plan.index_cbor],
            None,
        )?;
    }
    if plan.hash_header {
        frame_to(
            w,
            &mut at,
            FrameType::HeaderHash,
            &[&HashList::encode_xxh3(&vec![0; objects.len()])],
            None,
        )?;
    }
    let mut hashes = Vec::with_capacity(objects.len());
    for (i, (o, pre)) in objects.iter().zip(&plan.preceders).enumerate() {
        if let Some(p) = pre {
            frame_to(w, &mut at, FrameType::PrecederMetadata, &[p], None)?;
        }
        // The payload held, or handed over in runs (deferred): the frame is written as
        // they come.
        let len = o.payload_len();
        let mut out = FrameOut::begin(
            w,
            at,
            FrameType::NTensor,
            o.body_len(),
            hashing,
            Some(o.cbor_offset()),
        )?;
        let mut check = o.check_finite.map(FiniteCheck::new);
        let mut given = 0u64;
        let mut put = |run: &[u8]| {
            given += run.len() as u64;
            if given > len {
                return Err(std::io::Error::other(format!(
                    "object {i}: more than {len} payload bytes the second time, {len} the first"
                )));
            }
            out.part(w, run, check.as_mut()).map_err(|e| refused(e, i))
        };
        match o.deferred {
            Some(_) => fetch(i, &mut put)?,
            None => put(&o.payload)?,
        }
        if given != len {
            return Err(std::io::Error::other(format!(
                "object {i}: {given} payload bytes the second time, {len} the first"
            )));
        }
        out.part(w, &o.masks, None)?;
        out.part(w, &o.cbor, None)?;
        let (n, h) = out.end(w)?;
        at += n;
        hashes.push(h);
    }
    if plan.hash_footer {
        frame_to(
            w,
            &mut at,
            FrameType::FooterHash,
            &[&HashList::encode_xxh3(&hashes)],
            None,
        )?;
    }
    if plan.index_footer {
        frame_to(
            w,
            &mut at,
            FrameType::FooterIndex,
            &[&plan.index_cbor],
            None,
        )?;
    }
    debug_assert_eq!(at + POSTAMBLE_LEN, plan.total);
    w.write_all(
        &Postamble {
            first_footer_offset: plan.first_footer,
            total_length: plan.total,
        }
        .to_bytes(),
    )?;
    Ok(hashes)
}

/// Writes a planned message to `w` from where it stands, hashing each data frame while it is
/// written: the header hash frame goes out with placeholders and is written over once the
/// data frames' hashes are known, so the data is read once. `w` is left at the message's
/// end. Returns the data frames' hashes.
pub(super) fn emit_patched<W: Write + Seek + ?Sized>(
    plan: &Plan,
    objects: &[EncodedObject<'_>],
    hashing: bool,
    w: &mut W,
    fetch: &mut Fetch<'_>,
) -> std::io::Result<Vec<u64>> {
    let start = w.stream_position()?;
    let hashes = emit(plan, objects, hashing, w, fetch)?;
    if plan.hash_header {
        w.seek(SeekFrom::Start(start + plan.header_hash_at))?;
        let list = HashList::encode_xxh3(&hashes);
        w.write_all(&frame(
            FrameType::HeaderHash,
            &list,
            hashing,
            plan.header_hash_at,
        ))?;
        w.seek(SeekFrom::Start(start + plan.total))?;
    }
    Ok(hashes)
}

/// Lays out and writes a buffered message into `out` ([`emit_patched`]).
pub(super) fn assemble(
    metadata: &GlobalMetadata,
    objects: &[EncodedObject<'_>],
    opts: &EncodeOptions,
    out: &mut Vec<u8>,
) -> Result<()> {
    let plan = plan(metadata, objects, opts)?;
    out.clear();
    out.reserve(checked::to_usize(plan.total, "message size")?);
    emit_patched(
        &plan,
        objects,
        opts.hashing,
        &mut std::io::Cursor::new(&mut *out),
        &mut nothing_deferred,
    )
    .map_err(|e| written(e, "encoding a message"))?;
    #[cfg(feature = "paranoid")]
    crate::paranoid::check_message(out, objects)?;
    Ok(())
}
