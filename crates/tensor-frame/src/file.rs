//! `.tgm` files: messages back to back, nothing else. Finding them (forward from the
//! preambles, backward from the postambles), iterating them lazily from memory or from a
//! reader, and appending.

use crate::error::{Error, Result};
use crate::message::Message;
use crate::wire::{
    self, ALIGNMENT, END_MAGIC, FRAME_HEADER_LEN, MAGIC, POSTAMBLE_LEN, PREAMBLE_LEN, Preamble,
};
use std::io::{Read, Write};
use std::ops::Range;
use std::path::Path;
use tensor_core::atomic::Durability;
use tensor_core::{Limits, MmapSource, ReadOptions};

fn find(hay: &[u8], needle: [u8; 8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(8)
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Frame positions (with the alignment phase of the message they were reached from) whose
/// chain of frames is known not to end in a postamble. Streamed messages have no length, so a
/// candidate preamble is checked by following its frames; remembering where those walks
/// failed keeps a scan linear even when a hostile file nests candidates in each other's
/// frames.
type DeadEnds = std::collections::HashSet<(usize, usize)>;

/// Where the frames from `at` (a preamble with length 0) lead: the message's end, if they
/// reach a postamble, with the frame positions passed on the way.
fn walk_to_postamble(
    buf: &[u8],
    at: usize,
    dead: &DeadEnds,
) -> (Option<usize>, Vec<(usize, usize)>) {
    let phase = at % ALIGNMENT as usize;
    let mut pos = at + PREAMBLE_LEN as usize;
    let mut visited = Vec::new();
    let end = loop {
        if dead.contains(&(pos, phase)) {
            break None;
        }
        visited.push((pos, phase));
        let Some(head) = buf.get(pos..pos + FRAME_HEADER_LEN as usize) else {
            break None;
        };
        if &head[..2] != b"FR" {
            let post = pos + POSTAMBLE_LEN as usize;
            break (post <= buf.len() && &buf[post - 8..post] == END_MAGIC).then_some(post);
        }
        let tl = wire::be_u64(head, 8);
        let Some(stop) = usize::try_from(tl).ok().and_then(|t| pos.checked_add(t)) else {
            break None;
        };
        if tl < FRAME_HEADER_LEN + 12 || stop > buf.len() || &buf[stop - 4..stop] != wire::FRAME_END
        {
            break None;
        }
        let rel = (stop - at) as u64;
        pos = at + (rel + wire::padding(rel)) as usize;
    };
    (end, visited)
}

/// The message that starts at `at`, if one does: its length.
fn message_at(buf: &[u8], at: usize, dead: &mut DeadEnds) -> Option<usize> {
    let pre = Preamble::parse(&buf[at..]).ok()?;
    let tl = pre.total_length;
    if tl == 0 {
        // Streamed with unknown length: the frames lead to the postamble, and the message
        // they delimit must open.
        let (end, visited) = walk_to_postamble(buf, at, dead);
        let len = end.and_then(|end| {
            Message::open_with(&buf[at..end], &Limits::unlimited().into())
                .ok()
                .map(|m| m.bytes().len())
        });
        if len.is_none() {
            // Every candidate that joins this chain of frames fails the same way.
            dead.extend(visited);
        }
        return len;
    }
    let end = at.checked_add(usize::try_from(tl).ok()?)?;
    (tl >= PREAMBLE_LEN + POSTAMBLE_LEN && end <= buf.len() && &buf[end - 8..end] == END_MAGIC)
        .then_some(tl as usize)
}

/// The messages in `buf`, found from the front: every valid preamble whose length leads to
/// an end magic. A damaged message costs only itself; the scan resumes at the next
/// `TENSOGRM`.
#[must_use]
pub fn scan(buf: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut dead = DeadEnds::new();
    while let Some(at) = find(buf, *MAGIC, pos) {
        match message_at(buf, at, &mut dead) {
            Some(len) => {
                out.push(at..at + len);
                pos = at + len;
            }
            None => pos = at + 1,
        }
    }
    out
}

/// The messages in `buf`, found from the back: each postamble's mirrored length leads to
/// its preamble. A message streamed without a length (0) is found by scanning forward over
/// what is left.
#[must_use]
pub fn scan_backward(buf: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut end = buf.len();
    while end >= (PREAMBLE_LEN + POSTAMBLE_LEN) as usize {
        if &buf[end - 8..end] != END_MAGIC {
            end -= 1;
            continue;
        }
        let tl = wire::be_u64(buf, end - 16);
        if tl == 0 {
            let mut rest: Vec<Range<usize>> = scan(&buf[..end])
                .into_iter()
                .filter(|r| r.end <= end)
                .collect();
            rest.reverse();
            out.extend(rest);
            break;
        }
        let start = usize::try_from(tl).ok().and_then(|t| end.checked_sub(t));
        match start {
            Some(s) if message_at(buf, s, &mut DeadEnds::new()) == Some(end - s) => {
                out.push(s..end);
                end = s;
            }
            _ => end -= 1,
        }
    }
    out.reverse();
    out
}

/// A `.tgm` file in memory or mapped from disk, with its messages found once at open.
#[derive(Debug)]
pub struct TgmFile<B: AsRef<[u8]>> {
    bytes: B,
    messages: Vec<Range<usize>>,
    options: ReadOptions,
}

impl TgmFile<MmapSource> {
    /// Maps the file at `path` and finds its messages, each opened with `options` when it is
    /// asked for ([`Messages`](crate::Messages) opens every message of bytes at once).
    pub fn map(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        Ok(TgmFile::new(MmapSource::open(path)?, options))
    }
}

impl<B: AsRef<[u8]>> TgmFile<B> {
    /// Finds the messages in `bytes`, each opened with `options` when it is asked for.
    pub fn new(bytes: B, options: &ReadOptions) -> Self {
        let messages = scan(bytes.as_ref());
        TgmFile {
            bytes,
            messages,
            options: *options,
        }
    }

    /// How many messages the file holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the file holds no message.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The whole file, messages and anything between them.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Where each message sits.
    #[must_use]
    pub fn ranges(&self) -> &[Range<usize>] {
        &self.messages
    }

    /// Bytes no message covers (damage, or data that is not Tensogram).
    #[must_use]
    pub fn unclaimed_bytes(&self) -> u64 {
        let covered: usize = self.messages.iter().map(ExactSizeIterator::len).sum();
        (self.bytes.as_ref().len() - covered) as u64
    }

    /// Message `i`, opened for random access.
    pub fn message(&self, i: usize) -> Result<Message<'_>> {
        let r = self.messages.get(i).ok_or(Error::ObjectIndex {
            index: i,
            count: self.messages.len(),
        })?;
        Message::open_with(&self.bytes.as_ref()[r.clone()], &self.options)
    }

    /// Every message in order, each opened only when the iterator reaches it.
    pub fn messages(&self) -> impl Iterator<Item = Result<Message<'_>>> + '_ {
        (0..self.len()).map(|i| self.message(i))
    }
}

/// Reads messages one after another from a reader, each into its own buffer; messages
/// streamed without a length are read frame by frame. Stops cleanly at end of input.
#[derive(Debug)]
pub struct MessageReader<R: Read> {
    reader: R,
    limits: Limits,
    done: bool,
}

impl<R: Read> MessageReader<R> {
    /// Reads from `reader`, holding no message larger than `limits.max_total_bytes`.
    pub fn new(reader: R, limits: &Limits) -> Self {
        MessageReader {
            reader,
            limits: *limits,
            done: false,
        }
    }

    /// Appends the next `n` bytes of the input to `buf`. The buffer grows with the bytes
    /// that actually arrive, never by the declared length up front: a 16-byte input that
    /// declares a huge message fails as truncated without allocating for it.
    fn fill(&mut self, buf: &mut Vec<u8>, n: u64) -> Result<()> {
        let start = buf.len() as u64;
        let total = start.saturating_add(n);
        self.limits.check_total_bytes(total)?;
        let got = (&mut self.reader)
            .take(n)
            .read_to_end(buf)
            .map_err(|e| Error::Core(tensor_core::Error::io("reading a Tensogram message", e)))?;
        if (got as u64) < n {
            return Err(Error::Core(tensor_core::Error::Truncated {
                what: "a Tensogram message",
                offset: start,
                needed: n,
                available: start + got as u64,
            }));
        }
        Ok(())
    }

    fn next_message(&mut self) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::with_capacity(PREAMBLE_LEN as usize);
        let mut first = [0u8; 1];
        loop {
            match self.reader.read(&mut first) {
                Ok(0) => return Ok(None),
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::Core(tensor_core::Error::io(
                        "reading a Tensogram message",
                        e,
                    )));
                }
            }
        }
        buf.push(first[0]);
        self.fill(&mut buf, PREAMBLE_LEN - 1)?;
        let pre = Preamble::parse(&buf)?;
        if pre.total_length != 0 {
            if pre.total_length < PREAMBLE_LEN + POSTAMBLE_LEN {
                return Err(Error::framing(
                    16,
                    format!("total_length {} is too small", pre.total_length),
                ));
            }
            self.fill(&mut buf, pre.total_length - PREAMBLE_LEN)?;
            return Ok(Some(buf));
        }
        // Unknown length: frame by frame until the postamble.
        loop {
            let at = buf.len() as u64;
            self.fill(&mut buf, 2)?;
            if &buf[at as usize..] == b"FR" {
                self.fill(&mut buf, FRAME_HEADER_LEN - 2)?;
                let tl = wire::be_u64(&buf, at as usize + 8);
                if tl < FRAME_HEADER_LEN + 12 {
                    return Err(Error::framing(
                        at,
                        format!("frame length {tl} is too small"),
                    ));
                }
                // `tl` comes from the input: a length near 2^64 must fail, not wrap.
                let padded = at
                    .checked_add(tl)
                    .and_then(|end| end.checked_add(wire::padding(end)))
                    .ok_or_else(|| {
                        Error::framing(at, format!("frame length {tl} overflows the message"))
                    })?;
                self.fill(&mut buf, padded - at - FRAME_HEADER_LEN)?;
            } else {
                self.fill(&mut buf, POSTAMBLE_LEN - 2)?;
                if &buf[buf.len() - 8..] != END_MAGIC || !at.is_multiple_of(ALIGNMENT) {
                    return Err(Error::framing(at, "expected a frame or the postamble"));
                }
                return Ok(Some(buf));
            }
        }
    }
}

impl<R: Read> Iterator for MessageReader<R> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_message().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

/// Appends one encoded message to the file at `path` (created if missing). A writer that
/// dies mid-append leaves at most a damaged last message, which scanning skips; the
/// messages before it are untouched. [`Durability::Synced`] syncs the message to disk
/// before this returns (and the directory, when the file is new), so that it survives a
/// power failure; [`Durability::Cached`] leaves that to the kernel, as tensogram's own
/// `append` does, and a power failure may then lose the messages of the last seconds
/// (docs/decisions/0008).
pub fn append(path: impl AsRef<Path>, message: &[u8], durability: Durability) -> Result<()> {
    let path = path.as_ref();
    Message::open_with(message, &Limits::unlimited().into())?;
    let ctx = || format!("appending to {}", path.display());
    let io = |e| Error::Core(tensor_core::Error::io(ctx(), e));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    let synced = durability == Durability::Synced;
    // Whether the file is new matters only to a synced append (its name must be synced too).
    let new = synced && f.metadata().map_err(io)?.len() == 0;
    f.write_all(message).map_err(io)?;
    if synced {
        f.sync_data().map_err(io)?;
        if new {
            tensor_core::atomic::sync_directory_of(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 3 preamble declaring a message of `total` bytes (0: streamed).
    fn preamble(total: u64) -> Vec<u8> {
        let mut bytes = crate::wire::MAGIC.to_vec();
        bytes.extend_from_slice(&3u16.to_be_bytes());
        bytes.extend_from_slice(&0u16.to_be_bytes());
        bytes.extend_from_slice(&0u32.to_be_bytes());
        bytes.extend_from_slice(&total.to_be_bytes());
        bytes
    }

    /// The error [`MessageReader`] gives for the first message of `bytes`, as text.
    fn first_error(bytes: Vec<u8>) -> String {
        let limits = Limits::unlimited();
        let mut r = MessageReader::new(std::io::Cursor::new(bytes), &limits);
        r.next().expect("an item").unwrap_err().to_string()
    }

    #[test]
    fn a_declared_length_is_not_allocated_before_the_bytes_arrive() {
        // A preamble declaring a 1 TiB message, and nothing after it.
        let text = first_error(preamble(1 << 40));
        assert!(text.contains("truncated"), "{text}");
    }

    #[test]
    fn a_frame_length_near_2_to_the_64_is_refused_without_wrapping() {
        // A streamed message (length 0) whose first frame claims u64::MAX - 3 bytes.
        let mut bytes = preamble(0);
        bytes.extend_from_slice(b"FR");
        bytes.extend_from_slice(&[0, 1, 0, 1, 0, 0]);
        bytes.extend_from_slice(&(u64::MAX - 3).to_be_bytes());
        let text = first_error(bytes);
        assert!(text.contains("overflows"), "{text}");
    }
}
