//! The encoder: preprocessing, then per block the cheapest code option, as libaec chooses.

#![allow(clippy::many_single_char_names)]

use super::params::{PAD_RSI, PREPROCESS, Params, ROS, ROS_FS, SIGNED, sign_extend};
use crate::error::Result;

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

    /// Appends every bit `other` holds.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    fn append(&mut self, other: &BitWriter) {
        for word in other.out.chunks_exact(4) {
            self.emit(
                u64::from(u32::from_be_bytes([word[0], word[1], word[2], word[3]])),
                32,
            );
        }
        self.emit(other.acc, other.bits);
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

/// RSIs below which a stream is coded on one core: smaller ones are not worth a thread.
#[cfg(feature = "parallel")]
const PARALLEL_RSIS: usize = 64;

/// Encodes `data` (whole sample containers). Returns the stream and the bit offset at
/// which each RSI starts (what Tensogram records as `szip_block_offsets`).
///
/// The only state that runs from one RSI to the next is libaec's `k` (where the search for a
/// block's split starts), so a large stream is coded in parts side by side, each from the `k`
/// the RSI before it gives, then put together in order: a part whose first coded block
/// chooses another split from the `k` the part before it really ends with is coded again
/// from that `k`. The stream is the one a single pass writes, bit for bit.
pub fn encode(p: &Params, data: &[u8]) -> Result<(Vec<u8>, Vec<u64>)> {
    let sb = p.check_samples(data.len())?;
    let rsi_bytes = p.block_size as usize * p.rsi as usize * sb;
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let rsis = data.len().div_ceil(rsi_bytes.max(1));
        let threads = rayon::current_num_threads();
        if threads > 1 && rsis >= PARALLEL_RSIS {
            let per_part = rsis.div_ceil(threads) * rsi_bytes;
            let chunks: Vec<&[u8]> = data.chunks(per_part).collect();
            // Each part starts from the `k` the RSI before it ends with when coded alone:
            // the search settles within a few blocks, so this is almost always the `k` a
            // single pass reaches there.
            let mut parts: Vec<Part> = (0..chunks.len())
                .into_par_iter()
                .map(|i| {
                    let start = if i == 0 {
                        0
                    } else {
                        let before = i * per_part;
                        let warm = &data[before - rsi_bytes..before];
                        encode_part(p, warm, 0).end_k.unwrap_or(0)
                    };
                    encode_part(p, chunks[i], start)
                })
                .collect();
            let mut k = 0;
            for (part, chunk) in parts.iter_mut().zip(&chunks) {
                if part.start_k != k && !part.starts_alike(p, k) {
                    *part = encode_part(p, chunk, k);
                }
                k = part.end_k.unwrap_or(k);
            }
            let mut parts = parts.into_iter();
            let first = parts.next().unwrap_or_else(Part::empty);
            let (mut w, mut offsets) = (first.w, first.offsets);
            for part in parts {
                let base = w.bit_len();
                offsets.extend(part.offsets.iter().map(|o| o + base));
                w.append(&part.w);
            }
            return Ok((w.finish(), offsets));
        }
    }
    let _ = rsi_bytes;
    let part = encode_part(p, data, 0);
    Ok((part.w.finish(), part.offsets))
}

/// A run of whole RSIs coded from a given `k`: its bits, where each RSI starts in them, the
/// `k` it ends with (`None`: no block was coded, `k` passes through), and its first coded
/// block as it was before coding, with the `k` that block left.
#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
struct Part {
    w: BitWriter,
    offsets: Vec<u64>,
    start_k: u32,
    end_k: Option<u32>,
    first: Option<(Vec<u32>, usize, u32)>,
}

#[cfg_attr(not(feature = "parallel"), allow(dead_code))]
impl Part {
    fn empty() -> Part {
        Part {
            w: BitWriter {
                out: Vec::new(),
                acc: 0,
                bits: 0,
            },
            offsets: Vec::new(),
            start_k: 0,
            end_k: None,
            first: None,
        }
    }

    /// Whether coding the part from `k` would write the same bits: its first coded block
    /// settles on the same split from `k` as from the `k` it was coded from (everything
    /// after depends on that block's `k` alone).
    fn starts_alike(&self, p: &Params, k: u32) -> bool {
        let Some((block, reference, chosen)) = &self.first else {
            return true;
        };
        let id_len = p.id_len();
        if id_len <= 1 {
            return true;
        }
        let mut enc = Encoder {
            p,
            w: BitWriter {
                out: Vec::new(),
                acc: 0,
                bits: 0,
            },
            id_len,
            kmax: (1u32 << id_len) - 3,
            k,
        };
        enc.assess_splitting(block, *reference);
        enc.k == *chosen
    }
}

/// Codes `data`, whole RSIs, from `start_k`.
fn encode_part(p: &Params, data: &[u8], start_k: u32) -> Part {
    let sb = p.sample_bytes();
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
        k: start_k,
    };
    let mut first: Option<(Vec<u32>, usize, u32)> = None;
    let mut coded = false;
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
            let before = first.is_none().then(|| block.to_vec());
            enc.code_block(block, reference);
            coded = true;
            if let Some(before) = before {
                first = Some((before, r, enc.k));
            }
        }
        if p.flags & PAD_RSI != 0 {
            enc.w.pad_to_byte();
        }
    }
    Part {
        end_k: coded.then_some(enc.k),
        w: enc.w,
        offsets,
        start_k,
        first,
    }
}

#[cfg(all(test, feature = "parallel"))]
mod parallel_tests {
    use super::*;

    /// Samples whose statistics change from region to region (smooth, noisy, constant), so
    /// that `k` differs where the parts meet.
    fn samples(n: usize, seed: u64, bits: u32) -> Vec<u8> {
        let mut state = seed;
        let mut x: i64 = 1 << (bits - 1);
        let max = (1i64 << bits) - 1;
        let mut out = Vec::with_capacity(n * 2);
        for i in 0..n {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let region = (i / 3000 + seed as usize) % 4;
            let step = match region {
                0 => 0,
                1 => (state >> 60) as i64 - 8,
                2 => (state >> 52) as i64 - 2048,
                _ => (state >> 56) as i64 - 128,
            };
            x = (x + step).clamp(0, max);
            out.extend_from_slice(&(x as u16).to_be_bytes());
        }
        out
    }

    #[test]
    fn parts_coded_side_by_side_are_the_single_pass_bit_for_bit() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for (seed, bits, block_size, rsi, flags) in [
            (1u64, 16u32, 32u32, 128u32, 14u32),
            (2, 12, 16, 32, 8),
            (3, 16, 8, 64, 8 | PAD_RSI),
            (4, 10, 32, 16, 0),
        ] {
            let p = Params {
                bits_per_sample: bits,
                block_size,
                rsi,
                flags: flags | super::super::params::MSB,
            };
            let data = samples(200_000 + seed as usize * 777, seed, bits);
            let single = encode_part(&p, &data, 0);
            let (one, one_offsets) = (single.w.finish(), single.offsets);
            let (many, offsets) = pool.install(|| encode(&p, &data)).unwrap();
            assert_eq!(offsets, one_offsets, "seed {seed}");
            assert!(many == one, "seed {seed}: the streams differ");
        }
    }
}
