//! [`Messages`]: a whole `.tgm` file opened over its bytes — every message, back to back,
//! its objects numbered across the file — and Tensogram as the format contract describes
//! it ([`TensogramFormat`]).

use crate::error::{Error, Result};
use crate::message::Message;
use crate::wire::{self, FRAME_HEADER_LEN, POSTAMBLE_LEN, PREAMBLE_LEN, flags, padding};
use std::ops::Range;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::format::starts_like;
use tensor_dtype::{Dtype, Format, FormatInfo, TensorContainer, TensorView};

/// The messages of a file, opened, and its objects in file order.
#[derive(Clone, Debug)]
pub struct Messages<'a> {
    messages: Vec<Message<'a>>,
    /// Object `i` of the file is object `objects[i].1` of message `objects[i].0`.
    objects: Vec<(usize, usize)>,
}

impl<'a> Messages<'a> {
    /// Opens every message of `bytes` with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Opens every message of `bytes`, which must follow one another from the first byte
    /// to the last: bytes no message claims are explained by the error opening a message
    /// there gives ([`Error::InMessage`]). Unless `options.verify` is
    /// [`Never`](tensor_core::Verify::Never), the hashes of the frames that describe the
    /// data are checked before anything is trusted (each object's own when it is read).
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let at = |index: usize, offset: usize| {
            move |source: Error| Error::InMessage {
                index,
                offset: offset as u64,
                source: Box::new(source),
            }
        };
        let mut pos = 0;
        let mut messages = Vec::new();
        for r in crate::file::scan(bytes) {
            if r.start != pos {
                break;
            }
            let m = Message::open_with(&bytes[r.clone()], options)
                .map_err(at(messages.len(), r.start))?;
            if options.verify.any() {
                m.verify_section_hashes()
                    .map_err(at(messages.len(), r.start))?;
            }
            messages.push(m);
            pos = r.end;
        }
        if pos != bytes.len() || messages.is_empty() {
            let e = Message::open_with(&bytes[pos..], options)
                .err()
                .unwrap_or_else(|| {
                    Error::framing(
                        0,
                        format!("{} bytes belong to no message", bytes.len() - pos),
                    )
                });
            return Err(at(messages.len(), pos)(e));
        }
        let mut objects = Vec::new();
        for (mi, m) in messages.iter().enumerate() {
            options
                .limits
                .check_tensor_count((objects.len() + m.len()) as u64)?;
            objects.extend((0..m.len()).map(|j| (mi, j)));
        }
        Ok(Messages { messages, objects })
    }

    /// The messages, in file order.
    #[must_use]
    pub fn messages(&self) -> &[Message<'a>] {
        &self.messages
    }

    /// The messages, in file order, by value.
    #[must_use]
    pub fn into_messages(self) -> Vec<Message<'a>> {
        self.messages
    }

    /// Which message object `i` of the file belongs to, and its index there.
    #[must_use]
    pub fn locate(&self, i: usize) -> (usize, usize) {
        self.objects[i]
    }

    fn object(&self, i: usize) -> (&Message<'a>, usize) {
        let (m, j) = self.objects[i];
        (&self.messages[m], j)
    }
}

impl<'a> TensorContainer<'a> for Messages<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.objects.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        let (m, j) = self.object(i);
        m.name(j)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        let (m, j) = self.object(i);
        m.dtype(j)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        let (m, j) = self.object(i);
        m.shape(j)
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        let (m, j) = self.object(i);
        m.view(j)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let (m, j) = self.object(i);
        m.read_into(j, dst)
    }
}

/// Tensogram v3 (`.tgm`): messages of objects.
#[derive(Clone, Copy, Debug)]
pub struct TensogramFormat;

impl Format for TensogramFormat {
    const INFO: FormatInfo = FormatInfo {
        id: "tensogram",
        name: "Tensogram",
        extensions: &["tgm"],
        writes: true,
        reserved_keys: crate::container::RESERVED_KEYS,
        write_choices: &[
            tensor_dtype::WriteChoice::Pipeline,
            tensor_dtype::WriteChoice::Messages,
        ],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: true,
        unique_names: false,
        checks: tensor_dtype::Checks::Hashes,
        header_first: false,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = Messages<'a>;

    fn recognise(head: &[u8]) -> bool {
        starts_like(head, wire::MAGIC)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Messages<'a>> {
        Messages::open_with(bytes, options)
    }

    /// Every message's preamble, header frames (up to the first data frame's header),
    /// postamble and footer frames. A message without an index, with preceders, or of
    /// unknown length is needed whole: its objects are found only by walking its frames.
    /// A file with a message of wire version 2 is needed whole (it is migrated before it
    /// is read).
    fn header_ranges(held: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
        let len = held.len();
        let mut pos = 0u64;
        let mut whole_bytes = 0u64;
        while pos < len {
            let Some(pre) = held.slice(pos..(pos + PREAMBLE_LEN).min(len)) else {
                return Ok(held.want(pos..pos + PREAMBLE_LEN));
            };
            if pre.len() < 24 || &pre[..8] != wire::MAGIC {
                // Not a message here: opening reports what is wrong.
                return Ok(Vec::new());
            }
            if crate::v2::is_v2(pre) {
                limits.check_total_bytes(len)?;
                return Ok(held.want(0..len));
            }
            let flag_bits = u16::from_be_bytes([pre[10], pre[11]]);
            let total = u64::from_be_bytes(pre[16..24].try_into().unwrap_or_default());
            let indexed = flag_bits & (flags::HEADER_INDEX | flags::FOOTER_INDEX) != 0;
            let preceders = flag_bits & flags::PRECEDER_METADATA != 0;
            let beyond = pos.saturating_add(total) > len;
            if total == 0 || !indexed || preceders || beyond {
                // Walked frame by frame: the whole message (or the rest of the file, for a
                // length the file cannot hold, which opening then reports).
                let end = if total == 0 || beyond {
                    len
                } else {
                    pos + total
                };
                whole_bytes = whole_bytes.saturating_add(end - pos);
                limits.check_header_bytes(whole_bytes)?;
                if let Some(m) = held.missing(pos..end) {
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
            let Some(first_footer) = held.u64_be(post) else {
                return Ok(held.want(post..end));
            };
            // Header frames, up to the header of the first frame of another phase.
            let mut at = pos + PREAMBLE_LEN;
            let mut header_bytes = 0u64;
            while at < post {
                let Some(h) = held.slice(at..(at + FRAME_HEADER_LEN).min(post)) else {
                    return Ok(held.want(at..at + FRAME_HEADER_LEN));
                };
                if h.len() < 16 {
                    break;
                }
                let kind = u16::from_be_bytes([h[2], h[3]]);
                let flen = u64::from_be_bytes(h[8..16].try_into().unwrap_or_default());
                if !(1..=3).contains(&kind) || flen < FRAME_HEADER_LEN {
                    break;
                }
                header_bytes = header_bytes.saturating_add(flen);
                limits.check_header_bytes(header_bytes)?;
                let frame_end = at.saturating_add(flen).min(post);
                if let Some(m) = held.missing(at..frame_end) {
                    return Ok(vec![m]);
                }
                at = frame_end + padding(frame_end - pos);
            }
            let ffo = pos.saturating_add(first_footer);
            if ffo < post && ffo >= pos + PREAMBLE_LEN {
                limits.check_header_bytes(post - ffo)?;
                if let Some(m) = held.missing(ffo..end) {
                    return Ok(vec![m]);
                }
            }
            pos = end;
        }
        Ok(Vec::new())
    }
}
