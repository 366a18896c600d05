//! 8-bit floating-point formats, decoded exactly to `f32`.
//!
//! - `e4m3` is the "e4m3fn" variant used by machine-learning formats: bias 7, no infinities,
//!   and the all-ones patterns `0x7F`/`0xFF` are NaN.
//! - `e5m2` has bias 15 and IEEE-style infinities and NaNs; it is the top byte of a float16.

use half::f16;

/// Decodes one float8 e4m3fn value.
#[must_use]
pub fn e4m3_to_f32(bits: u8) -> f32 {
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 3) & 0x0F);
    let mant = f32::from(bits & 0x07);
    if exp == 0x0F && bits & 0x07 == 0x07 {
        return f32::NAN;
    }
    let magnitude = if exp == 0 {
        mant / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + mant / 8.0) * 2f32.powi(exp - 7)
    };
    sign * magnitude
}

/// Decodes one float8 e5m2 value.
#[must_use]
pub fn e5m2_to_f32(bits: u8) -> f32 {
    f16::from_bits(u16::from(bits) << 8).to_f32()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_matches_the_reference_values() {
        // From the conformance fixtures: bytes 0x30, 0x31, 0x32.
        assert_eq!(e4m3_to_f32(0x30), 0.5);
        assert_eq!(e4m3_to_f32(0x31), 0.5625);
        assert_eq!(e4m3_to_f32(0x32), 0.625);
        assert_eq!(e4m3_to_f32(0x7E), 448.0);
        assert_eq!(e4m3_to_f32(0xFE), -448.0);
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9));
        assert!(e4m3_to_f32(0x7F).is_nan());
        assert!(e4m3_to_f32(0xFF).is_nan());
        assert_eq!(e4m3_to_f32(0x78), 256.0);
        assert!(e4m3_to_f32(0x80).is_sign_negative());
    }

    #[test]
    fn e5m2_matches_the_reference_values() {
        assert_eq!(e5m2_to_f32(0x30), 0.125);
        assert_eq!(e5m2_to_f32(0x31), 0.15625);
        assert_eq!(e5m2_to_f32(0x32), 0.1875);
        assert_eq!(e5m2_to_f32(0x7B), 57344.0);
        assert_eq!(e5m2_to_f32(0x7C), f32::INFINITY);
        assert_eq!(e5m2_to_f32(0xFC), f32::NEG_INFINITY);
        assert!(e5m2_to_f32(0x7D).is_nan());
        assert_eq!(e5m2_to_f32(0x01), 2f32.powi(-16));
    }
}
