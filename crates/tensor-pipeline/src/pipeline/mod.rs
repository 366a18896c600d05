//! Chaining the stages: encoding → filter → compression, and back.

use crate::bitmask::{self, BitmaskCodec};
use crate::error::{Error, Result};
use crate::simple_packing::SimplePacking;
use crate::{lz4, shuffle, szip, zstd};
use std::borrow::Cow;
use std::io::Read;
use tensor_core::{ByteOrder, Limits, checked};
use tensor_dtype::{Dtype, shape};

/// The encoding stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    /// The elements as they are.
    None,
    /// Linear quantisation of float32/float64 values.
    SimplePacking(SimplePacking),
}

/// The filter stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Nothing.
    None,
    /// Byte shuffle with this many byte lanes.
    Shuffle {
        /// Bytes per element.
        element_size: usize,
    },
}

/// The compression stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Compression {
    /// Nothing.
    None,
    /// zstd at a level.
    Zstd {
        /// The level (0: zstd's default).
        level: i32,
    },
    /// LZ4 block with a 4-byte little-endian length prefix.
    Lz4,
    /// Run-length bitmask codec (dtype bitmask only).
    Rle,
    /// Roaring bitmask codec (dtype bitmask only).
    Roaring,
    /// blosc2: one super-chunk frame, its chunks compressed with `codec` at `clevel`. The
    /// type size is not stored: see [`Pipeline::blosc2_typesize`].
    Blosc2 {
        /// The codec inside the chunks.
        codec: crate::blosc2::Codec,
        /// The level, 0 to 9.
        clevel: u8,
    },
    /// zfp (lossy): one stream of the payload read as float64 values (see [`crate::zfp`]).
    Zfp {
        /// The mode and its parameter.
        mode: crate::zfp::Mode,
    },
    /// SZ3 (lossy): one stream of the payload read as float64 values (see [`crate::sz3`]).
    Sz3 {
        /// The error bound.
        bound: crate::sz3::Bound,
    },
    /// szip (CCSDS 121.0-B-3). The sample width is not stored: see
    /// [`Pipeline::szip_params`].
    Szip {
        /// Blocks per reference sample interval.
        rsi: u32,
        /// Samples per block.
        block_size: u32,
        /// libaec flags as stored; the flags actually used add [`szip::MSB`] after
        /// simple packing and [`szip::THREE_BYTE`] for 17 to 24 bits, as the reference does.
        flags: u32,
    },
}

impl Compression {
    /// Whether this build includes the codec (`lz4` and `roaring` are cargo features, on by
    /// default); encoding or decoding with one left out reports [`Error::NotBuilt`].
    #[must_use]
    pub fn is_built(&self) -> bool {
        self.not_built().is_none()
    }

    /// The error for a codec this build leaves out.
    fn not_built(&self) -> Option<Error> {
        let feature = match self {
            Compression::Lz4 if !cfg!(feature = "lz4") => "lz4",
            Compression::Roaring if !cfg!(feature = "roaring") => "roaring",
            Compression::Blosc2 { .. } if !cfg!(feature = "blosc2") => "blosc2",
            Compression::Zfp { .. } if !cfg!(feature = "zfp") => "zfp",
            Compression::Sz3 { .. } if !cfg!(feature = "sz3") => "sz3",
            _ => return None,
        };
        Some(Error::not_built(feature))
    }
}

/// An encoded payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// The bytes to store.
    pub payload: Vec<u8>,
    /// With szip: the bit offset where each reference sample interval starts, for range
    /// decoding (Tensogram's `szip_block_offsets`).
    pub szip_block_offsets: Option<Vec<u64>>,
}

/// A whole pipeline for one tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pipeline {
    /// The encoding.
    pub encoding: Encoding,
    /// The filter.
    pub filter: Filter,
    /// The compression.
    pub compression: Compression,
}

/// Simple-packs float32 or float64 elements stored in `order`, with a concrete iterator
/// per case so the packing loop is monomorphised.
fn pack_floats(
    p: &SimplePacking,
    data: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    out: &mut Vec<u8>,
) -> Result<()> {
    let swap = !order.is_native();
    match (dtype, swap) {
        (Dtype::Float64, false) => p.encode(
            data.as_chunks::<8>()
                .0
                .iter()
                .map(|c| f64::from_ne_bytes(*c)),
            out,
        ),
        (Dtype::Float64, true) => p.encode(
            data.as_chunks::<8>()
                .0
                .iter()
                .map(|c| f64::from_bits(u64::from_ne_bytes(*c).swap_bytes())),
            out,
        ),
        (Dtype::Float32, false) => p.encode(
            data.as_chunks::<4>()
                .0
                .iter()
                .map(|c| f64::from(f32::from_ne_bytes(*c))),
            out,
        ),
        (Dtype::Float32, true) => p.encode(
            data.as_chunks::<4>()
                .0
                .iter()
                .map(|c| f64::from(f32::from_bits(u32::from_ne_bytes(*c).swap_bytes()))),
            out,
        ),
        (other, _) => Err(Error::Corrupt {
            codec: "simple_packing",
            reason: format!("packs float32 or float64, not {other}"),
        }),
    }
}

/// Unpacks simple-packed `packed` into `dst` (float32 or float64 in `order`).
fn unpack(
    p: &SimplePacking,
    packed: &[u8],
    dtype: Dtype,
    order: ByteOrder,
    dst: &mut [u8],
) -> Result<()> {
    let n = dst.len() / dtype.byte_width().max(1);
    let big = order == ByteOrder::Big;
    match dtype {
        Dtype::Float64 => p.decode(packed, n, |i, v| {
            let b = if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            dst[i * 8..i * 8 + 8].copy_from_slice(&b);
        }),
        Dtype::Float32 => p.decode(packed, n, |i, v| {
            let v = v as f32;
            let b = if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            dst[i * 4..i * 4 + 4].copy_from_slice(&b);
        }),
        other => Err(Error::Corrupt {
            codec: "simple_packing",
            reason: format!("decodes to float32 or float64, not {other}"),
        }),
    }
}

/// `read_exact`, with a stream that ends early reported as a size mismatch.
/// A [`Error::SizeMismatch`] unless `actual` bytes are the `expected` ones.
fn expect_len(expected: u64, actual: usize) -> Result<()> {
    if actual as u64 == expected {
        return Ok(());
    }
    Err(Error::SizeMismatch {
        codec: "pipeline",
        expected,
        actual: actual.to_string(),
    })
}

fn read_exactly(src: &mut dyn Read, buf: &mut [u8]) -> Result<()> {
    src.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::SizeMismatch {
            codec: "pipeline",
            expected: buf.len() as u64,
            actual: "fewer".into(),
        },
        _ => Error::Corrupt {
            codec: "zstd",
            reason: e.to_string(),
        },
    })
}

impl Pipeline {
    /// A pipeline that stores the elements as they are.
    pub const NONE: Pipeline = Pipeline {
        encoding: Encoding::None,
        filter: Filter::None,
        compression: Compression::None,
    };

    /// Checks, before anything is allocated or decoded, that decoding a `stored`-byte
    /// payload into `n` elements of `dtype` stays within `limits`: the decoded total, the
    /// compression stage's expansion from the stored bytes, and the whole decode's (packing
    /// expands by up to 64 : 1, and a 0-bit constant field stores nothing: such a field
    /// decodes within the limits' expansion allowance, not to whatever size it claims).
    /// Returns the decoded size.
    pub fn check_decode(&self, stored: u64, dtype: Dtype, n: u64, limits: &Limits) -> Result<u64> {
        let len = dtype.payload_bytes(n)?;
        limits.check_total_bytes(len)?;
        if self.compression != Compression::None {
            limits.check_expansion(stored, self.encoded_len(dtype, n)?)?;
        }
        limits.check_expansion(stored, len)?;
        Ok(len)
    }

    /// Bytes after the encoding stage for `n` elements of `dtype`.
    pub fn encoded_len(&self, dtype: Dtype, n: u64) -> Result<u64> {
        match self.encoding {
            Encoding::None => Ok(dtype.payload_bytes(n)?),
            Encoding::SimplePacking(p) => p.packed_len(n),
        }
    }

    /// The element size blosc2 is told (its byte shuffle works on elements of this size),
    /// derived as the reference derives it: simple packing's bits per value rounded up to
    /// whole bytes, 1 after a shuffle, or else the dtype's width.
    #[must_use]
    pub fn blosc2_typesize(&self, dtype: Dtype) -> usize {
        match (self.encoding, self.filter) {
            (Encoding::SimplePacking(p), _) => p.bits_per_value.div_ceil(8).max(1) as usize,
            (Encoding::None, Filter::Shuffle { .. }) => 1,
            (Encoding::None, Filter::None) => dtype.byte_width().max(1),
        }
    }

    /// The parameters szip runs with, derived as the reference derives them: the sample
    /// width is simple packing's bits per value, 8 after a shuffle, or else the dtype's width.
    /// `None` when the compression is not szip.
    ///
    /// Simple-packed widths that are not whole bytes go to szip as byte containers
    /// (1, 2, 3 or 4 bytes, most significant byte first, as GRIB template 5.42 stores them);
    /// the reference cannot read such objects (it mis-reads 12-bit values and refuses 4 or
    /// 20 bits).
    pub fn szip_params(&self, dtype: Dtype) -> Result<Option<szip::Params>> {
        match self.compression {
            Compression::Szip {
                rsi,
                block_size,
                flags,
            } => self.effective_szip(rsi, block_size, flags, dtype).map(Some),
            _ => Ok(None),
        }
    }

    fn effective_szip(
        &self,
        rsi: u32,
        block_size: u32,
        flags: u32,
        dtype: Dtype,
    ) -> Result<szip::Params> {
        let (bits, packed) = match (self.encoding, self.filter) {
            (Encoding::SimplePacking(p), _) => (p.bits_per_value, true),
            (Encoding::None, Filter::Shuffle { .. }) => (8, false),
            (Encoding::None, Filter::None) => (dtype.bit_width() as u32, false),
        };
        let mut flags = flags;
        if packed {
            flags |= szip::MSB;
        }
        if (17..=24).contains(&bits) {
            flags |= szip::THREE_BYTE;
        }
        let params = szip::Params {
            bits_per_sample: bits,
            block_size,
            rsi,
            flags,
        };
        if bits != 0 {
            params.check()?;
        }
        Ok(params)
    }

    /// Whether szip gets simple packing's dense bit stream re-laid as byte containers.
    fn szip_needs_containers(&self) -> Result<bool> {
        match (self.encoding, self.filter) {
            (Encoding::SimplePacking(p), filter) if p.bits_per_value % 8 != 0 => {
                if filter != Filter::None {
                    return Err(Error::Corrupt {
                        codec: "szip",
                        reason: format!(
                            "a shuffle between simple_packing at {} bits and szip is not \
                             supported (use whole-byte widths)",
                            p.bits_per_value
                        ),
                    });
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn szip_encode(&self, p: szip::Params, data: &[u8], n: u64) -> Result<Encoded> {
        if p.bits_per_sample == 0 {
            return Ok(Encoded {
                payload: Vec::new(),
                szip_block_offsets: Some(Vec::new()),
            });
        }
        let containers;
        let input = if self.szip_needs_containers()? {
            containers = szip::to_containers(&p, data, checked::to_usize(n, "element count")?)?;
            &containers[..]
        } else {
            data
        };
        let (payload, offsets) = szip::encode(&p, input)?;
        Ok(Encoded {
            payload,
            szip_block_offsets: Some(offsets),
        })
    }

    fn szip_decode_into(
        &self,
        p: szip::Params,
        payload: &[u8],
        n: u64,
        dst: &mut [u8],
    ) -> Result<()> {
        if p.bits_per_sample == 0 {
            return Ok(());
        }
        if self.szip_needs_containers()? {
            let count = checked::to_usize(n, "element count")?;
            let len = checked::mul(count as u64, p.sample_bytes() as u64, "szip containers")?;
            let mut containers = tensor_core::buffer::try_filled(
                checked::to_usize(len, "szip containers")?,
                0u8,
                "szip containers",
            )?;
            szip::decode_into(&p, payload, &mut containers)?;
            szip::from_containers(&p, &containers, dst)
        } else {
            szip::decode_into(&p, payload, dst)
        }
    }

    fn check(&self, dtype: Dtype) -> Result<()> {
        if let Some(err) = self.compression.not_built() {
            return Err(err);
        }
        if matches!(self.compression, Compression::Rle | Compression::Roaring)
            && dtype != Dtype::Bitmask
        {
            return Err(Error::Corrupt {
                codec: "bitmask",
                reason: format!("rle and roaring compress bitmasks, not {dtype}"),
            });
        }
        Ok(())
    }

    /// Encodes `n` elements of `dtype` (their bytes in `order`) into a payload.
    pub fn encode(&self, data: &[u8], dtype: Dtype, order: ByteOrder, n: u64) -> Result<Encoded> {
        self.check(dtype)?;
        let raw_len = dtype.payload_bytes(n)?;
        expect_len(raw_len, data.len())?;
        let encoded: Cow<'_, [u8]> = match self.encoding {
            Encoding::None => Cow::Borrowed(data),
            Encoding::SimplePacking(p) => {
                let mut out = Vec::new();
                pack_floats(&p, data, dtype, order, &mut out)?;
                Cow::Owned(out)
            }
        };
        let filtered = match self.filter {
            Filter::None => encoded,
            Filter::Shuffle { element_size } => {
                Cow::Owned(shuffle::shuffle(&encoded, element_size)?)
            }
        };
        let payload = match self.compression {
            Compression::None => filtered.into_owned(),
            Compression::Zstd { level } => zstd::compress_large(&filtered, level)?,
            Compression::Lz4 => lz4::compress(&filtered)?,
            Compression::Blosc2 { codec, clevel } => {
                crate::blosc2::compress(&filtered, codec, clevel, self.blosc2_typesize(dtype))?
            }
            Compression::Zfp { mode } => crate::zfp::compress(&filtered, mode)?,
            Compression::Sz3 { bound } => crate::sz3::compress(&filtered, bound)?,
            Compression::Rle => bitmask::compress(BitmaskCodec::Rle, &filtered)?,
            Compression::Roaring => bitmask::compress(BitmaskCodec::Roaring, &filtered)?,
            Compression::Szip {
                rsi,
                block_size,
                flags,
            } => {
                let p = self.effective_szip(rsi, block_size, flags, dtype)?;
                return self.szip_encode(p, &filtered, n);
            }
        };
        Ok(Encoded {
            payload,
            szip_block_offsets: None,
        })
    }

    /// Decodes a payload into `dst`: `n` elements of `dtype` in byte order `order` (exactly
    /// their size). The expected size is known before anything is decoded, so no stage can
    /// produce more than it.
    pub fn decode_into(
        &self,
        payload: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        n: u64,
        dst: &mut [u8],
        limits: &Limits,
    ) -> Result<()> {
        self.check(dtype)?;
        let out_len = dtype.payload_bytes(n)?;
        expect_len(out_len, dst.len())?;
        self.check_decode(payload.len() as u64, dtype, n, limits)?;
        let encoded_len = checked::to_usize(self.encoded_len(dtype, n)?, "encoded size")?;
        // Stages write straight into `dst` when the encoded form is the final form.
        let direct = matches!(self.encoding, Encoding::None) && matches!(self.filter, Filter::None);
        let mut scratch = Vec::new();
        let filtered: &[u8] = match self.compression {
            Compression::None => payload,
            codec => {
                let buf: &mut [u8] = if direct {
                    dst
                } else {
                    scratch =
                        tensor_core::buffer::try_filled(encoded_len, 0u8, "a decoded stream")?;
                    &mut scratch
                };
                match codec {
                    Compression::Zstd { .. } => zstd::decompress_into(payload, buf)?,
                    Compression::Lz4 => lz4::decompress_into(payload, buf)?,
                    Compression::Blosc2 { .. } => crate::blosc2::decompress_into(payload, buf)?,
                    Compression::Zfp { mode } => {
                        // The reference writes the decoded values in the descriptor's order.
                        crate::zfp::decompress_into(payload, mode, buf, order == ByteOrder::Big)?;
                    }
                    Compression::Sz3 { .. } => {
                        crate::sz3::decompress_into(payload, buf, order == ByteOrder::Big)?;
                    }
                    Compression::Rle => bitmask::decompress_into(BitmaskCodec::Rle, payload, buf)?,
                    Compression::Roaring => {
                        bitmask::decompress_into(BitmaskCodec::Roaring, payload, buf)?;
                    }
                    Compression::Szip {
                        rsi,
                        block_size,
                        flags,
                    } => {
                        let p = self.effective_szip(rsi, block_size, flags, dtype)?;
                        self.szip_decode_into(p, payload, n, buf)?;
                    }
                    Compression::None => {}
                }
                if direct {
                    return Ok(());
                }
                &scratch
            }
        };
        expect_len(encoded_len as u64, filtered.len())?;
        let unfiltered: Cow<'_, [u8]> = match self.filter {
            Filter::None => Cow::Borrowed(filtered),
            Filter::Shuffle { element_size } => {
                Cow::Owned(shuffle::unshuffle(filtered, element_size)?)
            }
        };
        match self.encoding {
            Encoding::None => dst.copy_from_slice(&unfiltered),
            Encoding::SimplePacking(p) => unpack(&p, &unfiltered, dtype, order, dst)?,
        }
        Ok(())
    }

    /// Elements `first..first + count` of the payload's `n` decoded elements, decoding no
    /// more than the stages make necessary: a payload stored as it is is sliced, and simple
    /// packing without a filter or compression unpacks only the groups of 8 elements that
    /// hold the range (a group always starts on a byte). Any other chain is decoded whole,
    /// with every check of [`decode`](Self::decode), and the range copied out. A range past
    /// the end is an error, and so is a packed dtype (bitmask, int4, float4…), whose
    /// elements do not start on bytes: decode those whole.
    // The arguments of `decode` plus the range.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_range(
        &self,
        payload: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        n: u64,
        limits: &Limits,
        first: u64,
        count: u64,
    ) -> Result<Vec<u8>> {
        let end = first
            .checked_add(count)
            .filter(|&e| e <= n)
            .ok_or_else(|| {
                tensor_core::Error::InvalidArgument(format!(
                    "the range of {count} elements from element {first} is outside the object's {n}"
                ))
            })?;
        if dtype.is_packed() || dtype == Dtype::Bitmask {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "a range of {dtype} elements: they are packed into bits; decode the whole object"
            ))
            .into());
        }
        let width = dtype.byte_width() as u64;
        let sliceable = self.filter == Filter::None
            && self.compression == Compression::None
            && (self.encoding == Encoding::None
                || matches!(dtype, Dtype::Float32 | Dtype::Float64));
        if !sliceable {
            let whole = self.decode(payload, dtype, order, n, limits)?;
            let from = checked::to_usize(first * width, "range start")?;
            let to = checked::to_usize(end * width, "range end")?;
            return Ok(whole[from..to].to_vec());
        }
        self.check(dtype)?;
        self.check_decode(payload.len() as u64, dtype, n, limits)?;
        expect_len(self.encoded_len(dtype, n)?, payload.len())?;
        // Whole groups of 8 elements around the range: their encoded bytes start and end on
        // byte boundaries (the last group may be short, at the end of the stream).
        let (g0, g1) = (first / 8 * 8, end.div_ceil(8).saturating_mul(8).min(n));
        let at = |k: u64| -> Result<usize> {
            Ok(checked::to_usize(
                self.encoded_len(dtype, k)?,
                "encoded offset",
            )?)
        };
        let encoded = &payload[at(g0)?..at(g1)?];
        let skip = checked::to_usize((first - g0) * width, "range start")?;
        let len = checked::to_usize(count * width, "range size")?;
        match self.encoding {
            Encoding::None => Ok(encoded[skip..skip + len].to_vec()),
            Encoding::SimplePacking(p) => {
                let mut groups = tensor_core::buffer::try_filled(
                    checked::to_usize((g1 - g0) * width, "decoded groups")?,
                    0u8,
                    "a decoded range",
                )?;
                unpack(&p, encoded, dtype, order, &mut groups)?;
                groups.truncate(skip + len);
                groups.drain(..skip);
                Ok(groups)
            }
        }
    }

    /// Decodes a payload in runs of at most `chunk` output bytes (rounded to whole groups
    /// of 8 elements), handing each run to `sink` in order: memory stays within about two
    /// runs whatever the tensor's size, for callers that only hash, copy or check the
    /// values. Pipelines whose stages need the whole encoded stream at once (a shuffle,
    /// szip, lz4, the bitmask codecs) are decoded whole into one buffer, checked against
    /// `limits` and allocated fallibly, and then handed out in runs.
    ///
    /// Every check of [`decode_into`](Self::decode_into) applies: the same sizes, the same
    /// expansion limits, and a stream that decodes to more or fewer bytes is an error after
    /// the runs it did produce.
    // The arguments of `decode_into` plus the run size and the sink: grouping them would
    // only add a type every caller has to build.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_chunks(
        &self,
        payload: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        n: u64,
        limits: &Limits,
        chunk: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.check(dtype)?;
        self.check_decode(payload.len() as u64, dtype, n, limits)?;
        let encoded_len = self.encoded_len(dtype, n)?;
        let streamable = self.filter == Filter::None
            && matches!(
                self.compression,
                Compression::None | Compression::Zstd { .. }
            )
            && (self.encoding == Encoding::None
                || matches!(dtype, Dtype::Float32 | Dtype::Float64));
        if !streamable {
            let out = self.decode(payload, dtype, order, n, limits)?;
            // Runs of whole groups of 8 elements, as the streamed path hands out.
            let group = dtype.payload_bytes(8)? as usize;
            let run = (chunk / group.max(1)).max(1) * group.max(1);
            return out.chunks(run).try_for_each(&mut *sink);
        }
        if self.compression == Compression::None {
            expect_len(encoded_len, payload.len())?;
            self.stream_decoded(&mut &payload[..], dtype, order, n, chunk, sink)
        } else {
            limits.check_expansion(payload.len() as u64, encoded_len)?;
            if payload.is_empty() {
                if encoded_len != 0 {
                    return Err(Error::SizeMismatch {
                        codec: "zstd",
                        expected: encoded_len,
                        actual: "0".into(),
                    });
                }
                return self.stream_decoded(&mut &payload[..], dtype, order, n, chunk, sink);
            }
            let mut r = zstd::reader(payload)?;
            self.stream_decoded(&mut r, dtype, order, n, chunk, sink)?;
            zstd::expect_end(&mut r, encoded_len)
        }
    }

    /// Reads the encoded stream (after compression, without a filter) from `src` in runs
    /// and hands the decoded runs to `sink`.
    fn stream_decoded(
        &self,
        src: &mut dyn Read,
        dtype: Dtype,
        order: ByteOrder,
        n: u64,
        chunk: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let width = dtype.payload_bytes(8)? as usize; // bytes of 8 elements
        let group = (chunk / width.max(1)).max(1); // groups of 8 elements a run
        let mut done = 0u64; // elements
        let mut encoded = Vec::new();
        let mut out = Vec::new();
        while done < n {
            let count = (n - done).min(group as u64 * 8);
            let enc_len = checked::to_usize(self.encoded_len(dtype, count)?, "encoded run")?;
            encoded.resize(enc_len, 0);
            read_exactly(src, &mut encoded)?;
            match self.encoding {
                Encoding::None => sink(&encoded)?,
                Encoding::SimplePacking(p) => {
                    out.resize(checked::to_usize(dtype.payload_bytes(count)?, "run")?, 0);
                    unpack(&p, &encoded, dtype, order, &mut out)?;
                    sink(&out)?;
                }
            }
            done += count;
        }
        Ok(())
    }

    /// Decodes a payload into a new buffer, after checking its size against `limits` (the
    /// total, and the expansion from the stored payload) and before allocating it.
    pub fn decode(
        &self,
        payload: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        n: u64,
        limits: &Limits,
    ) -> Result<Vec<u8>> {
        let len = self.check_decode(payload.len() as u64, dtype, n, limits)?;
        let mut out = tensor_core::buffer::try_filled(
            checked::to_usize(len, "decoded size")?,
            0u8,
            "a decoded tensor",
        )?;
        self.decode_into(payload, dtype, order, n, &mut out, limits)?;
        Ok(out)
    }

    /// [`decode`](Self::decode) for a shaped tensor.
    pub fn decode_shaped(
        &self,
        payload: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        dims: &[u64],
        limits: &Limits,
    ) -> Result<Vec<u8>> {
        self.decode(payload, dtype, order, shape::element_count(dims)?, limits)
    }
}

#[cfg(test)]
mod tests;
