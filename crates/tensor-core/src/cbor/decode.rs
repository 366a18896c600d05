//! The bounded decoder: [`Decoder`] over a byte slice, item by item or whole values, with
//! spans, borrowed strings, and walks over maps and arrays that check key order on the
//! encoded bytes.

use super::value::{MAX_DEPTH, Value, float_width};
use crate::error::{Error, Result};
use half::f16;

mod split;

#[cfg(doc)]
use super::{Encoder, to_canonical};

/// A data item's head: major type and argument (`None` for an indefinite length).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// Major type, 0 to 7.
    pub major: u8,
    /// The argument; `None` for indefinite-length strings, arrays and maps, and for the
    /// "break" stop code (major 7).
    pub arg: Option<u64>,
    /// The additional-information bits (for floats: 25, 26 or 27).
    pub info: u8,
}

/// A bounded CBOR decoder over a byte slice.
#[derive(Clone, Debug)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Whether every head so far used the shortest argument form and definite lengths.
    canonical: bool,
    /// Whether every map so far had its keys in strictly ascending order of their encoded
    /// bytes (the order of deterministic CBOR, §4.2.1; no key twice).
    sorted: bool,
    /// Whether every float so far had the narrowest width that keeps its bits.
    short_floats: bool,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Self {
        Self::at(buf, 0)
    }

    /// A decoder at offset `pos` of `buf` (at its end if `pos` is past it), for reading an
    /// item whose place an earlier pass noted; errors give offsets in `buf`.
    #[must_use]
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Decoder {
            buf,
            pos: pos.min(buf.len()),
            canonical: true,
            sorted: true,
            short_floats: true,
        }
    }

    /// The offset of the next byte to decode.
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether everything decoded so far used shortest-form heads and definite lengths.
    #[must_use]
    pub fn was_canonical(&self) -> bool {
        self.canonical
    }

    /// Whether every map decoded or skipped so far had its keys in strictly ascending order
    /// of their encoded bytes, as deterministic CBOR requires (§4.2.1): checked on the
    /// bytes as they are, with no re-encoding.
    #[must_use]
    pub fn keys_were_sorted(&self) -> bool {
        self.sorted
    }

    /// Whether every float decoded or skipped so far was in the narrowest width that keeps
    /// its bits (payloads of NaNs included), as [`Encoder::canonical`] writes floats.
    #[must_use]
    pub fn floats_were_shortest(&self) -> bool {
        self.short_floats
    }

    /// Whether everything decoded or skipped so far was in the deterministic encoding that
    /// [`to_canonical`] writes: [`was_canonical`](Self::was_canonical),
    /// [`keys_were_sorted`](Self::keys_were_sorted) and
    /// [`floats_were_shortest`](Self::floats_were_shortest). Told from the bytes as they are
    /// read, with no re-encoding (maps with a key twice are not deterministic, though their
    /// re-encoding may match).
    #[must_use]
    pub fn was_deterministic(&self) -> bool {
        self.canonical && self.sorted && self.short_floats
    }

    /// An error at the current position.
    #[must_use]
    pub fn error(&self, reason: impl Into<String>) -> Error {
        Error::Malformed {
            what: "CBOR",
            offset: self.pos as u64,
            reason: reason.into(),
        }
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let Some(s) = self.buf.get(self.pos..).and_then(|rest| rest.get(..n)) else {
            return Err(self.short(n));
        };
        self.pos += n;
        Ok(s)
    }

    /// The error for `n` bytes needed where fewer remain (kept out of the hot paths).
    #[cold]
    #[inline(never)]
    fn short(&self, n: usize) -> Error {
        self.error(format!("{n} bytes needed, {} remain", self.remaining()))
    }

    /// The next `n` bytes, `n` being a length read from the input.
    fn take_len(&mut self, n: u64) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| self.error("string length overflows"))?;
        self.take(n)
    }

    /// The next head when it is of major type `major` (and read past it); `None`, having
    /// read nothing, when it is of another type.
    #[inline]
    fn head_if(&mut self, major: u8) -> Result<Option<Head>> {
        match self.buf.get(self.pos) {
            Some(&b) if b >> 5 == major => self.head().map(Some),
            Some(_) => Ok(None),
            None => Err(self.short(1)),
        }
    }

    /// Reads past `bytes` when they come next, whole: for a format that knows the exact
    /// encoding its writers use for a run of items (a map's head and its first key, say).
    /// They count as canonical and sorted, so only canonical runs, keys in order, should be
    /// given. `false`, having read nothing, otherwise.
    #[inline]
    pub fn literal(&mut self, bytes: &[u8]) -> bool {
        let found = self
            .buf
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(bytes));
        if found {
            self.pos += bytes.len();
        }
        found
    }

    /// Whether the next byte is the "break" stop code.
    #[must_use]
    pub fn at_break(&self) -> bool {
        self.buf.get(self.pos) == Some(&0xFF)
    }

    /// The next head, without reading past it.
    #[inline]
    pub fn peek(&self) -> Result<Head> {
        // Most heads are one byte: nothing to note for the encoding flags.
        match self.buf.get(self.pos) {
            Some(&b) if b & 0x1F < 24 => Ok(Head {
                major: b >> 5,
                arg: Some(u64::from(b & 0x1F)),
                info: b & 0x1F,
            }),
            _ => self.clone().head(),
        }
    }

    /// Reads one head.
    #[inline]
    pub fn head(&mut self) -> Result<Head> {
        let Some(&b) = self.buf.get(self.pos) else {
            return Err(self.short(1));
        };
        let (major, info) = (b >> 5, b & 0x1F);
        self.pos += 1;
        // Most arguments are in the initial byte: the shortest form.
        let arg = if info < 24 {
            Some(u64::from(info))
        } else {
            self.long_arg(major, info)?
        };
        Ok(Head { major, arg, info })
    }

    /// The argument that follows an initial byte of major type `major` and additional
    /// information `info` (24 or more); `None` for an indefinite length or a break.
    fn long_arg(&mut self, major: u8, info: u8) -> Result<Option<u64>> {
        let arg = match info {
            24 => Some(u64::from(self.take(1)?[0])),
            25 => Some(u64::from(u16::from_be_bytes(self.array()?))),
            26 => Some(u64::from(u32::from_be_bytes(self.array()?))),
            27 => Some(u64::from_be_bytes(self.array()?)),
            31 if matches!(major, 2..=5 | 7) => None,
            _ => {
                self.pos -= 1;
                return Err(self.error(format!(
                    "reserved additional information {info} in major type {major}"
                )));
            }
        };
        if major == 7 {
            match (info, arg) {
                // A simple value below 32 fits in the initial byte.
                (24, Some(v)) => self.canonical &= v >= 32,
                (26, Some(v)) => {
                    self.short_floats &= float_width(f64::from(f32::from_bits(v as u32))) == 26;
                }
                (27, Some(v)) => self.short_floats &= float_width(f64::from_bits(v)) == 27,
                _ => {}
            }
        } else {
            let shortest = match (info, arg) {
                (24, Some(v)) => v >= 24,
                (25, Some(v)) => v > 0xFF,
                (26, Some(v)) => v > 0xFFFF,
                (27, Some(v)) => v > 0xFFFF_FFFF,
                _ => false,
            };
            self.canonical &= shortest;
        }
        Ok(arg)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// Consumes a "break" stop code, failing if the next byte is not one.
    pub fn expect_break(&mut self) -> Result<()> {
        if self.at_break() {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error("expected a break stop code"))
        }
    }

    /// The length of a definite container, checked against what remains: each of its `per`
    /// items needs at least one byte.
    fn count(&mut self, n: u64, per: u64) -> Result<usize> {
        if n.saturating_mul(per) > self.remaining() as u64 {
            return Err(self.error(format!(
                "a container of {n} items cannot fit in the {} bytes that remain",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    /// A text string, borrowed from the input when it is stored in one piece.
    #[inline]
    pub fn text(&mut self) -> Result<std::borrow::Cow<'a, str>> {
        // Short strings (keys, names, dtypes: under 24 bytes) have their length in the
        // initial byte.
        if let Some(&b) = self.buf.get(self.pos)
            && b >> 5 == 3
            && b & 0x1F < 24
        {
            let start = self.pos + 1;
            if let Some(Ok(s)) = self
                .buf
                .get(start..start + usize::from(b & 0x1F))
                .map(std::str::from_utf8)
            {
                self.pos = start + s.len();
                return Ok(std::borrow::Cow::Borrowed(s));
            }
        }
        self.any_text()
    }

    /// A text string's bytes, checked as [`text`](Self::text) checks them, ASCII without a
    /// call to the UTF-8 check: for keys and names a format compares with its own.
    #[inline]
    pub fn text_bytes(&mut self) -> Result<std::borrow::Cow<'a, [u8]>> {
        if let Some(ascii) = self.ascii_text() {
            return Ok(std::borrow::Cow::Borrowed(ascii));
        }
        Ok(match self.text()? {
            std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
            std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
        })
    }

    /// A definite text string of ASCII characters alone (which are UTF-8 as they are), as
    /// bytes borrowed from the input; `None`, having read nothing, when the next item is
    /// anything else (other text included).
    #[inline]
    fn ascii_text(&mut self) -> Option<&'a [u8]> {
        // Lengths below 24 in the initial byte, up to 255 in the next (shorter ones there
        // are not canonical: `text` reads those, noting it).
        let &initial = self.buf.get(self.pos)?;
        let (start, n) = match (initial >> 5, initial & 0x1F) {
            (3, n @ 0..24) => (self.pos + 1, usize::from(n)),
            (3, 24) => match self.buf.get(self.pos + 1) {
                Some(&n) if n >= 24 => (self.pos + 2, usize::from(n)),
                _ => return None,
            },
            _ => return None,
        };
        let bytes = self.buf.get(start..start + n)?;
        if !bytes.is_ascii() {
            return None;
        }
        self.pos = start + n;
        Some(bytes)
    }

    /// [`text`](Self::text) of any length, in one piece or in chunks.
    fn any_text(&mut self) -> Result<std::borrow::Cow<'a, str>> {
        let start = self.pos;
        let Some(h) = self.head_if(3)? else {
            return Err(self.error("expected a text string"));
        };
        if let Some(n) = h.arg {
            let bytes = self.take_len(n)?;
            std::str::from_utf8(bytes)
                .map(std::borrow::Cow::Borrowed)
                .map_err(|_| not_utf8(start))
        } else {
            let bytes = self.string(None, 3)?;
            String::from_utf8(bytes)
                .map(std::borrow::Cow::Owned)
                .map_err(|_| not_utf8(start))
        }
    }

    /// An unsigned integer.
    pub fn uint(&mut self) -> Result<u64> {
        match self.head_if(0)? {
            Some(Head { arg: Some(n), .. }) => Ok(n),
            _ => Err(self.error("expected an unsigned integer")),
        }
    }

    /// Decodes one complete data item.
    pub fn value(&mut self) -> Result<Value> {
        self.value_at(0)
    }

    /// Decodes one complete data item and returns the bytes it occupied.
    pub fn value_with_span(&mut self) -> Result<(Value, &'a [u8])> {
        let start = self.pos;
        let v = self.value()?;
        Ok((v, &self.buf[start..self.pos]))
    }

    fn string(&mut self, arg: Option<u64>, major: u8) -> Result<Vec<u8>> {
        if let Some(n) = arg {
            return Ok(self.take_len(n)?.to_vec());
        }
        // Indefinite: definite chunks of the same major type until a break.
        let mut out = Vec::new();
        loop {
            if self.at_break() {
                self.pos += 1;
                return Ok(out);
            }
            let h = self.head()?;
            if h.major != major || h.arg.is_none() {
                return Err(self.error(
                    "an indefinite string chunk must be a definite string of the same type",
                ));
            }
            out.extend_from_slice(&self.string(h.arg, major)?);
        }
    }

    /// Calls `entry` for each entry of a map whose head (argument `arg`: `None` for an
    /// indefinite length) was just read, with the decoder at the entry's key; `entry` reads
    /// the key and its value. With `order`, notes the keys' order on the way: a key that is
    /// not a number or a definite string is measured by a walk that does not check order
    /// (the walk `entry` makes checks it), so keys nested in keys cost one extra pass each,
    /// never a doubling per level.
    fn each_entry<E: From<Error>>(
        &mut self,
        arg: Option<u64>,
        depth: usize,
        order: bool,
        mut entry: impl FnMut(&mut Self) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut left = match arg {
            Some(n) => Some(self.count(n, 2)?),
            None => None,
        };
        let mut last: Option<(usize, usize)> = None;
        loop {
            match &mut left {
                Some(0) => return Ok(()),
                Some(n) => *n -= 1,
                None if self.at_break() => {
                    self.pos += 1;
                    return Ok(());
                }
                None => {}
            }
            if order {
                self.note_key(depth, &mut last)?;
            }
            entry(self)?;
        }
    }

    /// Notes whether the key at the current position sorts after `last`, the previous key's
    /// extent, and makes it `last`; the key is measured, not read (the entry reads it).
    fn note_key(&mut self, depth: usize, last: &mut Option<(usize, usize)>) -> Result<()> {
        let key = (self.pos, self.key_end(depth)?);
        self.note_order(key, last);
        Ok(())
    }

    /// Notes whether the key with extent `key` sorts after `last`, the previous key's extent,
    /// and makes it `last`.
    fn note_order(&mut self, key: (usize, usize), last: &mut Option<(usize, usize)>) {
        if let Some((a, b)) = *last {
            self.sorted &= less(&self.buf[a..b], &self.buf[key.0..key.1]);
        }
        *last = Some(key);
    }

    /// Where the key that starts at the current position ends (read without moving).
    #[inline]
    fn key_end(&self, depth: usize) -> Result<usize> {
        // Short strings and small integers, nearly every key, end where their first byte
        // says.
        if let Some(&b) = self.buf.get(self.pos) {
            let (major, info) = (b >> 5, usize::from(b & 0x1F));
            let end = match major {
                0 | 1 if info < 24 => Some(self.pos + 1),
                2 | 3 if info < 24 => Some(self.pos + 1 + info),
                _ => None,
            };
            if let Some(end) = end.filter(|&e| e <= self.buf.len()) {
                return Ok(end);
            }
        }
        let mut key = self.clone();
        match key.head()? {
            Head {
                major: 0 | 1,
                arg: Some(_),
                ..
            } => {}
            Head {
                major: 2 | 3,
                arg: Some(n),
                ..
            } => {
                key.take_len(n)?;
            }
            _ => {
                key = self.clone();
                key.skip_at(depth + 1, false)?;
            }
        }
        Ok(key.pos)
    }

    /// Calls `entry` for each entry of the map that comes next, with the decoder at the
    /// entry's key; `entry` must read (or [skip](Self::skip)) the key and then its value.
    /// Returns `false`, having read nothing, if the next item is not a map. `entry`'s own
    /// errors come back as they are.
    pub fn for_each_entry<E: From<Error>>(
        &mut self,
        entry: impl FnMut(&mut Self) -> Result<(), E>,
    ) -> Result<bool, E> {
        let Some(h) = self.head_if(5)? else {
            return Ok(false);
        };
        self.each_entry(h.arg, 0, true, entry)?;
        Ok(true)
    }

    /// Calls `field` for each entry of the map that comes next whose key is text, with the
    /// key's bytes (checked as [`text_bytes`](Self::text_bytes) checks them) and the decoder
    /// at the entry's value, which `field` must read or [skip](Self::skip); entries under
    /// other keys are skipped. Returns `false`, having read nothing, if the next item is not
    /// a map. Key order is noted as [`for_each_entry`](Self::for_each_entry) notes it, each
    /// key being read once.
    pub fn for_each_field<E: From<Error>>(
        &mut self,
        mut field: impl FnMut(&[u8], &mut Self) -> Result<(), E>,
    ) -> Result<bool, E> {
        let Some(h) = self.head_if(5)? else {
            return Ok(false);
        };
        let mut last = None;
        // Order is noted here, where each key is read, not by the walk.
        self.each_entry(h.arg, 0, false, |d| {
            let start = d.pos;
            // Nearly every key: short ASCII text, measured as it is read.
            if let Some(key) = d.ascii_text() {
                d.note_order((start, d.pos), &mut last);
                return field(key, d);
            }
            d.note_key(0, &mut last)?;
            if let Ok(key) = d.text_bytes() {
                return field(&key, d);
            }
            // Not text (or not UTF-8, which skipping it reports).
            d.pos = start;
            d.skip()?;
            Ok(d.skip()?)
        })?;
        Ok(true)
    }

    /// Calls `item` for each item of the array that comes next; `item` must read (or
    /// [skip](Self::skip)) it. Returns `false`, having read nothing, if the next item is not
    /// an array. `item`'s own errors come back as they are.
    pub fn for_each_item<E: From<Error>>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<(), E>,
    ) -> Result<bool, E> {
        let Some(h) = self.head_if(4)? else {
            return Ok(false);
        };
        self.each_item(h.arg, &mut item)?;
        Ok(true)
    }

    fn each_item<E: From<Error>>(
        &mut self,
        arg: Option<u64>,
        item: &mut impl FnMut(&mut Self) -> Result<(), E>,
    ) -> Result<(), E> {
        if let Some(n) = arg {
            return (0..self.count(n, 1)?).try_for_each(|_| item(self));
        }
        while !self.at_break() {
            item(self)?;
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads past one complete data item, checking it as [`value`](Self::value) does
    /// (lengths, nesting, UTF-8, and for [`was_canonical`](Self::was_canonical) and
    /// [`keys_were_sorted`](Self::keys_were_sorted) its encoding) without building it.
    pub fn skip(&mut self) -> Result<()> {
        self.skip_at(0, true)
    }

    /// [`skip`](Self::skip) at nesting `depth`; `order` says whether maps' key order is
    /// noted.
    fn skip_at(&mut self, depth: usize, order: bool) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let start = self.pos;
        let h = self.head()?;
        match (h.major, h.arg) {
            (0 | 1 | 7, Some(_)) => Ok(()),
            (2, Some(n)) => self.take_len(n).map(drop),
            (2, None) => self.string(None, 2).map(drop),
            (3, Some(n)) => {
                // Nearly all text is ASCII, which is UTF-8 without a closer look.
                let bytes = self.take_len(n)?;
                if bytes.is_ascii() || std::str::from_utf8(bytes).is_ok() {
                    Ok(())
                } else {
                    Err(not_utf8(start))
                }
            }
            (3, None) => {
                self.pos = start;
                self.text().map(drop)
            }
            (4, arg) => self.each_item(arg, &mut |d: &mut Self| d.skip_at(depth + 1, order)),
            (5, arg) => self.each_entry(arg, depth, order, |d: &mut Self| -> Result<()> {
                d.skip_at(depth + 1, order)?;
                d.skip_at(depth + 1, order)
            }),
            (6, Some(_)) => self.skip_at(depth + 1, order),
            (7, None) => Err(self.error("unexpected break stop code")),
            _ => Err(self.error("invalid head")),
        }
    }

    fn value_at(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH}")));
        }
        let h = self.head()?;
        Ok(match (h.major, h.arg) {
            (0, Some(n)) => Value::Uint(n),
            (1, Some(n)) => Value::Nint(n),
            (2, arg) => Value::Bytes(self.string(arg, 2)?),
            (3, arg) => {
                let start = self.pos;
                let bytes = self.string(arg, 3)?;
                Value::Text(String::from_utf8(bytes).map_err(|_| not_utf8(start))?)
            }
            (4, arg) => {
                let mut items = Vec::with_capacity(match arg {
                    Some(n) => self.count(n, 1)?,
                    None => 0,
                });
                self.each_item(arg, &mut |d| {
                    items.push(d.value_at(depth + 1)?);
                    Ok(())
                })?;
                Value::Array(items)
            }
            (5, arg) => {
                let mut entries = Vec::with_capacity(match arg {
                    Some(n) => self.count(n, 2)?,
                    None => 0,
                });
                self.each_entry(arg, depth, true, |d| {
                    let k = d.value_at(depth + 1)?;
                    let v = d.value_at(depth + 1)?;
                    entries.push((k, v));
                    Ok(())
                })?;
                Value::Map(entries)
            }
            (6, Some(t)) => Value::Tag(t, Box::new(self.value_at(depth + 1)?)),
            (7, Some(v)) => match h.info {
                20 => Value::Bool(false),
                21 => Value::Bool(true),
                22 => Value::Null,
                23 => Value::Undefined,
                25 => Value::Float(f64::from(f16::from_bits(v as u16))),
                26 => Value::Float(f64::from(f32::from_bits(v as u32))),
                27 => Value::Float(f64::from_bits(v)),
                _ => Value::Simple(v as u8),
            },
            (7, None) => return Err(self.error("unexpected break stop code")),
            _ => return Err(self.error("invalid head")),
        })
    }
}

/// Decodes `bytes`, which must hold exactly one data item.
pub fn from_slice(bytes: &[u8]) -> Result<Value> {
    let mut d = Decoder::new(bytes);
    let v = d.value()?;
    if d.remaining() != 0 {
        return Err(d.error(format!("{} bytes follow the data item", d.remaining())));
    }
    Ok(v)
}

/// The error for a text string, starting at `offset`, that is not UTF-8.
#[cold]
fn not_utf8(offset: usize) -> Error {
    Error::Malformed {
        what: "CBOR",
        offset: offset as u64,
        reason: "text string is not UTF-8".into(),
    }
}

/// Whether `a` sorts before `b`, bytewise (short keys compared without a call to `memcmp`).
#[inline]
fn less(a: &[u8], b: &[u8]) -> bool {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x < y;
        }
    }
    a.len() < b.len()
}
