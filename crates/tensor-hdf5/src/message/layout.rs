//! The data layout message: where a dataset's elements are — in the header (compact),
//! in one run (contiguous), or in chunks found through an index.

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// How a chunked dataset's chunks are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkIndex {
    /// A version 1 B-tree (layout versions 1 to 3; version 4 with index type 5).
    BTreeV1,
    /// One chunk, no index (version 4, type 1).
    Single,
    /// Chunks at computed addresses (version 4, type 2).
    Implicit,
    /// A fixed array (version 4, type 3).
    FixedArray,
    /// An extensible array (version 4, type 4).
    ExtensibleArray,
    /// A version 2 B-tree (version 4, type 5).
    BTreeV2,
}

/// Where a dataset's elements are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout<'a> {
    /// In the header.
    Compact(&'a [u8]),
    /// One run at `address` (none yet written when `None`).
    Contiguous {
        /// Where (absolute once the base is added).
        address: Option<u64>,
        /// How many bytes.
        size: u64,
    },
    /// In chunks of `chunk` elements each (slowest dimension first).
    Chunked {
        /// The chunk shape.
        chunk: Vec<u64>,
        /// The index's address (none yet written when `None`).
        index: Option<u64>,
        /// The index's kind.
        kind: ChunkIndex,
        /// A single chunk's stored size and filter mask, when it was filtered.
        filtered_single: Option<(u64, u32)>,
    },
}

impl<'a> Layout<'a> {
    /// Decodes the message's bytes.
    pub fn decode(data: &'a [u8], at: u64, offsets: u8, lengths: u8) -> Result<Self> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets,
            lengths,
            what: "data layout message",
        };
        let version = c.u8()?;
        // Version 5 (HDF5 2.0) lays these classes out as version 4 does.
        match version {
            3..=5 => {}
            1 | 2 => {
                return Err(Error::Unsupported(
                    "data layout messages of version 1 and 2 (HDF5 1.4 and before)".into(),
                ));
            }
            v => {
                return Err(Error::malformed(
                    "data layout message",
                    at,
                    format!("version {v}"),
                ));
            }
        }
        let class = c.u8()?;
        Ok(match class {
            0 => {
                let n = c.u16()?;
                Layout::Compact(c.take(u64::from(n))?)
            }
            1 => Layout::Contiguous {
                address: c.address()?,
                size: c.length()?,
            },
            2 if version == 3 => {
                let rank = c.u8()?;
                if rank < 2 {
                    return Err(Error::malformed(
                        "data layout message",
                        at,
                        "a chunk of no dimensions",
                    ));
                }
                let index = c.address()?;
                let mut chunk = Vec::with_capacity(usize::from(rank));
                for _ in 0..rank {
                    chunk.push(u64::from(c.u32()?));
                }
                // The last "dimension" is the element size.
                chunk.pop();
                Layout::Chunked {
                    chunk,
                    index,
                    kind: ChunkIndex::BTreeV1,
                    filtered_single: None,
                }
            }
            2 => {
                let flags = c.u8()?;
                let rank = c.u8()?;
                let width = c.u8()?;
                let mut filtered_single = None;
                if !(1..=8).contains(&width) || rank < 2 {
                    return Err(Error::malformed(
                        "data layout message",
                        at,
                        format!("{rank} chunk dimensions of {width} bytes"),
                    ));
                }
                let mut chunk = Vec::with_capacity(usize::from(rank));
                for _ in 0..rank {
                    chunk.push(c.uint(width)?);
                }
                chunk.pop();
                let kind = match c.u8()? {
                    1 => {
                        // The filtered chunk's size and filter mask, when filtered.
                        if flags & 0x02 != 0 {
                            filtered_single = Some((c.length()?, c.u32()?));
                        }
                        ChunkIndex::Single
                    }
                    2 => ChunkIndex::Implicit,
                    3 => {
                        c.skip(1)?;
                        ChunkIndex::FixedArray
                    }
                    4 => {
                        c.skip(5)?;
                        ChunkIndex::ExtensibleArray
                    }
                    5 => {
                        c.skip(6)?;
                        ChunkIndex::BTreeV2
                    }
                    k => {
                        return Err(Error::malformed(
                            "data layout message",
                            at,
                            format!("chunk index type {k}"),
                        ));
                    }
                };
                Layout::Chunked {
                    chunk,
                    index: c.address()?,
                    kind,
                    filtered_single,
                }
            }
            3 => return Err(Error::Unsupported("virtual datasets".into())),
            k => {
                return Err(Error::malformed(
                    "data layout message",
                    at,
                    format!("layout class {k}"),
                ));
            }
        })
    }
}
