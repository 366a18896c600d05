//! Decoding packed values into float64 exactly as ecCodes computes them, missing points as
//! NaN.

// Short names follow the formula's notation: R, E (`s` = 2^E), D (`d` = 10^−D), X.
#![allow(clippy::many_single_char_names)]

use crate::bits::BitReader;
use crate::context::At;
use crate::error::{Error, Result};
use crate::field::{Complex, Field, Packing, SecondOrder, Simple};
use tensor_pipeline::szip;

/// `n` to the power `s` as ecCodes computes it (`codes_power`): repeated multiplication or
/// division by `n`, one step at a time. `10^−D` this way is not always the correctly
/// rounded power, and the decoded values depend on it.
pub(crate) fn codes_power(s: i64, n: f64) -> f64 {
    let mut r = 1.0;
    if s == 0 {
        return 1.0;
    }
    if s == 1 {
        return n;
    }
    let mut s = s;
    while s < 0 {
        r /= n;
        s += 1;
    }
    while s > 0 {
        r *= n;
        s -= 1;
    }
    r
}

/// The scale factors of simple packing: `(2^E, 10^−D)`.
pub(crate) fn scales(p: &Simple) -> (f64, f64) {
    (
        codes_power(i64::from(p.binary_scale_factor), 2.0),
        codes_power(-i64::from(p.decimal_scale_factor), 10.0),
    )
}

/// The simple-packing formula as ecCodes evaluates it, `Y = (X·2^E + R)·10^−D`, with its
/// factors computed once per field: every packing built on simple packing ends in it.
#[derive(Clone, Copy)]
struct Formula {
    s: f64,
    r: f64,
    d: f64,
}

impl Formula {
    fn of(p: &Simple) -> Self {
        let (s, d) = scales(p);
        Formula {
            s,
            r: p.reference_value,
            d,
        }
    }

    /// The value of packed integer `x`.
    #[inline]
    fn value(self, x: f64) -> f64 {
        (x * self.s + self.r) * self.d
    }
}

/// ecCodes' constant field: with 0 bits per value every value is the reference value as it
/// is (not scaled by 10^−D). Whether `out` was filled so.
fn constant(p: &Simple, out: &mut [f64]) -> bool {
    let is = p.bits_per_value == 0;
    if is {
        out.fill(p.reference_value);
    }
    is
}

/// Whether the bitmap marks point `i` present (bits most significant first, 1 = present).
fn is_present(bitmap: &[u8], i: usize) -> bool {
    bitmap[i / 8] & (0x80 >> (i % 8)) != 0
}

/// Points the bitmap marks present among the first `points`.
pub(crate) fn count_present(bitmap: &[u8], points: u64) -> u64 {
    let whole = (points / 8) as usize;
    let mut n: u64 = bitmap[..whole]
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    let rest = (points % 8) as u32;
    if rest > 0 {
        n += u64::from((bitmap[whole] >> (8 - rest)).count_ones());
    }
    n
}

impl Field {
    fn at(&self) -> At {
        At {
            message: self.message,
            offset: self.offset,
        }
    }

    /// Checks, before anything is allocated or decoded, that the field's values (8 bytes a
    /// point) stay within `limits`: the total, and the expansion from the message's bytes
    /// (a constant field of 0 bits per value stores nothing; beyond the limits' expansion
    /// allowance, a 179-byte message cannot claim gigabytes). Returns the decoded size.
    pub fn check_decode(&self, limits: &tensor_core::Limits) -> Result<u64> {
        let len = self.points.saturating_mul(8);
        limits.check_expansion(self.length, len)?;
        Ok(len)
    }

    /// Decodes the field's values into `out` (one per point, in the order they are stored):
    /// bit for bit what ecCodes' `codes_get_values` returns, except that missing points are
    /// NaN (ecCodes gives its `missingValue`, 9999 by default). `file` is the whole file
    /// the field was listed from.
    pub fn decode_into(&self, file: &[u8], out: &mut [f64]) -> Result<()> {
        if out.len() as u64 != self.points {
            return Err(Error::OutputLength {
                field: self.message,
                expected: self.points,
                actual: out.len(),
            });
        }
        let packed = self.packed_values as usize;
        let data = &file[self.data.clone()];
        let at = self.at();
        match &self.packing {
            Packing::Simple(p) => simple(p, data, &mut out[..packed], at)?,
            Packing::Ieee { bits } => ieee(*bits, data, &mut out[..packed], at)?,
            Packing::Ccsds {
                simple: p,
                flags,
                block_size,
                rsi,
            } => ccsds(p, *flags, *block_size, *rsi, data, &mut out[..packed], at)?,
            Packing::Complex(c) => complex(c, data, &mut out[..packed], at)?,
            Packing::Jpeg(p) => jpeg(p, data, &mut out[..packed], at)?,
            Packing::Png(p) => png(p, data, &mut out[..packed], at)?,
            Packing::SecondOrder(s) => second_order(s, data, &mut out[..packed], at)?,
        }
        if let Some(b) = &self.bitmap {
            spread(&file[b.clone()], out, packed);
        }
        if let Packing::SecondOrder(s) = &self.packing
            && s.boustrophedonic
        {
            // Every other row runs the other way: turned back into scan order.
            let ni = match (self.grid.ni, self.grid.nj) {
                (Some(ni), Some(nj)) if ni * nj == self.points && ni > 0 => ni as usize,
                _ => {
                    return Err(at.unsupported(
                        "boustrophedonic ordering on a grid with rows of different lengths",
                    ));
                }
            };
            out.chunks_mut(ni)
                .skip(1)
                .step_by(2)
                .for_each(<[f64]>::reverse);
        }
        Ok(())
    }

    /// The packed integers of a simple-packed field as stored: `ceil(values · bits / 8)`
    /// bytes, most significant bit first (what Tensogram's `simple_packing` stores too).
    pub fn packed_bits<'f>(&self, file: &'f [u8]) -> Result<&'f [u8]> {
        let Packing::Simple(p) = &self.packing else {
            return Err(self.at().unsupported(format!(
                "the packed integers of {} (only grid_simple stores them as they are)",
                self.packing.name()
            )));
        };
        let need = (self.packed_values * u64::from(p.bits_per_value)).div_ceil(8) as usize;
        let data = &file[self.data.clone()];
        data.get(..need).ok_or_else(|| {
            self.at().truncated(
                "the packed values",
                format!("{need} bytes needed, the data section has {}", data.len()),
            )
        })
    }

    /// Values as ecCodes computes them from `packed`: the field's integers (its own
    /// [`packed_bits`](Self::packed_bits), or its [`ccsds_samples`](Self::ccsds_samples)) at
    /// `bits` bits each, most significant bit first; one value per packed integer.
    pub fn values_from_integers(&self, packed: &[u8], bits: u32, out: &mut [f64]) -> Result<()> {
        let Some(p) = self.packing.simple() else {
            return Err(self
                .at()
                .unsupported(format!("integers of {}", self.packing.name())));
        };
        let p = Simple {
            bits_per_value: bits,
            ..*p
        };
        simple(&p, packed, out, self.at())
    }

    /// The integers of a CCSDS field, decoded from its stream into big-endian containers of
    /// the next whole-byte width (1, 2, 3 or 4 bytes; the width is returned in bits).
    pub fn ccsds_samples(
        &self,
        file: &[u8],
        limits: &tensor_core::Limits,
    ) -> Result<(Vec<u8>, u32)> {
        let Packing::Ccsds {
            simple: p,
            flags,
            block_size,
            rsi,
        } = &self.packing
        else {
            return Err(self
                .at()
                .unsupported(format!("CCSDS samples of {}", self.packing.name())));
        };
        let width = p.bits_per_value.div_ceil(8) * 8;
        let mut params = ccsds_params(p, *flags, *block_size, *rsi);
        if width == 24 {
            params.flags |= szip::THREE_BYTE;
        }
        params
            .check()
            .map_err(|e| self.at().data("grid_ccsds", e))?;
        let len = self
            .packed_values
            .saturating_mul(params.sample_bytes() as u64);
        limits.check_total_bytes(len)?;
        let len = tensor_core::checked::to_usize(len, "CCSDS samples")?;
        let mut samples = tensor_core::buffer::try_filled(len, 0u8, "CCSDS samples")?;
        let data = &file[self.data.clone()];
        szip::decode_into(&params, data, &mut samples)
            .map_err(|e| self.at().data("grid_ccsds", e))?;
        Ok((samples, width))
    }

    /// Which points are present (`true`) and which missing, when the field has a bitmap,
    /// as ecCodes' bitmap says; `None` when every point is present. Points that complex
    /// packing marks missing inside the data are NaN in the values but not in this mask.
    #[must_use]
    pub fn present(&self, file: &[u8]) -> Option<Vec<bool>> {
        let b = &file[self.bitmap.clone()?];
        Some(
            (0..self.points as usize)
                .map(|i| is_present(b, i))
                .collect(),
        )
    }
}

/// Moves the first `packed` values of `out` to the points the bitmap marks present, and
/// NaN to the others, in place (from the end, so nothing is overwritten before it moves).
fn spread(bitmap: &[u8], out: &mut [f64], packed: usize) {
    let mut j = packed;
    for i in (0..out.len()).rev() {
        if is_present(bitmap, i) {
            j -= 1;
            out[i] = out[j];
        } else {
            out[i] = f64::NAN;
        }
    }
}

fn simple(p: &Simple, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    if constant(p, out) {
        return Ok(());
    }
    let need = (out.len() as u64 * u64::from(p.bits_per_value)).div_ceil(8);
    if (data.len() as u64) < need {
        return Err(at.truncated(
            "the packed values",
            format!(
                "{} values of {} bits need {need} bytes, the data section has {}",
                out.len(),
                p.bits_per_value,
                data.len()
            ),
        ));
    }
    let f = Formula::of(p);
    let bits = p.bits_per_value;
    match bits {
        8 => out
            .iter_mut()
            .zip(data)
            .for_each(|(o, &x)| *o = f.value(f64::from(x))),
        16 => out
            .iter_mut()
            .zip(data.chunks_exact(2))
            .for_each(|(o, x)| *o = f.value(f64::from(u16::from_be_bytes([x[0], x[1]])))),
        _ => {
            let mut reader = BitReader::new(data);
            for o in out.iter_mut() {
                let x = reader.read(bits).unwrap_or(0);
                *o = f.value(x as f64);
            }
        }
    }
    Ok(())
}

fn ieee(bits: u32, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    let width = (bits / 8) as usize;
    if data.len() < out.len() * width {
        return Err(at.truncated(
            "the IEEE values",
            format!(
                "{} values of {bits} bits, the data section has {} bytes",
                out.len(),
                data.len()
            ),
        ));
    }
    if bits == 32 {
        for (o, x) in out.iter_mut().zip(data.chunks_exact(4)) {
            *o = f64::from(f32::from_be_bytes([x[0], x[1], x[2], x[3]]));
        }
    } else {
        for (o, x) in out.iter_mut().zip(data.chunks_exact(8)) {
            *o = f64::from_be_bytes(x.try_into().unwrap_or([0; 8]));
        }
    }
    Ok(())
}

/// The libaec parameters a CCSDS field decodes with: the stored flags, samples in
/// big-endian containers of 1, 2 or 4 bytes (as ecCodes lays them out; the container does
/// not change the stream).
pub(crate) fn ccsds_params(p: &Simple, flags: u32, block_size: u32, rsi: u32) -> szip::Params {
    szip::Params {
        bits_per_sample: p.bits_per_value,
        block_size,
        rsi,
        flags: (flags & !(szip::THREE_BYTE)) | szip::MSB,
    }
}

fn ccsds(
    p: &Simple,
    flags: u32,
    block_size: u32,
    rsi: u32,
    data: &[u8],
    out: &mut [f64],
    at: At,
) -> Result<()> {
    if constant(p, out) {
        return Ok(());
    }
    let params = ccsds_params(p, flags, block_size, rsi);
    params.check().map_err(|e| at.data("grid_ccsds", e))?;
    let f = Formula::of(p);
    // The integers go straight to the values, a run (one reference sample interval) at a
    // time: no sample buffer.
    szip::decode_each(&params, data, out.len(), |first, run| {
        for (o, &x) in out[first..first + run.len()].iter_mut().zip(run) {
            *o = f.value(f64::from(x));
        }
    })
    .map_err(|e| at.data("grid_ccsds", e))
}

/// The spatial differencing values of second-order packing: `order` unsigned values of
/// `width` bits, then the bias (sign and magnitude).
pub(crate) fn spd(bytes: &[u8], order: u8, width: u32, at: At) -> Result<[i64; 4]> {
    let mut spd = [0i64; 4];
    if order == 0 {
        return Ok(spd);
    }
    if order > 3 || width == 0 || width > 63 {
        return Err(at.malformed(format!(
            "second-order packing: spatial differencing of order {order} with {width}-bit values"
        )));
    }
    let short = || {
        at.truncated(
            "the spatial differencing values",
            format!("{} bytes", bytes.len()),
        )
    };
    let mut r = BitReader::new(bytes);
    for v in spd.iter_mut().take(usize::from(order)) {
        *v = r.read(width).ok_or_else(short)? as i64;
    }
    spd[usize::from(order)] = r.read_signed(width).ok_or_else(short)?;
    Ok(spd)
}

/// Second-order packing, general extended (GRIB 2 template 5.50002 and GRIB 1): group
/// widths, lengths and first-order values (each byte-aligned), then the groups' values;
/// then up to third-order differencing is undone, as ecCodes does.
fn second_order(c: &SecondOrder, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    let n = out.len();
    let order = usize::from(c.order);
    let bad = |what: String| at.malformed(format!("second-order packing: {what}"));
    let short = |what: &str| {
        at.truncated(
            format!("second-order packing's {what}"),
            format!("the data section has {} bytes", data.len()),
        )
    };
    if c.width_bits > 63 || c.length_bits > 63 || c.first_order_bits > 63 {
        return Err(bad("a descriptor wider than 63 bits".into()));
    }
    // Each group holds at least one value: more groups than values is damage, and would
    // cost time out of proportion to the message (groups described in 0 bits each).
    if c.groups > n as u64 {
        return Err(bad(format!("{} groups for {n} packed values", c.groups)));
    }
    let total_bits = data.len() as u64 * 8;
    let part = |bits_each: u32, what: &str| {
        c.groups
            .checked_mul(u64::from(bits_each))
            .filter(|&b| b <= total_bits)
            .map(|b| b.div_ceil(8) as usize)
            .ok_or_else(|| short(what))
    };
    let widths_len = part(c.width_bits, "group widths")?;
    let lengths_len = part(c.length_bits, "group lengths")?;
    let firsts_len = part(c.first_order_bits, "first-order values")?;
    let values_at = widths_len + lengths_len + firsts_len;
    if values_at > data.len() {
        return Err(short("group descriptions"));
    }
    let mut widths = BitReader::new(&data[..widths_len]);
    let mut lengths = BitReader::new(&data[widths_len..widths_len + lengths_len]);
    let mut firsts = BitReader::new(&data[widths_len + lengths_len..values_at]);
    let mut vals = BitReader::new(&data[values_at..]);
    if n < order {
        return Err(bad(format!(
            "{n} values, fewer than the differencing order {order}"
        )));
    }
    // The integers are built in the output's own memory (as i64), then turned into values
    // in place: no buffer of their own.
    let x: &mut [i64] = bytemuck::cast_slice_mut(out);
    x[..order].copy_from_slice(&c.spd[..order]);
    let mut filled = order;
    for g in 0..c.groups {
        let width = widths
            .read(c.width_bits)
            .ok_or_else(|| short("group widths"))?;
        let len = lengths
            .read(c.length_bits)
            .ok_or_else(|| short("group lengths"))?;
        let first = firsts
            .read(c.first_order_bits)
            .ok_or_else(|| short("first-order values"))? as i64;
        if width > 63 {
            return Err(bad(format!("group {g} is {width} bits wide")));
        }
        if len > (n - filled) as u64 {
            return Err(bad(format!(
                "the groups hold more than the {n} packed values"
            )));
        }
        for _ in 0..len {
            let v = vals
                .read(width as u32)
                .ok_or_else(|| short("packed values"))? as i64;
            x[filled] = v.wrapping_add(first);
            filled += 1;
        }
    }
    if filled != n {
        return Err(bad(format!(
            "the groups hold {filled} values, not the {n} packed"
        )));
    }
    let bias = c.spd[order];
    match order {
        1 => {
            let mut y = x[0];
            for v in &mut x[1..] {
                y = y.wrapping_add(v.wrapping_add(bias));
                *v = y;
            }
        }
        2 => {
            let (mut y, mut z) = (x[1].wrapping_sub(x[0]), x[1]);
            for v in &mut x[2..] {
                y = y.wrapping_add(v.wrapping_add(bias));
                z = z.wrapping_add(y);
                *v = z;
            }
        }
        3 => {
            let mut y = x[2].wrapping_sub(x[1]);
            let mut z = y.wrapping_sub(x[1].wrapping_sub(x[0]));
            let mut w = x[2];
            for v in &mut x[3..] {
                z = z.wrapping_add(v.wrapping_add(bias));
                y = y.wrapping_add(z);
                w = w.wrapping_add(y);
                *v = w;
            }
        }
        _ => {}
    }
    let f = Formula::of(&c.simple);
    for o in out.iter_mut() {
        let v = o.to_bits() as i64;
        *o = f.value(v as f64);
    }
    Ok(())
}

/// JPEG 2000 packing (template 5.40): the integers are the one component of a JPEG 2000
/// codestream of exactly as many samples as values are packed. Our own decoder
/// ([`crate::jpeg2000`]) spreads the code-blocks over all threads; codestreams it does not
/// follow, or finds malformed, go to `hayro-jpeg2000`.
fn jpeg(p: &Simple, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    if constant(p, out) || out.is_empty() {
        return Ok(());
    }
    let samples = jpeg2000_samples(data, out.len(), at)?;
    let f = Formula::of(p);
    for (o, &x) in out.iter_mut().zip(&samples) {
        *o = f.value(f64::from(x));
    }
    Ok(())
}

/// The integers of a JPEG 2000 codestream of exactly `count` samples, row by row, as
/// OpenJPEG gives them to ecCodes. What our decoder calls damaged is an error; only what it
/// does not follow goes to hayro-jpeg2000, and only a codestream whose header the data can
/// back.
pub(crate) fn jpeg2000_samples(data: &[u8], count: usize, at: At) -> Result<Vec<i32>> {
    use crate::jpeg2000::Refusal;
    let damaged = |e: &Refusal| at.malformed(format!("the JPEG 2000 codestream: {e}"));
    match crate::jpeg2000::decode(data, count) {
        Ok(samples) => Ok(samples),
        Err(Refusal::Failed(e)) => Err(e.into()),
        Err(e @ Refusal::Malformed(_)) => Err(damaged(&e)),
        Err(Refusal::Unsupported(_)) => {
            crate::jpeg2000::cleared_for_another_decoder(data, count).map_err(|e| damaged(&e))?;
            jpeg_by_hayro(data, count, at)
        }
    }
}

/// Decodes a codestream through `hayro-jpeg2000`, with its samples rounded and clamped to
/// their bit depth as OpenJPEG gives them to ecCodes.
fn jpeg_by_hayro(data: &[u8], count: usize, at: At) -> Result<Vec<i32>> {
    use hayro_jpeg2000::{DecodeSettings, DecoderContext, Image};
    let bad = |e: &dyn std::fmt::Display| at.malformed(format!("the JPEG 2000 codestream: {e}"));
    let image = Image::new(data, &DecodeSettings::default()).map_err(|e| bad(&e))?;
    let samples = u64::from(image.width()) * u64::from(image.height());
    if samples != count as u64 {
        return Err(at.malformed(format!(
            "the JPEG 2000 image is {}×{} samples, {count} values are packed",
            image.width(),
            image.height(),
        )));
    }
    let mut ctx = DecoderContext::default();
    let decoded = image.decode(&mut ctx).map_err(|e| bad(&e))?;
    let component = decoded
        .components()
        .first()
        .ok_or_else(|| at.malformed("the JPEG 2000 image has no component"))?;
    let x = component.samples();
    if x.len() != count {
        return Err(at.malformed(format!(
            "the JPEG 2000 component has {} samples, {count} values are packed",
            x.len(),
        )));
    }
    let high = ((1u64 << component.bit_depth().min(32)) - 1) as f32;
    Ok(x.iter()
        .map(|&v| v.round_ties_even().clamp(0.0, high) as i32)
        .collect())
}

/// Checks that the PNG `image`'s zlib stream (its IDAT chunks' data, in order) runs to its
/// end, Adler-32 included, and inflates to exactly `expected` bytes: the png crate stops
/// once it has every row, so a stream cut inside its trailer, or with bytes to spare, would
/// read as sound.
fn whole_zlib_stream(image: &[u8], expected: u64) -> std::result::Result<(), String> {
    let mut idat = Vec::new();
    let mut at = 8usize;
    while at + 12 <= image.len() {
        let len = u32::from_be_bytes([image[at], image[at + 1], image[at + 2], image[at + 3]]);
        let end = at
            .checked_add(12)
            .and_then(|e| e.checked_add(len as usize))
            .filter(|&e| e <= image.len())
            .ok_or("a chunk runs past the image")?;
        if &image[at + 4..at + 8] == b"IDAT" {
            idat.extend_from_slice(&image[at + 8..end - 4]);
        }
        at = end;
    }
    let expected = usize::try_from(expected).map_err(|_| "the image is too large")?;
    let inflated = fdeflate::decompress_to_vec_bounded(&idat, expected.saturating_add(1))
        .map_err(|_| "its compressed data is damaged or cut short (zlib stream, Adler-32)")?;
    if inflated.len() != expected {
        return Err(format!(
            "its compressed data inflates to {} bytes, not the image's {expected}",
            inflated.len()
        ));
    }
    Ok(())
}

/// PNG packing (template 5.41): the integers are the samples of a PNG image, row after row,
/// each as wide as bits per value rounded up to whole bytes: grey of 8 or 16 bits, RGB for
/// 24 and RGBA for 32 (the channels of a pixel are the bytes of one integer, most
/// significant first), as ecCodes writes and reads them.
fn png(p: &Simple, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    if constant(p, out) || out.is_empty() {
        return Ok(());
    }
    let bad = |e: &dyn std::fmt::Display| at.malformed(format!("the PNG image: {e}"));
    let bytes = match p.bits_per_value {
        1..=8 => 1,
        9..=16 => 2,
        17..=24 => 3,
        25..=32 => 4,
        more => {
            return Err(at.malformed(format!(
                "PNG packing with {more} bits per value (at most 32)"
            )));
        }
    };
    // The image may decode to exactly the packed values and no more: the decoder is held to
    // that many bytes before it allocates anything.
    let limits = png::Limits {
        bytes: out.len().saturating_mul(bytes).saturating_add(1 << 16),
    };
    let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(data), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    // Every chunk's CRC and the image data's Adler-32, as libpng checks them: a damaged or
    // cut stream is an error, not samples (the png crate skips the Adler-32 by default).
    decoder.ignore_checksums(false);
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let info = reader.info();
    let (width, height) = (info.width, info.height);
    let depth = match (info.color_type, info.bit_depth) {
        (png::ColorType::Grayscale, png::BitDepth::Eight) => 1,
        (png::ColorType::Grayscale, png::BitDepth::Sixteen) => 2,
        (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
        (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
        (colour, depth) => {
            return Err(at.malformed(format!(
                "a PNG image of {colour:?} samples of {} bits, for {} bits per value",
                depth as u8, p.bits_per_value
            )));
        }
    };
    if depth != bytes {
        return Err(at.malformed(format!(
            "the PNG image holds {} bits per sample, {} bits per value are packed",
            8 * depth,
            p.bits_per_value
        )));
    }
    if u64::from(width) * u64::from(height) != out.len() as u64 {
        return Err(at.malformed(format!(
            "the PNG image is {width}×{height} samples, {} values are packed",
            out.len()
        )));
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| at.malformed("the PNG image is too large"))?;
    let mut pixels = tensor_core::buffer::try_filled(size, 0u8, "PNG samples")?;
    let frame = reader.next_frame(&mut pixels).map_err(|e| bad(&e))?;
    reader.finish().map_err(|e| bad(&e))?;
    let row_bytes = width as usize * bytes;
    // Each row inflates to a filter byte and its samples.
    whole_zlib_stream(data, u64::from(height) * (1 + row_bytes as u64)).map_err(|e| bad(&e))?;
    if frame.line_size < row_bytes {
        return Err(at.malformed("the PNG image's rows are shorter than its width"));
    }
    let f = Formula::of(p);
    let rows = pixels[..frame.buffer_size()].chunks_exact(frame.line_size);
    let values = out.chunks_exact_mut(width as usize);
    for (row, values) in rows.zip(values) {
        for (o, x) in values.iter_mut().zip(row[..row_bytes].chunks_exact(bytes)) {
            *o = f.value(crate::bits::be(x) as f64);
        }
    }
    Ok(())
}

/// Complex packing, with or without spatial differencing (templates 5.2, 5.3, data
/// template 7.2/7.3), as ecCodes decodes it.
fn complex(c: &Complex, data: &[u8], out: &mut [f64], at: At) -> Result<()> {
    const MISSING: i64 = i64::MAX;
    let p = &c.simple;
    let n = out.len();
    if c.groups == 0 {
        out.fill(p.reference_value);
        return Ok(());
    }
    let bad = |what: &str| at.malformed(format!("complex packing: {what}"));
    let short = |what: &str| {
        at.truncated(
            format!("complex packing's {what}"),
            format!("the data section has {} bytes", data.len()),
        )
    };
    let bits = p.bits_per_value;
    if bits > 63 || c.width_bits > 63 || c.length_bits > 63 {
        return Err(bad("a width of more than 63 bits"));
    }
    // Each group holds at least one value: more groups than values is damage, and would
    // cost time out of proportion to the message (groups described in 0 bits each).
    if c.groups > n as u64 {
        return Err(bad(&format!("{} groups for {n} packed values", c.groups)));
    }
    // Every part must fit in the data section before anything is read.
    let extra_bits = if c.order > 0 {
        u64::from(c.order + 1) * u64::from(c.descriptor_octets) * 8
    } else {
        0
    };
    let total_bits = data.len() as u64 * 8;
    let part = |bits_each: u32| {
        c.groups
            .checked_mul(u64::from(bits_each))
            .filter(|&b| b <= total_bits)
    };
    let refs_bits = part(bits)
        .and_then(|b| b.checked_add(extra_bits))
        .ok_or_else(|| short("group references"))?;
    let widths_bits = part(c.width_bits).ok_or_else(|| short("group widths"))?;
    let lengths_bits = part(c.length_bits).ok_or_else(|| short("group lengths"))?;
    let refs_at = 0usize;
    let widths_at = refs_at + refs_bits.div_ceil(8) as usize;
    let lengths_at = widths_at + widths_bits.div_ceil(8) as usize;
    let values_at = lengths_at + lengths_bits.div_ceil(8) as usize;
    if values_at > data.len() {
        return Err(short("group descriptions"));
    }
    let mut refs = BitReader::new(&data[refs_at..widths_at]);
    let mut widths = BitReader::new(&data[widths_at..lengths_at]);
    let mut lengths = BitReader::new(&data[lengths_at..values_at]);
    let mut vals = BitReader::new(&data[values_at..]);
    let mut extras = [0u64; 2];
    let mut minimum = 0i64;
    if c.order > 0 {
        let w = u32::from(c.descriptor_octets) * 8;
        for e in extras.iter_mut().take(usize::from(c.order)) {
            *e = refs.read(w).ok_or_else(|| short("extra descriptors"))?;
        }
        minimum = refs
            .read_signed(w)
            .ok_or_else(|| short("extra descriptors"))?;
    }
    // The integers are built in the output's own memory (as i64), then turned into values
    // in place: no buffer of their own.
    let ints: &mut [i64] = bytemuck::cast_slice_mut(out);
    let mut filled = 0usize;
    for g in 0..c.groups {
        let group_ref = refs.read(bits).ok_or_else(|| short("group references"))?;
        let scaled_len = lengths
            .read(c.length_bits)
            .ok_or_else(|| short("group lengths"))?;
        let width = widths
            .read(c.width_bits)
            .ok_or_else(|| short("group widths"))?
            + u64::from(c.width_reference);
        let len = if g == c.groups - 1 {
            c.last_length
        } else {
            scaled_len
                .checked_mul(c.length_increment)
                .and_then(|l| l.checked_add(c.length_reference))
                .ok_or_else(|| bad("a group length overflows"))?
        };
        if width > 63 {
            return Err(bad(&format!("group {g} is {width} bits wide")));
        }
        if len > (n - filled) as u64 {
            return Err(bad(&format!(
                "the groups hold more than the {n} packed values"
            )));
        }
        let width = width as u32;
        let primary = if width == 0 {
            (1u64 << bits) - 1
        } else {
            (1u64 << width) - 1
        };
        let run = &mut ints[filled..filled + len as usize];
        filled += run.len();
        if c.missing_management == 0 {
            for slot in run {
                let x = vals.read(width).ok_or_else(|| short("packed values"))?;
                *slot = group_ref.wrapping_add(x) as i64;
            }
            continue;
        }
        for slot in run {
            let x = vals.read(width).ok_or_else(|| short("packed values"))?;
            let missing = match c.missing_management {
                1 if width == 0 => group_ref == primary,
                1 => x == primary,
                2 if width == 0 => group_ref == primary || group_ref == primary - 1,
                2 => x == primary || x == primary - 1,
                _ => false,
            };
            *slot = if missing {
                MISSING
            } else {
                group_ref.wrapping_add(x) as i64
            };
        }
    }
    if filled != n {
        return Err(bad(&format!(
            "the groups hold {filled} values, not the {n} packed"
        )));
    }
    if c.order > 0 {
        undifference(ints, c.order, minimum, extras, MISSING);
    }
    let f = Formula::of(p);
    for o in out.iter_mut() {
        let x = o.to_bits() as i64;
        *o = if x == MISSING {
            f64::NAN
        } else {
            f.value(x as f64)
        };
    }
    Ok(())
}

/// Undoes first- or second-order spatial differencing over the values that are not missing.
fn undifference(v: &mut [i64], order: u8, bias: i64, extras: [u64; 2], missing: i64) {
    let mut present = v.iter_mut().filter(|x| **x != missing);
    let (mut penultimate, mut last) = (extras[0] as i64, extras[0] as i64);
    if let Some(first) = present.next() {
        *first = extras[0] as i64;
    }
    if order == 2
        && let Some(second) = present.next()
    {
        *second = extras[1] as i64;
        last = extras[1] as i64;
    }
    for x in present {
        if order == 1 {
            *x = x.wrapping_add(last).wrapping_add(bias);
        } else {
            *x = x
                .wrapping_add(bias)
                .wrapping_add(last.wrapping_mul(2))
                .wrapping_sub(penultimate);
            penultimate = last;
        }
        last = *x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_are_computed_step_by_step() {
        assert_eq!(codes_power(0, 10.0), 1.0);
        assert_eq!(codes_power(-1, 10.0), 0.1);
        assert_eq!(codes_power(-2, 10.0), 0.1 / 10.0);
        assert_eq!(codes_power(3, 2.0), 8.0);
        assert_eq!(codes_power(-3, 2.0), 0.125);
    }

    #[test]
    fn spreading_puts_values_on_present_points() {
        let mut out = [1.0, 2.0, 0.0, 0.0];
        spread(&[0b0110_0000], &mut out, 2);
        assert!(out[0].is_nan() && out[3].is_nan());
        assert_eq!(&out[1..3], &[1.0, 2.0]);
    }

    /// A PNG image of `width` × `height` samples from `bytes`.
    fn png_image(
        width: u32,
        height: u32,
        colour: png::ColorType,
        depth: png::BitDepth,
        bytes: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = png::Encoder::new(&mut out, width, height);
        e.set_color(colour);
        e.set_depth(depth);
        let mut w = e.write_header().expect("header");
        w.write_image_data(bytes).expect("image");
        w.finish().expect("finish");
        out
    }

    /// `image` with the last byte of its (one) IDAT chunk's data dropped, the chunk's length
    /// and CRC-32 written for what remains.
    fn without_last_idat_byte(image: &[u8]) -> Vec<u8> {
        fn crc32(bytes: &[u8]) -> u32 {
            let mut c = !0u32;
            for &b in bytes {
                c ^= u32::from(b);
                for _ in 0..8 {
                    c = if c & 1 == 1 {
                        (c >> 1) ^ 0xEDB8_8320
                    } else {
                        c >> 1
                    };
                }
            }
            !c
        }
        let at = image
            .windows(4)
            .position(|w| w == b"IDAT")
            .expect("an IDAT chunk")
            - 4;
        let len = u32::from_be_bytes(image[at..at + 4].try_into().unwrap()) as usize;
        let data = &image[at + 8..at + 8 + len - 1];
        let mut out = image[..at].to_vec();
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(b"IDAT");
        out.extend_from_slice(data);
        let mut typed = b"IDAT".to_vec();
        typed.extend_from_slice(data);
        out.extend_from_slice(&crc32(&typed).to_be_bytes());
        out.extend_from_slice(&image[at + 12 + len..]);
        out
    }

    #[test]
    fn png_samples_are_whole_byte_integers_and_the_image_must_fit() {
        let at = At {
            message: 0,
            offset: 0,
        };
        let p = |bits| Simple {
            reference_value: 10.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
            bits_per_value: bits,
        };
        let grey16 = png_image(
            3,
            1,
            png::ColorType::Grayscale,
            png::BitDepth::Sixteen,
            &[0, 1, 1, 0, 0xff, 0xff],
        );
        let mut out = [0.0; 3];
        png(&p(12), &grey16, &mut out, at).expect("decodes");
        assert_eq!(out, [11.0, 266.0, 65545.0]);
        // RGB pixels are 24-bit integers, most significant byte first.
        let rgb = png_image(
            1,
            2,
            png::ColorType::Rgb,
            png::BitDepth::Eight,
            &[0, 1, 2, 1, 0, 0],
        );
        let mut out = [0.0; 2];
        png(&p(24), &rgb, &mut out, at).expect("decodes");
        assert_eq!(out, [268.0, 65546.0]);
        // Three samples for two values, and 16-bit samples for 8 bits per value: refused.
        let mut two = [0.0; 2];
        let e = png(&p(16), &grey16, &mut two, at).expect_err("too many samples");
        assert!(e.to_string().contains("3×1 samples, 2 values"), "{e}");
        let e = png(&p(8), &grey16, &mut [0.0; 3], at).expect_err("wrong depth");
        assert!(
            e.to_string()
                .contains("16 bits per sample, 8 bits per value"),
            "{e}"
        );
        let e = png(&p(16), b"not a png", &mut [0.0; 3], at).expect_err("not a PNG");
        assert!(e.to_string().contains("the PNG image"), "{e}");
        // The image data's zlib stream one Adler-32 byte short (the IDAT chunk's CRC made
        // right again): refused, not read.
        let cut = without_last_idat_byte(&grey16);
        let e = png(&p(12), &cut, &mut [0.0; 3], at).expect_err("a cut Adler-32");
        assert!(e.to_string().contains("the PNG image"), "{e}");
    }

    #[test]
    fn jpeg_fields_decode_here_or_through_hayro_to_openjpegs_samples() {
        let at = At {
            message: 0,
            offset: 0,
        };
        let p = Simple {
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
            bits_per_value: 16,
        };
        // "default" is decoded by our own decoder, "precincts" (several precincts per
        // resolution) is refused there and goes to hayro-jpeg2000: the same samples.
        for name in ["default", "precincts"] {
            let (data, samples) = crate::jpeg2000::openjpeg_case(name, false);
            let expected: Vec<f64> = samples.into_iter().map(f64::from).collect();
            let ours = crate::jpeg2000::decode(&data, expected.len());
            assert_eq!(ours.is_ok(), name == "default", "{name}: {ours:?}");
            let mut out = vec![0.0; expected.len()];
            jpeg(&p, &data, &mut out, at).expect("decodes");
            assert_eq!(out, expected, "{name}");
        }
        let (data, _) = crate::jpeg2000::openjpeg_case("default", false);
        let e = jpeg(&p, &data, &mut [0.0; 5], at).expect_err("too few values");
        assert!(e.to_string().contains("61×47 samples, 5 values"), "{e}");
        let e = jpeg(&p, &data[..40], &mut vec![0.0; 61 * 47], at).expect_err("cut");
        assert!(e.to_string().contains("the JPEG 2000 codestream"), "{e}");
        // Cut just after its first SOD, before any packet: damaged, an error (hayro made a
        // constant field of it).
        let sod = data
            .windows(2)
            .position(|w| w == [0xFF, 0x93])
            .expect("an SOD");
        let e = jpeg(&p, &data[..sod + 2], &mut vec![0.0; 61 * 47], at).expect_err("no packets");
        assert!(e.to_string().contains("the JPEG 2000 codestream"), "{e}");
        // Its one tile-part said to run to the end (Psot 0) and the data cut at two thirds,
        // inside the packets: damaged, an error (packets past the cut read as empty).
        let mut cut = data.clone();
        let sot = cut
            .windows(2)
            .position(|w| w == [0xFF, 0x90])
            .expect("an SOT");
        cut[sot + 6..sot + 10].copy_from_slice(&0u32.to_be_bytes());
        cut.truncate(sot + (cut.len() - sot) * 2 / 3);
        let e = jpeg(&p, &cut, &mut vec![0.0; 61 * 47], at).expect_err("cut in its packets");
        assert!(e.to_string().contains("the JPEG 2000 codestream"), "{e}");
        // A codestream we leave to hayro whose SIZ claims a 2048 × 2048 image in 1 × 1 tiles:
        // refused before hayro sees it (it allocated per tile until the process aborted).
        let (mut data, _) = crate::jpeg2000::openjpeg_case("precincts", false);
        for (at, v) in [
            (8, 2048u32),
            (12, 2048),
            (16, 0),
            (20, 0),
            (24, 1),
            (28, 1),
            (32, 0),
            (36, 0),
        ] {
            data[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        let e = jpeg(&p, &data, &mut vec![0.0; 2048 * 2048], at).expect_err("tiles");
        assert!(e.to_string().contains("tiles"), "{e}");
    }

    #[test]
    fn second_order_differencing_skips_missing_values() {
        let m = i64::MAX;
        // Values 10, 12, 15, 19: second differences 1, 1 with bias 0.
        let mut v = [0, m, 0, 1, 1];
        undifference(&mut v, 2, 0, [10, 12], m);
        assert_eq!(v, [10, m, 12, 15, 19]);
    }
}
