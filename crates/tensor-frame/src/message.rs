//! Reading one message: its preamble and postamble, its frames, its metadata, and random
//! access to its objects.
//!
//! [`Message::open`] reads only what random access needs: the preamble, the postamble, the
//! header frames and the footer frames. With an index frame, object `i` is then one lookup
//! away, whatever the size of the message. [`Message::frames`] walks every frame and checks
//! the whole structure; [`Message::decode_all`] does that first.

use crate::error::{Error, Result};
use crate::hash;
use crate::metadata::{GlobalMetadata, HashList, Index};
use crate::object::{DecodeOptions, ObjectFrame};
use crate::wire::{
    self, ALIGNMENT, END_MAGIC, FRAME_END, FRAME_HEADER_LEN, FrameHeader, FrameType, POSTAMBLE_LEN,
    PREAMBLE_LEN, Phase, Postamble, Preamble, flags,
};
use tensor_core::{Limits, ReadOptions, checked};
use tensor_dtype::Tensor;

/// One frame found in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Offset from the message start.
    pub offset: u64,
    /// The frame's type.
    pub frame_type: FrameType,
    /// The frame's header.
    pub header: FrameHeader,
    /// Whether the alignment padding after the frame holds anything but zeros.
    pub nonzero_padding: bool,
}

impl FrameInfo {
    /// The hash stored in the frame's slot, when its `HASH_PRESENT` flag is set.
    #[must_use]
    pub fn stored_hash(&self, message: &[u8]) -> Option<u64> {
        hash::stored(self.bytes(message), self.header.flags)
    }

    /// The frame's bytes (header to `ENDF`) within its message.
    #[must_use]
    pub fn bytes<'m>(&self, message: &'m [u8]) -> &'m [u8] {
        &message[self.offset as usize..(self.offset + self.header.total_length) as usize]
    }

    /// The frame's body: between the header and the footer.
    #[must_use]
    pub fn body<'m>(&self, message: &'m [u8]) -> &'m [u8] {
        let b = self.bytes(message);
        &b[FRAME_HEADER_LEN as usize..b.len() - self.frame_type.footer_len() as usize]
    }
}

/// The hash check of every frame of `frames` that carries a hash, in order, with the object
/// index of data frames.
pub(crate) fn frame_hash_checks<'f>(
    message: &'f [u8],
    frames: &'f [FrameInfo],
) -> impl Iterator<Item = (Option<usize>, Result<()>)> + 'f {
    frames
        .iter()
        .scan(0usize, |next_object, f| {
            let is_data = f.frame_type == FrameType::NTensor;
            let object = is_data.then_some(*next_object);
            *next_object += usize::from(is_data);
            Some((f, object))
        })
        .filter(move |(f, _)| f.stored_hash(message).is_some())
        .map(move |(f, object)| {
            let r = hash::verify(
                f.bytes(message),
                f.frame_type.footer_len() as usize,
                f.frame_type.name(),
                f.offset,
                object,
            );
            (object, r)
        })
}

/// Reads the frame at `offset` of `msg` (which ends where the postamble starts, `end`),
/// checking its header, length and `ENDF`.
fn frame_at(msg: &[u8], offset: u64, end: u64) -> Result<FrameInfo> {
    let header = FrameHeader::parse(&msg[offset as usize..end as usize], offset)?;
    let frame_type = header.known_type(offset)?;
    let min = FRAME_HEADER_LEN + frame_type.footer_len();
    let tl = header.total_length;
    if tl < min || tl > end - offset {
        return Err(Error::framing(
            offset,
            format!(
                "{} frame claims {tl} bytes; it needs at least {min} and only {} remain before the postamble",
                frame_type.name(),
                end - offset
            ),
        ));
    }
    let stop = (offset + tl) as usize;
    if &msg[stop - 4..stop] != FRAME_END {
        return Err(Error::framing(
            offset + tl - 4,
            format!("{} frame does not end with ENDF", frame_type.name()),
        ));
    }
    let next = checked::align_up(offset + tl, ALIGNMENT, "frame end")?.min(end);
    let nonzero_padding = msg[stop..next as usize].iter().any(|&b| b != 0);
    Ok(FrameInfo {
        offset,
        frame_type,
        header,
        nonzero_padding,
    })
}

/// Whether the frame at `offset` is a header frame, from its 16-byte header alone.
fn is_header_frame(msg: &[u8], offset: u64, end: u64) -> Result<bool> {
    let header = FrameHeader::parse(&msg[offset as usize..end as usize], offset)?;
    Ok(header.known_type(offset)?.phase() == Phase::Header)
}

/// Where the frame after `f` starts.
fn next_offset(f: &FrameInfo) -> u64 {
    let end = f.offset + f.header.total_length;
    end + wire::padding(end)
}

/// Whether a postamble starts at `p` of `buf`.
fn postamble_at(buf: &[u8], p: usize) -> bool {
    buf.len() >= p + POSTAMBLE_LEN as usize && &buf[p + 16..p + 24] == END_MAGIC
}

/// Walks every frame of a message from the end of the preamble. With `end` known (the
/// postamble's offset) the walk stops there; without it (streamed messages of unknown
/// length) it stops at the first position that holds a postamble. Returns the frames and
/// where the postamble starts.
fn walk(buf: &[u8], end: Option<u64>, limits: &Limits) -> Result<(Vec<FrameInfo>, u64)> {
    let limit = end.unwrap_or(buf.len() as u64);
    let mut frames: Vec<FrameInfo> = Vec::new();
    let mut pos = PREAMBLE_LEN;
    let mut phase = Phase::Header;
    let mut objects = 0u64;
    loop {
        if let Some(e) = end {
            if pos >= e {
                break;
            }
        } else if buf.get(pos as usize..pos as usize + 2) != Some(b"FR")
            && postamble_at(buf, pos as usize)
        {
            break;
        }
        if pos + FRAME_HEADER_LEN > limit {
            return Err(Error::framing(
                pos,
                "the message ends inside a frame header (no postamble found)",
            ));
        }
        let f = frame_at(buf, pos, limit)?;
        let p = f.frame_type.phase();
        if p < phase {
            return Err(Error::framing(
                pos,
                format!(
                    "{} frame appears after a frame of a later phase",
                    f.frame_type.name()
                ),
            ));
        }
        phase = p;
        if let Some(prev) = frames.last()
            && prev.frame_type == FrameType::PrecederMetadata
            && f.frame_type != FrameType::NTensor
        {
            return Err(Error::framing(
                prev.offset,
                "a PrecederMetadata frame is not followed by a data frame",
            ));
        }
        if f.frame_type == FrameType::NTensor {
            objects += 1;
            limits.check_tensor_count(objects)?;
        }
        pos = next_offset(&f);
        frames.push(f);
    }
    if let Some(last) = frames.last()
        && last.frame_type == FrameType::PrecederMetadata
    {
        return Err(Error::framing(
            last.offset,
            "a PrecederMetadata frame is not followed by a data frame (dangling preceder)",
        ));
    }
    Ok((frames, pos))
}

/// What the header or footer frames of a message say.
#[derive(Default)]
struct Section {
    metadata: Option<FrameInfo>,
    index: Option<Index>,
    hashes: Option<HashList>,
}

impl Section {
    /// Takes in frame `f`. A second frame of the same kind in one section is refused: which
    /// of the two would hold the truth is anyone's guess (one flipped bit in a frame type
    /// makes a hash frame look like a second metadata frame).
    fn read(&mut self, msg: &[u8], f: &FrameInfo, limits: &Limits) -> Result<()> {
        let taken = match f.frame_type {
            FrameType::HeaderMetadata | FrameType::FooterMetadata => self.metadata.is_some(),
            FrameType::HeaderIndex | FrameType::FooterIndex => self.index.is_some(),
            FrameType::HeaderHash | FrameType::FooterHash => self.hashes.is_some(),
            FrameType::PrecederMetadata | FrameType::NTensor => false,
        };
        if taken {
            return Err(Error::framing(
                f.offset,
                format!("a second {} frame in the same section", f.frame_type.name()),
            ));
        }
        let body = f.body(msg);
        match f.frame_type {
            FrameType::HeaderMetadata | FrameType::FooterMetadata => {
                limits.check_header_bytes(body.len() as u64)?;
                self.metadata = Some(*f);
            }
            FrameType::HeaderIndex | FrameType::FooterIndex => {
                limits.check_header_bytes(body.len() as u64)?;
                let (index, _) = Index::decode(body)?;
                limits.check_tensor_count(index.offsets.len() as u64)?;
                self.index = Some(index);
            }
            FrameType::HeaderHash | FrameType::FooterHash => {
                limits.check_header_bytes(body.len() as u64)?;
                self.hashes = Some(HashList::decode(body)?.0);
            }
            FrameType::PrecederMetadata | FrameType::NTensor => {}
        }
        Ok(())
    }
}

/// The global metadata in `frame`, a header or footer metadata frame's bytes alone (a
/// message's [`Message::metadata_span`], fetched on its own): its header, length and `ENDF`
/// checked, its hash verified when it carries one, its size checked against `limits`.
pub fn metadata_frame(frame: &[u8], limits: &Limits) -> Result<GlobalMetadata> {
    let f = lone_frame(frame)?;
    if !matches!(
        f.frame_type,
        FrameType::HeaderMetadata | FrameType::FooterMetadata
    ) {
        return Err(Error::framing(
            0,
            format!("a {} frame is not a metadata frame", f.frame_type.name()),
        ));
    }
    if f.stored_hash(frame).is_some() {
        hash::verify(
            frame,
            f.frame_type.footer_len() as usize,
            f.frame_type.name(),
            0,
            None,
        )?;
    }
    let body = f.body(frame);
    limits.check_header_bytes(body.len() as u64)?;
    Ok(GlobalMetadata::decode(body)?.0)
}

/// The data object in `frame`, a data frame's bytes alone (header to `ENDF`): checked as
/// [`Message::object`] checks an object, its descriptor the frame's own. Its hash, when it
/// carries one, is verified by [`ObjectFrame::hash_check`].
pub fn object_frame<'f>(frame: &'f [u8], limits: &Limits) -> Result<ObjectFrame<'f>> {
    let f = lone_frame(frame)?;
    if f.frame_type != FrameType::NTensor {
        return Err(Error::framing(
            0,
            format!("a {} frame is not a data object frame", f.frame_type.name()),
        ));
    }
    ObjectFrame::parse(frame, f.header, 0, 0, limits)
}

/// The one frame `frame` holds, exactly: header, length and `ENDF` checked.
fn lone_frame(frame: &[u8]) -> Result<FrameInfo> {
    let len = frame.len() as u64;
    if len < FRAME_HEADER_LEN {
        return Err(Error::framing(
            0,
            format!("{len} bytes are too few for a frame"),
        ));
    }
    let f = frame_at(frame, 0, len)?;
    if f.header.total_length != len {
        return Err(Error::framing(
            0,
            format!(
                "the frame claims {} bytes; {len} were given",
                f.header.total_length
            ),
        ));
    }
    Ok(f)
}

/// One Tensogram message, borrowed from the bytes that hold it.
#[derive(Clone, Debug)]
pub struct Message<'a> {
    bytes: &'a [u8],
    preamble: Preamble,
    postamble: Postamble,
    limits: Limits,
    verify: tensor_core::Verify,
    metadata_frame: FrameInfo,
    preceders: Vec<(usize, FrameInfo)>,
    metadata: std::sync::OnceLock<GlobalMetadata>,
    index: Option<Index>,
    hashes: Option<HashList>,
    objects: Vec<(u64, u64)>,
    /// Every object's dtype and shape, once asked for ([`crate::container`]).
    pub(crate) layouts: std::sync::OnceLock<Vec<(tensor_dtype::Dtype, Vec<u64>)>>,
}

impl<'a> Message<'a> {
    /// Opens the message at the start of `buf` (which may continue with more messages),
    /// with default options.
    pub fn open(buf: &'a [u8]) -> Result<Self> {
        Self::open_with(buf, &ReadOptions::default())
    }

    /// Opens the message at the start of `buf` (which may continue with more messages).
    /// `options.verify` says whether [reading an object](tensor_dtype::TensorContainer::read_into)
    /// checks its hash.
    pub fn open_with(buf: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let limits = &options.limits;
        let preamble = Preamble::parse(buf)?;
        let min = PREAMBLE_LEN + POSTAMBLE_LEN;
        let (bytes, walked) = if preamble.total_length == 0 {
            // Streamed to a sink that could not seek: the frames say where it ends.
            let (frames, post) = walk(buf, None, limits)?;
            (&buf[..(post + POSTAMBLE_LEN) as usize], Some(frames))
        } else {
            let tl = preamble.total_length;
            if tl < min {
                return Err(Error::framing(
                    16,
                    format!("total_length {tl} is below the minimum of {min}"),
                ));
            }
            if tl > buf.len() as u64 {
                return Err(Error::framing(
                    16,
                    format!(
                        "total_length {tl} exceeds the {} bytes available",
                        buf.len()
                    ),
                ));
            }
            (&buf[..tl as usize], None)
        };
        let post_off = bytes.len() as u64 - POSTAMBLE_LEN;
        let postamble = Postamble::parse(&bytes[post_off as usize..], post_off)?;
        if postamble.total_length != 0 && postamble.total_length != preamble.total_length {
            return Err(Error::framing(
                post_off + 8,
                format!(
                    "the postamble's total_length {} differs from the preamble's {}",
                    postamble.total_length, preamble.total_length
                ),
            ));
        }
        let mut header = Section::default();
        let mut footer = Section::default();
        let mut walked = walked;
        let needs_walk = preamble.flags & flags::PRECEDER_METADATA != 0;
        if needs_walk && walked.is_none() {
            walked = Some(walk(bytes, Some(post_off), limits)?.0);
        }
        if let Some(frames) = &walked {
            for f in frames {
                match f.frame_type.phase() {
                    Phase::Header => header.read(bytes, f, limits)?,
                    Phase::Footer => footer.read(bytes, f, limits)?,
                    Phase::Body => {}
                }
            }
        } else {
            let mut pos = PREAMBLE_LEN;
            while pos < post_off {
                // The first frame of another phase ends the header; it is checked whole
                // when it is read (an object) or walked (validation), not here.
                if !is_header_frame(bytes, pos, post_off)? {
                    break;
                }
                let f = frame_at(bytes, pos, post_off)?;
                header.read(bytes, &f, limits)?;
                pos = next_offset(&f);
            }
            let ffo = postamble.first_footer_offset;
            if ffo < post_off && header.index.is_none() {
                if ffo < PREAMBLE_LEN || ffo % ALIGNMENT != 0 {
                    return Err(Error::framing(
                        post_off,
                        format!("first_footer_offset {ffo} is not a frame position"),
                    ));
                }
                let mut pos = ffo;
                while pos < post_off {
                    let f = frame_at(bytes, pos, post_off)?;
                    if f.frame_type.phase() != Phase::Footer {
                        return Err(Error::framing(
                            pos,
                            "a non-footer frame follows the first footer frame",
                        ));
                    }
                    footer.read(bytes, &f, limits)?;
                    pos = next_offset(&f);
                }
            }
        }
        let index = header.index.or(footer.index);
        let hashes = header.hashes.or(footer.hashes);
        // With both, the footer holds the complete metadata (streaming writes the caller's
        // metadata first and everything at the end).
        let Some(metadata_frame) = footer.metadata.or(header.metadata) else {
            return Err(Error::Metadata(
                "the message has no metadata frame (neither in the header nor in the footer)"
                    .into(),
            ));
        };
        let mut preceders = Vec::new();
        let objects: Vec<(u64, u64)> = if let (Some(ix), None) = (&index, &walked) {
            ix.offsets
                .iter()
                .copied()
                .zip(ix.lengths.iter().copied())
                .collect()
        } else {
            let frames = match walked.take() {
                Some(f) => f,
                None => walk(bytes, Some(post_off), limits)?.0,
            };
            let mut objects = Vec::new();
            let mut preceder = None;
            for f in &frames {
                match f.frame_type {
                    FrameType::PrecederMetadata => preceder = Some(*f),
                    FrameType::NTensor => {
                        if let Some(p) = preceder.take() {
                            limits.check_header_bytes(p.body(bytes).len() as u64)?;
                            preceders.push((objects.len(), p));
                        }
                        objects.push((f.offset, f.header.total_length));
                    }
                    _ => {}
                }
            }
            objects
        };
        limits.check_tensor_count(objects.len() as u64)?;
        Ok(Message {
            bytes,
            preamble,
            postamble,
            limits: *limits,
            verify: options.verify,
            metadata_frame,
            preceders,
            metadata: std::sync::OnceLock::new(),
            index,
            hashes,
            objects,
            layouts: std::sync::OnceLock::new(),
        })
    }

    /// The message's bytes, preamble to end magic.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The preamble.
    #[must_use]
    pub fn preamble(&self) -> &Preamble {
        &self.preamble
    }

    /// The postamble.
    #[must_use]
    pub fn postamble(&self) -> &Postamble {
        &self.postamble
    }

    /// The global metadata, with every preceder merged into its object's `base` entry and
    /// `base` padded to one entry per object. Decoded on first use: random access to an
    /// object does not pay for the metadata of every other object.
    pub fn metadata(&self) -> Result<&GlobalMetadata> {
        if let Some(m) = self.metadata.get() {
            return Ok(m);
        }
        let (mut m, _) = GlobalMetadata::decode(self.metadata_frame.body(self.bytes))?;
        for (i, p) in &self.preceders {
            let (pm, _) = GlobalMetadata::decode(p.body(self.bytes))?;
            m.merge_preceder(*i, &pm)?;
        }
        m.fit_to(self.objects.len())?;
        Ok(self.metadata.get_or_init(|| m))
    }

    /// The index frame, if the message has one.
    #[must_use]
    pub fn index(&self) -> Option<&Index> {
        self.index.as_ref()
    }

    /// The aggregate hash frame, if the message has one.
    #[must_use]
    pub fn hash_list(&self) -> Option<&HashList> {
        self.hashes.as_ref()
    }

    /// How many data objects the message holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the message holds no data objects (metadata only).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Where data object `i`'s frame lies, as the index (or the walk of the frames) gives it:
    /// its offset from the message start and its length. Nothing is read or checked; `(0, 0)`
    /// past the last object.
    #[must_use]
    pub fn object_span(&self, i: usize) -> (u64, u64) {
        self.objects.get(i).copied().unwrap_or((0, 0))
    }

    /// Data object `i`: its frame is checked and its descriptor decoded; nothing else of the
    /// message is read.
    pub fn object(&self, i: usize) -> Result<ObjectFrame<'a>> {
        let &(offset, length) = self.objects.get(i).ok_or(Error::ObjectIndex {
            index: i,
            count: self.objects.len(),
        })?;
        let post_off = self.bytes.len() as u64 - POSTAMBLE_LEN;
        if offset < PREAMBLE_LEN || offset > post_off || length > post_off - offset {
            return Err(Error::framing(
                offset,
                format!(
                    "object {i} is indexed at {offset} with {length} bytes, outside the message's frames"
                ),
            ));
        }
        self.object_in(i, &self.bytes[offset as usize..(offset + length) as usize])
    }

    /// Data object `i` from `frame`, its frame's bytes alone (the message's
    /// [`object_span`](Self::object_span), fetched on their own): checked as
    /// [`object`](Self::object) checks it. For readers that keep a message's header parsed
    /// and fetch one object at a time (a remote file).
    pub fn object_in<'f>(&self, i: usize, frame: &'f [u8]) -> Result<ObjectFrame<'f>> {
        let &(offset, length) = self.objects.get(i).ok_or(Error::ObjectIndex {
            index: i,
            count: self.objects.len(),
        })?;
        if frame.len() as u64 != length {
            return Err(Error::framing(
                offset,
                format!(
                    "object {i}: the index gives its frame {length} bytes, {} were given",
                    frame.len()
                ),
            ));
        }
        let f = frame_at(frame, 0, length).map_err(|e| e.shifted(offset))?;
        if f.frame_type != FrameType::NTensor || f.header.total_length != length {
            return Err(Error::framing(
                offset,
                format!(
                    "the index puts object {i} at {offset} with {length} bytes, but a {} frame of {} bytes is there",
                    f.frame_type.name(),
                    f.header.total_length
                ),
            ));
        }
        ObjectFrame::parse(frame, f.header, i, offset, &self.limits)
    }

    /// Where the frame this message's metadata is read from lies (the footer's when both
    /// phases hold one): its offset from the message start and its length. With
    /// [`has_preceders`](Self::has_preceders) false it holds every object's `base` entry,
    /// and [`metadata_frame`] reads it fetched on its own.
    #[must_use]
    pub fn metadata_span(&self) -> (u64, u64) {
        (
            self.metadata_frame.offset,
            self.metadata_frame.header.total_length,
        )
    }

    /// Whether preceder frames add to some objects' metadata (then the metadata frame alone
    /// does not hold all of it).
    #[must_use]
    pub fn has_preceders(&self) -> bool {
        !self.preceders.is_empty()
    }

    /// Every frame, in order, after checking the whole structure: frame headers, lengths,
    /// `ENDF`, the phase order, preceders, and that any index agrees with the frames.
    pub fn frames(&self) -> Result<Vec<FrameInfo>> {
        let post_off = self.bytes.len() as u64 - POSTAMBLE_LEN;
        let (frames, _) = walk(self.bytes, Some(post_off), &self.limits)?;
        let data: Vec<(u64, u64)> = frames
            .iter()
            .filter(|f| f.frame_type == FrameType::NTensor)
            .map(|f| (f.offset, f.header.total_length))
            .collect();
        if data != self.objects {
            return Err(Error::Metadata(format!(
                "the index lists {} objects that do not match the {} data frames in the message",
                self.objects.len(),
                data.len()
            )));
        }
        Ok(frames)
    }

    /// Checks the hash of every frame that carries one: metadata, index and hash frames as
    /// well as data frames.
    pub fn verify_hashes(&self) -> Result<()> {
        let frames = self.frames()?;
        frame_hash_checks(self.bytes, &frames).try_for_each(|(_, r)| r)
    }

    /// Checks the hash of every header and footer frame that carries one (metadata, index,
    /// hash list) and of every preceder, reading only those frames: for readers that hold
    /// the message's framing but not its data frames, and verify each object as they read
    /// it ([`ObjectFrame::verify_hash`]).
    pub fn verify_section_hashes(&self) -> Result<()> {
        let post_off = self.bytes.len() as u64 - POSTAMBLE_LEN;
        let mut frames: Vec<FrameInfo> = self.preceders.iter().map(|(_, f)| *f).collect();
        let mut pos = PREAMBLE_LEN;
        while pos < post_off && is_header_frame(self.bytes, pos, post_off)? {
            let f = frame_at(self.bytes, pos, post_off)?;
            frames.push(f);
            pos = next_offset(&f);
        }
        let mut pos = self.postamble.first_footer_offset;
        while pos >= PREAMBLE_LEN && pos < post_off {
            let f = frame_at(self.bytes, pos, post_off)?;
            if f.frame_type.phase() != Phase::Footer {
                break;
            }
            frames.push(f);
            pos = next_offset(&f);
        }
        frame_hash_checks(self.bytes, &frames).try_for_each(|(_, r)| r)
    }

    /// Checks the hash of every frame that carries one except the data frames — metadata,
    /// index and hash frames — for readers that verify the objects they decode one by one
    /// ([`DecodeOptions::verify_hash`]).
    pub fn verify_metadata_hashes(&self) -> Result<()> {
        let frames = self.frames()?;
        frame_hash_checks(self.bytes, &frames)
            .filter(|(object, _)| object.is_none())
            .try_for_each(|(_, r)| r)
    }

    /// The limits the message was opened with.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether reading an object checks its hash (the options it was opened with).
    #[must_use]
    pub fn verifies(&self) -> bool {
        self.verify.any()
    }

    /// Decodes object `i`.
    pub fn decode_object(&self, i: usize, opts: DecodeOptions) -> Result<Tensor> {
        self.object(i)?.decode(opts, &self.limits)
    }

    /// Checks the whole structure, then decodes every object.
    pub fn decode_all(&self, opts: DecodeOptions) -> Result<Vec<Tensor>> {
        self.checked_objects()?
            .iter()
            .map(|o| o.decode(opts, &self.limits))
            .collect()
    }

    /// Like [`decode_all`](Self::decode_all), with the objects decoded in parallel.
    #[cfg(feature = "parallel")]
    pub fn decode_all_parallel(&self, opts: DecodeOptions) -> Result<Vec<Tensor>> {
        use rayon::prelude::*;
        self.checked_objects()?
            .par_iter()
            .map(|o| o.decode(opts, &self.limits))
            .collect()
    }

    /// Every object, after checking the whole structure and the metadata, and that the
    /// decoded sizes together stay within the limits.
    fn checked_objects(&self) -> Result<Vec<ObjectFrame<'a>>> {
        self.frames()?;
        self.metadata()?;
        let objects: Vec<ObjectFrame<'a>> = (0..self.len())
            .map(|i| self.object(i))
            .collect::<Result<_>>()?;
        let mut total = 0u64;
        for o in &objects {
            total = checked::add(total, o.decoded_len()?, "decoded message size")?;
        }
        self.limits.check_total_bytes(total)?;
        Ok(objects)
    }
}

/// Decodes every object of the message at the start of `buf`.
pub fn decode(
    buf: &[u8],
    opts: DecodeOptions,
    limits: &Limits,
) -> Result<(GlobalMetadata, Vec<Tensor>)> {
    let m = Message::open_with(buf, &limits.into())?;
    let tensors = m.decode_all(opts)?;
    Ok((m.metadata()?.clone(), tensors))
}
