//! The floats narrower than 16 bits, decoded exactly to `f32`, and the bit order of the
//! packed ones.
//!
//! Every format here is `sign | exponent | mantissa` with a bias; they differ in how the
//! top exponent and the negative zero are spent:
//!
//! | dtype | exp | mant | bias | specials |
//! | --- | --- | --- | --- | --- |
//! | `float8_e4m3` (e4m3fn) | 4 | 3 | 7 | `S.1111.111` is NaN, no infinities |
//! | `float8_e5m2` | 5 | 2 | 15 | IEEE: infinities and NaNs (the top byte of a float16) |
//! | `float8_e4m3fnuz` | 4 | 3 | 8 | `0x80` is the only NaN, no infinities, no −0 |
//! | `float8_e5m2fnuz` | 5 | 2 | 16 | `0x80` is the only NaN, no infinities, no −0 |
//! | `float8_e8m0` (e8m0fnu) | 8 | 0 | 127 | unsigned, no zero, `0xFF` is NaN |
//! | `float6_e2m3` | 2 | 3 | 1 | none |
//! | `float6_e3m2` | 3 | 2 | 3 | none |
//! | `float4_e2m1` | 2 | 1 | 1 | none |

use crate::dtype::Dtype;
use half::f16;

/// The value of `code`, an element of `dtype` in the low bits of a byte, or `None` when
/// `dtype` is not one of the floats narrower than 16 bits.
#[must_use]
pub fn to_f32(dtype: Dtype, code: u8) -> Option<f32> {
    let (exp_bits, mant_bits, bias) = match dtype {
        Dtype::Float8E4m3 => {
            if code & 0x7F == 0x7F {
                return Some(f32::NAN);
            }
            (4, 3, 7)
        }
        Dtype::Float8E5m2 => return Some(f16::from_bits(u16::from(code) << 8).to_f32()),
        Dtype::Float8E4m3Fnuz | Dtype::Float8E5m2Fnuz => {
            if code == 0x80 {
                return Some(f32::NAN);
            }
            if dtype == Dtype::Float8E4m3Fnuz {
                (4, 3, 8)
            } else {
                (5, 2, 16)
            }
        }
        Dtype::Float8E8m0 => {
            return Some(if code == 0xFF {
                f32::NAN
            } else {
                2f32.powi(i32::from(code) - 127)
            });
        }
        Dtype::Float6E2m3 => (2, 3, 1),
        Dtype::Float6E3m2 => (3, 2, 3),
        Dtype::Float4E2m1 => (2, 1, 1),
        _ => return None,
    };
    let total = 1 + exp_bits + mant_bits;
    let negative = (code >> (total - 1)) & 1 == 1;
    let exp = i32::from((code >> mant_bits) & ((1 << exp_bits) - 1));
    let mant = f32::from(code & ((1 << mant_bits) - 1));
    let scale = f32::from(1u8 << mant_bits);
    let magnitude = if exp == 0 {
        mant / scale * 2f32.powi(1 - bias)
    } else {
        (1.0 + mant / scale) * 2f32.powi(exp - bias)
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Element `index` of a packed payload (see [`Dtype::is_packed`]), in the low bits of the
/// returned byte, or `None` past the end or for a type that is not packed.
///
/// - bitmask: most significant bit of byte 0 first;
/// - `float4_e2m1`: two per byte, low nibble first;
/// - `float6_*`: one little-endian bit stream, least significant bit of byte 0 first.
#[must_use]
pub fn packed_code(dtype: Dtype, bytes: &[u8], index: usize) -> Option<u8> {
    match dtype {
        Dtype::Bitmask => Some((bytes.get(index / 8)? >> (7 - index % 8)) & 1),
        Dtype::Float4E2m1 => Some((bytes.get(index / 2)? >> (4 * (index % 2))) & 0x0F),
        Dtype::Float6E2m3 | Dtype::Float6E3m2 => {
            let bit = index.checked_mul(6)?;
            let lo = u16::from(*bytes.get(bit / 8)?);
            // The element spills into the next byte when it starts past bit 2.
            let hi = match bit % 8 {
                0..=2 => 0,
                _ => u16::from(*bytes.get(bit / 8 + 1)?),
            };
            Some((((hi << 8 | lo) >> (bit % 8)) & 0x3F) as u8)
        }
        _ => None,
    }
}

/// Packs `codes` (one element per byte, in the low bits) into the payload layout of
/// `dtype` (the inverse of [`packed_code`]); unused trailing bits are zero. `None` for a
/// type that is not packed.
#[must_use]
pub fn pack_codes(dtype: Dtype, codes: &[u8]) -> Option<Vec<u8>> {
    let bits = dtype.bit_width();
    if !dtype.is_packed() {
        return None;
    }
    let mut out = vec![0u8; (codes.len() * bits).div_ceil(8)];
    for (i, &c) in codes.iter().enumerate() {
        let c = c & ((1u16 << bits) - 1) as u8;
        match dtype {
            Dtype::Bitmask => out[i / 8] |= c << (7 - i % 8),
            Dtype::Float4E2m1 => out[i / 2] |= c << (4 * (i % 2)),
            _ => {
                let bit = i * 6;
                let v = u16::from(c) << (bit % 8);
                out[bit / 8] |= v as u8;
                if v > 0xFF {
                    out[bit / 8 + 1] |= (v >> 8) as u8;
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ml_dtypes` (the numpy extension types) gives the value of every code; the table was
    /// written by `scripts/reference/minifloats.py`.
    #[test]
    fn every_code_matches_ml_dtypes() {
        let table: &str = include_str!("../tests/data/minifloats.txt");
        let mut checked = 0;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            let mut f = line.split_whitespace();
            let dtype: Dtype = f.next().unwrap().parse().unwrap();
            let code = u8::from_str_radix(f.next().unwrap(), 16).unwrap();
            let expected = f.next().unwrap();
            let got = to_f32(dtype, code).unwrap();
            if expected == "nan" {
                assert!(got.is_nan(), "{dtype} {code:#x}: {got}");
            } else {
                let bits = u32::from_str_radix(expected, 16).unwrap();
                assert_eq!(got.to_bits(), bits, "{dtype} {code:#x}: {got}");
            }
            checked += 1;
        }
        assert_eq!(checked, 5 * 256 + 2 * 64 + 16);
    }

    #[test]
    fn packing_round_trips_odd_counts() {
        for dtype in [Dtype::Bitmask, Dtype::Float4E2m1, Dtype::Float6E2m3] {
            let mask = ((1u16 << dtype.bit_width()) - 1) as u8;
            for n in 0..20usize {
                let codes: Vec<u8> = (0..n).map(|i| (i as u8).wrapping_mul(37) & mask).collect();
                let packed = pack_codes(dtype, &codes).unwrap();
                assert_eq!(packed.len() as u64, dtype.payload_bytes(n as u64).unwrap());
                let back: Vec<u8> = (0..n)
                    .map(|i| packed_code(dtype, &packed, i).unwrap())
                    .collect();
                assert_eq!(back, codes, "{dtype} n={n}");
            }
        }
        assert_eq!(
            pack_codes(Dtype::Float4E2m1, &[1, 2, 3]).unwrap(),
            [0x21, 0x03]
        );
        assert_eq!(packed_code(Dtype::Float4E2m1, &[0x21], 2), None);
        assert_eq!(pack_codes(Dtype::Uint8, &[1]), None);
    }
}
