//! zstd, with decoding bounded by the size the caller expects.
//!
//! Frames are decoded as a stream, one after another until the input ends, so payloads
//! made of several concatenated frames and frames without a content-size field (what
//! streaming encoders write) both decode. The declared size is never taken from the frame.

use crate::error::{Error, Result};
use std::io::Read;
use tensor_core::Limits;

const CODEC: &str = "zstd";

/// The levels zstd accepts, fastest (negative) to strongest: what tensogram accepts as
/// `zstd_level`.
#[must_use]
pub fn levels() -> std::ops::RangeInclusive<i32> {
    ::zstd::compression_level_range()
}

/// Compresses `data` at `level` (0 means zstd's default, 3) into one frame without a
/// content-size field, as a streaming encoder writes it.
pub fn compress(data: &[u8], level: i32) -> Result<Vec<u8>> {
    zstd::stream::encode_all(data, level).map_err(encoding)
}

/// An encoder's failure (taken by value to serve `map_err`).
#[allow(clippy::needless_pass_by_value)]
fn encoding(e: std::io::Error) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    }
}

/// The bytes of input each worker of [`compress_large`] takes at a time.
pub const JOB_SIZE: u32 = 4 << 20;

/// Inputs from which [`compress_large`] uses zstd's multithreaded encoder.
pub const PARALLEL_FROM: usize = 32 << 20;

/// Compresses `data` at `level` like [`compress`], but inputs of [`PARALLEL_FROM`] bytes
/// or more go through zstd's multithreaded encoder, one worker per thread of rayon's pool
/// (feature `parallel`). Its frame is a valid zstd frame every decoder reads, and the same
/// bytes whatever the number of workers (zstd guarantees it for one worker and more); it
/// differs from [`compress`]'s, so formats whose writers must match a reference byte for
/// byte use [`compress`].
///
/// The whole input is handed over in one call (zstd's one-shot `compress2`), so the workers
/// read it where it lies instead of through the copies a stream makes, and the frame records
/// its content size. It is cut into jobs of [`JOB_SIZE`] bytes, each of which starts from
/// only the last 8 KiB of the job before (zstd's smallest overlap) rather than the 256 KiB
/// zstd gives level 3 by default. Measured on a 400 MB field (bench group (g)), this made
/// one thread 5 % faster and both cores 1.73 to 1.81 times as fast as one, against 1.57 to
/// 1.69 with zstd's defaults (8 MiB jobs); on the one input compared for size, a 90 MB
/// executable, the frame came out 0.5 % larger.
///
/// On a one-thread pool the one worker runs beside the calling thread, which cuts the jobs
/// and gathers their output meanwhile, as `zstd -T1` does: about 1.2 cores busy. That keeps
/// the frame the same for every pool. Against libzstd's single-threaded encoder, which keeps
/// one core busy, both cores were 2.06 times as fast in the same run (decision 0011).
pub fn compress_large(data: &[u8], level: i32) -> Result<Vec<u8>> {
    #[cfg(feature = "parallel")]
    if data.len() >= PARALLEL_FROM {
        let workers = u32::try_from(rayon::current_num_threads().max(1)).unwrap_or(1);
        let mut out = Vec::new();
        let bound = zstd::zstd_safe::compress_bound(data.len());
        tensor_core::buffer::try_reserve(&mut out, bound, "a zstd stream")?;
        let mut enc = zstd::bulk::Compressor::new(level).map_err(encoding)?;
        enc.multithread(workers).map_err(encoding)?;
        enc.set_parameter(zstd::zstd_safe::CParameter::JobSize(JOB_SIZE))
            .map_err(encoding)?;
        enc.set_parameter(zstd::zstd_safe::CParameter::OverlapSizeLog(1))
            .map_err(encoding)?;
        enc.compress_to_buffer(data, &mut out).map_err(encoding)?;
        return Ok(out);
    }
    compress(data, level)
}

/// Decodes `src` into `dst`, which must be exactly the decoded size. An empty `src` holds
/// nothing (writers store an empty tensor's blob with zero bytes).
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    if src.is_empty() {
        return Error::empty_payload(CODEC, dst);
    }
    let mut dec = reader(src)?;
    let mut filled = 0;
    while filled < dst.len() {
        match dec.read(&mut dst[filled..]) {
            Ok(0) => {
                return Err(Error::SizeMismatch {
                    codec: CODEC,
                    expected: dst.len() as u64,
                    actual: filled.to_string(),
                });
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Corrupt {
                    codec: CODEC,
                    reason: e.to_string(),
                });
            }
        }
    }
    expect_end(&mut dec, dst.len() as u64)
}

/// Checks that a decoder which has produced the `expected` bytes has nothing more.
pub(crate) fn expect_end(dec: &mut dyn Read, expected: u64) -> Result<()> {
    let mut probe = [0u8; 1];
    match dec.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(Error::SizeMismatch {
            codec: CODEC,
            expected,
            actual: format!("more than {expected}"),
        }),
        Err(e) => Err(Error::Corrupt {
            codec: CODEC,
            reason: e.to_string(),
        }),
    }
}

/// A streaming decoder over `src`, for payloads whose decoded size is not known in advance;
/// callers bound what they read from it (e.g. with `Read::take`).
pub fn reader(src: &[u8]) -> Result<impl Read + '_> {
    zstd::stream::read::Decoder::new(src).map_err(|e| Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    })
}

/// Decodes `src` into a new buffer of exactly `expected` bytes, after checking `expected`
/// against the limits (total size and expansion ratio).
pub fn decompress(src: &[u8], expected: u64, limits: &Limits) -> Result<Vec<u8>> {
    limits.check_expansion(src.len() as u64, expected)?;
    let mut out = tensor_core::buffer::try_filled(
        tensor_core::checked::to_usize(expected, "decoded size")?,
        0u8,
        "decompressed zstd data",
    )?;
    decompress_into(src, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn large_inputs_compress_on_every_core_to_the_same_bytes() {
        let data: Vec<u8> = (0..PARALLEL_FROM as u32 / 4 + 1000)
            .flat_map(|i| (i % 7919).to_le_bytes())
            .collect();
        let packed = compress_large(&data, 3).unwrap();
        assert!(packed.len() < data.len() / 4);
        let limits = Limits::default();
        assert_eq!(
            decompress(&packed, data.len() as u64, &limits).unwrap(),
            data
        );
        #[cfg(feature = "parallel")]
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert_eq!(pool.install(|| compress_large(&data, 3).unwrap()), packed);
        }
        // Small inputs are what `compress` writes.
        assert_eq!(
            compress_large(b"abc", 3).unwrap(),
            compress(b"abc", 3).unwrap()
        );
    }

    #[test]
    fn concatenated_frames_decode_as_one_payload() {
        let a = compress(b"hello, ", 1).unwrap();
        let b = compress(b"world", 19).unwrap();
        let both = [a, b].concat();
        assert_eq!(
            decompress(&both, 12, &Limits::default()).unwrap(),
            b"hello, world"
        );
        assert!(decompress(&both, 11, &Limits::default()).is_err());
        assert!(decompress(&both, 13, &Limits::default()).is_err());
    }

    #[test]
    fn garbage_and_bombs_are_refused() {
        assert!(decompress(b"not zstd at all", 4, &Limits::default()).is_err());
        let zeros = compress(&vec![0u8; 1 << 20], 3).unwrap();
        // A 1 MiB payload in a few dozen bytes: allowed by default, refused by a tight ratio.
        assert!(decompress(&zeros, 1 << 20, &Limits::default()).is_ok());
        let tight = Limits::default()
            .with_max_decompression_ratio(100)
            .with_expansion_allowance(0);
        assert!(decompress(&zeros, 1 << 20, &tight).is_err());
        let mut cut = compress(
            &(0..5000u32).flat_map(u32::to_le_bytes).collect::<Vec<_>>(),
            3,
        )
        .unwrap();
        cut.truncate(cut.len() / 2);
        assert!(decompress(&cut, 20000, &Limits::default()).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), 0..4096), level in 1i32..10) {
            let packed = compress(&data, level).unwrap();
            prop_assert_eq!(decompress(&packed, data.len() as u64, &Limits::default()).unwrap(), data);
        }
    }
}

#[cfg(test)]
mod edge_cases {
    use super::*;

    #[test]
    fn empty_payloads_and_content_size_frames() {
        // A zero-byte blob, and a real frame of nothing, both decode to nothing.
        assert_eq!(
            decompress(&[], 0, &Limits::default()).unwrap(),
            Vec::<u8>::new()
        );
        let empty_frame = compress(&[], 3).unwrap();
        assert_eq!(
            decompress(&empty_frame, 0, &Limits::default()).unwrap(),
            Vec::<u8>::new()
        );
        assert!(decompress(&empty_frame, 1, &Limits::default()).is_err());
        // A frame that records its content size (bulk API) decodes like any other.
        let with_size = zstd::bulk::compress(b"abcdefgh", 3).unwrap();
        assert_eq!(
            decompress(&with_size, 8, &Limits::default()).unwrap(),
            b"abcdefgh"
        );
    }
}

/// The zstd seekable format: independent frames followed by a seek table (a skippable frame
/// listing each frame's compressed and decompressed size), so a byte range can be decoded
/// from only the frames that hold it.
pub mod seekable {
    use super::{CODEC, decompress_into, reader};
    use crate::error::{Error, Result};
    use std::io::Read;

    const SKIPPABLE_MAGIC: u32 = 0x184D_2A5E;
    const SEEKABLE_MAGIC: u32 = 0x8F92_EAB1;

    /// One frame: where it is in the compressed data and in the decoded data.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Frame {
        /// Offset of the frame in the compressed data.
        pub compressed_offset: u64,
        /// Its compressed size.
        pub compressed_size: u64,
        /// Offset of its content in the decoded data.
        pub decoded_offset: u64,
        /// Its decoded size.
        pub decoded_size: u64,
    }

    fn corrupt(reason: impl Into<String>) -> Error {
        Error::Corrupt {
            codec: CODEC,
            reason: reason.into(),
        }
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// Reads the seek table at the end of `data` and returns the frames, checking that they
    /// tile the compressed data before the table exactly.
    pub fn frames(data: &[u8]) -> Result<Vec<Frame>> {
        let n = data.len();
        if n < 17 || u32_at(data, n - 4) != SEEKABLE_MAGIC {
            return Err(corrupt("no seek table at the end of the data"));
        }
        let count = u32_at(data, n - 9) as usize;
        let descriptor = data[n - 5];
        if descriptor & 0x7C != 0 {
            return Err(corrupt(format!(
                "reserved bits set in the seek table descriptor {descriptor:#04x}"
            )));
        }
        let entry = if descriptor & 0x80 != 0 { 12 } else { 8 };
        let table_len = count
            .checked_mul(entry)
            .and_then(|t| t.checked_add(9))
            .ok_or_else(|| corrupt("seek table too large"))?;
        if table_len + 8 > n {
            return Err(corrupt(format!(
                "a seek table of {count} frames does not fit in {n} bytes"
            )));
        }
        let start = n - table_len - 8;
        if u32_at(data, start) != SKIPPABLE_MAGIC || u32_at(data, start + 4) as usize != table_len {
            return Err(corrupt(
                "the seek table is not a well-formed skippable frame",
            ));
        }
        let mut frames = Vec::with_capacity(count);
        let (mut c, mut d) = (0u64, 0u64);
        for k in 0..count {
            let at = start + 8 + k * entry;
            let (cs, ds) = (u64::from(u32_at(data, at)), u64::from(u32_at(data, at + 4)));
            frames.push(Frame {
                compressed_offset: c,
                compressed_size: cs,
                decoded_offset: d,
                decoded_size: ds,
            });
            c += cs;
            d += ds;
        }
        if c != start as u64 {
            return Err(corrupt(format!(
                "the frames cover {c} bytes, but {start} precede the seek table"
            )));
        }
        Ok(frames)
    }

    /// Decodes bytes `start..start + dst.len()` of the decoded data into `dst`, decoding only
    /// the frames that hold them. Memory stays within `dst` whatever the seek table claims:
    /// frames wholly inside the range decode straight into it, and the frames at its ends are
    /// streamed, skipping the bytes before the range and stopping at its end.
    pub fn decode_range(data: &[u8], start: u64, dst: &mut [u8]) -> Result<()> {
        let frames = frames(data)?;
        let end = start
            .checked_add(dst.len() as u64)
            .ok_or_else(|| corrupt("range overflows"))?;
        let total = frames
            .last()
            .map_or(0, |f| f.decoded_offset + f.decoded_size);
        if end > total {
            return Err(corrupt(format!(
                "range {start}..{end} is past the decoded length {total}"
            )));
        }
        for f in frames
            .iter()
            .filter(|f| f.decoded_offset < end && f.decoded_offset + f.decoded_size > start)
        {
            let src = &data
                [f.compressed_offset as usize..(f.compressed_offset + f.compressed_size) as usize];
            let from = start.max(f.decoded_offset);
            let to = end.min(f.decoded_offset + f.decoded_size);
            let part = &mut dst[(from - start) as usize..(to - start) as usize];
            if from == f.decoded_offset && to == f.decoded_offset + f.decoded_size {
                decompress_into(src, part)?;
                continue;
            }
            let mut r = reader(src)?;
            let skip = from - f.decoded_offset;
            let skipped = std::io::copy(&mut (&mut r).take(skip), &mut std::io::sink())
                .map_err(|e| corrupt(e.to_string()))?;
            if skipped != skip {
                return Err(corrupt(format!(
                    "a frame declared {} decoded bytes but ended after {skipped}",
                    f.decoded_size
                )));
            }
            r.read_exact(part).map_err(|e| {
                corrupt(format!(
                    "a frame declared {} decoded bytes but ended early: {e}",
                    f.decoded_size
                ))
            })?;
        }
        Ok(())
    }

    /// Compresses `data` as independent frames of at most `frame_size` decoded bytes, followed
    /// by a seek table without checksums.
    pub fn compress(data: &[u8], level: i32, frame_size: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut entries = Vec::new();
        for chunk in data.chunks(frame_size.max(1)) {
            let frame = zstd::bulk::compress(chunk, level).map_err(|e| corrupt(e.to_string()))?;
            entries.push((frame.len() as u32, chunk.len() as u32));
            out.extend_from_slice(&frame);
        }
        let table_len = entries.len() * 8 + 9;
        out.extend_from_slice(&SKIPPABLE_MAGIC.to_le_bytes());
        out.extend_from_slice(&(table_len as u32).to_le_bytes());
        for (c, d) in &entries {
            out.extend_from_slice(&c.to_le_bytes());
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        out.push(0);
        out.extend_from_slice(&SEEKABLE_MAGIC.to_le_bytes());
        Ok(out)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn ranges_decode_from_the_frames_that_hold_them() {
            let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
            let packed = compress(&data, 3, 16_384).unwrap();
            let f = frames(&packed).unwrap();
            assert_eq!(f.len(), 7);
            let mut all = vec![0u8; data.len()];
            crate::zstd::decompress_into(&packed, &mut all).unwrap();
            assert_eq!(all, data);
            for (start, len) in [
                (0usize, 10usize),
                (16_380, 10),
                (50_000, 40_000),
                (99_990, 10),
            ] {
                let mut out = vec![0u8; len];
                decode_range(&packed, start as u64, &mut out).unwrap();
                assert_eq!(out, &data[start..start + len]);
            }
            let mut out = vec![0u8; 11];
            assert!(decode_range(&packed, 99_990, &mut out).is_err());
            assert!(frames(&packed[..packed.len() - 1]).is_err());
            assert!(frames(b"short").is_err());
        }
    }
}
