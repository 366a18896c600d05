//! Hexadecimal: lower-case out, for digests and byte dumps in messages and reports; either
//! case in, for the digests files store.

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

/// The `N` bytes that exactly `2 * N` hex digits (either case) spell; `None` for any other
/// length or any other character (no sign, no prefix, no spaces).
#[must_use]
pub fn decode<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    // Each byte's value as a digit; 0xFF for anything that is not one. Checked once for the
    // whole string, so the loop has no branch per digit.
    const NIBBLE: [u8; 256] = {
        let mut t = [0xFF; 256];
        let mut i = 0;
        while i < 10 {
            t[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            t[b'a' as usize + i] = 10 + i as u8;
            t[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        t
    };
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    let mut seen = 0u8;
    for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let (high, low) = (NIBBLE[usize::from(pair[0])], NIBBLE[usize::from(pair[1])]);
        seen |= high | low;
        *o = high << 4 | low;
    }
    (seen & 0xF0 == 0).then_some(out)
}

/// The number exactly 16 hex digits (either case) spell, most significant first, as 64-bit
/// hashes are stored; `None` for anything else (no sign, no prefix, no short form).
#[must_use]
pub fn decode_u64(digits: &[u8]) -> Option<u64> {
    decode::<8>(digits).map(u64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn decodes_either_case_and_nothing_else() {
        assert_eq!(
            super::decode::<4>(b"00aB10fF"),
            Some([0x00, 0xab, 0x10, 0xff])
        );
        assert_eq!(super::decode::<0>(b""), Some([]));
        for bad in [
            &b"00ab10f"[..],
            b"00ab10fff",
            b"+0ab10ff",
            b"0xab10ff",
            b"00ab 0ff",
            b"00ag10ff",
        ] {
            assert_eq!(super::decode::<4>(bad), None, "{bad:?}");
        }
        assert_eq!(
            super::decode_u64(b"887484DC3f391ebf"),
            Some(0x8874_84dc_3f39_1ebf)
        );
        for bad in [
            &b"+87484dc3f391ebf"[..],
            b"87484dc3f391ebf",
            b"0x7484dc3f391ebf",
        ] {
            assert_eq!(super::decode_u64(bad), None, "{bad:?}");
        }
        let round = [0x5a, 0xc3, 0x0f, 0xf0];
        assert_eq!(
            super::decode::<4>(super::encode(&round).as_bytes()),
            Some(round)
        );
    }

    #[test]
    fn encodes_every_nibble() {
        assert_eq!(super::encode(&[0x00, 0xab, 0x10, 0xff, 0x9c]), "00ab10ff9c");
        assert_eq!(super::encode(&[]), "");
    }
}
