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
    let mut out = FrameOut::begin(w, at, kind, body, hashing, cbor_offset)?;
    let mut check = check_finite.map(FiniteCheck::new);
    for (k, part) in parts.iter().enumerate() {
        out.part(w, part, if k == 0 { check.as_mut() } else { None })?;
    }
    out.end(w)
}

/// One frame written a part of its body at a time ([`write_frame`] in steps): for a payload
/// handed over in runs, which is never whole in memory.
pub(crate) struct FrameOut {
    at: u64,
    total: u64,
    /// Body bytes announced in the header and not written yet.
    body_left: u64,
    hashing: bool,
    hasher: Xxh3,
    cbor_offset: Option<u64>,
}

impl FrameOut {
    /// Writes the header of a frame of kind `kind` whose body is `body` bytes, starting at
    /// message offset `at`.
    pub(crate) fn begin<W: Write + ?Sized>(
        w: &mut W,
        at: u64,
        kind: FrameType,
        body: u64,
        hashing: bool,
        cbor_offset: Option<u64>,
    ) -> std::io::Result<Self> {
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
        Ok(FrameOut {
            at,
            total,
            body_left: body,
            hashing,
            hasher: Xxh3::new(),
            cbor_offset,
        })
    }

    /// Writes the next `part` of the body (hashed while it is written); with `check`, a NaN
    /// or ±Inf in it is refused ([`NonFinite`]).
    pub(crate) fn part<W: Write + ?Sized>(
        &mut self,
        w: &mut W,
        part: &[u8],
        check: Option<&mut FiniteCheck>,
    ) -> std::io::Result<()> {
        self.body_left = self
            .body_left
            .checked_sub(part.len() as u64)
            .ok_or_else(|| {
                std::io::Error::other("a frame's body is longer than its header announced")
            })?;
        if !self.hashing && check.is_none() {
            return w.write_all(part);
        }
        let (hashing, hasher) = (self.hashing, &mut self.hasher);
        let mut found = None;
        let mut check = check;
        // `&mut W` is a sized writer, lent as `&mut dyn Write`.
        tensor_core::tee::write(&mut &mut *w, part, &mut |p| {
            if hashing {
                hasher.update(p);
            }
            if let Some(c) = check.as_deref_mut()
                && found.is_none()
            {
                found = c.look(p);
            }
        })?;
        match found {
            Some(found) => Err(std::io::Error::other(found)),
            None => Ok(()),
        }
    }

    /// Writes the footer and padding once the whole body is written. Returns the bytes
    /// written for the frame and the body's hash (0 without hashing).
    pub(crate) fn end<W: Write + ?Sized>(self, w: &mut W) -> std::io::Result<(u64, u64)> {
        if self.body_left != 0 {
            return Err(std::io::Error::other(format!(
                "a frame's body is {} bytes shorter than its header announced",
                self.body_left
            )));
        }
        if let Some(c) = self.cbor_offset {
            w.write_all(&c.to_be_bytes())?;
        }
        let h = if self.hashing {
            self.hasher.digest()
        } else {
            0
        };
        w.write_all(&h.to_be_bytes())?;
        w.write_all(wire::FRAME_END)?;
        let pad = wire::padding(self.at + self.total);
        w.write_all(&[0u8; 8][..pad as usize])?;
        Ok((self.total + pad, h))
    }
}

/// The strict check of a raw payload written in parts: the first NaN or ±Inf, counted in
/// elements from the payload's start.
pub(crate) struct FiniteCheck {
    dtype: Dtype,
    order: ByteOrder,
    seen: u64,
}

impl FiniteCheck {
    pub(crate) fn new((dtype, order): (Dtype, ByteOrder)) -> Self {
        FiniteCheck {
            dtype,
            order,
            seen: 0,
        }
    }

    /// The first non-finite element of the next bytes `p`, if any.
    fn look(&mut self, p: &[u8]) -> Option<NonFinite> {
        let width = self.dtype.byte_width() as u64;
        let found = nonfinite::first(p, self.dtype, self.order).map(|(at, kind)| NonFinite {
            element: at + self.seen / width,
            kind,
        });
        self.seen += p.len() as u64;
        found
    }
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
