//! GRIB-style simple packing: values become unsigned integers of `B` bits,
//! `q = round((x − R) · 10^D · 2^−E)`, packed most significant bit first into one
//! continuous bit stream; decoding gives `x' = R + (2^E · 10^−D) · q`.
//!
//! The formulas, and the order of the floating-point operations in them, are Tensogram's, so
//! decoded values match the reference bit for bit. Unlike GRIB, `R` is stored unscaled.

use crate::dense_bits::{Packer, Unpacker};
use crate::error::{Error, Result};

const CODEC: &str = "simple_packing";

/// The packing parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimplePacking {
    /// Bits per packed value, 0 to 64 (0: a constant field, empty payload).
    pub bits_per_value: u32,
    /// The reference value `R` (the minimum), unscaled.
    pub reference_value: f64,
    /// The binary scale factor `E`, |E| ≤ 256.
    pub binary_scale_factor: i32,
    /// The decimal scale factor `D`.
    pub decimal_scale_factor: i32,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: reason.into(),
    }
}

/// The largest packed value for `bits` (`u64::MAX` as a float for 64 bits).
fn max_q(bits: u32) -> f64 {
    if bits >= 64 {
        u64::MAX as f64
    } else {
        ((1u64 << bits) - 1) as f64
    }
}

/// `q = round((x − R) · 10^D · 2^−E)`, saturated to `0..=2^B − 1`, with the factors
/// computed once and the operations in the reference's order.
struct Quantiser {
    reference: f64,
    decimal: f64,
    binary: f64,
    bits: u32,
    max: f64,
}

impl Quantiser {
    fn new(p: &SimplePacking) -> Self {
        Quantiser {
            reference: p.reference_value,
            decimal: 10f64.powi(p.decimal_scale_factor),
            binary: 2f64.powi(-p.binary_scale_factor),
            bits: p.bits_per_value,
            max: max_q(p.bits_per_value),
        }
    }

    /// The code for a finite `x` (non-finite values give some code; callers reject them).
    #[inline]
    fn code(&self, x: f64) -> u64 {
        if self.bits <= 32 {
            u64::from(self.code_narrow(x))
        } else {
            // Saturating: below R gives 0, above the range the largest code. The clamp is
            // made on the integer: above 53 bits the largest code is not an f64 (it rounds
            // up to 2^bits, which would spill into the next value's bits).
            (self.scaled(x).round() as u64).min(u64::MAX >> (64 - self.bits))
        }
    }

    #[inline]
    fn scaled(&self, x: f64) -> f64 {
        (x - self.reference) * self.decimal * self.binary
    }

    /// [`code`](Self::code) for at most 32 bits: rounds half away from zero as
    /// `f64::round` does, without a libm call and without a float-to-integer conversion, so
    /// that the loops calling it vectorise. Adding 2^52 to the clamped value leaves its
    /// nearest integer (ties to even) in the low bits of the sum, exactly, since it is below
    /// 2^32; a tie that went down to the even neighbour is then moved up.
    #[inline]
    fn code_narrow(&self, x: f64) -> u32 {
        // Clamped to the code range first (anything below zero rounds to a code below zero,
        // which saturates to 0; a NaN becomes 0): a tie then only occurs below the largest
        // code, so moving it up cannot pass it.
        const SHIFT: f64 = 4_503_599_627_370_496.0; // 2^52
        let v = self.scaled(x).max(0.0).min(self.max);
        let sum = v + SHIFT;
        let nearest = sum - SHIFT;
        let code = sum.to_bits().wrapping_sub(SHIFT.to_bits()) as u32;
        code + u32::from(v - nearest == 0.5)
    }
}

impl SimplePacking {
    /// Parameters for `values` at `bits` bits and decimal scale `decimal`: `R` is the
    /// minimum and `E` the smallest exponent that makes the range fit. NaN or infinite
    /// values are an error (replace them through masks first).
    pub fn compute(values: impl IntoIterator<Item = f64>, bits: u32, decimal: i32) -> Result<Self> {
        if bits > 64 {
            return Err(bad(format!("bits per value must be 0 to 64, not {bits}")));
        }
        let mut it = values.into_iter().peekable();
        let first = it.peek().copied();
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut n = 0u64;
        for v in it {
            if !v.is_finite() {
                return Err(bad(format!(
                    "{} value {v} at index {n}: NaN and infinite values need masks",
                    if v.is_nan() { "NaN" } else { "infinite" }
                )));
            }
            lo = lo.min(v);
            hi = hi.max(v);
            n += 1;
        }
        if n == 0 || bits == 0 {
            return Ok(SimplePacking {
                bits_per_value: bits,
                reference_value: first.unwrap_or(0.0),
                binary_scale_factor: 0,
                decimal_scale_factor: decimal,
            });
        }
        let range = (hi - lo) * 10f64.powi(decimal);
        let e = if range == 0.0 {
            0
        } else {
            (range / max_q(bits)).log2().ceil() as i32
        };
        let p = SimplePacking {
            bits_per_value: bits,
            reference_value: lo,
            binary_scale_factor: e,
            decimal_scale_factor: decimal,
        };
        p.check()?;
        Ok(p)
    }

    /// Checks the parameters: bits ≤ 64, a finite `R`, |E| ≤ 256.
    pub fn check(&self) -> Result<()> {
        if self.bits_per_value > 64 {
            return Err(bad(format!(
                "bits per value must be 0 to 64, not {}",
                self.bits_per_value
            )));
        }
        if !self.reference_value.is_finite() {
            return Err(bad("the reference value must be finite"));
        }
        if self.binary_scale_factor.unsigned_abs() > 256 {
            return Err(bad(format!(
                "binary scale factor {} is outside ±256",
                self.binary_scale_factor
            )));
        }
        Ok(())
    }

    /// Bytes the packed stream of `n` values takes: `ceil(n·B/8)`.
    pub fn packed_len(&self, n: u64) -> Result<u64> {
        Ok(
            tensor_core::checked::mul(n, u64::from(self.bits_per_value), "packed bits")?
                .div_ceil(8),
        )
    }

    /// Packs `values`, appending `ceil(n·B/8)` bytes to `out`. On error (a NaN or infinite
    /// value) `out` is left as it was.
    pub fn encode(
        &self,
        values: impl ExactSizeIterator<Item = f64>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        self.check()?;
        let bits = self.bits_per_value;
        let start = out.len();
        let len =
            tensor_core::checked::to_usize(self.packed_len(values.len() as u64)?, "packed size")?;
        out.resize(start + len, 0);
        let q = Quantiser::new(self);
        let dst = &mut out[start..];
        let mut finite = true;
        match bits {
            0 => values.for_each(|x| finite &= x.is_finite()),
            16 => {
                for (c, x) in dst.as_chunks_mut::<2>().0.iter_mut().zip(values) {
                    finite &= x.is_finite();
                    *c = (q.code_narrow(x) as u16).to_be_bytes();
                }
            }
            8 | 24 | 32 | 40 | 48 | 56 | 64 => {
                let width = (bits / 8) as usize;
                for (c, x) in dst.chunks_exact_mut(width).zip(values) {
                    finite &= x.is_finite();
                    c.copy_from_slice(&q.code(x).to_be_bytes()[8 - width..]);
                }
            }
            _ => {
                let mut packer = Packer::new(dst, bits);
                for x in values {
                    finite &= x.is_finite();
                    packer.push(q.code(x));
                }
                packer.finish();
            }
        }
        if !finite {
            out.truncate(start);
            return Err(bad("a value is not finite (NaN and Inf need masks)"));
        }
        Ok(())
    }

    /// Unpacks `n` values from `packed` (exactly `ceil(n·B/8)` bytes), calling `put` with each
    /// index and decoded value.
    pub fn decode(&self, packed: &[u8], n: usize, mut put: impl FnMut(usize, f64)) -> Result<()> {
        self.check()?;
        let need = self.packed_len(n as u64)?;
        if packed.len() as u64 != need {
            return Err(Error::SizeMismatch {
                codec: CODEC,
                expected: need,
                actual: packed.len().to_string(),
            });
        }
        let r = self.reference_value;
        let scale = 2f64.powi(self.binary_scale_factor) * 10f64.powi(-self.decimal_scale_factor);
        let bits = self.bits_per_value;
        match bits {
            0 => (0..n).for_each(|i| put(i, r)),
            8 => packed
                .iter()
                .enumerate()
                .for_each(|(i, &q)| put(i, r + scale * f64::from(q))),
            16 => packed
                .as_chunks::<2>()
                .0
                .iter()
                .enumerate()
                .for_each(|(i, c)| put(i, r + scale * f64::from(u16::from_be_bytes(*c)))),
            32 => packed
                .as_chunks::<4>()
                .0
                .iter()
                .enumerate()
                .for_each(|(i, c)| put(i, r + scale * f64::from(u32::from_be_bytes(*c)))),
            _ => {
                let mut codes = Unpacker::new(packed, bits);
                for i in 0..n {
                    put(i, r + scale * codes.next_value() as f64);
                }
            }
        }
        Ok(())
    }

    /// Unpacks into `f64` values.
    pub fn decode_f64(&self, packed: &[u8], out: &mut [f64]) -> Result<()> {
        let n = out.len();
        self.decode(packed, n, |i, v| out[i] = v)
    }

    /// Unpacks into `f32` values (computed in f64, then rounded).
    pub fn decode_f32(&self, packed: &[u8], out: &mut [f32]) -> Result<()> {
        let n = out.len();
        self.decode(packed, n, |i, v| out[i] = v as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parameters_follow_the_reference_rules() {
        let field: Vec<f64> = (0..300)
            .map(|i| 280.0 + 25.0 * (f64::from(i) * 0.05).sin())
            .collect();
        let p = SimplePacking::compute(field.iter().copied(), 16, 0).unwrap();
        // The range is 50 (±25): 50 / 65535 = 2^-10.35, so E = -10.
        assert_eq!(p.binary_scale_factor, -10);
        let c = SimplePacking::compute([5.0; 4], 12, 0).unwrap();
        assert_eq!((c.reference_value, c.binary_scale_factor), (5.0, 0));
        let z = SimplePacking::compute([7.5, 9.0], 0, 0).unwrap();
        assert_eq!(z.reference_value, 7.5);
        assert!(SimplePacking::compute([1.0, f64::NAN], 8, 0).is_err());
        assert!(SimplePacking::compute([1.0], 65, 0).is_err());
        assert_eq!(
            SimplePacking::compute(std::iter::empty(), 16, 0)
                .unwrap()
                .reference_value,
            0.0
        );
    }

    #[test]
    fn bit_layout_is_msb_first_and_continuous() {
        let p = SimplePacking {
            bits_per_value: 4,
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
        };
        let mut out = Vec::new();
        p.encode([1.0, 2.0, 15.0].into_iter(), &mut out).unwrap();
        assert_eq!(out, [0x12, 0xF0]);
        let mut back = [0.0; 3];
        p.decode_f64(&out, &mut back).unwrap();
        assert_eq!(back, [1.0, 2.0, 15.0]);
        assert!(p.decode_f64(&[0x12], &mut back).is_err());
        let p16 = SimplePacking {
            bits_per_value: 16,
            ..p
        };
        let mut out = Vec::new();
        p16.encode([258.0].into_iter(), &mut out).unwrap();
        assert_eq!(out, [0x01, 0x02]);
        // Below R saturates to 0, above the range to the largest code.
        let mut out = Vec::new();
        p.encode([-3.0, 99.0].into_iter(), &mut out).unwrap();
        assert_eq!(out, [0x0F]);
    }

    #[test]
    fn wide_codes_saturate_without_spilling_into_the_next_value() {
        // At 54 bits the largest code (2^54 - 1) is no f64: a value that scales to 2^54
        // must still get it, not a 55-bit code that corrupts its neighbour.
        let p = SimplePacking {
            bits_per_value: 54,
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
        };
        let mut out = Vec::new();
        p.encode([2f64.powi(54), 1.0].into_iter(), &mut out)
            .unwrap();
        let mut codes = Unpacker::new(&out, 54);
        assert_eq!([codes.next_value(), codes.next_value()], [(1 << 54) - 1, 1]);
    }

    proptest! {
        #[test]
        fn every_width_round_trips_within_half_a_step(bits in 1u32..=64, n in 0usize..300, seed in any::<u64>(), decimal in -2i32..3) {
            let values: Vec<f64> = (0..n).map(|i| 200.0 + ((seed.wrapping_mul(i as u64 + 1) >> 20) % 10_000) as f64 / 97.0).collect();
            let p = SimplePacking::compute(values.iter().copied(), bits, decimal).unwrap();
            let mut packed = Vec::new();
            p.encode(values.iter().copied(), &mut packed).unwrap();
            prop_assert_eq!(packed.len() as u64, p.packed_len(n as u64).unwrap());
            let mut back = vec![0.0; n];
            p.decode_f64(&packed, &mut back).unwrap();
            let step = 2f64.powi(p.binary_scale_factor) * 10f64.powi(-decimal);
            for (a, b) in values.iter().zip(&back) {
                prop_assert!((a - b).abs() <= step / 2.0 + a.abs() * 1e-12, "{a} vs {b}, step {step}");
            }
        }
    }

    proptest! {
        #[test]
        fn fast_rounding_matches_f64_round(
            x in -1e6f64..1e6,
            half in proptest::bool::ANY,
            bits in 1u32..=32,
            e in -20i32..20,
            d in -3i32..3,
        ) {
            let p = SimplePacking { bits_per_value: bits, reference_value: -1000.0, binary_scale_factor: e, decimal_scale_factor: d };
            let q = Quantiser::new(&p);
            // Also land exactly on .5 after scaling.
            let x = if half { (x.trunc() + 0.5) / (q.decimal * q.binary) + p.reference_value } else { x };
            let expected = q.scaled(x).round().min(q.max) as u64;
            prop_assert_eq!(u64::from(q.code_narrow(x)), expected);
        }
    }
}
