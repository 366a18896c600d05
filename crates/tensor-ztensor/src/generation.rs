//! The generations of zTensor and how to tell them apart: their magic numbers, blob
//! alignments and footer, and the largest rank 1.x and 2 allow.

/// The magic number of zTensor 0.1 files.
pub const MAGIC_V0_1: &[u8; 8] = b"ZTEN0001";
/// Blob alignment in zTensor 0.1.
pub const ALIGNMENT_V0_1: u64 = 64;
/// The largest rank a zTensor 1.x/2 object may have (readers refuse more, so writers
/// never write more).
pub const MAX_RANK_V2: usize = 64;
/// The magic of zTensor 1.x files (at the start, and from 1.1 on also at the end).
pub const MAGIC_V1: &[u8; 8] = b"ZTEN1000";
/// The magic of zTensor 2 files (at the start and at the end).
pub const MAGIC_V2: &[u8; 8] = b"\x89ZT2\r\n\x1a\n";
/// Size of the zTensor 2 footer.
pub const FOOTER_V2: usize = 40;
/// Blob alignment in zTensor 2 (canonical writers use [`CANONICAL_ALIGNMENT`]).
pub const ALIGNMENT_V2: u64 = 4096;
/// Blob alignment of canonical zTensor 2 files.
pub const CANONICAL_ALIGNMENT: u64 = 65536;

/// The container generation. Digests cover the stored bytes in 1.x and the decoded bytes
/// in 2.x.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generation {
    /// zTensor 0.1 (`ZTEN0001`).
    V0_1,
    /// zTensor 1.x (`ZTEN1000`).
    V1,
    /// zTensor 2 (the current container).
    V2,
}

/// The generation a file's first 8 bytes announce.
#[must_use]
pub fn detect(bytes: &[u8]) -> Option<Generation> {
    let head = bytes.get(..8)?;
    if head == MAGIC_V0_1 {
        Some(Generation::V0_1)
    } else if head == MAGIC_V1 {
        Some(Generation::V1)
    } else if head == MAGIC_V2 {
        Some(Generation::V2)
    } else {
        None
    }
}
