//! One data-object frame (type 9): its layout, its descriptor, and decoding its payload.

use crate::error::{Error, Result};
use crate::hash;
use crate::wire::{self, CBOR_AFTER_PAYLOAD, FRAME_HEADER_LEN, FrameHeader, HASH_PRESENT};
use std::ops::Range;
use tensor_core::cbor::Decoder;
use tensor_core::{ByteOrder, Limits, byte_order, checked};
use tensor_descriptor::DataObjectDescriptor;
use tensor_dtype::{Dtype, Tensor, TensorView};
use tensor_pipeline::masks::{self, MaskKind, MaskMethod};
use tensor_pipeline::{Compression, Encoding, Filter, Pipeline, SimplePacking};

/// Codecs the format defines that this build does not decode: `sz3` when its feature is
/// off (blosc2, zfp and sz3 are default features).
#[cfg(not(feature = "sz3"))]
pub const UNSUPPORTED_CODECS: [&str; 1] = ["sz3"];
/// Codecs the format defines that this build does not decode: none.
#[cfg(feature = "sz3")]
pub const UNSUPPORTED_CODECS: [&str; 0] = [];

/// How to decode an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Check the frame's hash first: [`Error::MissingHash`] when it has none,
    /// [`Error::HashMismatch`] when it differs.
    pub verify_hash: bool,
    /// Return values in the machine's byte order (otherwise in the descriptor's order).
    pub native_byte_order: bool,
    /// Put NaN and ±Inf back where the masks say they were (otherwise leave the zeros).
    pub restore_non_finite: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            verify_hash: false,
            native_byte_order: true,
            restore_non_finite: true,
        }
    }
}

fn desc_err(object: usize) -> impl Fn(tensor_descriptor::Error) -> Error {
    move |source| Error::Descriptor { object, source }
}

/// The pipeline an object's descriptor names, with its parameters. Simple packing needs
/// all of its parameters here; the encoder fills in missing ones before calling this.
/// Decodes a data object's payload on its own, from its descriptor: what a reader has that
/// fetched only the payload's bytes (one chunk of a virtual Zarr store). `payload` must be
/// the object's whole payload. Masks live after the payload in the frame and are not
/// applied: an object with masks does not read this way (its NaN and ±Inf would read as
/// the values the encoder put in their place). The values come in the descriptor's byte
/// order.
pub fn decode_payload(
    descriptor: &DataObjectDescriptor,
    payload: &[u8],
    limits: &Limits,
) -> Result<Tensor> {
    let p = pipeline(descriptor, 0)?;
    let (dtype, n) = (descriptor.dtype, descriptor.element_count());
    let pipeline_err = |source| Error::Pipeline { object: 0, source };
    if p.compression == Compression::None {
        let expected = p.encoded_len(dtype, n).map_err(pipeline_err)?;
        if expected != payload.len() as u64 {
            return Err(Error::encoding(
                None,
                format!(
                    "the descriptor implies {expected} payload bytes; {} were given",
                    payload.len()
                ),
            ));
        }
    }
    let len = p
        .check_decode(payload.len() as u64, dtype, n, limits)
        .map_err(pipeline_err)?;
    if !p.compression.is_built() {
        return Err(Error::Unsupported {
            object: 0,
            what: "compression",
            name: descriptor.compression.clone(),
        });
    }
    let mut data = tensor_core::buffer::try_filled(
        checked::to_usize(len, "decoded size")?,
        0u8,
        "a decoded object",
    )?;
    let order = descriptor.byte_order_or_native();
    p.decode_into(payload, dtype, order, n, &mut data, limits)
        .map_err(pipeline_err)?;
    Tensor::new(data, dtype, &descriptor.shape, order)
        .map_err(|e| Error::Metadata(format!("a payload's descriptor: {e}")))
}

pub(crate) fn pipeline(d: &DataObjectDescriptor, object: usize) -> Result<Pipeline> {
    let e = desc_err(object);
    let unknown =
        |what: &str, name: &str| Error::encoding(Some(object), format!("unknown {what} {name:?}"));
    let missing = |key: &str| Error::Metadata(format!("object {object}: `{key}` is missing"));
    let encoding = match d.encoding.as_str() {
        "none" => Encoding::None,
        "simple_packing" => {
            let bits = d
                .param_u64("sp_bits_per_value")
                .map_err(&e)?
                .ok_or_else(|| missing("sp_bits_per_value"))?;
            let reference = d.param_f64("sp_reference_value").map_err(&e)?;
            let scale = d.param_i64("sp_binary_scale_factor").map_err(&e)?;
            let (Some(reference_value), Some(scale)) = (reference, scale) else {
                return Err(Error::Metadata(format!(
                    "object {object}: simple_packing needs `sp_reference_value` and `sp_binary_scale_factor`"
                )));
            };
            let decimal = d
                .param_i64("sp_decimal_scale_factor")
                .map_err(&e)?
                .unwrap_or(0);
            let sp = SimplePacking {
                bits_per_value: u32::try_from(bits).unwrap_or(u32::MAX),
                reference_value,
                binary_scale_factor: i32::try_from(scale).unwrap_or(i32::MAX),
                decimal_scale_factor: i32::try_from(decimal).map_err(|_| {
                    Error::Metadata(format!(
                        "object {object}: `sp_decimal_scale_factor` {decimal} is out of range"
                    ))
                })?,
            };
            sp.check()
                .map_err(|source| Error::Pipeline { object, source })?;
            Encoding::SimplePacking(sp)
        }
        other => return Err(unknown("encoding", other)),
    };
    let filter = match d.filter.as_str() {
        "none" => Filter::None,
        "shuffle" => {
            let size = d
                .param_u64("shuffle_element_size")
                .map_err(&e)?
                .ok_or_else(|| missing("shuffle_element_size"))?;
            Filter::Shuffle {
                element_size: checked::to_usize(size, "shuffle element size")?,
            }
        }
        other => return Err(unknown("filter", other)),
    };
    let szip_param = |key: &'static str| -> Result<u32> {
        let v = d.param_u64(key).map_err(&e)?.ok_or_else(|| missing(key))?;
        u32::try_from(v)
            .map_err(|_| Error::Metadata(format!("object {object}: `{key}` {v} is out of range")))
    };
    let compression = match d.compression.as_str() {
        "none" => Compression::None,
        "zstd" => Compression::Zstd {
            level: d
                .param_i64("zstd_level")
                .map_err(&e)?
                .map_or(3, |l| l.clamp(-131_072, 22) as i32),
        },
        "lz4" => Compression::Lz4,
        "blosc2" => {
            let name = d.param_text("blosc2_codec").map_err(&e)?.unwrap_or("lz4");
            let codec =
                tensor_pipeline::blosc2::Codec::parse(name).ok_or_else(|| Error::Encoding {
                    object: Some(object),
                    reason: format!(
                        "blosc2_codec {name:?} is not one of blosclz, lz4, lz4hc, zlib, zstd"
                    ),
                })?;
            let clevel = d.param_i64("blosc2_clevel").map_err(&e)?.unwrap_or(5);
            Compression::Blosc2 {
                codec,
                clevel: u8::try_from(clevel)
                    .ok()
                    .filter(|l| *l <= 9)
                    .ok_or_else(|| {
                        Error::Metadata(format!(
                            "object {object}: `blosc2_clevel` {clevel} is not 0 to 9"
                        ))
                    })?,
            }
        }
        "zfp" => {
            let mode = match d.param_text("zfp_mode").map_err(&e)? {
                Some("fixed_rate") => tensor_pipeline::zfp::Mode::FixedRate(
                    d.param_f64("zfp_rate")
                        .map_err(&e)?
                        .ok_or_else(|| missing("zfp_rate"))?,
                ),
                Some("fixed_precision") => {
                    let p = d
                        .param_u64("zfp_precision")
                        .map_err(&e)?
                        .ok_or_else(|| missing("zfp_precision"))?;
                    tensor_pipeline::zfp::Mode::FixedPrecision(u32::try_from(p).map_err(|_| {
                        Error::Metadata(format!(
                            "object {object}: `zfp_precision` {p} is out of range"
                        ))
                    })?)
                }
                Some("fixed_accuracy") => tensor_pipeline::zfp::Mode::FixedAccuracy(
                    d.param_f64("zfp_tolerance")
                        .map_err(&e)?
                        .ok_or_else(|| missing("zfp_tolerance"))?,
                ),
                Some(other) => {
                    return Err(Error::Metadata(format!(
                        "object {object}: zfp_mode {other:?} is not fixed_rate, fixed_precision or fixed_accuracy"
                    )));
                }
                None => return Err(missing("zfp_mode")),
            };
            let mode = mode
                .check()
                .map_err(|source| Error::Pipeline { object, source })?;
            Compression::Zfp { mode }
        }
        // Parsed in every build, so that one without the codec still refuses what no
        // build could read.
        "sz3" => {
            let mode = d
                .param_text("sz3_error_bound_mode")
                .map_err(&e)?
                .ok_or_else(|| missing("sz3_error_bound_mode"))?;
            let value = d
                .param_f64("sz3_error_bound")
                .map_err(&e)?
                .ok_or_else(|| missing("sz3_error_bound"))?;
            let bound = tensor_pipeline::sz3::Bound::parse(mode, value).ok_or_else(|| {
                Error::Metadata(format!(
                    "object {object}: sz3_error_bound_mode {mode:?} is not abs, rel or psnr"
                ))
            })?;
            Compression::Sz3 { bound }
        }
        "rle" => Compression::Rle,
        "roaring" => Compression::Roaring,
        "szip" => Compression::Szip {
            rsi: szip_param("szip_rsi")?,
            block_size: szip_param("szip_block_size")?,
            flags: szip_param("szip_flags")?,
        },
        other => return Err(unknown("compression", other)),
    };
    Ok(Pipeline {
        encoding,
        filter,
        compression,
    })
}

/// An object frame's bytes and where it sits, to check its hash
/// ([`ObjectFrame::hash_check`]).
#[derive(Clone, Copy, Debug)]
pub struct HashCheck<'a> {
    frame: &'a [u8],
    flags: u16,
    offset: u64,
    index: usize,
}

impl HashCheck<'_> {
    /// Checks the stored hash against the bytes (an error when the frame carries none).
    pub fn verify(&self) -> Result<()> {
        if self.flags & HASH_PRESENT == 0 {
            return Err(Error::MissingHash { object: self.index });
        }
        hash::verify(
            self.frame,
            20,
            "NTensorFrame",
            self.offset,
            Some(self.index),
        )
    }
}

/// A data-object frame inside a message, with its descriptor decoded.
#[derive(Clone, Debug)]
pub struct ObjectFrame<'a> {
    index: usize,
    offset: u64,
    header: FrameHeader,
    frame: &'a [u8],
    descriptor: DataObjectDescriptor,
    canonical: bool,
    region: Range<usize>,
    payload_end: usize,
}

impl<'a> ObjectFrame<'a> {
    /// Parses the frame `frame` (exactly `total_length` bytes), object `index`, found at
    /// `offset` in its message.
    pub(crate) fn parse(
        frame: &'a [u8],
        header: FrameHeader,
        index: usize,
        offset: u64,
        limits: &Limits,
    ) -> Result<Self> {
        let tl = frame.len();
        let footer = tl - 20;
        let cbor_offset = wire::be_u64(frame, footer);
        if cbor_offset < FRAME_HEADER_LEN || cbor_offset > footer as u64 {
            return Err(Error::framing(
                offset + footer as u64,
                format!(
                    "object {index}: cbor_offset {cbor_offset} lies outside the frame body [16, {footer}]"
                ),
            ));
        }
        let start = cbor_offset as usize;
        let (desc_range, region) = if header.flags & CBOR_AFTER_PAYLOAD != 0 {
            (start..footer, FRAME_HEADER_LEN as usize..start)
        } else {
            if cbor_offset != FRAME_HEADER_LEN {
                return Err(Error::framing(
                    offset + footer as u64,
                    format!(
                        "object {index}: with the descriptor first (CBOR_AFTER_PAYLOAD clear), cbor_offset must be 16, not {cbor_offset}"
                    ),
                ));
            }
            let mut d = Decoder::new(&frame[start..footer]);
            let (_, span) = d.value_with_span().map_err(|source| Error::Descriptor {
                object: index,
                source: source.into(),
            })?;
            let end = start + span.len();
            (start..end, end..footer)
        };
        limits.check_header_bytes(desc_range.len() as u64)?;
        let (descriptor, canonical) =
            DataObjectDescriptor::decode(&frame[desc_range]).map_err(desc_err(index))?;
        let region_len = region.len() as u64;
        let mut payload_end = region_len;
        if let Some(m) = &descriptor.masks {
            for (kind, entry) in &m.masks {
                let end = checked::add(entry.offset, entry.length, "mask end")?;
                if end > region_len {
                    return Err(Error::Metadata(format!(
                        "object {index}: mask {kind:?} at {}+{} runs past the {region_len}-byte payload region",
                        entry.offset, entry.length
                    )));
                }
                payload_end = payload_end.min(entry.offset);
            }
        }
        Ok(ObjectFrame {
            index,
            offset,
            header,
            frame,
            descriptor,
            canonical,
            payload_end: region.start + payload_end as usize,
            region,
        })
    }

    /// The object's index in its message.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The frame's offset from the start of its message.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The frame's header.
    #[must_use]
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// The descriptor.
    #[must_use]
    pub fn descriptor(&self) -> &DataObjectDescriptor {
        &self.descriptor
    }

    /// Whether the descriptor was stored as canonical CBOR.
    #[must_use]
    pub fn descriptor_is_canonical(&self) -> bool {
        self.canonical
    }

    /// The encoded tensor bytes (without mask blobs).
    #[must_use]
    pub fn payload(&self) -> &'a [u8] {
        &self.frame[self.region.start..self.payload_end]
    }

    /// Everything between the frame header and the descriptor: payload and mask blobs.
    #[must_use]
    pub fn payload_region(&self) -> &'a [u8] {
        &self.frame[self.region.clone()]
    }

    /// The hash stored in the frame, when its `HASH_PRESENT` flag is set.
    #[must_use]
    pub fn stored_hash(&self) -> Option<u64> {
        hash::stored(self.frame, self.header.flags)
    }

    /// The XXH3-64 of the frame body (payload, masks and descriptor).
    #[must_use]
    pub fn computed_hash(&self) -> u64 {
        hash::of_body(self.frame, 20)
    }

    /// Checks the stored hash against the bytes.
    pub fn verify_hash(&self) -> Result<()> {
        self.hash_check().verify()
    }

    /// What [`verify_hash`](Self::verify_hash) needs, without the descriptor: a copy kept
    /// to check the frame later costs nothing to make.
    #[must_use]
    pub fn hash_check(&self) -> HashCheck<'a> {
        HashCheck {
            frame: self.frame,
            flags: self.header.flags,
            offset: self.offset,
            index: self.index,
        }
    }

    /// The dtype, shape and byte order of the decoded tensor.
    fn layout(&self) -> (Dtype, &[u64], u64) {
        let d = &self.descriptor;
        (d.dtype, &d.shape, d.element_count())
    }

    /// Bytes the decoded tensor takes.
    pub fn decoded_len(&self) -> Result<u64> {
        let (dtype, _, n) = self.layout();
        dtype
            .payload_bytes(n)
            .map_err(|e| Error::Metadata(format!("object {}: {e}", self.index)))
    }

    /// The stored bytes as a tensor view without copying, when nothing needs decoding: no
    /// encoding, filter or compression, and no masks to restore. The view is in the
    /// descriptor's byte order.
    #[must_use]
    pub fn view(&self) -> Option<TensorView<'a>> {
        self.view_as(self.descriptor.dtype)
    }

    /// [`view`](Self::view) with the elements read as `dtype` — the dtype they were
    /// written from, when it is stored as another of the same width (see
    /// [`container::original_dtype`](crate::container::original_dtype)).
    #[must_use]
    pub fn view_as(&self, dtype: Dtype) -> Option<TensorView<'a>> {
        let d = &self.descriptor;
        if d.encoding != "none"
            || d.filter != "none"
            || d.compression != "none"
            || d.masks.is_some()
        {
            return None;
        }
        TensorView::new(self.payload(), dtype, &d.shape, d.byte_order_or_native()).ok()
    }

    /// Without compression, the size the descriptor implies must be the stored size: checked
    /// before anything is allocated or touched.
    fn check_stored_size(&self, p: &Pipeline) -> Result<()> {
        if p.compression != Compression::None {
            return Ok(());
        }
        let (dtype, _, n) = self.layout();
        let expected = p.encoded_len(dtype, n).map_err(|source| Error::Pipeline {
            object: self.index,
            source,
        })?;
        let stored = self.payload().len() as u64;
        if expected != stored {
            return Err(Error::encoding(
                Some(self.index),
                format!(
                    "the descriptor implies {expected} payload bytes but the frame holds {stored}"
                ),
            ));
        }
        Ok(())
    }

    /// Decodes into `dst`, which must be exactly [`decoded_len`](Self::decoded_len) bytes.
    /// Returns the byte order the values are in.
    pub fn decode_into(
        &self,
        dst: &mut [u8],
        opts: DecodeOptions,
        limits: &Limits,
    ) -> Result<ByteOrder> {
        let p = self.checked_pipeline(opts)?;
        self.decode_with(&p, dst, opts, limits)
    }

    /// Elements `first..first + count` of the object (flattened, C order), decoding no more
    /// of it than its stages make necessary ([`Pipeline::decode_range`]: a raw payload is
    /// sliced, unfiltered and uncompressed simple packing unpacks only the groups that hold
    /// the range), with the masks restored and the byte order set as `opts` asks. Returns
    /// the bytes and their byte order. A range past the end, or of a packed dtype, is an
    /// error.
    pub fn decode_range(
        &self,
        opts: DecodeOptions,
        limits: &Limits,
        first: u64,
        count: u64,
    ) -> Result<(Vec<u8>, ByteOrder)> {
        let p = self.checked_pipeline(opts)?;
        let (dtype, _, n) = self.layout();
        let order = self.descriptor.byte_order_or_native();
        let mut out = p
            .decode_range(self.payload(), dtype, order, n, limits, first, count)
            .map_err(|source| Error::Pipeline {
                object: self.index,
                source,
            })?;
        let order = self.finish_values(&mut out, first, opts, limits)?;
        Ok((out, order))
    }

    /// Decoded values from element `first` on, in the stored byte order: the masks restored
    /// and the bytes swapped to the machine's order, as `opts` asks. Returns the order they
    /// end in.
    fn finish_values(
        &self,
        out: &mut [u8],
        first: u64,
        opts: DecodeOptions,
        limits: &Limits,
    ) -> Result<ByteOrder> {
        let (dtype, ..) = self.layout();
        let order = self.descriptor.byte_order_or_native();
        if opts.restore_non_finite {
            for (kind, bits) in self.masks(limits)? {
                masks::restore_from(out, first, dtype, order, kind, &bits).map_err(|source| {
                    Error::Pipeline {
                        object: self.index,
                        source,
                    }
                })?;
            }
        }
        if opts.native_byte_order && !order.is_native() {
            byte_order::swap_in_place(out, dtype.swap_width())?;
            return Ok(ByteOrder::NATIVE);
        }
        Ok(order)
    }

    /// Verifies the hash when asked (first: changed bytes are the root cause of anything
    /// else that looks wrong), then builds the pipeline and checks the stored size against
    /// it.
    fn checked_pipeline(&self, opts: DecodeOptions) -> Result<Pipeline> {
        if opts.verify_hash {
            self.verify_hash()?;
        }
        self.structure(None)
    }

    /// What can be checked without decoding: the descriptor names a pipeline with sound
    /// parameters; without compression, the stored size is the size the descriptor implies;
    /// with `limits`, the decoded size and expansion are within them; and this build has
    /// the codec (checked last, so that a build without it still reports the rest).
    pub(crate) fn structure(&self, limits: Option<&Limits>) -> Result<Pipeline> {
        let p = pipeline(&self.descriptor, self.index)?;
        self.check_stored_size(&p)?;
        if let Some(limits) = limits {
            self.checked_len(&p, limits)?;
        }
        if !p.compression.is_built() {
            return Err(Error::Unsupported {
                object: self.index,
                what: "compression",
                name: self.descriptor.compression.clone(),
            });
        }
        Ok(p)
    }

    /// [`decode_into`](Self::decode_into) after [`checked_pipeline`](Self::checked_pipeline).
    fn decode_with(
        &self,
        p: &Pipeline,
        dst: &mut [u8],
        opts: DecodeOptions,
        limits: &Limits,
    ) -> Result<ByteOrder> {
        let idx = self.index;
        let (dtype, _, n) = self.layout();
        let order = self.descriptor.byte_order_or_native();
        let payload = self.payload();
        p.decode_into(payload, dtype, order, n, dst, limits)
            .map_err(|source| Error::Pipeline {
                object: idx,
                source,
            })?;
        self.finish_values(dst, 0, opts, limits)
    }

    /// Everything that can be checked without decoding: the pipeline is one this build
    /// decodes, the stored size fits it, the decoded size and expansion are within
    /// `limits`, and the masks use known methods. Readers that decode only on demand call
    /// this at open, so that a file which cannot decode is refused up front.
    pub fn check_decodable(&self, limits: &Limits) -> Result<()> {
        let p = self.checked_pipeline(DecodeOptions::default())?;
        self.checked_len(&p, limits)?;
        self.mask_entries()?;
        Ok(())
    }

    /// The decoded size, checked against `limits` (total and expansion) for pipeline `p`.
    fn checked_len(&self, p: &Pipeline, limits: &Limits) -> Result<u64> {
        let (dtype, _, n) = self.layout();
        p.check_decode(self.payload().len() as u64, dtype, n, limits)
            .map_err(|source| Error::Pipeline {
                object: self.index,
                source,
            })
    }

    /// Decodes the object in runs of at most `chunk` bytes (whole groups of 8 elements),
    /// handing each to `sink` in order, with the masks restored and the byte order set as
    /// `opts` asks: for callers that hash, copy or check the values, memory stays within a
    /// few runs and the masks' bits, whatever the object's size (see
    /// [`Pipeline::decode_chunks`] for the stage chains that must be decoded whole).
    /// Returns the byte order the runs are in. An error from `sink` stops decoding and is
    /// returned as it is.
    pub fn decode_chunks(
        &self,
        opts: DecodeOptions,
        limits: &Limits,
        chunk: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<ByteOrder> {
        let p = self.checked_pipeline(opts)?;
        // Streamed or not, a decode's size and work are bounded by the same limits.
        self.checked_len(&p, limits)?;
        let (dtype, _, n) = self.layout();
        let order = self.descriptor.byte_order_or_native();
        let masks = if opts.restore_non_finite {
            self.masks(limits)?
        } else {
            Vec::new()
        };
        let swap = opts.native_byte_order && !order.is_native();
        let width = dtype.byte_width().max(1);
        let mut first = 0u64;
        let mut run = Vec::new();
        let mut failed = None;
        let decoded = p.decode_chunks(self.payload(), dtype, order, n, limits, chunk, &mut |c| {
            let out = if masks.is_empty() && !swap {
                c
            } else {
                run.clear();
                run.extend_from_slice(c);
                for (kind, bits) in &masks {
                    masks::restore_from(&mut run, first, dtype, order, *kind, bits)?;
                }
                if swap {
                    byte_order::swap_in_place(&mut run, dtype.swap_width())?;
                }
                &run
            };
            first += (c.len() / width) as u64;
            sink(out).map_err(|e| {
                failed = Some(e);
                tensor_pipeline::Error::Corrupt {
                    codec: "sink",
                    reason: String::new(),
                }
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        decoded.map_err(|source| Error::Pipeline {
            object: self.index,
            source,
        })?;
        Ok(if swap { ByteOrder::NATIVE } else { order })
    }

    /// Decodes into a new tensor.
    pub fn decode(&self, opts: DecodeOptions, limits: &Limits) -> Result<Tensor> {
        // Stored bytes that cannot possibly decode to the descriptor's size, and sizes past
        // the limits, fail before the allocation; a refused allocation is an error too.
        let p = self.checked_pipeline(opts)?;
        let len = self.checked_len(&p, limits)?;
        let mut data = tensor_core::buffer::try_filled(
            checked::to_usize(len, "decoded size")?,
            0u8,
            "a decoded object",
        )?;
        let order = self.decode_with(&p, &mut data, opts, limits)?;
        Tensor::new(data, self.descriptor.dtype, &self.descriptor.shape, order)
            .map_err(|e| Error::Metadata(format!("object {}: {e}", self.index)))
    }

    /// The NaN/Inf masks, unpacked to `ceil(n/8)` MSB-first bytes each, in blob order.
    pub fn masks(&self, limits: &Limits) -> Result<Vec<(MaskKind, Vec<u8>)>> {
        let n = self.descriptor.element_count();
        self.mask_entries()?
            .into_iter()
            .map(|(kind, method, blob)| {
                let bits = masks::decode_mask(method, blob, n, limits).map_err(|source| {
                    Error::Pipeline {
                        object: self.index,
                        source,
                    }
                })?;
                Ok((kind, bits))
            })
            .collect()
    }

    /// The masks the descriptor lists, in blob order, with their methods and stored blobs;
    /// an error for a method or a kind this build does not know.
    fn mask_entries(&self) -> Result<Vec<(MaskKind, MaskMethod, &'a [u8])>> {
        let Some(m) = &self.descriptor.masks else {
            return Ok(Vec::new());
        };
        let region = self.payload_region();
        let mut out = Vec::new();
        for kind in MaskKind::ALL {
            let Some(entry) = m.masks.get(kind.name()) else {
                continue;
            };
            let method =
                MaskMethod::from_name(&entry.method).ok_or_else(|| Error::Unsupported {
                    object: self.index,
                    what: "mask method",
                    name: entry.method.clone(),
                })?;
            // parse() checked that every mask lies inside the region.
            let blob = &region[entry.offset as usize..(entry.offset + entry.length) as usize];
            out.push((kind, method, blob));
        }
        if let Some(other) = m.masks.keys().find(|k| MaskKind::from_name(k).is_none()) {
            return Err(Error::Metadata(format!(
                "object {}: unknown mask kind {other:?}",
                self.index
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame_out::write_frame;
    use crate::wire::FrameType;

    /// A payload decodes on its own, from the descriptor, to what the whole frame decodes
    /// to; a payload of the wrong size is refused.
    #[test]
    fn payloads_decode_on_their_own() {
        let values: Vec<f64> = (0..1000)
            .map(|i| 250.0 + (f64::from(i) / 7.0).sin())
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[10, 100], ByteOrder::Little);
        d.encoding = "simple_packing".into();
        d.compression = "szip".into();
        for (k, v) in [
            ("sp_bits_per_value", 16u64),
            ("szip_rsi", 32),
            ("szip_block_size", 16),
            ("szip_flags", 8),
        ] {
            d.params
                .insert(k.into(), tensor_descriptor::ParamValue::from(v));
        }
        let msg = crate::serialize(
            &crate::GlobalMetadata::default(),
            &[d],
            &[&bytes],
            &crate::EncodeOptions::default(),
        )
        .unwrap();
        let m = crate::Message::open(&msg).unwrap();
        let o = m.object(0).unwrap();
        let limits = Limits::default();
        let whole = o.decode(DecodeOptions::default(), &limits).unwrap();
        let alone = decode_payload(o.descriptor(), o.payload(), &limits).unwrap();
        assert!(alone.data() == whole.data());
        assert_eq!(alone.shape(), [10, 100]);
        let raw = DataObjectDescriptor::new(Dtype::Float64, &[4], ByteOrder::Little);
        assert!(decode_payload(&raw, &[0u8; 24], &limits).is_err());
        assert!(decode_payload(&raw, &[0u8; 32], &limits).is_ok());
    }

    /// SZ3's parameters are read in every build: an unknown bound mode is an error whether
    /// or not the codec is built, and so is a shape past the limits; only then does a build
    /// without the codec say it lacks it.
    #[test]
    fn sz3_objects_are_checked_in_every_build() {
        let mut d = DataObjectDescriptor::new(Dtype::Float64, &[4], ByteOrder::Little);
        d.compression = "sz3".into();
        d.params.insert("sz3_error_bound".into(), 0.1.into());
        d.params.insert("sz3_error_bound_mode".into(), "l7".into());
        let e = pipeline(&d, 0).unwrap_err();
        assert!(e.to_string().contains("not abs, rel or psnr"), "{e}");
        d.params.insert("sz3_error_bound_mode".into(), "abs".into());
        assert!(pipeline(&d, 0).is_ok());
    }

    /// A data frame with the descriptor first and the payload after it (flag bit 0 clear),
    /// which readers must accept though no encoder writes it.
    #[test]
    fn reads_the_descriptor_first_layout() {
        let d = DataObjectDescriptor::new(Dtype::Int16, &[3], ByteOrder::Big);
        let payload: Vec<u8> = [1i16, -2, 3].iter().flat_map(|v| v.to_be_bytes()).collect();
        let mut body = d.encode();
        body.extend_from_slice(&payload);
        let mut f = Vec::new();
        write_frame(
            &mut f,
            0,
            FrameType::NTensor,
            &[&body],
            true,
            Some(16),
            None,
        )
        .unwrap();
        f[7] &= !CBOR_AFTER_PAYLOAD as u8;
        let len = FRAME_HEADER_LEN as usize + body.len() + 20;
        let header = FrameHeader::parse(&f, 0).unwrap();
        let o = ObjectFrame::parse(&f[..len], header, 0, 0, &Limits::default()).unwrap();
        assert_eq!(o.payload(), payload.as_slice());
        o.verify_hash().unwrap();
        let t = o
            .decode(DecodeOptions::default(), &Limits::default())
            .unwrap();
        assert_eq!(&*t.view().typed::<i16>().unwrap(), &[1, -2, 3]);
    }
}
