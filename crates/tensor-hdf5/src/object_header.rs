//! Object headers, version 1 (HDF5 1.6) and version 2 (`OHDR`, 1.8 and after, checksummed):
//! the messages that describe a group or a dataset, gathered across continuation blocks.

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::lookup3;

/// The message type of a continuation: where more of the header's messages are.
const CONTINUATION: u16 = 0x10;
/// A null message: padding.
const NULL: u16 = 0x0;

/// One header message: its type, flags and bytes (borrowed from the file), and where they
/// are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message<'a> {
    /// The message type (0x1 dataspace, 0x3 datatype, 0x6 link, 0x8 layout, 0xC attribute...).
    pub kind: u16,
    /// Its flags (bit 1: shared, stored elsewhere).
    pub flags: u8,
    /// Its bytes.
    pub data: &'a [u8],
    /// Where they start in the file.
    pub at: u64,
}

/// A block of messages still to read: its bytes and where they start.
struct Block<'a> {
    body: &'a [u8],
    start: u64,
}

/// Reads the object header at `address` (absolute) of `bytes`, with the superblock's sizes:
/// every message of every continuation block, null ones left out. At most `max_messages`
/// in all, and no block visited twice.
pub fn read(
    bytes: &[u8],
    address: u64,
    offsets: u8,
    lengths: u8,
    max_messages: usize,
) -> Result<Vec<Message<'_>>> {
    let mut c = Cursor::at(bytes, address, offsets, lengths, "object header")?;
    let v2 = c.bytes.get(c.at..c.at + 4) == Some(b"OHDR".as_slice());
    let mut creation_order = false;
    let first = if v2 {
        c.skip(4)?;
        let version = c.u8()?;
        if version != 2 {
            return Err(Error::malformed(
                "object header",
                address,
                format!("OHDR version {version}"),
            ));
        }
        let flags = c.u8()?;
        creation_order = flags & 0x04 != 0;
        if flags & 0x20 != 0 {
            c.skip(16)?;
        }
        if flags & 0x10 != 0 {
            c.skip(4)?;
        }
        let size = c.uint(1 << (flags & 0x3))?;
        let start = c.offset();
        let body = c.take(size)?;
        lookup3::verify(bytes, address, start + size, "object header")?;
        Block { body, start }
    } else {
        let version = c.u8()?;
        if version != 1 {
            return Err(Error::malformed(
                "object header",
                address,
                format!("version {version} (1, or `OHDR` for 2)"),
            ));
        }
        // Reserved, the message count, the reference count.
        c.skip(1 + 2 + 4)?;
        let size = c.u32()?;
        // The messages start on the next multiple of 8 from the header's start.
        c.skip(4)?;
        let start = c.offset();
        let body = c.take(u64::from(size))?;
        Block { body, start }
    };
    let mut seen = vec![address];
    let mut queue = vec![first];
    let mut out = Vec::new();
    while let Some(block) = queue.pop() {
        let mut m = Cursor {
            bytes: block.body,
            at: 0,
            offsets,
            lengths,
            what: "object header message",
        };
        // A version 2 block ends in a gap too small for a message (under 4 bytes).
        let prefix = if v2 {
            4 + u64::from(creation_order) * 2
        } else {
            8
        };
        while (m.bytes.len() - m.at) as u64 >= prefix {
            let (kind, size, flags) = if v2 {
                let kind = u16::from(m.u8()?);
                let size = m.u16()?;
                let flags = m.u8()?;
                if creation_order {
                    m.skip(2)?;
                }
                (kind, size, flags)
            } else {
                let kind = m.u16()?;
                let size = m.u16()?;
                let flags = m.u8()?;
                m.skip(3)?;
                (kind, size, flags)
            };
            let at = block.start + m.offset();
            let data = m.take(u64::from(size))?;
            match kind {
                NULL => {}
                CONTINUATION => {
                    let mut d = Cursor {
                        bytes: data,
                        at: 0,
                        offsets,
                        lengths,
                        what: "continuation message",
                    };
                    let Some(where_) = d.address()? else { continue };
                    let len = d.length()?;
                    if seen.contains(&where_) || seen.len() >= 4096 {
                        return Err(Error::malformed(
                            "object header",
                            where_,
                            "a continuation block seen before, or more than 4096",
                        ));
                    }
                    seen.push(where_);
                    let mut b = Cursor::at(bytes, where_, offsets, lengths, "continuation block")?;
                    if v2 {
                        if b.take(4)? != b"OCHK" {
                            return Err(Error::malformed(
                                "continuation block",
                                where_,
                                "no `OCHK` signature",
                            ));
                        }
                        let body_len = len.checked_sub(8).ok_or_else(|| {
                            Error::malformed("continuation block", where_, "shorter than 8 bytes")
                        })?;
                        let start = b.offset();
                        let body = b.take(body_len)?;
                        lookup3::verify(bytes, where_, start + body_len, "continuation block")?;
                        queue.push(Block { body, start });
                    } else {
                        let start = b.offset();
                        let body = b.take(len)?;
                        queue.push(Block { body, start });
                    }
                }
                _ => {
                    if out.len() >= max_messages {
                        return Err(tensor_core::Error::LimitExceeded {
                            what: "HDF5 object header messages",
                            requested: out.len() as u64 + 1,
                            limit: max_messages as u64,
                        }
                        .into());
                    }
                    out.push(Message {
                        kind,
                        flags,
                        data,
                        at,
                    });
                }
            }
            if !v2 {
                // Version 1 messages are padded to multiples of 8.
                let pad = (8 - m.at % 8) % 8;
                m.skip(pad.min(m.bytes.len() - m.at) as u64)?;
            }
        }
    }
    Ok(out)
}
