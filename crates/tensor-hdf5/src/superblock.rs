//! The superblock: where the file's structure starts. Versions 0 and 1 (HDF5 1.6 and before:
//! the root group as a symbol table entry), 2 and 3 (1.8 and after: the root group's object
//! header address, and a lookup3 checksum). Found at 0 or after a user block of 512, 1024,
//! 2048... bytes.

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// HDF5's signature.
pub const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// A parsed superblock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    /// Where it was found (0, or after a user block).
    pub at: u64,
    /// Its version: 0, 1, 2 or 3.
    pub version: u8,
    /// Bytes of an address.
    pub offsets: u8,
    /// Bytes of a length.
    pub lengths: u8,
    /// The address every other address is relative to (usually `at`).
    pub base: u64,
    /// The end of the file's addressed space, relative to `base`.
    pub end_of_file: u64,
    /// The root group's object header.
    pub root: u64,
    /// Versions 0 and 1: the root group's B-tree and local heap, when its symbol table
    /// entry caches them.
    pub root_symbol_table: Option<(u64, u64)>,
}

fn size(c: &mut Cursor<'_>, what: &'static str) -> Result<u8> {
    let at = c.offset();
    let n = c.u8()?;
    if !matches!(n, 2 | 4 | 8) {
        return Err(Error::malformed(
            what,
            at,
            format!("{n} bytes (2, 4 or 8 are)"),
        ));
    }
    Ok(n)
}

/// Finds and parses the superblock of `bytes`, a whole file.
pub fn find(bytes: &[u8]) -> Result<Superblock> {
    let mut at = 0usize;
    while at.checked_add(8).is_some_and(|end| end <= bytes.len()) {
        if &bytes[at..at + 8] == SIGNATURE {
            return parse(bytes, at as u64);
        }
        at = if at == 0 { 512 } else { at.saturating_mul(2) };
    }
    Err(Error::BadSignature {
        found: bytes[..bytes.len().min(8)].to_vec(),
    })
}

fn parse(bytes: &[u8], at: u64) -> Result<Superblock> {
    let mut c = Cursor::at(bytes, at + 8, 8, 8, "superblock")?;
    let version = c.u8()?;
    match version {
        0 | 1 => {
            // Free-space, root symbol table and shared header versions, a reserved byte.
            c.skip(4)?;
            c.offsets = size(&mut c, "superblock's size of offsets")?;
            c.lengths = size(&mut c, "superblock's size of lengths")?;
            // Reserved, group leaf and internal node K, consistency flags.
            c.skip(1 + 2 + 2 + 4)?;
            if version == 1 {
                c.skip(4)?;
            }
            let base = c.address()?.unwrap_or(0);
            let _free_space = c.address()?;
            let end_of_file = c.address()?.unwrap_or(u64::MAX);
            let _driver = c.address()?;
            // The root group's symbol table entry.
            let _name = c.address()?;
            let root = c.address()?.ok_or_else(|| {
                Error::malformed("superblock", at, "the root group has no object header")
            })?;
            let cache = c.u32()?;
            c.skip(4)?;
            let scratch = c.take(16)?;
            let root_symbol_table = (cache == 1).then(|| {
                let mut s = Cursor {
                    bytes: scratch,
                    at: 0,
                    offsets: c.offsets,
                    lengths: c.lengths,
                    what: "root group's scratch pad",
                };
                Some((s.address().ok()??, s.address().ok()??))
            });
            Ok(Superblock {
                at,
                version,
                offsets: c.offsets,
                lengths: c.lengths,
                base,
                end_of_file,
                root,
                root_symbol_table: root_symbol_table.flatten(),
            })
        }
        2 | 3 => {
            c.offsets = size(&mut c, "superblock's size of offsets")?;
            c.lengths = size(&mut c, "superblock's size of lengths")?;
            let _flags = c.u8()?;
            let base = c.address()?.unwrap_or(0);
            let _extension = c.address()?;
            let end_of_file = c.address()?.unwrap_or(u64::MAX);
            let root = c.address()?.ok_or_else(|| {
                Error::malformed("superblock", at, "the root group has no object header")
            })?;
            crate::lookup3::verify(bytes, at, c.offset(), "superblock")?;
            Ok(Superblock {
                at,
                version,
                offsets: c.offsets,
                lengths: c.lengths,
                base,
                end_of_file,
                root,
                root_symbol_table: None,
            })
        }
        v => Err(Error::Unsupported(format!("superblock version {v}"))),
    }
}
