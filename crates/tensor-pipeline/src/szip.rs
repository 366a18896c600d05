//! szip: the CCSDS 121.0-B-3 adaptive entropy coder ("AEC"), in pure Rust, compatible with
//! libaec both ways and making libaec's coding choices, so encoded bytes match libaec's.
//!
//! The stream is raw AEC: no header; every parameter lives outside it. Samples of
//! `bits_per_sample` bits sit in byte containers (1, 2, 3 or 4 bytes, little- or big-endian);
//! blocks of `block_size` samples; `rsi` blocks per reference sample interval (RSI). With
//! preprocessing, each RSI starts with a raw reference sample and the rest are unit-delay
//! prediction residuals mapped to non-negative integers. Each block is coded with the
//! cheapest option: a run of zero blocks, the second extension, Rice splitting with `k` low
//! bits, or raw samples.
//!
//! ```
//! use tensor_pipeline::szip::{self, Params, PREPROCESS};
//!
//! let p = Params { bits_per_sample: 16, block_size: 32, rsi: 128, flags: PREPROCESS };
//! let data: Vec<u8> = (0..10_000u16).flat_map(|i| (i / 3).to_le_bytes()).collect();
//! let (stream, rsi_offsets) = szip::encode(&p, &data)?;
//! assert!(stream.len() < data.len() / 4);
//! let mut back = vec![0u8; data.len()];
//! szip::decode_into(&p, &stream, &mut back)?;
//! assert_eq!(back, data);
//! // Samples 5000..5010 alone, reading only the RSI that holds them.
//! let mut part = vec![0u8; 20];
//! szip::decode_range(&p, &stream, &rsi_offsets, 5000, &mut part)?;
//! assert_eq!(part, data[10_000..10_020]);
//! # Ok::<(), tensor_pipeline::Error>(())
//! ```

// Short names follow the standard's notation: n bits per sample, J (`j`) samples per block,
// k split bits, d mapped residuals, x samples.
#![allow(clippy::many_single_char_names)]

use crate::dense_bits::{Packer, Unpacker};
use crate::error::{Error, Result};
use tensor_core::checked;

/// Samples are signed (two's complement in `bits_per_sample` bits).
pub const SIGNED: u32 = 1;
/// 17–24-bit samples sit in 3-byte containers (4 otherwise).
pub const THREE_BYTE: u32 = 2;
/// Containers are big-endian (little-endian otherwise).
pub const MSB: u32 = 4;
/// Unit-delay prediction and mapping before coding.
pub const PREPROCESS: u32 = 8;
/// Accepted for compatibility; k = 13 is always available for 16-bit samples.
pub const ALLOW_K13: u32 = 16;
/// Pad each RSI to a byte boundary.
pub const PAD_RSI: u32 = 32;
/// Allow block sizes other than 8, 16, 32, 64 (any even size).
pub const NOT_ENFORCE: u32 = 64;
/// The restricted code option set (samples of at most 4 bits).
pub const RESTRICTED: u32 = 128;

const CODEC: &str = "szip";
/// "Remainder of segment": the encoder's marker for a zero-block run that reaches the end
/// of its 64-block segment or RSI (coded as FS 4).
const ROS: u32 = u32::MAX;
/// The FS value that codes "remainder of segment" in a zero-block run.
const ROS_FS: u64 = 4;

/// Coding parameters (libaec's `aec_stream` settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Bits per sample, 1 to 32.
    pub bits_per_sample: u32,
    /// Samples per block: 8, 16, 32 or 64 (any even number with [`NOT_ENFORCE`]).
    pub block_size: u32,
    /// Blocks per reference sample interval, 1 to 4096.
    pub rsi: u32,
    /// Flags ([`SIGNED`], [`THREE_BYTE`], [`MSB`], [`PREPROCESS`], ...).
    pub flags: u32,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: reason.into(),
    }
}

impl Params {
    /// Checks the parameters as libaec does.
    pub fn check(&self) -> Result<()> {
        let (n, j) = (self.bits_per_sample, self.block_size);
        if !(1..=32).contains(&n) {
            return Err(bad(format!("bits per sample must be 1 to 32, not {n}")));
        }
        let j_ok = if self.flags & NOT_ENFORCE != 0 {
            j >= 2 && j % 2 == 0
        } else {
            matches!(j, 8 | 16 | 32 | 64)
        };
        if !j_ok {
            return Err(bad(format!("block size {j} is not allowed")));
        }
        if !(1..=4096).contains(&self.rsi) {
            return Err(bad(format!("rsi must be 1 to 4096, not {}", self.rsi)));
        }
        // The restricted option set only exists for 1 to 4 bits; wider samples ignore the
        // flag, as tensogram's szip does (it encodes and decodes them unrestricted).
        Ok(())
    }

    /// Bytes per sample container.
    #[must_use]
    pub fn sample_bytes(&self) -> usize {
        match self.bits_per_sample {
            0..=8 => 1,
            9..=16 => 2,
            17..=24 if self.flags & THREE_BYTE != 0 => 3,
            _ => 4,
        }
    }

    fn id_len(&self) -> u32 {
        match self.bits_per_sample {
            n if n > 16 => 5,
            n if n > 8 => 4,
            n if n <= 4 && self.flags & RESTRICTED != 0 => {
                if n <= 2 {
                    1
                } else {
                    2
                }
            }
            _ => 3,
        }
    }

    fn range(&self) -> (i64, i64) {
        let n = self.bits_per_sample;
        if self.flags & SIGNED != 0 {
            (-(1i64 << (n - 1)), (1i64 << (n - 1)) - 1)
        } else {
            (0, (1i64 << n) - 1)
        }
    }

    /// Reads sample containers, keeping the low `bits_per_sample` bits of each.
    fn read_samples(&self, src: &[u8], dst: &mut [u32]) {
        let mask = u32::MAX >> (32 - self.bits_per_sample);
        let msb = self.flags & MSB != 0;
        let sb = self.sample_bytes();
        let chunks = src.chunks_exact(sb);
        match (sb, msb) {
            (1, _) => dst
                .iter_mut()
                .zip(src)
                .for_each(|(d, &c)| *d = u32::from(c) & mask),
            (2, true) => read_with(chunks, dst, mask, |c| {
                u32::from(u16::from_be_bytes([c[0], c[1]]))
            }),
            (2, false) => read_with(chunks, dst, mask, |c| {
                u32::from(u16::from_le_bytes([c[0], c[1]]))
            }),
            (3, true) => read_with(chunks, dst, mask, |c| {
                u32::from_be_bytes([0, c[0], c[1], c[2]])
            }),
            (3, false) => read_with(chunks, dst, mask, |c| {
                u32::from_le_bytes([c[0], c[1], c[2], 0])
            }),
            (_, true) => read_with(chunks, dst, mask, |c| {
                u32::from_be_bytes([c[0], c[1], c[2], c[3]])
            }),
            (_, false) => read_with(chunks, dst, mask, |c| {
                u32::from_le_bytes([c[0], c[1], c[2], c[3]])
            }),
        }
    }

    /// Writes decoded samples into their containers; signed samples are sign-extended to
    /// the container, as libaec writes them.
    fn write_samples(&self, samples: &[u32], dst: &mut [u8]) {
        let n = self.bits_per_sample;
        let sign = if self.flags & SIGNED != 0 && n < 32 {
            1u32 << (n - 1)
        } else {
            0
        };
        // (v ^ sign) - sign sign-extends an n-bit value; with sign 0 it is the identity.
        let extend = |v: u32| (v ^ sign).wrapping_sub(sign);
        let msb = self.flags & MSB != 0;
        match (self.sample_bytes(), msb) {
            (1, _) => {
                for (c, &v) in dst.iter_mut().zip(samples) {
                    *c = extend(v) as u8;
                }
            }
            (2, true) => {
                for (c, &v) in dst.chunks_exact_mut(2).zip(samples) {
                    c.copy_from_slice(&(extend(v) as u16).to_be_bytes());
                }
            }
            (2, false) => {
                for (c, &v) in dst.chunks_exact_mut(2).zip(samples) {
                    c.copy_from_slice(&(extend(v) as u16).to_le_bytes());
                }
            }
            (3, true) => {
                for (c, &v) in dst.chunks_exact_mut(3).zip(samples) {
                    c.copy_from_slice(&extend(v).to_be_bytes()[1..]);
                }
            }
            (3, false) => {
                for (c, &v) in dst.chunks_exact_mut(3).zip(samples) {
                    c.copy_from_slice(&extend(v).to_le_bytes()[..3]);
                }
            }
            (_, true) => {
                for (c, &v) in dst.chunks_exact_mut(4).zip(samples) {
                    c.copy_from_slice(&extend(v).to_be_bytes());
                }
            }
            (_, false) => {
                for (c, &v) in dst.chunks_exact_mut(4).zip(samples) {
                    c.copy_from_slice(&extend(v).to_le_bytes());
                }
            }
        }
    }
}

/// Writes bits most significant first.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    bits: u32,
}

impl BitWriter {
    /// Appends the low `n` bits (at most 32) of `value`. `acc` keeps fewer than 32
    /// pending bits at its bottom; whole 32-bit words go out at once.
    #[inline]
    fn emit(&mut self, value: u64, n: u32) {
        debug_assert!(n <= 32);
        if n == 0 {
            return;
        }
        self.acc = (self.acc << n) | (value & (u64::MAX >> (64 - n)));
        self.bits += n;
        if self.bits >= 32 {
            self.bits -= 32;
            self.out
                .extend_from_slice(&((self.acc >> self.bits) as u32).to_be_bytes());
        }
    }

    /// `n` zeros, then a one.
    fn emit_fs(&mut self, mut n: u64) {
        while n >= 32 {
            self.emit(0, 32);
            n -= 32;
        }
        self.emit(1, n as u32 + 1);
    }

    fn bit_len(&self) -> u64 {
        self.out.len() as u64 * 8 + u64::from(self.bits)
    }

    fn pad_to_byte(&mut self) {
        if !self.bits.is_multiple_of(8) {
            self.emit(0, 8 - self.bits % 8);
        }
    }

    /// Pads to a byte and returns the bytes.
    fn finish(mut self) -> Vec<u8> {
        self.pad_to_byte();
        for i in (0..self.bits / 8).rev() {
            self.out.push((self.acc >> (8 * i)) as u8);
        }
        self.out
    }
}

/// The code options a non-zero block can take.
enum CodeOption {
    Split,
    SecondExtension,
    Uncompressed,
}

/// The encoder's running state across blocks (libaec's `k` carries over).
struct Encoder<'p> {
    p: &'p Params,
    w: BitWriter,
    id_len: u32,
    kmax: u32,
    k: u32,
}

impl Encoder<'_> {
    /// libaec's search for the best split: start from the previous block's `k`, walk
    /// towards the minimum, use the bound that FS length below the block size cannot pay
    /// for a larger `k`.
    fn assess_splitting(&mut self, block: &[u32], reference: usize) -> u64 {
        let this_bs = (block.len() - reference) as u64;
        let mut len_min = u64::MAX;
        let mut k = self.k;
        let mut k_min = k;
        let mut no_turn = k == 0;
        let mut up = true;
        loop {
            let fs_len: u64 = block[reference..].iter().map(|&d| u64::from(d >> k)).sum();
            let len = fs_len + this_bs * u64::from(k + 1);
            if len < len_min {
                if len_min < u64::MAX {
                    no_turn = true;
                }
                len_min = len;
                k_min = k;
                if up {
                    if fs_len < this_bs || k >= self.kmax {
                        if no_turn {
                            break;
                        }
                        k = self.k - 1;
                        up = false;
                        no_turn = true;
                    } else {
                        k += 1;
                    }
                } else {
                    if fs_len >= this_bs || k == 0 {
                        break;
                    }
                    k -= 1;
                }
            } else {
                if no_turn {
                    break;
                }
                k = self.k - 1;
                up = false;
                no_turn = true;
            }
        }
        self.k = k_min;
        len_min
    }

    /// The second extension's length, or `u32::MAX` as soon as it passes the raw length.
    fn assess_se(block: &[u32], uncomp_len: u64) -> u64 {
        let mut len = 1u64;
        for pair in block.chunks_exact(2) {
            let d = u64::from(pair[0]) + u64::from(pair[1]);
            // A pair sum above the raw length already loses (and keeps d² in range).
            if d > uncomp_len {
                return u64::from(u32::MAX);
            }
            len += d * (d + 1) / 2 + u64::from(pair[1]) + 1;
            if len > uncomp_len {
                return u64::from(u32::MAX);
            }
        }
        len
    }

    fn code_block(&mut self, block: &mut [u32], reference: Option<u32>) {
        let n = self.p.bits_per_sample;
        let r = usize::from(reference.is_some());
        let uncomp_len = (block.len() - r) as u64 * u64::from(n);
        let split_len = if self.id_len > 1 {
            self.assess_splitting(block, r)
        } else {
            u64::from(u32::MAX)
        };
        let se_len = Self::assess_se(block, uncomp_len);
        // libaec's tie-breaking, which byte-identical output depends on.
        let option = if split_len < uncomp_len {
            if split_len < se_len {
                CodeOption::Split
            } else {
                CodeOption::SecondExtension
            }
        } else if uncomp_len <= se_len {
            CodeOption::Uncompressed
        } else {
            CodeOption::SecondExtension
        };
        match option {
            CodeOption::Split => {
                let k = self.k;
                self.w.emit(u64::from(k + 1), self.id_len);
                if let Some(rs) = reference {
                    self.w.emit(u64::from(rs), n);
                }
                for &d in &block[r..] {
                    self.w.emit_fs(u64::from(d >> k));
                }
                if k > 0 {
                    for &d in &block[r..] {
                        self.w.emit(u64::from(d), k);
                    }
                }
            }
            CodeOption::SecondExtension => {
                self.w.emit(1, self.id_len + 1);
                if let Some(rs) = reference {
                    self.w.emit(u64::from(rs), n);
                }
                for pair in block.chunks_exact(2) {
                    let d = u64::from(pair[0]) + u64::from(pair[1]);
                    self.w.emit_fs(d * (d + 1) / 2 + u64::from(pair[1]));
                }
            }
            CodeOption::Uncompressed => {
                self.w.emit((1u64 << self.id_len) - 1, self.id_len);
                if let Some(rs) = reference {
                    block[0] = rs;
                }
                for &d in block.iter() {
                    self.w.emit(u64::from(d), n);
                }
            }
        }
    }

    fn code_zero_run(&mut self, count: u32, reference: Option<u32>) {
        self.w.emit(0, self.id_len + 1);
        if let Some(rs) = reference {
            self.w.emit(u64::from(rs), self.p.bits_per_sample);
        }
        let fs = if count == ROS {
            ROS_FS as u32
        } else if count >= 5 {
            count
        } else {
            count - 1
        };
        self.w.emit_fs(u64::from(fs));
    }
}

/// The preprocessor for one RSI: the reference sample's slot is 0, then each sample's
/// unit-delay prediction residual mapped to a non-negative integer (CCSDS 121.0-B-3 §4).
fn preprocess(p: &Params, x: &[i64], d: &mut [u32]) {
    let (xmin, xmax) = p.range();
    d[0] = 0;
    for (out, pair) in d[1..].iter_mut().zip(x.windows(2)) {
        let (prev, cur) = (pair[0], pair[1]);
        let theta = (prev - xmin).min(xmax - prev);
        let delta = cur - prev;
        let size = delta.abs();
        // Written without branches: residual signs are random.
        let inside = 2 * size - i64::from(delta < 0);
        let outside = theta + size;
        *out = if size <= theta { inside } else { outside } as u32;
    }
}

fn read_with(
    chunks: std::slice::ChunksExact<'_, u8>,
    dst: &mut [u32],
    mask: u32,
    read: impl Fn(&[u8]) -> u32,
) {
    for (d, c) in dst.iter_mut().zip(chunks) {
        *d = read(c) & mask;
    }
}

fn sign_extend(v: u32, n: u32) -> i64 {
    let m = 1i64 << (n - 1);
    (i64::from(v) ^ m) - m
}

/// Encodes `data` (whole sample containers). Returns the stream and the bit offset at
/// which each RSI starts (what Tensogram records as `szip_block_offsets`).
pub fn encode(p: &Params, data: &[u8]) -> Result<(Vec<u8>, Vec<u64>)> {
    p.check()?;
    let sb = p.sample_bytes();
    if !data.len().is_multiple_of(sb) {
        return Err(bad(format!(
            "{} bytes are not whole {sb}-byte samples",
            data.len()
        )));
    }
    let id_len = p.id_len();
    let mut enc = Encoder {
        p,
        w: BitWriter {
            out: Vec::with_capacity(data.len() / 2),
            acc: 0,
            bits: 0,
        },
        id_len,
        kmax: (1u32 << id_len) - 3,
        k: 0,
    };
    let (j, rsi) = (p.block_size as usize, p.rsi as usize);
    let rsi_len = j * rsi;
    let preprocessing = p.flags & PREPROCESS != 0;
    let signed = p.flags & SIGNED != 0;
    let mut offsets = Vec::new();
    let mut raw = vec![0u32; rsi_len];
    let mut mapped = vec![0u32; rsi_len];
    let mut wide = vec![0i64; rsi_len];
    for chunk in data.chunks(rsi_len * sb) {
        offsets.push(enc.w.bit_len());
        let count = chunk.len() / sb;
        p.read_samples(chunk, &mut raw[..count]);
        // A short last RSI is padded with its last sample; only its blocks are coded.
        let last = raw[count - 1];
        raw[count..].fill(last);
        let blocks = count.div_ceil(j);
        if preprocessing {
            for (w, &r) in wide.iter_mut().zip(&raw) {
                *w = if signed {
                    sign_extend(r, p.bits_per_sample)
                } else {
                    i64::from(r)
                };
            }
            preprocess(p, &wide, &mut mapped);
        } else {
            mapped.copy_from_slice(&raw);
        }
        let mut zero_blocks = 0u32;
        let mut zero_ref = None;
        for b in 0..blocks {
            let reference = (preprocessing && b == 0).then_some(raw[0]);
            let r = usize::from(reference.is_some());
            let block = &mut mapped[b * j..(b + 1) * j];
            let blocks_avail = blocks - 1 - b;
            if block[r..].iter().all(|&d| d == 0) {
                zero_blocks += 1;
                if zero_blocks == 1 {
                    zero_ref = reference;
                }
                // A run ends with the RSI or with a 64-block segment of it.
                if blocks_avail == 0 || (b + 1) % 64 == 0 {
                    if zero_blocks > 4 {
                        zero_blocks = ROS;
                    }
                    enc.code_zero_run(zero_blocks, zero_ref);
                    zero_blocks = 0;
                }
                continue;
            }
            if zero_blocks > 0 {
                enc.code_zero_run(zero_blocks, zero_ref);
                zero_blocks = 0;
            }
            enc.code_block(block, reference);
        }
        if p.flags & PAD_RSI != 0 {
            enc.w.pad_to_byte();
        }
    }
    Ok((enc.w.finish(), offsets))
}

/// Reads bits most significant first through a 64-bit window: `acc` holds `avail` unread
/// bits at its top (the bits below them are the stream's next bits or zeros).
struct BitReader<'a> {
    data: &'a [u8],
    next: usize,
    acc: u64,
    avail: u32,
}

impl<'a> BitReader<'a> {
    fn new(data: &'a [u8], start_bit: u64) -> Result<Self> {
        let byte = usize::try_from(start_bit / 8)
            .ok()
            .filter(|&b| b <= data.len())
            .ok_or_else(|| bad(format!("bit offset {start_bit} is past the stream's end")))?;
        let mut r = BitReader {
            data,
            next: byte,
            acc: 0,
            avail: 0,
        };
        r.refill();
        let skip = (start_bit % 8) as u32;
        if r.avail < skip {
            return Err(bad(format!(
                "bit offset {start_bit} is past the stream's end"
            )));
        }
        r.consume(skip);
        Ok(r)
    }

    /// Tops the window up to at least 56 bits, or to the end of the stream.
    #[inline]
    fn refill(&mut self) {
        if let Some(word) = self.data.get(self.next..self.next + 8) {
            let word = u64::from_be_bytes(word.try_into().unwrap_or_default());
            self.acc |= word >> self.avail;
            // Whole bytes were taken: avail goes from a..=63 to 56 + a % 8.
            self.next += ((63 - self.avail) / 8) as usize;
            self.avail |= 0b11_1000;
        } else {
            while self.avail <= 56 {
                let Some(&byte) = self.data.get(self.next) else {
                    break;
                };
                self.acc |= u64::from(byte) << (56 - self.avail);
                self.next += 1;
                self.avail += 8;
            }
        }
    }

    #[inline]
    fn consume(&mut self, n: u32) {
        self.acc = if n == 64 { 0 } else { self.acc << n };
        self.avail -= n;
    }

    /// The next `n` bits (at most 32).
    #[inline]
    fn bits(&mut self, n: u32) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        if self.avail < n {
            self.refill();
            if self.avail < n {
                return Err(bad("the stream ends inside a block"));
            }
        }
        let v = self.acc >> (64 - n);
        self.consume(n);
        Ok(v)
    }

    /// A fundamental-sequence codeword: zeros up to the next one.
    #[inline]
    fn fs(&mut self) -> Result<u64> {
        let mut zeros = 0u64;
        loop {
            if self.avail < 33 {
                self.refill();
            }
            let lz = self.acc.leading_zeros();
            if lz < self.avail {
                self.consume(lz + 1);
                return Ok(zeros + u64::from(lz));
            }
            if self.avail == 0 {
                return Err(bad("the stream ends inside a codeword"));
            }
            zeros += u64::from(self.avail);
            self.acc = 0;
            self.avail = 0;
        }
    }

    /// Skips to the next byte boundary.
    fn align(&mut self) {
        let drop = self.avail % 8;
        self.consume(drop);
    }
}

/// Decodes `total` samples from bit `start_bit` on, handing each RSI's samples to `put`
/// with the index of its first sample.
fn decode_samples(
    p: &Params,
    stream: &[u8],
    start_bit: u64,
    total: usize,
    mut put: impl FnMut(usize, &[u32]),
) -> Result<()> {
    p.check()?;
    let n = p.bits_per_sample;
    let id_len = p.id_len();
    let id_max = (1u64 << id_len) - 1;
    let (j, rsi) = (p.block_size as usize, p.rsi as usize);
    let preprocessing = p.flags & PREPROCESS != 0;
    let signed = p.flags & SIGNED != 0;
    let (xmin, xmax) = p.range();
    let mut r = BitReader::new(stream, start_bit)?;
    let mut out = 0usize;
    // One RSI's worth, or less when fewer samples are wanted.
    let window = (j * rsi).min(total.div_ceil(j) * j);
    let mut mapped = vec![0u64; window];
    let mut samples = vec![0u32; window];
    let mask = u32::MAX >> (32 - n);
    while out < total {
        // One RSI: decode its mapped values (the reference sample kept raw), then unmap.
        let rsi_samples = (j * rsi).min(total - out).div_ceil(j) * j;
        let mut filled = 0usize;
        let mut reference: Option<u64> = None;
        while filled < rsi_samples {
            let first = filled == 0 && preprocessing;
            let id = r.bits(id_len)?;
            if id == 0 {
                let extension = r.bits(1)?;
                if first {
                    reference = Some(r.bits(n)?);
                }
                if extension == 0 {
                    let fs = r.fs()?;
                    let b = filled / j;
                    let count = match fs {
                        ROS_FS => (rsi - b).min(64 - (b % 64)),
                        // FS 0..=3 code 1..=4 blocks; from 5 on, FS is the count itself.
                        0..ROS_FS => (fs + 1) as usize,
                        _ => {
                            usize::try_from(fs).map_err(|_| bad("a zero-block run is too long"))?
                        }
                    };
                    let end = (filled + count * j).min(mapped.len());
                    mapped[filled..end].fill(0);
                    filled = end;
                } else {
                    let mut i = usize::from(first);
                    if first {
                        mapped[filled] = 0;
                    }
                    while i < j {
                        let m = r.fs()?;
                        // Invert gamma = s(s+1)/2 + b.
                        let s = (((8 * m + 1) as f64).sqrt() as u64).saturating_sub(1) / 2;
                        let s = (s.saturating_sub(1)..=s + 1)
                            .rev()
                            .find(|&s| s * (s + 1) / 2 <= m)
                            .unwrap_or(0);
                        let b = m - s * (s + 1) / 2;
                        if b > s {
                            return Err(bad("a second-extension codeword is out of range"));
                        }
                        if i % 2 == 0 {
                            mapped[filled + i] = s - b;
                            i += 1;
                        }
                        mapped[filled + i] = b;
                        i += 1;
                    }
                    filled += j;
                }
            } else if id == id_max {
                for i in 0..j {
                    mapped[filled + i] = r.bits(n)?;
                }
                if first {
                    reference = Some(mapped[filled]);
                    mapped[filled] = 0;
                }
                filled += j;
            } else {
                let k = (id - 1) as u32;
                if first {
                    reference = Some(r.bits(n)?);
                    mapped[filled] = 0;
                }
                let start = filled + usize::from(first);
                for m in &mut mapped[start..filled + j] {
                    *m = r.fs()? << k;
                }
                if k > 0 {
                    for m in &mut mapped[start..filled + j] {
                        *m |= r.bits(k)?;
                    }
                }
                filled += j;
            }
        }
        let take = (j * rsi).min(total - out);
        let (mapped, samples) = (&mapped[..take], &mut samples[..take]);
        if preprocessing {
            let reference = reference.ok_or_else(|| bad("an RSI has no reference sample"))?;
            let mut prev = if signed {
                sign_extend(reference as u32, n)
            } else {
                reference as i64
            };
            samples[0] = reference as u32;
            let mut out_of_range = false;
            for (x, &m) in samples[1..].iter_mut().zip(&mapped[1..]) {
                // Inverse of the preprocessor's mapping; hostile residuals are clamped so
                // the arithmetic stays in range and the result is caught below.
                let m = m.min(1 << 33);
                let (lo, hi) = (prev - xmin, xmax - prev);
                let theta = lo.min(hi) as u64;
                prev = if m <= 2 * theta {
                    // Even m: +m/2; odd m: -(m+1)/2, without a branch.
                    prev + (((m >> 1) as i64) ^ -((m & 1) as i64))
                } else if lo < hi {
                    xmin + m as i64
                } else {
                    xmax - m as i64
                };
                out_of_range |= prev < xmin || prev > xmax;
                prev = prev.clamp(xmin, xmax);
                *x = (prev as u32) & mask;
            }
            if out_of_range {
                return Err(bad("a residual maps outside the sample range"));
            }
        } else {
            let mut too_wide = false;
            for (x, &m) in samples.iter_mut().zip(mapped) {
                too_wide |= m > u64::from(mask);
                *x = m as u32;
            }
            if too_wide {
                return Err(bad("a sample is wider than bits_per_sample"));
            }
        }
        put(out, samples);
        out += take;
        if p.flags & PAD_RSI != 0 {
            r.align();
        }
    }
    Ok(())
}

/// Decodes a stream into `dst`, whose length (whole sample containers) says how many
/// samples to produce.
pub fn decode_into(p: &Params, stream: &[u8], dst: &mut [u8]) -> Result<()> {
    p.check()?;
    let sb = p.sample_bytes();
    if !dst.len().is_multiple_of(sb) {
        return Err(bad(format!(
            "{} bytes are not whole {sb}-byte samples",
            dst.len()
        )));
    }
    decode_samples(p, stream, 0, dst.len() / sb, |at, samples| {
        p.write_samples(samples, &mut dst[at * sb..(at + samples.len()) * sb]);
    })
}

/// Re-lays `count` values of a dense, most-significant-bit-first stream of
/// `bits_per_sample`-bit values (simple packing's layout) as byte containers, most
/// significant byte first: the layout szip reads for widths that are not whole bytes.
pub fn to_containers(p: &Params, packed: &[u8], count: usize) -> Result<Vec<u8>> {
    let n = p.bits_per_sample;
    let need = checked::mul(count as u64, u64::from(n), "packed bits")?.div_ceil(8);
    if (packed.len() as u64) < need {
        return Err(bad(format!(
            "{count} values of {n} bits need {need} packed bytes, not {}",
            packed.len()
        )));
    }
    let sb = p.sample_bytes();
    let mut out = vec![0u8; count * sb];
    let mut values = Unpacker::new(packed, n);
    for c in out.chunks_exact_mut(sb) {
        c.copy_from_slice(&(values.next_value() as u32).to_be_bytes()[4 - sb..]);
    }
    Ok(out)
}

/// The inverse of [`to_containers`]: writes the containers' values densely into `packed`.
pub fn from_containers(p: &Params, containers: &[u8], packed: &mut [u8]) -> Result<()> {
    let (n, sb) = (p.bits_per_sample, p.sample_bytes());
    let count = containers.len() / sb;
    let need = (count as u64 * u64::from(n)).div_ceil(8);
    if packed.len() as u64 != need {
        return Err(bad(format!(
            "{count} values of {n} bits fill {need} packed bytes, not {}",
            packed.len()
        )));
    }
    let mask = u64::from(u32::MAX >> (32 - n));
    let mut dense = Packer::new(packed, n);
    for c in containers.chunks_exact(sb) {
        let mut be = [0u8; 4];
        be[4 - sb..].copy_from_slice(c);
        dense.push(u64::from(u32::from_be_bytes(be)) & mask);
    }
    dense.finish();
    Ok(())
}

/// Decodes samples `first..first + dst.len()/container` using the RSI bit offsets the
/// encoder returned: only the RSIs that hold the range are read.
pub fn decode_range(
    p: &Params,
    stream: &[u8],
    offsets: &[u64],
    first: u64,
    dst: &mut [u8],
) -> Result<()> {
    p.check()?;
    let sb = p.sample_bytes();
    if !dst.len().is_multiple_of(sb) {
        return Err(bad(format!(
            "{} bytes are not whole {sb}-byte samples",
            dst.len()
        )));
    }
    let rsi_len = u64::from(p.block_size) * u64::from(p.rsi);
    let start_rsi = first / rsi_len;
    let Some(&bit) = offsets.get(start_rsi as usize) else {
        return Err(bad(format!(
            "no offset for RSI {start_rsi} ({} recorded)",
            offsets.len()
        )));
    };
    // Decode from the start of the RSI that holds `first` up to the last wanted sample.
    let skip = (first - start_rsi * rsi_len) as usize;
    let count = dst.len() / sb;
    decode_samples(p, stream, bit, skip + count, |at, samples| {
        // Drop the samples of the first RSI that come before `first`.
        let from = skip.saturating_sub(at).min(samples.len());
        let at = at + from - skip;
        p.write_samples(
            &samples[from..],
            &mut dst[at * sb..(at + samples.len() - from) * sb],
        );
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u32, j: u32, rsi: u32, flags: u32) -> Params {
        Params {
            bits_per_sample: n,
            block_size: j,
            rsi,
            flags,
        }
    }

    #[test]
    fn round_trips_with_and_without_preprocessing() {
        let values: Vec<u16> = (0..5000u32)
            .map(|i| (i * 7 + (i / 13) * 3) as u16 & 0x3FFF)
            .collect();
        for flags in [0, PREPROCESS, PREPROCESS | MSB, PREPROCESS | PAD_RSI] {
            let params = p(14, 16, 32, flags);
            let data: Vec<u8> = values
                .iter()
                .flat_map(|v| {
                    if flags & MSB != 0 {
                        v.to_be_bytes()
                    } else {
                        v.to_le_bytes()
                    }
                })
                .collect();
            let (enc, offsets) = encode(&params, &data).unwrap();
            let mut out = vec![0u8; data.len()];
            decode_into(&params, &enc, &mut out).unwrap();
            assert!(out == data, "flags {flags}: decoded data differs");
            let mut part = vec![0u8; 200];
            decode_range(&params, &enc, &offsets, 700, &mut part).unwrap();
            assert!(part == data[1400..1600], "flags {flags}: range differs");
        }
    }

    #[test]
    fn zero_runs_and_constant_data() {
        let data = vec![0u8; 8 * 64 * 3 + 40];
        let params = p(8, 8, 100, PREPROCESS);
        let (enc, _) = encode(&params, &data).unwrap();
        assert!(enc.len() < 20, "{} bytes", enc.len());
        let mut out = vec![1u8; data.len()];
        decode_into(&params, &enc, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn bad_parameters_and_streams_are_errors() {
        assert!(p(0, 16, 32, 0).check().is_err());
        assert!(p(33, 16, 32, 0).check().is_err());
        assert!(p(8, 12, 32, 0).check().is_err());
        assert!(p(8, 12, 32, NOT_ENFORCE).check().is_ok());
        assert!(p(8, 0, 32, NOT_ENFORCE).check().is_err());
        assert!(p(8, 0, 32, 0).check().is_err());
        assert!(p(8, 16, 0, 0).check().is_err());
        // Wider samples ignore the restricted flag, as tensogram does.
        let data: Vec<u8> = (0..200u8).map(|i| i % 3).collect();
        let restricted = encode(&p(8, 16, 32, RESTRICTED | PREPROCESS), &data).unwrap();
        assert_eq!(
            restricted,
            encode(&p(8, 16, 32, PREPROCESS), &data).unwrap()
        );
        let params = p(16, 16, 32, PREPROCESS);
        let data: Vec<u8> = (0..1000u16).flat_map(u16::to_le_bytes).collect();
        let (enc, _) = encode(&params, &data).unwrap();
        let mut out = vec![0u8; data.len()];
        assert!(decode_into(&params, &enc[..enc.len() / 2], &mut out).is_err());
        assert!(encode(&params, &data[..3]).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_samples_round_trip_and_range_decode(
            n in 1u32..=32,
            j in proptest::sample::select(vec![8u32, 16, 32, 64]),
            rsi in 1u32..8,
            flag_bits in 0u32..64,
            raw in proptest::collection::vec(proptest::num::u32::ANY, 1..700),
            smooth in proptest::bool::ANY,
        ) {
            let flags = flag_bits & (PREPROCESS | MSB | SIGNED | THREE_BYTE | PAD_RSI);
            let params = p(n, j, rsi, flags);
            let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            let sb = params.sample_bytes();
            let values: Vec<u32> = if smooth {
                raw.iter().scan(0u32, |acc, &v| { *acc = acc.wrapping_add(v % 5); Some(*acc & mask) }).collect()
            } else {
                raw.iter().map(|v| v & mask).collect()
            };
            let mut data = vec![0u8; values.len() * sb];
            for (c, &v) in data.chunks_exact_mut(sb).zip(&values) {
                let be = v.to_be_bytes();
                let le = v.to_le_bytes();
                c.copy_from_slice(if flags & MSB != 0 { &be[4 - sb..] } else { &le[..sb] });
            }
            let (enc, offsets) = encode(&params, &data).unwrap();
            let mut out = vec![0u8; data.len()];
            decode_into(&params, &enc, &mut out).unwrap();
            let low = |b: &[u8]| -> Vec<u32> {
                let mut v = vec![0u32; b.len() / sb];
                params.read_samples(b, &mut v);
                v
            };
            proptest::prop_assert_eq!(low(&out), values.clone());
            let first = values.len() / 3;
            let count = (values.len() - first).min(97);
            let mut part = vec![0u8; count * sb];
            decode_range(&params, &enc, &offsets, first as u64, &mut part).unwrap();
            proptest::prop_assert_eq!(low(&part), values[first..first + count].to_vec());
        }

        #[test]
        fn garbage_streams_never_panic(
            stream in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
            n in 1u32..=32,
            len in 0usize..2000,
        ) {
            let params = p(n, 16, 4, PREPROCESS);
            let mut out = vec![0u8; len * params.sample_bytes()];
            let _ = decode_into(&params, &stream, &mut out);
        }
    }
}
