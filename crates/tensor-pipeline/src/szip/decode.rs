//! The decoder: whole streams, or only the reference sample intervals a range needs.

#![allow(clippy::many_single_char_names)]

use super::params::{PAD_RSI, PREPROCESS, Params, ROS_FS, SIGNED, bad, sign_extend};
use crate::error::Result;

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

    /// The bit offset of the next unread bit.
    fn position(&self) -> u64 {
        self.next as u64 * 8 - u64::from(self.avail)
    }

    /// Skips `n` bits.
    #[inline]
    fn skip(&mut self, n: u64) -> Result<()> {
        if n <= u64::from(self.avail) {
            self.consume(n as u32);
            return Ok(());
        }
        let to = self
            .position()
            .checked_add(n)
            .filter(|&b| b <= self.data.len() as u64 * 8)
            .ok_or_else(|| bad("the stream ends inside a block"))?;
        // Within the stream, so the refill brings at least the bits of `to`'s byte.
        self.next = (to / 8) as usize;
        self.acc = 0;
        self.avail = 0;
        self.refill();
        self.consume((to % 8) as u32);
        Ok(())
    }

    /// Skips `count` fundamental-sequence codewords: past the `count`-th one bit, a byte
    /// at a time through tables of each byte's ones (no popcount instruction is assumed).
    #[inline]
    fn skip_fs(&mut self, mut count: u64) -> Result<()> {
        while count > 0 {
            if self.avail < 8 {
                self.refill();
                if self.avail < 8 {
                    // The stream's last bits: one codeword at a time.
                    for _ in 0..count {
                        self.fs()?;
                    }
                    return Ok(());
                }
            }
            let byte = (self.acc >> 56) as usize;
            let ones = u64::from(BYTE_ONES[byte]);
            if ones < count {
                count -= ones;
                self.consume(8);
            } else {
                self.consume(u32::from(BYTE_SELECT[byte][count as usize - 1]) + 1);
                count = 0;
            }
        }
        Ok(())
    }

    /// Skips to the next byte boundary.
    fn align(&mut self) {
        let drop = self.avail % 8;
        self.consume(drop);
    }
}

/// How many all-zero blocks a zero-block codeword `fs` stands for, at block `b` of an RSI of
/// `rsi` blocks: FS 0..=3 code 1..=4 blocks, from 5 on FS is the count itself, and ROS the
/// rest of the RSI or of its run of 64 blocks.
fn zero_blocks(fs: u64, b: usize, rsi: usize) -> Result<usize> {
    Ok(match fs {
        ROS_FS => (rsi - b).min(64 - (b % 64)),
        0..ROS_FS => (fs + 1) as usize,
        _ => usize::try_from(fs).map_err(|_| bad("a zero-block run is too long"))?,
    })
}

/// How many one bits each byte has.
const BYTE_ONES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).count_ones() as u8;
        b += 1;
    }
    t
};

/// For each byte, the position (from its most significant bit, 0 to 7) of its first,
/// second... one bit.
const BYTE_SELECT: [[u8; 8]; 256] = {
    let mut t = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if b & (0x80 >> bit) != 0 {
                t[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

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
                    let count = zero_blocks(r.fs()?, filled / j, rsi)?;
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

/// The bit offset of each reference sample interval among the first `count` samples of a
/// stream, found by reading only how long its blocks are (their codewords are counted, not
/// decoded): what lets a stream written without offsets decode one run of intervals per
/// core ([`decode_each_at`]).
pub fn rsi_offsets(p: &Params, stream: &[u8], count: usize) -> Result<Vec<u64>> {
    p.check()?;
    let n = u64::from(p.bits_per_sample);
    let id_len = p.id_len();
    let id_max = (1u64 << id_len) - 1;
    let (j, rsi) = (p.block_size as usize, p.rsi as usize);
    let preprocessing = p.flags & PREPROCESS != 0;
    let mut r = BitReader::new(stream, 0)?;
    let mut offsets = Vec::with_capacity(count.div_ceil(j * rsi));
    let mut out = 0usize;
    while out < count {
        offsets.push(r.position());
        let rsi_samples = (j * rsi).min(count - out).div_ceil(j) * j;
        let mut filled = 0usize;
        while filled < rsi_samples {
            let first = u64::from(filled == 0 && preprocessing);
            let id = r.bits(id_len)?;
            if id == 0 {
                let extension = r.bits(1)?;
                r.skip(first * n)?;
                if extension == 0 {
                    let blocks = zero_blocks(r.fs()?, filled / j, rsi)?;
                    filled = filled
                        .saturating_add(blocks.saturating_mul(j))
                        .min(rsi_samples);
                } else {
                    r.skip_fs(j as u64 / 2)?;
                    filled += j;
                }
            } else if id == id_max {
                r.skip(j as u64 * n)?;
                filled += j;
            } else {
                let k = id - 1;
                r.skip(first * n)?;
                r.skip_fs(j as u64 - first)?;
                r.skip((j as u64 - first) * k)?;
                filled += j;
            }
        }
        out += (j * rsi).min(count - out);
        if p.flags & PAD_RSI != 0 {
            r.align();
        }
    }
    Ok(offsets)
}

/// Decodes `count` samples from bit `start_bit` on (the start of a reference sample
/// interval, as [`rsi_offsets`] finds them), handing them to `put` in runs with the index
/// of each run's first sample, counted from `start_bit`.
pub fn decode_each_at(
    p: &Params,
    stream: &[u8],
    start_bit: u64,
    count: usize,
    put: impl FnMut(usize, &[u32]),
) -> Result<()> {
    decode_samples(p, stream, start_bit, count, put)
}

/// Decodes the first `count` samples of a stream, handing them to `put` in runs (at most one
/// reference sample interval each) with the index of each run's first sample: for callers
/// that use the integers themselves, with no container buffer between.
pub fn decode_each(
    p: &Params,
    stream: &[u8],
    count: usize,
    put: impl FnMut(usize, &[u32]),
) -> Result<()> {
    decode_samples(p, stream, 0, count, put)
}

/// Decodes a stream into `dst`, whose length (whole sample containers) says how many
/// samples to produce.
pub fn decode_into(p: &Params, stream: &[u8], dst: &mut [u8]) -> Result<()> {
    let sb = p.check_samples(dst.len())?;
    decode_samples(p, stream, 0, dst.len() / sb, |at, samples| {
        p.write_samples(samples, &mut dst[at * sb..(at + samples.len()) * sb]);
    })
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
    let sb = p.check_samples(dst.len())?;
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
