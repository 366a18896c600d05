//! Which bytes of a remote object hold its header, index or footer, found from the bytes
//! read so far: each format's own pointers (a length prefix, a footer, a message's lengths
//! and frame headers) followed until every byte a listing reads is known.

use crate::error::{Error, Result};
use crate::model::FormatId;
use bytes::Bytes;
use std::ops::Range;
use tensor_core::Limits;

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

    /// The object's length.
    pub(crate) fn len(&self) -> u64 {
        self.len
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

    fn u64_le(&self, at: u64) -> Option<u64> {
        let b = self.slice(at..at + 8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    fn u64_be(&self, at: u64) -> Option<u64> {
        let b = self.slice(at..at + 8)?;
        Some(u64::from_be_bytes(b.try_into().ok()?))
    }
}

/// What is still needed before the tensors of the object can be listed: the ranges to read
/// next (empty when the listing can be made from what is held). Ranges are found one step
/// at a time, as each format's pointers lead from one structure to the next.
pub(crate) fn needed(format: FormatId, parts: &Parts, limits: &Limits) -> Result<Vec<Range<u64>>> {
    let len = parts.len();
    let want = |r: Range<u64>| parts.missing(r).into_iter().collect::<Vec<_>>();
    Ok(match format {
        // Messages follow one another with no index: the whole object is read.
        FormatId::Grib => want(0..len),
        // A u64 header length, then the header.
        FormatId::Safetensors | FormatId::Bintensors | FormatId::BintensorsLegacy => {
            match parts.u64_le(0) {
                None => want(0..8),
                Some(n) => {
                    limits.check_header_bytes(n)?;
                    want(0..n.saturating_add(8))
                }
            }
        }
        // The index's length in the last 8 bytes, the index before it.
        FormatId::Ztensor01 => match parts.u64_le(len.saturating_sub(8)) {
            None => want(len.saturating_sub(8)..len),
            Some(n) => {
                limits.check_header_bytes(n)?;
                want(len.saturating_sub(8).saturating_sub(n)..len)
            }
        },
        // The manifest's length before the trailing magic (1.1 and later) or at the end.
        FormatId::Ztensor1 => {
            let tail = len.saturating_sub(16)..len;
            match parts.slice(tail.clone()) {
                None => want(tail),
                Some(t) => {
                    let at = if t[8..] == tensor_ztensor::MAGIC_V1[..] {
                        len - 16
                    } else {
                        len - 8
                    };
                    let n = parts.u64_le(at).unwrap_or(0);
                    limits.check_header_bytes(n)?;
                    want(at.saturating_sub(n)..len)
                }
            }
        }
        // A 40-byte footer giving the manifest's offset and length.
        FormatId::Ztensor2 => {
            let footer = len.saturating_sub(40);
            match (parts.u64_le(footer), parts.u64_le(footer + 8)) {
                (Some(at), Some(n)) => {
                    limits.check_header_bytes(n)?;
                    let mut r = want(at.min(len)..at.saturating_add(n).min(len));
                    r.extend(want(footer..len));
                    r
                }
                _ => want(footer..len),
            }
        }
        FormatId::Tensogram => tensogram(parts, limits)?,
    })
}

/// Tensogram: every message's preamble, header frames (up to the first data frame's
/// header), postamble and footer frames. A message without an index, with preceders, or of
/// unknown length is needed whole: its objects are found only by walking its frames. A file
/// with a message of wire version 2 is needed whole.
fn tensogram(parts: &Parts, limits: &Limits) -> Result<Vec<Range<u64>>> {
    use tensor_frame::wire::{
        FRAME_HEADER_LEN as FRAME_HEADER, POSTAMBLE_LEN, PREAMBLE_LEN, padding,
    };
    let len = parts.len();
    let mut pos = 0u64;
    let mut whole_bytes = 0u64;
    while pos < len {
        let Some(pre) = parts.slice(pos..(pos + PREAMBLE_LEN).min(len)) else {
            return Ok(parts.missing(pos..pos + PREAMBLE_LEN).into_iter().collect());
        };
        if pre.len() < 24 || &pre[..8] != tensor_frame::wire::MAGIC {
            // Not a message here: the listing reports what is wrong.
            return Ok(Vec::new());
        }
        if tensor_frame::v2::is_v2(pre) {
            // Wire version 2 (tensogram 0.14 to 0.16) is migrated to version 3 before it
            // is read, which takes every byte of the object.
            limits.check_total_bytes(len)?;
            return Ok(parts.missing(0..len).into_iter().collect());
        }
        let flags = u16::from_be_bytes([pre[10], pre[11]]);
        let total = u64::from_be_bytes(pre[16..24].try_into().unwrap_or_default());
        let indexed = flags
            & (tensor_frame::wire::flags::HEADER_INDEX | tensor_frame::wire::flags::FOOTER_INDEX)
            != 0;
        let preceders = flags & tensor_frame::wire::flags::PRECEDER_METADATA != 0;
        if total == 0 || !indexed || preceders || pos.saturating_add(total) > len {
            // Walked frame by frame: the whole message (or the rest of the object, for a
            // length the object cannot hold, which the listing then reports).
            let end = if total == 0 || pos.saturating_add(total) > len {
                len
            } else {
                pos + total
            };
            whole_bytes = whole_bytes.saturating_add(end - pos);
            limits.check_header_bytes(whole_bytes)?;
            if let Some(m) = parts.missing(pos..end) {
                return Ok(vec![m]);
            }
            if total == 0 {
                return Ok(Vec::new());
            }
            pos += total;
            continue;
        }
        let end = pos + total;
        let post = end - POSTAMBLE_LEN;
        let Some(first_footer) = parts.u64_be(post) else {
            return Ok(parts.missing(post..end).into_iter().collect());
        };
        // Header frames, up to the header of the first frame of another phase.
        let mut at = pos + PREAMBLE_LEN;
        let mut header_bytes = 0u64;
        while at < post {
            let Some(h) = parts.slice(at..(at + FRAME_HEADER).min(post)) else {
                return Ok(parts.missing(at..at + FRAME_HEADER).into_iter().collect());
            };
            if h.len() < 16 {
                break;
            }
            let kind = u16::from_be_bytes([h[2], h[3]]);
            let flen = u64::from_be_bytes(h[8..16].try_into().unwrap_or_default());
            if !(1..=3).contains(&kind) || flen < FRAME_HEADER {
                break;
            }
            header_bytes = header_bytes.saturating_add(flen);
            limits.check_header_bytes(header_bytes)?;
            let frame_end = at.saturating_add(flen).min(post);
            if let Some(m) = parts.missing(at..frame_end) {
                return Ok(vec![m]);
            }
            at = frame_end + padding(frame_end - pos);
        }
        let ffo = pos.saturating_add(first_footer);
        if ffo < post && ffo >= pos + PREAMBLE_LEN {
            limits.check_header_bytes(post - ffo)?;
            if let Some(m) = parts.missing(ffo..end) {
                return Ok(vec![m]);
            }
        }
        pos = end;
    }
    Ok(Vec::new())
}

/// Whether a file called `path` may keep its header, index or footer at its end (zTensor,
/// Tensogram, and any name that does not say), so that opening it reads its last bytes
/// along with its first: safetensors and BinTensors files, and shard indexes, start with
/// everything a reader needs.
pub(crate) fn may_end_with_header(path: &std::path::Path) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    !matches!(
        ext.as_deref(),
        Some("safetensors" | "bt" | "bintensors" | "json")
    )
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
        let need = needed(FormatId::Safetensors, &p, &Limits::default()).unwrap();
        assert_eq!(need, vec![18..108]);
        let huge = parts(10_000, &[(0, &u64::MAX.to_le_bytes())]);
        assert!(needed(FormatId::Safetensors, &huge, &Limits::default()).is_err());
    }

    #[test]
    fn widening_reaches_the_end_when_close_to_it() {
        assert_eq!(widen(10..20, 1000, 100), 10..120);
        assert_eq!(widen(900..950, 1000, 100), 900..1000);
        assert_eq!(widen(10..500, 10_000, 100), 10..990);
    }
}
