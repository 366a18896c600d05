//! Writing frames: an object ready to frame, and one frame's bytes (header, body, footer,
//! padding). The encoder and its paranoid read-back both stand on this; neither on the
//! other.

use crate::nonfinite;
use crate::wire::{
    self, CBOR_AFTER_PAYLOAD, FRAME_HEADER_LEN, FRAME_VERSION, FrameHeader, FrameType, HASH_PRESENT,
};
use std::borrow::Cow;
use std::io::Write;
use tensor_core::ByteOrder;
use tensor_core::xxh3::Xxh3;
use tensor_descriptor::DataObjectDescriptor;
use tensor_dtype::Dtype;
use tensor_pipeline::masks::MaskKind;

/// One object ready to frame: its final descriptor and the three parts of its frame body.
pub(crate) struct EncodedObject<'a> {
    pub(crate) descriptor: DataObjectDescriptor,
    /// The encoded tensor: borrowed from the caller when no stage changes the bytes.
    pub(crate) payload: Cow<'a, [u8]>,
    /// For a raw payload the caller hands over again when the frame is written
    /// ([`write_streamed`]): its length (and `payload` is empty meanwhile).
    pub(crate) deferred: Option<u64>,
    /// The mask blobs, one after another.
    pub(crate) masks: Vec<u8>,
    /// The descriptor's canonical CBOR.
    pub(crate) cbor: Vec<u8>,
    /// A raw payload whose NaN and ±Inf the encoder refuses, checked while it is written
    /// rather than in a pass of its own before: its elements' dtype and byte order.
    pub(crate) check_finite: Option<(Dtype, ByteOrder)>,
}

impl EncodedObject<'_> {
    /// The frame body: payload, masks, descriptor.
    pub(crate) fn parts(&self) -> [&[u8]; 3] {
        [&self.payload, &self.masks, &self.cbor]
    }

    /// Bytes of the payload, held or deferred.
    pub(crate) fn payload_len(&self) -> u64 {
        self.deferred.unwrap_or(self.payload.len() as u64)
    }

    /// Bytes in the frame body.
    pub(crate) fn body_len(&self) -> u64 {
        self.payload_len() + (self.masks.len() + self.cbor.len()) as u64
    }

    /// Where the descriptor starts, from the frame start (the footer's `cbor_offset`).
    pub(crate) fn cbor_offset(&self) -> u64 {
        FRAME_HEADER_LEN + self.payload_len() + self.masks.len() as u64
    }
}

/// Writes one frame starting at message offset `at`: header, the body `parts`, footer
/// (`cbor_offset` first for data frames) and alignment padding, with the body's XXH3-64 in
/// its hash slot when `hashing` (computed while the body is written, on another core when
/// there is one). Returns the bytes written and the body's hash (0 without hashing).
pub(crate) fn write_frame<W: Write + ?Sized>(
    w: &mut W,
    at: u64,
    kind: FrameType,
    parts: &[&[u8]],
    hashing: bool,
    cbor_offset: Option<u64>,
    check_finite: Option<(Dtype, ByteOrder)>,
) -> std::io::Result<(u64, u64)> {
    let body: u64 = parts.iter().map(|p| p.len() as u64).sum();
    let total = FRAME_HEADER_LEN + body + kind.footer_len();
    let mut fl = if hashing { HASH_PRESENT } else { 0 };
    if cbor_offset.is_some() {
        fl |= CBOR_AFTER_PAYLOAD;
    }
    let header = FrameHeader {
        frame_type: kind.to_u16(),
        version: FRAME_VERSION,
        flags: fl,
        total_length: total,
    };
    w.write_all(&header.to_bytes())?;
    let mut hasher = Xxh3::new();
    for (k, part) in parts.iter().enumerate() {
        let check = check_finite.filter(|_| k == 0);
        if hashing || check.is_some() {
            let mut found = None;
            let mut seen = 0u64;
            // `&mut W` is a sized writer, lent as `&mut dyn Write`.
            tensor_core::tee::write(&mut &mut *w, part, &mut |p| {
                if hashing {
                    hasher.update(p);
                }
                if let Some((dtype, order)) = check
                    && found.is_none()
                {
                    found = nonfinite::first(p, dtype, order)
                        .map(|(at, kind)| (at + seen / dtype.byte_width() as u64, kind));
                    seen += p.len() as u64;
                }
            })?;
            if let Some((element, kind)) = found {
                return Err(std::io::Error::other(NonFinite { element, kind }));
            }
        } else {
            w.write_all(part)?;
        }
    }
    if let Some(c) = cbor_offset {
        w.write_all(&c.to_be_bytes())?;
    }
    let h = if hashing { hasher.digest() } else { 0 };
    w.write_all(&h.to_be_bytes())?;
    w.write_all(wire::FRAME_END)?;
    let pad = wire::padding(at + total);
    w.write_all(&[0u8; 8][..pad as usize])?;
    Ok((total + pad, h))
}

/// A NaN or ±Inf met in a payload while it was written ([`EncodedObject::check_finite`]).
#[derive(Debug)]
pub(crate) struct NonFinite {
    /// The element's index in the payload.
    pub(crate) element: u64,
    pub(crate) kind: MaskKind,
}

impl std::fmt::Display for NonFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "element {} is {} (allow NaN/Inf to store it through a mask)",
            self.element,
            self.kind.name()
        )
    }
}

impl std::error::Error for NonFinite {}

/// [`write_frame`] into a new buffer, for the small frames.
pub(crate) fn frame(kind: FrameType, body: &[u8], hashing: bool, at: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 40);
    // Writing to a Vec cannot fail.
    let _ = write_frame(&mut out, at, kind, &[body], hashing, None, None);
    out
}
