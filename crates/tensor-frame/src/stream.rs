//! Writing a message object by object to any sink: each object goes out as soon as it is
//! given, and the index, hashes and complete metadata follow in the footer.

use crate::encode::{
    EncodeOptions, HashFrames, check_caller_metadata, complete_metadata, encode_object,
    pre_encoded_object,
};
use crate::error::{Error, Result};
use crate::frame_out::{frame, write_frame};
use crate::metadata::{GlobalMetadata, HashList, Index, Map};
use crate::wire::{
    FRAME_HEADER_LEN, FrameType, POSTAMBLE_LEN, PREAMBLE_LEN, Postamble, Preamble, VERSION, flags,
};
use std::io::{Seek, SeekFrom, Write};
use tensor_descriptor::DataObjectDescriptor;

/// A message being written to `W`.
///
/// The preamble goes out first with `total_length` 0 and the flags fixed up front: footer
/// metadata, index and hashes, and `PRECEDER_METADATA` only when
/// [`EncodeOptions::preceders`] says preceders will be written. [`finish`](Self::finish)
/// leaves the length at 0 (for pipes and sockets); [`finish_backfilled`](Self::finish_backfilled)
/// seeks back and writes it.
#[derive(Debug)]
pub struct StreamEncoder<W: Write> {
    sink: W,
    opts: EncodeOptions,
    metadata: GlobalMetadata,
    descriptors: Vec<DataObjectDescriptor>,
    index: Index,
    hashes: Vec<u64>,
    pos: u64,
    pending_preceder: bool,
}

fn io(e: std::io::Error) -> Error {
    Error::Core(tensor_core::Error::io("writing a Tensogram stream", e))
}

impl<W: Write> StreamEncoder<W> {
    /// Starts a message: writes the preamble and a header metadata frame holding `metadata`
    /// as given (the complete metadata, with `_reserved_`, goes in the footer).
    pub fn new(mut sink: W, metadata: &GlobalMetadata, opts: EncodeOptions) -> Result<Self> {
        if matches!(opts.hash_frames, HashFrames::Header | HashFrames::Both) {
            return Err(Error::InvalidArgument(
                "a streamed message can only put its hash frame in the footer".into(),
            ));
        }
        if opts.hash_frames == HashFrames::Footer && !opts.hashing {
            return Err(Error::InvalidArgument(
                "an aggregate hash frame needs hashing on".into(),
            ));
        }
        check_caller_metadata(metadata, None)?;
        let mut fl = flags::HEADER_METADATA | flags::FOOTER_METADATA | flags::FOOTER_INDEX;
        if opts.hashing {
            fl |= flags::HASHES_PRESENT;
            if opts.hash_frames != HashFrames::None {
                fl |= flags::FOOTER_HASHES;
            }
        }
        if opts.preceders {
            fl |= flags::PRECEDER_METADATA;
        }
        let pre = Preamble {
            version: VERSION,
            flags: fl,
            total_length: 0,
        };
        sink.write_all(&pre.to_bytes()).map_err(io)?;
        let head = frame(
            FrameType::HeaderMetadata,
            &metadata.encode(),
            opts.hashing,
            PREAMBLE_LEN,
        );
        sink.write_all(&head).map_err(io)?;
        Ok(StreamEncoder {
            sink,
            metadata: metadata.clone(),
            opts,
            descriptors: Vec::new(),
            index: Index::default(),
            hashes: Vec::new(),
            pos: PREAMBLE_LEN + head.len() as u64,
            pending_preceder: false,
        })
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.sink.write_all(bytes).map_err(io)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Writes metadata for the next object only, in a `PrecederMetadata` frame. Its keys
    /// override the object's `base` entry from the start of the stream.
    pub fn write_preceder(&mut self, entry: &Map) -> Result<()> {
        if !self.opts.preceders {
            return Err(Error::InvalidArgument(
                "preceders need EncodeOptions::preceders, which the preamble announces".into(),
            ));
        }
        if self.pending_preceder {
            return Err(Error::InvalidArgument(
                "two preceders in a row: write an object first".into(),
            ));
        }
        let m = GlobalMetadata {
            base: vec![entry.clone()],
            ..GlobalMetadata::default()
        };
        check_caller_metadata(&m, None)?;
        let i = self.descriptors.len();
        self.metadata.merge_preceder(i, &m)?;
        let f = frame(
            FrameType::PrecederMetadata,
            &m.encode(),
            self.opts.hashing,
            self.pos,
        );
        self.emit(&f)?;
        self.pending_preceder = true;
        Ok(())
    }

    /// Encodes one object through its pipeline and writes its frame.
    pub fn write_object(&mut self, descriptor: &DataObjectDescriptor, data: &[u8]) -> Result<()> {
        let i = self.descriptors.len();
        // Checked before anything is written: the stream goes on after a refused object.
        let o = encode_object(descriptor, data, i, &self.opts, false)?;
        self.write_encoded(o)
    }

    /// Writes the frame of one object whose payload is already encoded: `descriptor` carries
    /// every parameter its pipeline needs, and `payload` is framed and hashed as it is (as
    /// [`serialize_pre_encoded`](crate::serialize_pre_encoded) frames each object).
    pub fn write_object_pre_encoded(
        &mut self,
        descriptor: &DataObjectDescriptor,
        payload: &[u8],
    ) -> Result<()> {
        let i = self.descriptors.len();
        let o = pre_encoded_object(descriptor, std::borrow::Cow::Borrowed(payload), i)?;
        self.write_encoded(o)
    }

    /// Writes object `o`'s frame and records it for the footer.
    fn write_encoded(&mut self, o: crate::frame_out::EncodedObject<'_>) -> Result<()> {
        let at = self.pos;
        #[cfg(feature = "paranoid")]
        crate::paranoid::check_frame(&o, self.descriptors.len(), self.opts.hashing)?;
        let (written, hash) = write_frame(
            &mut self.sink,
            at,
            FrameType::NTensor,
            &o.parts(),
            self.opts.hashing,
            Some(o.cbor_offset()),
            o.check_finite,
        )
        .map_err(io)?;
        self.pos += written;
        self.index.offsets.push(at);
        self.index
            .lengths
            .push(FRAME_HEADER_LEN + o.body_len() + FrameType::NTensor.footer_len());
        self.hashes.push(hash);
        self.descriptors.push(o.descriptor);
        self.pending_preceder = false;
        Ok(())
    }

    /// How many objects have been written.
    #[must_use]
    pub fn len(&self) -> usize {
        self.descriptors.len()
    }

    /// Whether no object has been written yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.descriptors.is_empty()
    }

    /// Writes the footer frames and the postamble with `total_length`; returns the sink
    /// and the message length.
    fn finish_with(mut self, backfill: bool) -> Result<(W, u64)> {
        if self.pending_preceder {
            return Err(Error::InvalidArgument(
                "the last preceder has no object after it".into(),
            ));
        }
        check_caller_metadata(
            &self.metadata.without_reserved(),
            Some(self.descriptors.len()),
        )?;
        let first_footer = self.pos;
        // The preamble announced the footer hash and index frames before the object count
        // was known: they are written even for a message without objects (empty lists).
        if self.opts.hashing && self.opts.hash_frames != HashFrames::None {
            let f = frame(
                FrameType::FooterHash,
                &HashList::encode_xxh3(&self.hashes),
                true,
                self.pos,
            );
            self.emit(&f)?;
        }
        let f = frame(
            FrameType::FooterIndex,
            &self.index.encode(),
            self.opts.hashing,
            self.pos,
        );
        self.emit(&f)?;
        let descs: Vec<&DataObjectDescriptor> = self.descriptors.iter().collect();
        let full = complete_metadata(&self.metadata, &descs, &self.opts.provenance, true);
        let f = frame(
            FrameType::FooterMetadata,
            &full.encode(),
            self.opts.hashing,
            self.pos,
        );
        self.emit(&f)?;
        let total = self.pos + POSTAMBLE_LEN;
        let post = Postamble {
            first_footer_offset: first_footer,
            total_length: if backfill { total } else { 0 },
        };
        self.emit(&post.to_bytes())?;
        self.sink.flush().map_err(io)?;
        Ok((self.sink, total))
    }

    /// Finishes the message with `total_length` 0 in the preamble and postamble, as a sink
    /// that cannot seek requires. Readers find the end by walking the frames.
    pub fn finish(self) -> Result<W> {
        Ok(self.finish_with(false)?.0)
    }
}

impl<W: Write + Seek> StreamEncoder<W> {
    /// Finishes the message and writes its real length into the preamble and postamble.
    pub fn finish_backfilled(self) -> Result<W> {
        let (mut sink, total) = self.finish_with(true)?;
        let end = sink.stream_position().map_err(io)?;
        let start = end.checked_sub(total).ok_or_else(|| {
            Error::InvalidArgument("the sink's position is before the message start".into())
        })?;
        sink.seek(SeekFrom::Start(start + 16)).map_err(io)?;
        sink.write_all(&total.to_be_bytes()).map_err(io)?;
        sink.seek(SeekFrom::Start(end)).map_err(io)?;
        sink.flush().map_err(io)?;
        Ok(sink)
    }
}
