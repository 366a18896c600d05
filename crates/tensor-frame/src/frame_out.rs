//! Writing frames: an object ready to frame, and one frame's bytes (header, body, footer,
//! padding). The encoder and its paranoid read-back both stand on this; neither on the
//! other.

use crate::wire::{
    self, CBOR_AFTER_PAYLOAD, FRAME_HEADER_LEN, FRAME_VERSION, FrameHeader, FrameType, HASH_PRESENT,
};
use std::borrow::Cow;
use std::io::Write;
use tensor_descriptor::DataObjectDescriptor;
use xxhash_rust::xxh3::Xxh3;

/// One object ready to frame: its final descriptor and the three parts of its frame body.
pub(crate) struct EncodedObject<'a> {
    pub(crate) descriptor: DataObjectDescriptor,
    /// The encoded tensor: borrowed from the caller when no stage changes the bytes.
    pub(crate) payload: Cow<'a, [u8]>,
    /// For a raw payload the caller hands over again when the frame is written
    /// ([`encode_to_streamed`]): its length (and `payload` is empty meanwhile).
    pub(crate) deferred: Option<u64>,
    /// The mask blobs, one after another.
    pub(crate) masks: Vec<u8>,
    /// The descriptor's canonical CBOR.
    pub(crate) cbor: Vec<u8>,
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

    /// The frame body's XXH3-64: the hash its frame and the hash frames carry. (For an
    /// object whose payload is deferred, this is taken before the payload is let go.)
    pub(crate) fn body_hash(&self) -> u64 {
        let mut h = Xxh3::new();
        for p in self.parts() {
            h.update(p);
        }
        h.digest()
    }
}

/// What goes into a frame's hash slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameHash {
    /// No hash (zero, and the frame's hash flag clear).
    Off,
    /// The body's XXH3-64, computed as the body is written (on another core when there is
    /// one).
    Compute,
    /// A hash already computed over exactly these body bytes.
    Known(u64),
}

impl From<bool> for FrameHash {
    fn from(hashing: bool) -> Self {
        if hashing {
            FrameHash::Compute
        } else {
            FrameHash::Off
        }
    }
}

/// Writes one frame starting at message offset `at`: header, the body `parts`, footer
/// (`cbor_offset` first for data frames) and alignment padding, with `hash` in its hash
/// slot. Returns the bytes written and the body's hash (0 without hashing).
pub(crate) fn write_frame<W: Write + ?Sized>(
    w: &mut W,
    at: u64,
    kind: FrameType,
    parts: &[&[u8]],
    hash: impl Into<FrameHash>,
    cbor_offset: Option<u64>,
) -> std::io::Result<(u64, u64)> {
    let hash = hash.into();
    let body: u64 = parts.iter().map(|p| p.len() as u64).sum();
    let total = FRAME_HEADER_LEN + body + kind.footer_len();
    let mut fl = if hash == FrameHash::Off {
        0
    } else {
        HASH_PRESENT
    };
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
    for part in parts {
        if hash == FrameHash::Compute {
            // `&mut W` is a sized writer, lent as `&mut dyn Write`.
            tensor_core::tee::write(&mut &mut *w, part, &mut |p| hasher.update(p))?;
        } else {
            w.write_all(part)?;
        }
    }
    if let Some(c) = cbor_offset {
        w.write_all(&c.to_be_bytes())?;
    }
    let h = match hash {
        FrameHash::Off => 0,
        FrameHash::Compute => hasher.digest(),
        FrameHash::Known(h) => h,
    };
    w.write_all(&h.to_be_bytes())?;
    w.write_all(wire::FRAME_END)?;
    let pad = wire::padding(at + total);
    w.write_all(&[0u8; 8][..pad as usize])?;
    Ok((total + pad, h))
}

/// [`write_frame`] into a new buffer, for the small frames.
pub(crate) fn frame(kind: FrameType, body: &[u8], hashing: bool, at: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 40);
    // Writing to a Vec cannot fail.
    let _ = write_frame(&mut out, at, kind, &[body], hashing, None);
    out
}
