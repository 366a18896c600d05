//! Dense bit streams: values of `bits` bits (at most 64) back to back, most significant bit
//! first, the last byte padded with zero bits. Simple packing stores its codes this way, and
//! szip's byte containers are filled from and emptied into it.

/// Writes values into a dense stream.
pub struct Packer<'a> {
    dst: &'a mut [u8],
    at: usize,
    acc: u128,
    pending: u32,
    bits: u32,
}

impl<'a> Packer<'a> {
    /// A packer over `dst`, which must hold `ceil(n·bits/8)` bytes for the `n` values pushed.
    #[must_use]
    pub fn new(dst: &'a mut [u8], bits: u32) -> Self {
        Packer {
            dst,
            at: 0,
            acc: 0,
            pending: 0,
            bits,
        }
    }

    /// Appends the low `bits` bits of `value`.
    #[inline]
    pub fn push(&mut self, value: u64) {
        self.acc = (self.acc << self.bits) | u128::from(value);
        self.pending += self.bits;
        while self.pending >= 8 {
            self.pending -= 8;
            self.dst[self.at] = (self.acc >> self.pending) as u8;
            self.at += 1;
        }
        self.acc &= (1u128 << self.pending) - 1;
    }

    /// Writes the last, partly filled byte.
    pub fn finish(self) {
        if self.pending > 0 {
            self.dst[self.at] = (self.acc << (8 - self.pending)) as u8;
        }
    }
}

/// Reads values from a dense stream; missing bytes at the end read as zeros.
pub(crate) struct Unpacker<'a> {
    bytes: std::slice::Iter<'a, u8>,
    acc: u128,
    have: u32,
    bits: u32,
    mask: u128,
}

impl<'a> Unpacker<'a> {
    pub(crate) fn new(src: &'a [u8], bits: u32) -> Self {
        Unpacker {
            bytes: src.iter(),
            acc: 0,
            have: 0,
            bits,
            mask: (1u128 << bits) - 1,
        }
    }

    /// The next value.
    #[inline]
    pub(crate) fn next_value(&mut self) -> u64 {
        while self.have < self.bits {
            self.acc = (self.acc << 8) | u128::from(*self.bytes.next().unwrap_or(&0));
            self.have += 8;
        }
        self.have -= self.bits;
        let v = ((self.acc >> self.have) & self.mask) as u64;
        self.acc &= (1u128 << self.have) - 1;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_at_every_width() {
        for bits in 1..=64u32 {
            let values: Vec<u64> = (0..37u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits))
                .collect();
            let mut dst = vec![0u8; (values.len() * bits as usize).div_ceil(8)];
            let mut p = Packer::new(&mut dst, bits);
            for &v in &values {
                p.push(v);
            }
            p.finish();
            let mut u = Unpacker::new(&dst, bits);
            let back: Vec<u64> = (0..values.len()).map(|_| u.next_value()).collect();
            assert_eq!(back, values, "{bits} bits");
        }
        // 12-bit values 0xABC, 0xDEF pack to AB CD EF.
        let mut dst = [0u8; 3];
        let mut p = Packer::new(&mut dst, 12);
        p.push(0xABC);
        p.push(0xDEF);
        p.finish();
        assert_eq!(dst, [0xAB, 0xCD, 0xEF]);
    }
}
