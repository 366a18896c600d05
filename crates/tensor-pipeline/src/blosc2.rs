//! blosc2, as Tensogram stores it: one contiguous super-chunk frame (C-Blosc2's own
//! serialisation) holding the stream in chunks of at most 256 MiB, each chunk's filters and
//! codec recorded in its header — so a payload decodes whatever settings wrote it. Through the
//! `blosc2` crate (bindings to C-Blosc2, built from its bundled source).
//!
//! Writing uses C-Blosc2's default parameters but the codec, level and type size, as
//! tensogram 0.24 does; the frames are the bytes tensogram writes for the same input.

use crate::error::{Error, Result};

const CODEC: &str = "blosc2";

/// The codecs blosc2 runs inside its chunks (`blosc2_codec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    /// Blosc's own LZ77 codec.
    Blosclz,
    /// LZ4 (the default).
    Lz4,
    /// LZ4 HC.
    Lz4hc,
    /// zlib.
    Zlib,
    /// zstd.
    Zstd,
}

impl Codec {
    /// The name `blosc2_codec` gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Codec::Blosclz => "blosclz",
            Codec::Lz4 => "lz4",
            Codec::Lz4hc => "lz4hc",
            Codec::Zlib => "zlib",
            Codec::Zstd => "zstd",
        }
    }

    /// The codec `blosc2_codec` names.
    #[must_use]
    pub fn parse(name: &str) -> Option<Codec> {
        [
            Codec::Blosclz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// The most bytes one chunk holds: tensogram's chunking, kept so that the frames match.
pub const CHUNK_BYTES: usize = 256 << 20;

/// C-Blosc2's largest chunk (a 32-bit size less its overhead).
const MAX_BUFFER: usize = i32::MAX as usize - 32;

#[cfg(feature = "blosc2")]
fn corrupt(e: impl std::fmt::Display) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: e.to_string(),
    }
}

/// Compresses `data`, elements of `typesize` bytes (1 to 255), at `clevel` (0 to 9) with
/// `codec` into one super-chunk frame.
pub fn compress(data: &[u8], codec: Codec, clevel: u8, typesize: usize) -> Result<Vec<u8>> {
    let ts = typesize.clamp(1, 255);
    let chunk = (CHUNK_BYTES.min(MAX_BUFFER) / ts).max(1) * ts;
    frame(data, codec, clevel.min(9), ts, chunk)
}

/// Decodes the super-chunk frame `src` into `dst`, which must be exactly its decoded size:
/// each chunk's size is checked against what is left of `dst` before it is decoded.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    if src.is_empty() {
        return Error::empty_payload(CODEC, dst);
    }
    let at = unframe(src, dst)?;
    if at != dst.len() {
        return Err(Error::SizeMismatch {
            codec: CODEC,
            expected: dst.len() as u64,
            actual: at.to_string(),
        });
    }
    Ok(())
}

#[cfg(feature = "blosc2")]
fn frame(data: &[u8], codec: Codec, clevel: u8, typesize: usize, chunk: usize) -> Result<Vec<u8>> {
    use blosc2::{CParams, CompressAlgo, DParams};
    let algo = match codec {
        Codec::Blosclz => CompressAlgo::Blosclz,
        Codec::Lz4 => CompressAlgo::Lz4,
        Codec::Lz4hc => CompressAlgo::Lz4hc,
        Codec::Zlib => CompressAlgo::Zlib,
        Codec::Zstd => CompressAlgo::Zstd,
    };
    let mut cparams = CParams::default();
    cparams
        .compressor(algo)
        .clevel(u32::from(clevel))
        .typesize(typesize)
        .map_err(corrupt)?;
    cparams.nthreads(1);
    let mut dparams = DParams::default();
    dparams.nthreads(1);
    let mut schunk = blosc2::chunk::SChunk::new(cparams, dparams).map_err(corrupt)?;
    for part in data.chunks(chunk) {
        schunk.append(part).map_err(corrupt)?;
    }
    Ok(schunk.to_buffer().map_err(corrupt)?.as_slice().to_vec())
}

/// C-Blosc2 must be initialised before a frame is read. The `blosc2` crate does it when a
/// super-chunk is created but not when one is read from a buffer, so one (empty, never
/// used) is created first, once.
#[cfg(feature = "blosc2")]
fn initialised() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        let _ = blosc2::chunk::SChunk::new(blosc2::CParams::default(), blosc2::DParams::default());
    });
}

/// Decodes every chunk of the frame `src` into `dst` in turn; returns the bytes written.
#[cfg(feature = "blosc2")]
fn unframe(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    initialised();
    // The frame is handed over in C memory (`FfiVec`, a copy of the payload), which
    // C-Blosc2 keeps and reads each chunk from, checked, only when it is asked for. Lent
    // instead, C-Blosc2 copies every chunk out at once, and when one is malformed its
    // clean-up frees the slots it had not filled yet: a crash on a hostile frame (found by
    // the `tensogram` fuzz target; testdata/tensogram/malicious). When C-Blosc2 refuses the frame
    // outright, that copy is not freed (the crate moved it out of Rust's hands): a leak of
    // one payload's size, not a crash.
    let frame = blosc2::util::FfiVec::copy_of(src);
    let mut schunk = blosc2::chunk::SChunk::from_buffer(frame.into()).map_err(corrupt)?;
    let mut at = 0usize;
    for i in 0..schunk.num_chunks() {
        let chunk = schunk.get_chunk(i).map_err(corrupt)?;
        let n = chunk.nbytes();
        if n > dst.len() - at {
            return Err(Error::SizeMismatch {
                codec: CODEC,
                expected: dst.len() as u64,
                actual: format!("more than {}", at + n),
            });
        }
        let bytes = chunk.decompress().map_err(corrupt)?;
        if bytes.len() != n {
            return Err(corrupt(format!(
                "chunk {i} decodes to {} bytes, its header says {n}",
                bytes.len()
            )));
        }
        dst[at..at + n].copy_from_slice(&bytes);
        at += n;
    }
    Ok(at)
}

#[cfg(not(feature = "blosc2"))]
fn frame(_: &[u8], _: Codec, _: u8, _: usize, _: usize) -> Result<Vec<u8>> {
    Err(Error::not_built(CODEC))
}

#[cfg(not(feature = "blosc2"))]
fn unframe(_: &[u8], _: &mut [u8]) -> Result<usize> {
    Err(Error::not_built(CODEC))
}

#[cfg(all(test, feature = "blosc2"))]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i / 7).to_le_bytes())
            .collect();
        for codec in [
            Codec::Blosclz,
            Codec::Lz4,
            Codec::Lz4hc,
            Codec::Zlib,
            Codec::Zstd,
        ] {
            for clevel in [0, 5, 9] {
                let c = compress(&data, codec, clevel, 4).unwrap();
                let mut out = vec![0u8; data.len()];
                decompress_into(&c, &mut out).unwrap();
                assert_eq!(out, data, "{codec:?} at {clevel}");
            }
        }
    }

    /// Every one-byte change to a frame of several chunks decodes or is an error — never a
    /// crash (C-Blosc2 used to free unfilled chunk slots after a malformed chunk header).
    #[test]
    fn every_damaged_byte_of_a_many_chunk_frame_is_survived() {
        let data: Vec<u8> = (0..4096u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let c = frame(&data, Codec::Lz4, 5, 4, 1024).unwrap();
        let mut out = vec![0u8; data.len()];
        decompress_into(&c, &mut out).unwrap();
        assert_eq!(out, data);
        for at in 0..c.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = c.clone();
                bad[at] ^= flip;
                let _ = decompress_into(&bad, &mut out);
            }
        }
    }

    #[test]
    fn a_wrong_size_or_damaged_frame_is_an_error() {
        let data = vec![7u8; 10_000];
        let c = compress(&data, Codec::Lz4, 5, 1).unwrap();
        assert!(decompress_into(&c, &mut vec![0u8; 9_999]).is_err());
        assert!(decompress_into(&c, &mut vec![0u8; 10_001]).is_err());
        assert!(decompress_into(&c[..c.len() / 2], &mut vec![0u8; 10_000]).is_err());
        assert!(decompress_into(b"not a frame at all", &mut [0u8; 10]).is_err());
    }
}
