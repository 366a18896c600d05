//! Frame hashing: XXH3-64 (seed 0) of a frame's body, stored big-endian in the 8-byte slot
//! just before `ENDF`.

use crate::error::{Error, Result};
use crate::wire::{self, FRAME_HEADER_LEN, HASH_PRESENT};
use tensor_core::xxh3::xxh3_64;

/// The hash of `bytes` as the format computes it.
#[must_use]
pub fn xxh3(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// The hash of a frame's body: the bytes between the 16-byte header and the
/// `footer_len`-byte footer.
pub(crate) fn of_body(frame: &[u8], footer_len: usize) -> u64 {
    xxh3(&frame[FRAME_HEADER_LEN as usize..frame.len() - footer_len])
}

/// The hash in a frame's slot, when `flags` says there is one.
pub(crate) fn stored(frame: &[u8], flags: u16) -> Option<u64> {
    (flags & HASH_PRESENT != 0).then(|| wire::be_u64(frame, frame.len() - 12))
}

/// Checks a hashed frame's slot against its body.
pub(crate) fn verify(
    frame: &[u8],
    footer_len: usize,
    name: &'static str,
    offset: u64,
    object: Option<usize>,
) -> Result<()> {
    let expected = wire::be_u64(frame, frame.len() - 12);
    let actual = of_body(frame, footer_len);
    if expected == actual {
        Ok(())
    } else {
        Err(Error::HashMismatch {
            frame: name,
            offset,
            object,
            expected,
            actual,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_the_reference_digest() {
        // tensogram.compute_hash(b"hello world") in the reference.
        assert_eq!(
            format!("{:016x}", super::xxh3(b"hello world")),
            "d447b1ea40e6988b"
        );
    }
}
