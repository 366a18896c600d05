//! Bob Jenkins' lookup3 `hashlittle`, the checksum HDF5 puts on its version 2 superblocks,
//! object headers, heaps and B-trees (`H5_checksum_lookup3` with an initial value of 0).

fn rot(x: u32, k: u32) -> u32 {
    x.rotate_left(k)
}

/// The three words mixed after every 12 bytes.
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= rot(*c, 4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= rot(*a, 6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= rot(*b, 8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= rot(*c, 16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= rot(*a, 19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= rot(*b, 4);
    *b = b.wrapping_add(*a);
}

/// The last mixing of the three words.
fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 14));
    *a ^= *c;
    *a = a.wrapping_sub(rot(*c, 11));
    *b ^= *a;
    *b = b.wrapping_sub(rot(*a, 25));
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 16));
    *a ^= *c;
    *a = a.wrapping_sub(rot(*c, 4));
    *b ^= *a;
    *b = b.wrapping_sub(rot(*a, 14));
    *c ^= *b;
    *c = c.wrapping_sub(rot(*b, 24));
}

/// A little-endian word of up to four bytes.
fn word(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |w, (i, &b)| w | (u32::from(b) << (8 * i)))
}

/// Checks the checksum stored (little-endian) at `end` of `bytes` against the hash of
/// `start..end`, as every checksummed HDF5 structure stores it.
pub(crate) fn verify(bytes: &[u8], start: u64, end: u64, what: &'static str) -> crate::Result<()> {
    let mut c = crate::cursor::Cursor::at(bytes, end, 8, 8, what)?;
    let stored = c.u32()?;
    // start..end lies in the file: the cursor is at end.
    let computed = hash(&bytes[start as usize..end as usize], 0);
    if stored != computed {
        return Err(crate::Error::Checksum {
            what,
            offset: start,
            stored,
            computed,
        });
    }
    Ok(())
}

/// `hashlittle(bytes, initval)`.
#[must_use]
pub fn hash(bytes: &[u8], initval: u32) -> u32 {
    // The length is mixed in modulo 2^32, as the C code's `uint32_t` does.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "lookup3 adds the length as a u32"
    )]
    let start = 0xdead_beef_u32
        .wrapping_add(bytes.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (start, start, start);
    let mut rest = bytes;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]));
    }
    finish(&mut a, &mut b, &mut c);
    c
}

#[cfg(test)]
mod tests {
    use super::hash;

    #[test]
    fn the_reference_driver_values() {
        // From lookup3.c's own driver.
        assert_eq!(hash(b"", 0), 0xdead_beef);
        assert_eq!(hash(b"Four score and seven years ago", 0), 0x1777_0551);
        assert_eq!(hash(b"Four score and seven years ago", 1), 0xcd62_8161);
    }
}
