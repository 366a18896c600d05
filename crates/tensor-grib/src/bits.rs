//! Reading GRIB's numbers: big-endian unsigned integers, sign-and-magnitude signed ones,
//! IBM and IEEE floats, and bit streams packed most significant bit first.

/// Big-endian unsigned integer of `bytes.len()` (at most 8) bytes.
pub(crate) fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

/// A sign-and-magnitude integer (GRIB's signed form): the top bit is the sign.
pub(crate) fn signed(bytes: &[u8]) -> i64 {
    let bits = 8 * bytes.len() as u32;
    let v = be(bytes);
    let magnitude = (v & ((1u64 << (bits - 1)) - 1)) as i64;
    if v >> (bits - 1) == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// Whether every bit is set: GRIB's "missing" for a field of this width.
pub(crate) fn all_ones(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0xff)
}

/// An IBM System/360 single-precision float (GRIB 1's reference value), exactly as a
/// double: sign, a base-16 exponent biased by 64, a 24-bit fraction.
pub(crate) fn ibm(bytes: [u8; 4]) -> f64 {
    let v = u32::from_be_bytes(bytes);
    let sign = if v >> 31 == 1 { -1.0 } else { 1.0 };
    let exponent = ((v >> 24) & 0x7f) as i32;
    let fraction = f64::from(v & 0x00ff_ffff);
    if fraction == 0.0 {
        return 0.0;
    }
    // fraction · 2^-24 · 16^(exponent − 64), exact: powers of two only.
    sign * fraction * 2f64.powi(4 * (exponent - 64) - 24)
}

/// Reads values of up to 64 bits from a bit stream, most significant bit first; reads past
/// the end give `None`.
pub(crate) struct BitReader<'a> {
    bytes: &'a [u8],
    bit: u64,
}

impl<'a> BitReader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, bit: 0 }
    }

    /// Bits left.
    pub(crate) fn remaining(&self) -> u64 {
        (self.bytes.len() as u64 * 8).saturating_sub(self.bit)
    }

    /// The next `n` bits (0 to 64) as an unsigned number.
    #[inline]
    pub(crate) fn read(&mut self, n: u32) -> Option<u64> {
        if n == 0 {
            return Some(0);
        }
        if u64::from(n) > self.remaining() {
            return None;
        }
        // Up to 56 bits lie within the eight bytes from the current one, whatever the bit
        // offset in it: one big-endian load and two shifts, while eight bytes are left.
        if n <= 56
            && let Some(window) = self
                .bytes
                .get((self.bit / 8) as usize..)
                .and_then(<[u8]>::first_chunk::<8>)
        {
            let value = (u64::from_be_bytes(*window) << (self.bit % 8)) >> (64 - n);
            self.bit += u64::from(n);
            return Some(value);
        }
        let mut value: u64 = 0;
        let mut left = n;
        while left > 0 {
            let byte = self.bytes[(self.bit / 8) as usize];
            let used = (self.bit % 8) as u32;
            let avail = 8 - used;
            let take = avail.min(left);
            let chunk = (u32::from(byte) >> (avail - take)) & ((1u32 << take) - 1);
            value = (value << take) | u64::from(chunk);
            left -= take;
            self.bit += u64::from(take);
        }
        Some(value)
    }

    /// The next `n` bits as a sign-and-magnitude number.
    pub(crate) fn read_signed(&mut self, n: u32) -> Option<i64> {
        if n == 0 {
            return Some(0);
        }
        let v = self.read(n)?;
        let magnitude = (v & (u64::MAX >> (65 - n))) as i64;
        Some(if v >> (n - 1) == 1 {
            -magnitude
        } else {
            magnitude
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_and_magnitude() {
        assert_eq!(signed(&[0x80, 0x05]), -5);
        assert_eq!(signed(&[0x00, 0x05]), 5);
        assert_eq!(signed(&[0x80, 0x00, 0x00, 0x01]), -1);
    }

    #[test]
    fn ibm_floats() {
        // 0x42640000 = 100.0; 0xC276A000 = -118.625 (the textbook example).
        assert_eq!(ibm([0x42, 0x64, 0, 0]), 100.0);
        assert_eq!(ibm([0xc2, 0x76, 0xa0, 0x00]), -118.625);
        assert_eq!(ibm([0, 0, 0, 0]), 0.0);
    }

    proptest::proptest! {
        /// The eight-byte window and the byte loop read the same numbers as bits taken
        /// one at a time, at every offset and width, up to the end of the bytes.
        #[test]
        fn bit_reader_agrees_with_reading_bit_by_bit(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            widths in proptest::collection::vec(0u32..=64, 0..40),
        ) {
            let bit_at = |i: u64| u64::from(bytes[(i / 8) as usize] >> (7 - i % 8) & 1);
            let mut r = BitReader::new(&bytes);
            let mut at = 0u64;
            for n in widths {
                let expected = (at + u64::from(n) <= bytes.len() as u64 * 8)
                    .then(|| (at..at + u64::from(n)).fold(0, |v, i| v << 1 | bit_at(i)));
                proptest::prop_assert_eq!(r.read(n), expected, "{} bits at bit {}", n, at);
                if expected.is_some() {
                    at += u64::from(n);
                }
            }
        }
    }

    #[test]
    fn bit_reader_reads_across_bytes_and_stops_at_the_end() {
        let mut r = BitReader::new(&[0b1010_1100, 0b0101_0011]);
        assert_eq!(r.read(3), Some(0b101));
        assert_eq!(r.read(7), Some(0b011_0001));
        assert_eq!(r.read_signed(3), Some(2));
        assert_eq!(r.read(3), Some(0b011));
        assert_eq!(r.read(1), None);
        let mut r = BitReader::new(&[0xff; 9]);
        assert_eq!(r.read(64), Some(u64::MAX));
        let mut s = BitReader::new(&[0b1100_0000]);
        assert_eq!(s.read_signed(3), Some(-2));
        assert_eq!(r.read(8), Some(0xff));
    }
}
