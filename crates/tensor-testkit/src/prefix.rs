//! [`Prefix`]: a file of which only the first bytes are held, as a remote reader holds a
//! file while it reads its header.

use std::ops::Range;
use tensor_core::Held;

/// The first `held` bytes of `bytes` held, the rest missing.
#[derive(Clone, Copy, Debug)]
pub struct Prefix<'a> {
    /// The whole file.
    pub bytes: &'a [u8],
    /// How many of its first bytes are held.
    pub held: u64,
}

impl Prefix<'_> {
    /// Reads a header as a remote reader does: from the first `first` bytes of `bytes` held,
    /// asks `next` (a format's `header_ranges`) for the ranges still needed and holds each,
    /// until it asks for none. Returns how many bytes were then held; an error when it asks
    /// for a range that does not start where the held bytes end, or takes more than
    /// `max_requests` reads in all (the first included).
    pub fn read_header<E: std::fmt::Display>(
        bytes: &[u8],
        first: u64,
        max_requests: usize,
        mut next: impl FnMut(&Prefix<'_>) -> Result<Vec<Range<u64>>, E>,
    ) -> Result<u64, String> {
        let mut held = Prefix {
            bytes,
            held: first.min(bytes.len() as u64),
        };
        let mut requests = 1;
        loop {
            let need = next(&held).map_err(|e| e.to_string())?;
            let Some(r) = need.first() else {
                return Ok(held.held);
            };
            if r.start != held.held {
                return Err(format!("asked for {r:?} with {} held", held.held));
            }
            held.held = r.end;
            requests += 1;
            if requests > max_requests {
                return Err(format!("more than {max_requests} requests"));
            }
        }
    }
}

impl Held for Prefix<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn slice(&self, r: Range<u64>) -> Option<&[u8]> {
        (r.end <= self.held).then(|| &self.bytes[r.start as usize..r.end as usize])
    }

    fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
        let end = r.end.min(self.len());
        (end > self.held).then(|| r.start.max(self.held)..end)
    }
}
