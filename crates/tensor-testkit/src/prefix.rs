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
