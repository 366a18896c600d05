//! Codecs for packed bitmasks (bits most significant first): run-length (`rle`) and
//! Roaring (`roaring`).
//!
//! As a main compressor (dtype bitmask) the codec bytes follow a `u32` big-endian bit count,
//! the payload's padded size in bits; as a NaN/Inf mask they stand alone, the bit count
//! coming from the tensor's element count.
//!
//! RLE codec bytes: the first bit's value (one byte, 0 or 1), then the lengths of the
//! alternating runs as ULEB128 integers.

use crate::error::{Error, Result};

fn bad(codec: &'static str, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        codec,
        reason: reason.into(),
    }
}

fn bit(packed: &[u8], i: u64) -> bool {
    packed[(i / 8) as usize] & (0x80 >> (i % 8)) != 0
}

fn set(packed: &mut [u8], i: u64) {
    packed[(i / 8) as usize] |= 0x80 >> (i % 8);
}

fn check_len(codec: &'static str, packed: &[u8], n_bits: u64) -> Result<()> {
    if (packed.len() as u64) < n_bits.div_ceil(8) {
        return Err(bad(
            codec,
            format!("{} bytes cannot hold {n_bits} bits", packed.len()),
        ));
    }
    Ok(())
}

/// Run-length codes the first `n_bits` bits of `packed`.
pub fn rle_encode(packed: &[u8], n_bits: u64) -> Result<Vec<u8>> {
    check_len("rle", packed, n_bits)?;
    let mut out = Vec::new();
    if n_bits == 0 {
        out.push(0);
        return Ok(out);
    }
    let mut current = bit(packed, 0);
    out.push(u8::from(current));
    let mut run = 0u64;
    for i in 0..n_bits {
        let b = bit(packed, i);
        if b == current {
            run += 1;
        } else {
            leb128(&mut out, run);
            current = b;
            run = 1;
        }
    }
    leb128(&mut out, run);
    Ok(out)
}

fn leb128(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Decodes run-length codes into `out` (zeroed, at least `ceil(n_bits/8)` bytes); the runs
/// must add up to exactly `n_bits`.
pub fn rle_decode(codec: &[u8], n_bits: u64, out: &mut [u8]) -> Result<()> {
    check_len("rle", out, n_bits)?;
    let (&first, mut rest) = codec.split_first().ok_or_else(|| bad("rle", "empty"))?;
    if first > 1 {
        return Err(bad(
            "rle",
            format!("the first-bit byte is {first}, not 0 or 1"),
        ));
    }
    let mut value = first == 1;
    let mut pos = 0u64;
    while !rest.is_empty() {
        let mut run = 0u64;
        let mut shift = 0;
        loop {
            let (&b, tail) = rest
                .split_first()
                .ok_or_else(|| bad("rle", "a run length is cut short"))?;
            rest = tail;
            if shift >= 64 || (shift == 63 && b > 1) {
                return Err(bad("rle", "a run length overflows 64 bits"));
            }
            run |= u64::from(b & 0x7F) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let end = pos
            .checked_add(run)
            .filter(|&e| e <= n_bits)
            .ok_or_else(|| bad("rle", format!("the runs exceed {n_bits} bits")))?;
        if value {
            for i in pos..end {
                set(out, i);
            }
        }
        pos = end;
        value = !value;
    }
    if pos != n_bits {
        return Err(bad(
            "rle",
            format!("the runs cover {pos} bits, {n_bits} expected"),
        ));
    }
    Ok(())
}

/// The set bits of the first `n_bits` bits of `packed`, in the Roaring portable format.
#[cfg(feature = "roaring")]
pub fn roaring_encode(packed: &[u8], n_bits: u64) -> Result<Vec<u8>> {
    check_len("roaring", packed, n_bits)?;
    if n_bits > u64::from(u32::MAX) + 1 {
        return Err(bad("roaring", "more than 2^32 bits"));
    }
    let mut set_bits: roaring::RoaringBitmap = (0..n_bits)
        .filter(|&i| bit(packed, i))
        .map(|i| i as u32)
        .collect();
    // Runs are stored as runs where that is smaller, as the reference (CRoaring's
    // run-optimise) does.
    set_bits.optimize();
    let mut out = Vec::with_capacity(set_bits.serialized_size());
    set_bits
        .serialize_into(&mut out)
        .map_err(|e| bad("roaring", e.to_string()))?;
    Ok(out)
}

/// Decodes a Roaring bitmap into `out` (zeroed, at least `ceil(n_bits/8)` bytes); every set
/// bit must be below `n_bits`.
#[cfg(feature = "roaring")]
pub fn roaring_decode(codec: &[u8], n_bits: u64, out: &mut [u8]) -> Result<()> {
    check_len("roaring", out, n_bits)?;
    let bitmap = roaring::RoaringBitmap::deserialize_from(codec)
        .map_err(|e| bad("roaring", e.to_string()))?;
    if let Some(max) = bitmap.max()
        && u64::from(max) >= n_bits
    {
        return Err(bad(
            "roaring",
            format!("bit {max} is set in a {n_bits}-bit mask"),
        ));
    }
    for i in &bitmap {
        set(out, u64::from(i));
    }
    Ok(())
}
/// The set bits of the first `n_bits` bits of `packed`, in the Roaring portable format
/// (this build leaves the codec out: always [`Error::NotBuilt`]).
#[cfg(not(feature = "roaring"))]
pub fn roaring_encode(packed: &[u8], n_bits: u64) -> Result<Vec<u8>> {
    check_len("roaring", packed, n_bits)?;
    Err(Error::not_built("roaring"))
}

/// Decodes a Roaring bitmap (this build leaves the codec out: always [`Error::NotBuilt`]).
#[cfg(not(feature = "roaring"))]
pub fn roaring_decode(_codec: &[u8], n_bits: u64, out: &mut [u8]) -> Result<()> {
    check_len("roaring", out, n_bits)?;
    Err(Error::not_built("roaring"))
}

/// A bitmask codec used as the main compressor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitmaskCodec {
    /// Run-length.
    Rle,
    /// Roaring.
    Roaring,
}

/// Compresses a packed bitmask payload: `[u32 BE bit count][codec bytes]`, the bit count
/// being the payload's size in bits.
pub fn compress(codec: BitmaskCodec, packed: &[u8]) -> Result<Vec<u8>> {
    let n_bits = packed.len() as u64 * 8;
    let count = u32::try_from(n_bits).map_err(|_| bad("bitmask", "more than 2^32 bits"))?;
    let mut out = count.to_be_bytes().to_vec();
    out.extend(match codec {
        BitmaskCodec::Rle => rle_encode(packed, n_bits)?,
        BitmaskCodec::Roaring => roaring_encode(packed, n_bits)?,
    });
    Ok(out)
}

/// Decodes a payload made by [`compress`] into `dst` (exactly the packed size).
pub fn decompress_into(codec: BitmaskCodec, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let name = if codec == BitmaskCodec::Rle {
        "rle"
    } else {
        "roaring"
    };
    let Some((count, body)) = src.split_first_chunk::<4>() else {
        return Err(bad(name, "shorter than the 4-byte bit count"));
    };
    let n_bits = u64::from(u32::from_be_bytes(*count));
    if n_bits != dst.len() as u64 * 8 {
        return Err(Error::SizeMismatch {
            codec: name,
            expected: dst.len() as u64 * 8,
            actual: format!("{n_bits} bits"),
        });
    }
    dst.fill(0);
    match codec {
        BitmaskCodec::Rle => rle_decode(body, n_bits, dst),
        BitmaskCodec::Roaring => roaring_decode(body, n_bits, dst),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rle_layout() {
        // 0b1110_0000, 10 bits: runs 3 ones, 7 zeros.
        let c = rle_encode(&[0b1110_0000, 0], 10).unwrap();
        assert_eq!(c, [1, 3, 7]);
        let mut out = [0u8; 2];
        rle_decode(&c, 10, &mut out).unwrap();
        assert_eq!(out, [0b1110_0000, 0]);
        assert!(rle_decode(&[1, 3, 8], 10, &mut [0u8; 2]).is_err());
        assert!(rle_decode(&[1, 3], 10, &mut [0u8; 2]).is_err());
        assert!(rle_decode(&[2], 0, &mut []).is_err());
        assert!(
            rle_decode(
                &[
                    0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F
                ],
                10,
                &mut [0u8; 2]
            )
            .is_err()
        );
        let big = compress(BitmaskCodec::Rle, &[0xFF; 125]).unwrap();
        assert_eq!(&big[..4], &1000u32.to_be_bytes());
    }

    proptest! {
        #[test]
        fn codecs_round_trip(packed in proptest::collection::vec(any::<u8>(), 0..300)) {
            let built = |c: &BitmaskCodec| *c == BitmaskCodec::Rle || cfg!(feature = "roaring");
            for codec in [BitmaskCodec::Rle, BitmaskCodec::Roaring].into_iter().filter(built) {
                let c = compress(codec, &packed).unwrap();
                let mut out = vec![0xAAu8; packed.len()];
                decompress_into(codec, &c, &mut out).unwrap();
                prop_assert_eq!(&out, &packed);
            }
        }
    }
}
