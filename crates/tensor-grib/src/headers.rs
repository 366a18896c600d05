//! The bytes [`Grib::open_with`](crate::Grib::open_with) reads, for a reader that holds only
//! part of a file (a remote object fetched by ranges): every message's section 0 and its end
//! marker; in GRIB 2 every section but the data section's body; in GRIB 1 the whole message
//! (its binary data section is read at open for its packing).
//!
//! GRIB has no index: a message's place is known only once the one before it has given its
//! length, and a section's once the one before it has given its own. So the ranges are
//! asked for in rounds, each round every range known so far: the sections whose headers are
//! held, the next section header of every message whose section 0 is, and section 0 of the
//! first message not yet found. A remote reader widens each request, so that a round
//! usually brings a message's headers whole.

use std::ops::Range;
use tensor_core::{Held, Limits, Result};

/// Bytes of section 0 (GRIB 2; GRIB 1 needs 8 of them) and of a GRIB 2 section's header.
const SECTION_0: u64 = 16;
const SECTION_HEADER: u64 = 5;

/// How far past each range it asks for a remote reader should read
/// ([`FormatInfo::header_read_ahead`](tensor_dtype::FormatInfo::header_read_ahead)): a GRIB 2
/// message's sections before its data are a few hundred bytes (a few kilobytes with a
/// reduced grid's row lengths), so 4 KiB usually brings them in one round, where a reader's
/// usual read-ahead (64 KiB) would bring tens of kilobytes of data with every message.
pub(crate) const HEADER_READ_AHEAD: u64 = 4 << 10;

/// The ranges of `held` still needed before [`Grib::open_with`](crate::Grib::open_with) can
/// list the file: none once every header is held. A file whose walk goes astray (no `GRIB`
/// where a message should start, a length past the end) is wanted whole, so that the
/// reader says what is wrong with it.
pub(crate) fn header_ranges(file: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
    let len = file.len();
    let whole = || Ok(file.want(0..len));
    let mut want = Vec::new();
    let mut pos = 0u64;
    let mut messages = 0u64;
    while pos < len {
        let Some(head) = file.slice(pos..(pos + SECTION_0).min(len)) else {
            want.extend(file.want(pos..pos + SECTION_0));
            return Ok(want);
        };
        // Zero bytes between messages are padding, as the reader skips them.
        let zeros = head.iter().position(|&b| b != 0).unwrap_or(head.len());
        if zeros > 0 {
            pos += zeros as u64;
            continue;
        }
        if head.len() < 8 || &head[..4] != b"GRIB" {
            return whole();
        }
        let (message_len, edition) = match head[7] {
            1 => (be(&head[4..7]), 1),
            2 if head.len() == SECTION_0 as usize => (be(&head[8..16]), 2),
            _ => return whole(),
        };
        let Some(end) = pos
            .checked_add(message_len)
            .filter(|&e| e <= len && message_len > 20)
        else {
            return whole();
        };
        messages += 1;
        limits.check_tensor_count(messages)?;
        if edition == 1 {
            want.extend(file.want(pos..end));
        } else {
            want.extend(file.want(end - 4..end));
            let mut at = pos + SECTION_0;
            while at < end - 4 {
                let Some(h) = file.slice(at..at + SECTION_HEADER) else {
                    // The rest of this message's sections wait for this header; the next
                    // message's place is known already.
                    want.extend(file.want(at..at + SECTION_HEADER));
                    break;
                };
                let section_len = be(&h[..4]);
                if section_len < SECTION_HEADER || at + section_len > end - 4 {
                    return whole();
                }
                if h[4] != 7 {
                    want.extend(file.want(at..at + section_len));
                }
                at += section_len;
            }
        }
        pos = end;
    }
    Ok(want)
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |n, &x| (n << 8) | u64::from(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of which only some ranges are held.
    struct Partial {
        bytes: Vec<u8>,
        held: Vec<Range<u64>>,
    }

    impl Held for Partial {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
            self.missing(r.clone())
                .is_none()
                .then(|| &self.bytes[r.start as usize..r.end.min(self.len()) as usize])
        }
        fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
            let r = r.start..r.end.min(self.len());
            let first = (r.start..r.end).find(|&b| !self.held.iter().any(|h| h.contains(&b)))?;
            let last = (r.start..r.end)
                .rev()
                .find(|&b| !self.held.iter().any(|h| h.contains(&b)))?;
            Some(first..last + 1)
        }
    }

    fn message() -> Vec<u8> {
        std::fs::read(tensor_testkit::testdata().join("grib/reference/simple.grib2")).unwrap()
    }

    /// Rounds of fetching what is asked, until nothing is: returns the bytes fetched.
    fn walk(bytes: Vec<u8>) -> (Partial, u64) {
        let mut p = Partial {
            bytes,
            held: Vec::new(),
        };
        let mut fetched = 0;
        for _ in 0..100 {
            let want = header_ranges(&p, &Limits::default()).unwrap();
            if want.is_empty() {
                return (p, fetched);
            }
            // Widened as a remote reader widens its requests.
            let len = p.len();
            let want: Vec<Range<u64>> = want
                .into_iter()
                .map(|r| r.start..(r.end + 256).min(len))
                .collect();
            fetched += want.iter().map(|r| r.end - r.start).sum::<u64>();
            p.held.extend(want);
        }
        panic!("the walk does not end");
    }

    #[test]
    fn the_headers_of_every_message_are_enough_to_list_the_file() {
        let one = message();
        let file = [one.clone(), vec![0; 3], one.clone(), one.clone()].concat();
        let (p, fetched) = walk(file.clone());
        // The data sections were not asked for...
        assert!(
            fetched < file.len() as u64 / 2,
            "{fetched} of {}",
            file.len()
        );
        // ...and the reader lists the file from what was, as from the whole file.
        let mut image = vec![0u8; file.len()];
        for r in &p.held {
            image[r.start as usize..r.end as usize]
                .copy_from_slice(&file[r.start as usize..r.end as usize]);
        }
        let whole = crate::Grib::open(&file).unwrap();
        let partial = crate::Grib::open(&image).unwrap();
        assert_eq!(partial.fields().len(), whole.fields().len());
        for (a, b) in whole.fields().iter().zip(partial.fields()) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
    }

    #[test]
    fn a_file_that_is_not_grib_where_a_message_should_start_is_wanted_whole() {
        let file = [message(), b"JUNKJUNKJUNKJUNK".to_vec()].concat();
        let (p, _) = walk(file.clone());
        assert!(p.missing(0..file.len() as u64).is_none());
    }

    #[test]
    fn made_messages_read_back() {
        let m = tensor_testkit::grib::simple_message(40, 30, 500, 250.0);
        let g = crate::Grib::open(&m).unwrap();
        let v = g.values(0, &Limits::default()).unwrap();
        assert_eq!(v.len(), 1200);
        assert_eq!((v[0], v[999], v[1000]), (250.0, 1249.0, 250.0));
        assert_eq!(g.fields()[0].shape(), vec![30, 40]);
    }
}
