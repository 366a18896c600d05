//! Lower-case hexadecimal, for digests and byte dumps in messages and reports.

/// `bytes` as lower-case hex, two digits per byte.
#[must_use]
pub fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_every_nibble() {
        assert_eq!(super::encode(&[0x00, 0xab, 0x10, 0xff, 0x9c]), "00ab10ff9c");
        assert_eq!(super::encode(&[]), "");
    }
}
