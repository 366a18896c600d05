//! NaN/Inf companion masks: where non-finite values were, one packed bitmask (most
//! significant bit first) per kind, each compressed on its own. Mask blobs carry no bit-count
//! prefix: the count is the tensor's element count.

use crate::bitmask;
use crate::error::{Error, Result};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;

/// How a mask blob is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskMethod {
    /// The packed bits as they are.
    None,
    /// Run-length codes.
    Rle,
    /// Roaring portable format.
    Roaring,
    /// LZ4 block with a 4-byte length prefix.
    Lz4,
    /// zstd.
    Zstd,
    /// A blosc2 frame (the reference writes it bit-shuffled, LZ4 inside; the frame records
    /// whatever was used, so any decodes).
    Blosc2,
}

impl MaskMethod {
    /// The method called `name` in a descriptor.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => MaskMethod::None,
            "rle" => MaskMethod::Rle,
            "roaring" => MaskMethod::Roaring,
            "lz4" => MaskMethod::Lz4,
            "zstd" => MaskMethod::Zstd,
            "blosc2" => MaskMethod::Blosc2,
            _ => return None,
        })
    }

    /// The method's name in a descriptor.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MaskMethod::None => "none",
            MaskMethod::Rle => "rle",
            MaskMethod::Roaring => "roaring",
            MaskMethod::Lz4 => "lz4",
            MaskMethod::Zstd => "zstd",
            MaskMethod::Blosc2 => "blosc2",
        }
    }

    /// Every method, in declaration order.
    pub const ALL: [MaskMethod; 6] = [
        MaskMethod::None,
        MaskMethod::Rle,
        MaskMethod::Roaring,
        MaskMethod::Lz4,
        MaskMethod::Zstd,
        MaskMethod::Blosc2,
    ];

    /// Whether this build includes the method's codec (`roaring`, `lz4` and `blosc2` are
    /// cargo features, on by default); the others report [`Error::NotBuilt`].
    #[must_use]
    pub fn is_built(self) -> bool {
        self.not_built().is_none()
    }

    /// The error for a codec this build leaves out.
    fn not_built(self) -> Option<Error> {
        let feature = match self {
            MaskMethod::Roaring if !cfg!(feature = "roaring") => "roaring",
            MaskMethod::Lz4 if !cfg!(feature = "lz4") => "lz4",
            MaskMethod::Blosc2 if !cfg!(feature = "blosc2") => "blosc2",
            _ => return None,
        };
        Some(Error::not_built(feature))
    }
}

/// The kind of non-finite value a mask records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskKind {
    /// NaN (for complex values: NaN in either part).
    Nan,
    /// +Infinity.
    PosInf,
    /// −Infinity.
    NegInf,
}

impl MaskKind {
    /// The kind called `name` (`nan`, `inf+`, `inf-`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "nan" => MaskKind::Nan,
            "inf+" => MaskKind::PosInf,
            "inf-" => MaskKind::NegInf,
            _ => return None,
        })
    }

    /// The kind's key in a descriptor's `masks` map.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MaskKind::Nan => "nan",
            MaskKind::PosInf => "inf+",
            MaskKind::NegInf => "inf-",
        }
    }

    /// Every kind, in the order their blobs follow the payload.
    pub const ALL: [MaskKind; 3] = [MaskKind::Nan, MaskKind::PosInf, MaskKind::NegInf];
}

/// Decodes a mask blob into `ceil(n/8)` packed bytes for `n` elements, after checking
/// that size against `limits`.
pub fn decode_mask(method: MaskMethod, blob: &[u8], n: u64, limits: &Limits) -> Result<Vec<u8>> {
    if let Some(err) = method.not_built() {
        return Err(err);
    }
    limits.check_total_bytes(n.div_ceil(8))?;
    let len = tensor_core::checked::to_usize(n.div_ceil(8), "mask size")?;
    let mut out = tensor_core::buffer::try_filled(len, 0u8, "a decoded mask")?;
    match method {
        MaskMethod::None => {
            if blob.len() != len {
                return Err(Error::SizeMismatch {
                    codec: "mask",
                    expected: len as u64,
                    actual: blob.len().to_string(),
                });
            }
            out.copy_from_slice(blob);
        }
        MaskMethod::Rle => bitmask::rle_decode(blob, n, &mut out)?,
        MaskMethod::Roaring => bitmask::roaring_decode(blob, n, &mut out)?,
        MaskMethod::Lz4 => crate::lz4::decompress_into(blob, &mut out)?,
        MaskMethod::Zstd => crate::zstd::decompress_into(blob, &mut out)?,
        MaskMethod::Blosc2 => crate::blosc2::decompress_into(blob, &mut out)?,
    }
    Ok(out)
}

/// Encodes `n` packed mask bits with `method`.
pub fn encode_mask(method: MaskMethod, packed: &[u8], n: u64) -> Result<Vec<u8>> {
    if let Some(err) = method.not_built() {
        return Err(err);
    }
    let packed =
        &packed[..tensor_core::checked::to_usize(n.div_ceil(8), "mask size")?.min(packed.len())];
    match method {
        MaskMethod::None => Ok(packed.to_vec()),
        MaskMethod::Rle => bitmask::rle_encode(packed, n),
        MaskMethod::Roaring => bitmask::roaring_encode(packed, n),
        MaskMethod::Lz4 => crate::lz4::compress(packed),
        MaskMethod::Zstd => crate::zstd::compress(packed, 3),
        MaskMethod::Blosc2 => crate::blosc2::compress(packed, crate::blosc2::Codec::Lz4, 5, 1),
    }
}

/// Writes the canonical value of `kind` (quiet NaN, ±Inf; both parts for complex numbers)
/// into every element of `data` (elements of `dtype` in `order`) whose bit is set in `mask`.
pub fn restore(
    data: &mut [u8],
    dtype: Dtype,
    order: ByteOrder,
    kind: MaskKind,
    mask: &[u8],
) -> Result<()> {
    restore_from(data, 0, dtype, order, kind, mask)
}

/// [`restore`] for a run of elements that starts at element `first` of the tensor the mask
/// covers (for decoding in chunks).
pub fn restore_from(
    data: &mut [u8],
    first: u64,
    dtype: Dtype,
    order: ByteOrder,
    kind: MaskKind,
    mask: &[u8],
) -> Result<()> {
    let f64v = match kind {
        MaskKind::Nan => f64::NAN,
        MaskKind::PosInf => f64::INFINITY,
        MaskKind::NegInf => f64::NEG_INFINITY,
    };
    let (part, parts): (Vec<u8>, usize) = match dtype {
        Dtype::Float64 | Dtype::Complex128 => (
            f64::from_bits(if f64v.is_nan() {
                0x7FF8_0000_0000_0000
            } else {
                f64v.to_bits()
            })
            .to_le_bytes()
            .to_vec(),
            if dtype == Dtype::Complex128 { 2 } else { 1 },
        ),
        Dtype::Float32 | Dtype::Complex64 => (
            (f64v as f32).to_le_bytes().to_vec(),
            if dtype == Dtype::Complex64 { 2 } else { 1 },
        ),
        Dtype::Float16 => (half::f16::from_f64(f64v).to_le_bytes().to_vec(), 1),
        Dtype::Bfloat16 => (half::bf16::from_f64(f64v).to_le_bytes().to_vec(), 1),
        other => {
            return Err(Error::Corrupt {
                codec: "mask",
                reason: format!("{other} has no NaN or Inf to restore"),
            });
        }
    };
    let mut part = part;
    if order == ByteOrder::Big {
        part.reverse();
    }
    let width = part.len() * parts;
    for (k, element) in data.chunks_exact_mut(width).enumerate() {
        let i = first + k as u64;
        if mask
            .get((i / 8) as usize)
            .is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
        {
            for p in element.chunks_exact_mut(part.len()) {
                p.copy_from_slice(&part);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_round_trip_and_restore() {
        let packed = [0b0100_0000u8, 0];
        for m in MaskMethod::ALL {
            if !m.is_built() {
                let err = encode_mask(m, &packed, 10).unwrap_err();
                assert!(matches!(err, Error::NotBuilt { .. }), "{m:?}: {err}");
                let err = decode_mask(m, &[0; 8], 10, &Limits::default()).unwrap_err();
                assert_eq!(
                    tensor_core::Kinded::kind(&err),
                    tensor_core::ErrorKind::Unsupported
                );
                continue;
            }
            let blob = encode_mask(m, &packed, 10).unwrap();
            assert_eq!(
                decode_mask(m, &blob, 10, &Limits::default()).unwrap(),
                packed,
                "{m:?}"
            );
        }
        let mut data: Vec<u8> = [1.0f32, 0.0, 3.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        restore(
            &mut data,
            Dtype::Float32,
            ByteOrder::Big,
            MaskKind::NegInf,
            &[0b0100_0000],
        )
        .unwrap();
        assert_eq!(
            f32::from_be_bytes(data[4..8].try_into().unwrap()),
            f32::NEG_INFINITY
        );
        assert_eq!(f32::from_be_bytes(data[..4].try_into().unwrap()), 1.0);
        assert!(
            restore(
                &mut [0u8; 4],
                Dtype::Int32,
                ByteOrder::Little,
                MaskKind::Nan,
                &[0xFF]
            )
            .is_err()
        );
        assert!(MaskKind::from_name("inf+").is_some() && MaskMethod::from_name("bzip2").is_none());
    }

    proptest::proptest! {
        #[test]
        fn every_method_round_trips(
            bits in proptest::collection::vec(proptest::bool::weighted(0.1), 0..3000),
        ) {
            let n = bits.len() as u64;
            let mut packed = vec![0u8; bits.len().div_ceil(8)];
            for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
                packed[i / 8] |= 0x80 >> (i % 8);
            }
            for m in MaskMethod::ALL.into_iter().filter(|m| m.is_built()) {
                let blob = encode_mask(m, &packed, n).unwrap();
                proptest::prop_assert_eq!(&decode_mask(m, &blob, n, &Limits::default()).unwrap(), &packed, "{:?}", m);
            }
        }
    }

    #[test]
    fn a_huge_count_is_refused_before_allocating() {
        let limits = Limits::default().with_max_total_bytes(1 << 20);
        assert!(decode_mask(MaskMethod::Rle, &[], 1 << 40, &limits).is_err());
    }
}
