//! The parts of a remote object read so far, through which each format crate finds the
//! byte ranges its header, index or footer occupies ([`tensor_dtype::Format::header_ranges`]),
//! and how reads are widened.

use crate::error::Error;
use bytes::Bytes;
use std::ops::Range;

/// The parts of an object read so far.
#[derive(Clone, Debug)]
pub(crate) struct Parts {
    len: u64,
    parts: Vec<(u64, Bytes)>,
}

impl Parts {
    pub(crate) fn new(len: u64, parts: Vec<(u64, Bytes)>) -> Self {
        let mut p = Parts {
            len,
            parts: Vec::new(),
        };
        for (at, b) in parts {
            p.add(at, b);
        }
        p
    }

    /// Every part, by offset, none overlapping.
    pub(crate) fn parts(&self) -> &[(u64, Bytes)] {
        &self.parts
    }

    /// Keeps `bytes` read at `at`, joined with the parts it touches.
    pub(crate) fn add(&mut self, at: u64, bytes: Bytes) {
        if bytes.is_empty() {
            return;
        }
        let mut start = at;
        let mut end = at + bytes.len() as u64;
        let mut joined: Vec<(u64, Bytes)> = Vec::new();
        let mut rest = Vec::with_capacity(self.parts.len() + 1);
        for (s, b) in self.parts.drain(..) {
            let e = s + b.len() as u64;
            if e < start || s > end {
                rest.push((s, b));
            } else {
                start = start.min(s);
                end = end.max(e);
                joined.push((s, b));
            }
        }
        if joined.is_empty() {
            rest.push((at, bytes));
        } else {
            let mut whole = vec![0u8; usize::try_from(end - start).unwrap_or(usize::MAX)];
            joined.push((at, bytes));
            for (s, b) in &joined {
                let o = usize::try_from(s - start).unwrap_or(usize::MAX);
                whole[o..o + b.len()].copy_from_slice(b);
            }
            rest.push((start, Bytes::from(whole)));
        }
        rest.sort_by_key(|(s, _)| *s);
        self.parts = rest;
    }

    /// The bytes at `r`, when one part holds them all.
    pub(crate) fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
        let (s, b) = self
            .parts
            .iter()
            .find(|(s, b)| *s <= r.start && r.end <= s + b.len() as u64)?;
        let from = usize::try_from(r.start - s).ok()?;
        let to = usize::try_from(r.end - s).ok()?;
        Some(&b[from..to])
    }

    /// Whether every byte of the object is held.
    pub(crate) fn complete(&self) -> bool {
        self.parts.len() == 1 && self.parts[0].0 == 0 && self.parts[0].1.len() as u64 == self.len
    }

    /// The part of `r` not held yet, as one range (`None` when all of it is held).
    pub(crate) fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
        let r = r.start.min(self.len)..r.end.min(self.len);
        if r.is_empty() || self.slice(r.clone()).is_some() {
            return None;
        }
        // Trim what a part already holds at either end.
        let mut m = r;
        for (s, b) in &self.parts {
            let e = s + b.len() as u64;
            if *s <= m.start && e > m.start {
                m.start = e.min(m.end);
            }
            if *s < m.end && e >= m.end {
                m.end = (*s).max(m.start);
            }
        }
        (!m.is_empty()).then_some(m)
    }
}

impl tensor_core::Held for Parts {
    fn len(&self) -> u64 {
        self.len
    }

    fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
        Parts::slice(self, r)
    }

    fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
        Parts::missing(self, r)
    }
}

/// Whether a file called `path` may keep its header, index or footer at its end, so that
/// opening it reads its last bytes along with its first: unless every format its extension
/// names starts with everything a reader needs ([`FormatInfo::header_first`](tensor_dtype::FormatInfo)),
/// or it is a shard index (`.json`). A name that does not say may.
pub(crate) fn may_end_with_header(path: &std::path::Path) -> bool {
    let Some(ext) = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
    else {
        return true;
    };
    if ext == "json" {
        return false;
    }
    let named: Vec<crate::Format> = crate::Format::all()
        .into_iter()
        .filter(|f| f.info().extensions.contains(&ext.as_str()))
        .collect();
    named.is_empty() || named.iter().any(|f| !f.info().header_first)
}

/// `r` widened for reading: by the read-ahead towards the object's end, or to the end when
/// it lies that close to it, and by its own length (the frame or section after a header
/// part is usually no longer than it): a second round trip for a neighbour costs more than
/// the bytes.
pub(crate) fn widen(r: Range<u64>, len: u64, read_ahead: u64) -> Range<u64> {
    if r.end.saturating_add(read_ahead) >= len {
        return r.start.min(len.saturating_sub(read_ahead))..len;
    }
    let extra = read_ahead.max(r.end - r.start);
    r.start..r.end.saturating_add(extra).min(len)
}

/// An error for an object too short to hold what its header promises, found while looking
/// for its header.
pub(crate) fn too_short(url: &str, len: u64) -> Error {
    Error::Remote {
        url: url.to_owned(),
        what: format!("the object is {len} bytes long, too short for any tensor file"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use tensor_core::Limits;

    fn parts(len: u64, at: &[(u64, &[u8])]) -> Parts {
        Parts::new(
            len,
            at.iter()
                .map(|(a, b)| (*a, Bytes::copy_from_slice(b)))
                .collect(),
        )
    }

    #[test]
    fn parts_join_and_report_what_is_missing() {
        let mut p = parts(100, &[(0, &[1; 10]), (50, &[2; 10])]);
        assert_eq!(p.missing(0..10), None);
        assert_eq!(p.missing(5..20), Some(10..20));
        assert_eq!(p.missing(40..55), Some(40..50));
        p.add(10, Bytes::from(vec![3; 40]));
        assert_eq!(p.parts().len(), 1);
        assert_eq!(p.slice(8..12), Some(&[1, 1, 3, 3][..]));
        assert_eq!(p.slice(48..52), Some(&[3, 3, 2, 2][..]));
        assert!(!p.complete());
        p.add(60, Bytes::from(vec![4; 40]));
        assert!(p.complete());
    }

    #[test]
    fn a_safetensors_header_is_found_from_its_length() {
        let mut head = 100u64.to_le_bytes().to_vec();
        head.extend([b'{'; 10]);
        let p = parts(10_000, &[(0, &head)]);
        let path = std::path::Path::new("w.safetensors");
        let need = Format::SAFETENSORS
            .adapter()
            .header_ranges(path, &p, &Limits::default())
            .unwrap();
        assert_eq!(need, vec![18..108]);
        let huge = parts(10_000, &[(0, &u64::MAX.to_le_bytes())]);
        assert!(
            Format::SAFETENSORS
                .adapter()
                .header_ranges(path, &huge, &Limits::default())
                .is_err()
        );
    }

    #[test]
    fn widening_reaches_the_end_when_close_to_it() {
        assert_eq!(widen(10..20, 1000, 100), 10..120);
        assert_eq!(widen(900..950, 1000, 100), 900..1000);
        assert_eq!(widen(10..500, 10_000, 100), 10..990);
    }
}
