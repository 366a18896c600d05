//! LZ4 block format preceded by the uncompressed length as a 4-byte little-endian integer
//! (not the LZ4 frame format), as Tensogram stores it.

use crate::error::{Error, Result};

const CODEC: &str = "lz4";

/// Compresses `data` (at most 4 GiB − 1).
pub fn compress(data: &[u8]) -> Result<Vec<u8>> {
    if u32::try_from(data.len()).is_err() {
        return Err(Error::Corrupt {
            codec: CODEC,
            reason: format!("{} bytes exceed the 4-byte length prefix", data.len()),
        });
    }
    encode_block(data)
}

/// Decodes `src` into `dst`, which must be exactly the decoded size (the prefix must agree).
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    let Some((prefix, body)) = src.split_first_chunk::<4>() else {
        return Err(Error::Corrupt {
            codec: CODEC,
            reason: "shorter than the 4-byte length prefix".into(),
        });
    };
    let declared = u32::from_le_bytes(*prefix) as usize;
    if declared != dst.len() {
        return Err(Error::SizeMismatch {
            codec: CODEC,
            expected: dst.len() as u64,
            actual: declared.to_string(),
        });
    }
    let n = decode_block(body, dst)?;
    if n != dst.len() {
        return Err(Error::SizeMismatch {
            codec: CODEC,
            expected: dst.len() as u64,
            actual: n.to_string(),
        });
    }
    Ok(())
}

#[cfg(feature = "lz4")]
#[allow(
    clippy::unnecessary_wraps,
    reason = "the signature of the build without lz4, which fails"
)]
fn encode_block(data: &[u8]) -> Result<Vec<u8>> {
    Ok(lz4_flex::block::compress_prepend_size(data))
}

#[cfg(feature = "lz4")]
fn decode_block(body: &[u8], dst: &mut [u8]) -> Result<usize> {
    lz4_flex::block::decompress_into(body, dst).map_err(|e| Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    })
}

#[cfg(not(feature = "lz4"))]
fn encode_block(_: &[u8]) -> Result<Vec<u8>> {
    Err(Error::not_built(CODEC))
}

#[cfg(not(feature = "lz4"))]
fn decode_block(_: &[u8], _: &mut [u8]) -> Result<usize> {
    Err(Error::not_built(CODEC))
}

#[cfg(all(test, feature = "lz4"))]
mod tests {
    use super::*;

    #[test]
    fn prefix_and_bounds() {
        let data: Vec<u8> = (0..8192u32).map(|i| (i / 7) as u8).collect();
        let c = compress(&data).unwrap();
        assert_eq!(&c[..4], &8192u32.to_le_bytes());
        let mut out = vec![0u8; 8192];
        decompress_into(&c, &mut out).unwrap();
        assert_eq!(out, data);
        assert!(decompress_into(&c, &mut vec![0u8; 8191]).is_err());
        assert!(decompress_into(&c[..c.len() - 3], &mut out).is_err());
        assert!(decompress_into(&[1, 2], &mut out).is_err());
    }

    proptest::proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(proptest::num::u8::ANY, 0..20_000), period in 1usize..64) {
            let data: Vec<u8> = data.iter().enumerate().map(|(i, &b)| if i % period == 0 { b } else { 7 }).collect();
            let c = compress(&data).unwrap();
            let mut out = vec![0u8; data.len()];
            decompress_into(&c, &mut out).unwrap();
            proptest::prop_assert_eq!(out, data);
        }
    }
}
