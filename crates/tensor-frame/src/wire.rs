//! The fixed-size parts of the wire format: preamble, postamble, frame header and footer,
//! and the constants that name them. Every integer here is big-endian.

use crate::error::{Error, Result};

/// The 8 bytes a message starts with.
pub const MAGIC: &[u8; 8] = b"TENSOGRM";
/// The 8 bytes a message ends with.
pub const END_MAGIC: &[u8; 8] = b"39277777";
/// The only wire version there is.
pub const VERSION: u16 = 3;
/// Bytes in the preamble.
pub const PREAMBLE_LEN: u64 = 24;
/// Bytes in the postamble.
pub const POSTAMBLE_LEN: u64 = 24;
/// Bytes in every frame header.
pub const FRAME_HEADER_LEN: u64 = 16;
/// The last 4 bytes of every frame.
pub const FRAME_END: &[u8; 4] = b"ENDF";
/// The version every frame type writes.
pub const FRAME_VERSION: u16 = 1;
/// Frames and the postamble start on multiples of this, counted from the message start.
pub const ALIGNMENT: u64 = 8;

/// Message flags (preamble bits).
pub mod flags {
    /// A `HeaderMetadata` frame is present.
    pub const HEADER_METADATA: u16 = 0x01;
    /// A `FooterMetadata` frame is present.
    pub const FOOTER_METADATA: u16 = 0x02;
    /// A `HeaderIndex` frame is present.
    pub const HEADER_INDEX: u16 = 0x04;
    /// A `FooterIndex` frame is present.
    pub const FOOTER_INDEX: u16 = 0x08;
    /// A `HeaderHash` frame is present.
    pub const HEADER_HASHES: u16 = 0x10;
    /// A `FooterHash` frame is present.
    pub const FOOTER_HASHES: u16 = 0x20;
    /// At least one `PrecederMetadata` frame is present.
    pub const PRECEDER_METADATA: u16 = 0x40;
    /// Every frame carries a real hash (advisory).
    pub const HASHES_PRESENT: u16 = 0x80;

    /// Every flag with its name, in bit order.
    pub const NAMES: [(u16, &str); 8] = [
        (HEADER_METADATA, "HEADER_METADATA"),
        (FOOTER_METADATA, "FOOTER_METADATA"),
        (HEADER_INDEX, "HEADER_INDEX"),
        (FOOTER_INDEX, "FOOTER_INDEX"),
        (HEADER_HASHES, "HEADER_HASHES"),
        (FOOTER_HASHES, "FOOTER_HASHES"),
        (PRECEDER_METADATA, "PRECEDER_METADATA"),
        (HASHES_PRESENT, "HASHES_PRESENT"),
    ];
}

/// Frame flag bit 0 of a data frame: the descriptor follows the payload region.
pub const CBOR_AFTER_PAYLOAD: u16 = 0x01;
/// Frame flag bit 1: the footer's hash slot holds a real digest.
pub const HASH_PRESENT: u16 = 0x02;

/// Where a frame may appear in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Before the first data object.
    Header,
    /// Data objects and their preceders.
    Body,
    /// After the last data object.
    Footer,
}

/// The frame types of wire version 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameType {
    /// Global metadata, header phase.
    HeaderMetadata,
    /// Object index, header phase.
    HeaderIndex,
    /// Aggregate hash list, header phase.
    HeaderHash,
    /// Aggregate hash list, footer phase.
    FooterHash,
    /// Object index, footer phase.
    FooterIndex,
    /// Global metadata, footer phase.
    FooterMetadata,
    /// Metadata for the next data object only.
    PrecederMetadata,
    /// A data object: payload, masks and descriptor.
    NTensor,
}

impl FrameType {
    /// The type for a wire number; `None` for 0, the retired 4 and unknown numbers.
    #[must_use]
    pub fn from_u16(n: u16) -> Option<Self> {
        Some(match n {
            1 => FrameType::HeaderMetadata,
            2 => FrameType::HeaderIndex,
            3 => FrameType::HeaderHash,
            5 => FrameType::FooterHash,
            6 => FrameType::FooterIndex,
            7 => FrameType::FooterMetadata,
            8 => FrameType::PrecederMetadata,
            9 => FrameType::NTensor,
            _ => return None,
        })
    }

    /// The wire number.
    #[must_use]
    pub fn to_u16(self) -> u16 {
        match self {
            FrameType::HeaderMetadata => 1,
            FrameType::HeaderIndex => 2,
            FrameType::HeaderHash => 3,
            FrameType::FooterHash => 5,
            FrameType::FooterIndex => 6,
            FrameType::FooterMetadata => 7,
            FrameType::PrecederMetadata => 8,
            FrameType::NTensor => 9,
        }
    }

    /// The reference's name for the type.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FrameType::HeaderMetadata => "HeaderMetadata",
            FrameType::HeaderIndex => "HeaderIndex",
            FrameType::HeaderHash => "HeaderHash",
            FrameType::FooterHash => "FooterHash",
            FrameType::FooterIndex => "FooterIndex",
            FrameType::FooterMetadata => "FooterMetadata",
            FrameType::PrecederMetadata => "PrecederMetadata",
            FrameType::NTensor => "NTensorFrame",
        }
    }

    /// Where the type may appear.
    #[must_use]
    pub fn phase(self) -> Phase {
        match self {
            FrameType::HeaderMetadata | FrameType::HeaderIndex | FrameType::HeaderHash => {
                Phase::Header
            }
            FrameType::PrecederMetadata | FrameType::NTensor => Phase::Body,
            FrameType::FooterHash | FrameType::FooterIndex | FrameType::FooterMetadata => {
                Phase::Footer
            }
        }
    }

    /// Bytes in the frame's footer: `[cbor_offset]` (data frames only), hash, `ENDF`.
    #[must_use]
    pub fn footer_len(self) -> u64 {
        if self == FrameType::NTensor { 20 } else { 12 }
    }
}

pub(crate) fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(crate) fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// The first 24 bytes of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preamble {
    /// Wire version (3).
    pub version: u16,
    /// Message flags, see [`flags`].
    pub flags: u16,
    /// Bytes from the magic to the end magic, padding included; 0 when unknown.
    pub total_length: u64,
}

impl Preamble {
    /// Reads a preamble from the first 24 bytes of `b`, checking the magic and version.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < PREAMBLE_LEN as usize {
            return Err(Error::framing(
                0,
                format!("{} bytes cannot hold a 24-byte preamble", b.len()),
            ));
        }
        if &b[..8] != MAGIC {
            return Err(Error::framing(
                0,
                "the message does not start with TENSOGRM",
            ));
        }
        let version = be_u16(b, 8);
        if version != VERSION {
            return Err(Error::framing(
                8,
                format!("wire version {version} is not supported (only version 3 is)"),
            ));
        }
        Ok(Preamble {
            version,
            flags: be_u16(b, 10),
            total_length: be_u64(b, 16),
        })
    }

    /// The 24 bytes of this preamble.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(MAGIC);
        b[8..10].copy_from_slice(&self.version.to_be_bytes());
        b[10..12].copy_from_slice(&self.flags.to_be_bytes());
        b[16..24].copy_from_slice(&self.total_length.to_be_bytes());
        b
    }
}

/// The last 24 bytes of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Postamble {
    /// Offset from the message start to the first footer frame, or to the postamble itself
    /// when there is no footer frame.
    pub first_footer_offset: u64,
    /// A mirror of the preamble's total length (0 when unknown).
    pub total_length: u64,
}

impl Postamble {
    /// Reads a postamble from 24 bytes, checking the end magic. `offset` is where the
    /// postamble sits in the message, for the error.
    pub fn parse(b: &[u8], offset: u64) -> Result<Self> {
        if b.len() < POSTAMBLE_LEN as usize || &b[16..24] != END_MAGIC {
            return Err(Error::framing(
                offset,
                "the postamble does not end with the end magic 39277777",
            ));
        }
        Ok(Postamble {
            first_footer_offset: be_u64(b, 0),
            total_length: be_u64(b, 8),
        })
    }

    /// The 24 bytes of this postamble.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.first_footer_offset.to_be_bytes());
        b[8..16].copy_from_slice(&self.total_length.to_be_bytes());
        b[16..24].copy_from_slice(END_MAGIC);
        b
    }
}

/// The 16-byte header every frame starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// The raw frame type number.
    pub frame_type: u16,
    /// The frame version (1).
    pub version: u16,
    /// Frame flags: [`CBOR_AFTER_PAYLOAD`], [`HASH_PRESENT`].
    pub flags: u16,
    /// Header, body and footer, without the padding that follows.
    pub total_length: u64,
}

impl FrameHeader {
    /// Reads a frame header at `offset` (relative to the message) from `b`, which starts
    /// there.
    pub fn parse(b: &[u8], offset: u64) -> Result<Self> {
        if b.len() < FRAME_HEADER_LEN as usize {
            return Err(Error::framing(
                offset,
                "the message ends inside a frame header",
            ));
        }
        if &b[..2] != b"FR" {
            return Err(Error::framing(offset, "a frame does not start with FR"));
        }
        Ok(FrameHeader {
            frame_type: be_u16(b, 2),
            version: be_u16(b, 4),
            flags: be_u16(b, 6),
            total_length: be_u64(b, 8),
        })
    }

    /// The known frame type, or a framing error naming the number.
    pub fn known_type(&self, offset: u64) -> Result<FrameType> {
        FrameType::from_u16(self.frame_type).ok_or_else(|| {
            Error::framing(
                offset,
                match self.frame_type {
                    4 => "frame type 4 (the data frame of wire version 2) is retired".to_owned(),
                    0 => "frame type 0 is invalid".to_owned(),
                    n => format!("frame type {n} is unknown"),
                },
            )
        })
    }

    /// The 16 bytes of this header.
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..2].copy_from_slice(b"FR");
        b[2..4].copy_from_slice(&self.frame_type.to_be_bytes());
        b[4..6].copy_from_slice(&self.version.to_be_bytes());
        b[6..8].copy_from_slice(&self.flags.to_be_bytes());
        b[8..16].copy_from_slice(&self.total_length.to_be_bytes());
        b
    }
}

/// Zero bytes needed after `end` so the next frame starts aligned.
#[must_use]
pub fn padding(end: u64) -> u64 {
    (ALIGNMENT - end % ALIGNMENT) % ALIGNMENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_and_postamble_round_trip_and_reject_bad_magic() {
        let p = Preamble {
            version: 3,
            flags: 0x95,
            total_length: 584,
        };
        assert_eq!(Preamble::parse(&p.to_bytes()).unwrap(), p);
        let mut bad = p.to_bytes();
        bad[9] = 2;
        assert!(
            Preamble::parse(&bad)
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
        bad[0] = b'X';
        assert!(Preamble::parse(&bad).is_err());
        let q = Postamble {
            first_footer_offset: 560,
            total_length: 584,
        };
        assert_eq!(Postamble::parse(&q.to_bytes(), 560).unwrap(), q);
        let mut bad = q.to_bytes();
        bad[23] = b'8';
        assert!(Postamble::parse(&bad, 560).is_err());
    }

    #[test]
    fn frame_types_round_trip_and_four_is_retired() {
        for n in 0..12u16 {
            match FrameType::from_u16(n) {
                Some(t) => assert_eq!(t.to_u16(), n),
                None => assert!([0, 4, 10, 11].contains(&n)),
            }
        }
        let h = FrameHeader {
            frame_type: 4,
            version: 1,
            flags: 0,
            total_length: 40,
        };
        let back = FrameHeader::parse(&h.to_bytes(), 24).unwrap();
        assert!(
            back.known_type(24)
                .unwrap_err()
                .to_string()
                .contains("retired")
        );
        assert_eq!(padding(559), 1);
        assert_eq!(padding(560), 0);
    }
}
