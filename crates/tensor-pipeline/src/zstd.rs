//! zstd, with decoding bounded by the size the caller expects.
//!
//! Frames are decoded as a stream, one after another until the input ends, so payloads
//! made of several concatenated frames and frames without a content-size field (what
//! streaming encoders write) both decode. The declared size is never taken from the frame.

use crate::error::{Error, Result};
use std::io::Read;
use tensor_core::Limits;

const CODEC: &str = "zstd";

/// Compresses `data` at `level` (0 means zstd's default, 3) into one frame without a
/// content-size field, as a streaming encoder writes it.
pub fn compress(data: &[u8], level: i32) -> Result<Vec<u8>> {
    zstd::stream::encode_all(data, level).map_err(|e| Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    })
}

/// Decodes `src` into `dst`, which must be exactly the decoded size. An empty `src` holds
/// nothing (writers store an empty tensor's blob with zero bytes).
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    if src.is_empty() {
        return if dst.is_empty() {
            Ok(())
        } else {
            Err(Error::SizeMismatch {
                codec: CODEC,
                expected: dst.len() as u64,
                actual: "0".into(),
            })
        };
    }
    let mut dec = reader(src)?;
    let mut filled = 0;
    while filled < dst.len() {
        match dec.read(&mut dst[filled..]) {
            Ok(0) => {
                return Err(Error::SizeMismatch {
                    codec: CODEC,
                    expected: dst.len() as u64,
                    actual: filled.to_string(),
                });
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Corrupt {
                    codec: CODEC,
                    reason: e.to_string(),
                });
            }
        }
    }
    let mut probe = [0u8; 1];
    match dec.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::SizeMismatch {
            codec: CODEC,
            expected: dst.len() as u64,
            actual: format!("more than {}", dst.len()),
        }),
        Err(e) => Err(Error::Corrupt {
            codec: CODEC,
            reason: e.to_string(),
        }),
    }
}

/// A streaming decoder over `src`, for payloads whose decoded size is not known in advance;
/// callers bound what they read from it (e.g. with `Read::take`).
pub fn reader(src: &[u8]) -> Result<impl Read + '_> {
    zstd::stream::read::Decoder::new(src).map_err(|e| Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    })
}

/// Decodes `src` into a new buffer of exactly `expected` bytes, after checking `expected`
/// against the limits (total size and expansion ratio).
pub fn decompress(src: &[u8], expected: u64, limits: &Limits) -> Result<Vec<u8>> {
    limits.check_expansion(src.len() as u64, expected)?;
    let mut out = vec![0u8; tensor_core::checked::to_usize(expected, "decoded size")?];
    decompress_into(src, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn concatenated_frames_decode_as_one_payload() {
        let a = compress(b"hello, ", 1).unwrap();
        let b = compress(b"world", 19).unwrap();
        let both = [a, b].concat();
        assert_eq!(
            decompress(&both, 12, &Limits::default()).unwrap(),
            b"hello, world"
        );
        assert!(decompress(&both, 11, &Limits::default()).is_err());
        assert!(decompress(&both, 13, &Limits::default()).is_err());
    }

    #[test]
    fn garbage_and_bombs_are_refused() {
        assert!(decompress(b"not zstd at all", 4, &Limits::default()).is_err());
        let zeros = compress(&vec![0u8; 1 << 20], 3).unwrap();
        // A 1 MiB payload in a few dozen bytes: allowed by default, refused by a tight ratio.
        assert!(decompress(&zeros, 1 << 20, &Limits::default()).is_ok());
        let tight = Limits::default().with_max_decompression_ratio(100);
        assert!(decompress(&zeros, 1 << 20, &tight).is_err());
        let mut cut = compress(
            &(0..5000u32).flat_map(u32::to_le_bytes).collect::<Vec<_>>(),
            3,
        )
        .unwrap();
        cut.truncate(cut.len() / 2);
        assert!(decompress(&cut, 20000, &Limits::default()).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..4096), level in 1i32..10) {
            let packed = compress(&data, level).unwrap();
            prop_assert_eq!(decompress(&packed, data.len() as u64, &Limits::default()).unwrap(), data);
        }
    }
}

#[cfg(test)]
mod edge_cases {
    use super::*;

    #[test]
    fn empty_payloads_and_content_size_frames() {
        // A zero-byte blob, and a real frame of nothing, both decode to nothing.
        assert_eq!(
            decompress(&[], 0, &Limits::default()).unwrap(),
            Vec::<u8>::new()
        );
        let empty_frame = compress(&[], 3).unwrap();
        assert_eq!(
            decompress(&empty_frame, 0, &Limits::default()).unwrap(),
            Vec::<u8>::new()
        );
        assert!(decompress(&empty_frame, 1, &Limits::default()).is_err());
        // A frame that records its content size (bulk API) decodes like any other.
        let with_size = zstd::bulk::compress(b"abcdefgh", 3).unwrap();
        assert_eq!(
            decompress(&with_size, 8, &Limits::default()).unwrap(),
            b"abcdefgh"
        );
    }
}
