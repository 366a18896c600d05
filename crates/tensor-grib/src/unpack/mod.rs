//! Decoding packed values into float64 exactly as ecCodes computes them, missing points as
//! NaN.

// Short names follow the formula's notation: R, E (`s` = 2^E), D (`d` = 10^−D), X.
#![allow(clippy::many_single_char_names)]

use crate::bits::BitReader;
use crate::context::At;
use crate::error::{Error, Result};
use crate::field::{Field, Packing, Simple};
use crate::formula::{Formula, constant};
use rayon::prelude::*;
use tensor_pipeline::szip;

mod complex;
mod image;
mod second_order;

use complex::complex;
pub(crate) use image::jpeg2000_samples;
use image::{jpeg, png};
use second_order::second_order;

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
    let decode = |start_bit: u64, out: &mut [f64]| {
        szip::decode_each_at(&params, data, start_bit, out.len(), |first, run| {
            for (o, &x) in out[first..first + run.len()].iter_mut().zip(run) {
                *o = f.value(f64::from(x));
            }
        })
    };
    let threads = rayon::current_num_threads();
    if out.len() < PARALLEL_CCSDS_SAMPLES || threads < 2 {
        return decode(0, out).map_err(|e| at.data("grid_ccsds", e));
    }
    // A large field. A stream without padding says where a reference sample interval
    // starts only to a reader of every block before it, so: one thread decodes the first
    // `lead` intervals from the stream's start while the others find where the rest begin
    // (a scan of the blocks' lengths, about a tenth of the work of decoding them) and then
    // decode them side by side. `lead` is chosen so both sides finish together.
    let rsi_len = block_size as usize * rsi as usize;
    let intervals = out.len().div_ceil(rsi_len);
    let rest_threads = threads - 1;
    let share = if rest_threads == 1 {
        1.0 / (2.0 - SCAN_COST)
    } else {
        let r = 1.0 / rest_threads as f64;
        (SCAN_COST + r) / (1.0 + r)
    };
    let lead = ((intervals as f64 * share).ceil() as usize).clamp(1, intervals - 1);
    let total = out.len();
    let (head, tail) = out.split_at_mut(lead * rsi_len);
    let (first, rest) = rayon::join(
        || decode(0, head),
        || -> std::result::Result<(), tensor_pipeline::Error> {
            // One thread left needs only where the tail begins; more need every interval.
            let scanned = if rest_threads == 1 {
                lead * rsi_len + 1
            } else {
                total
            };
            let offsets = szip::rsi_offsets(&params, data, scanned)?;
            let per_run = if rest_threads == 1 {
                intervals - lead
            } else {
                (intervals - lead).div_ceil(rest_threads * 4).max(1)
            };
            tail.par_chunks_mut(per_run * rsi_len)
                .enumerate()
                .try_for_each(|(run, chunk)| decode(offsets[lead + run * per_run], chunk))
        },
    );
    first.and(rest).map_err(|e| at.data("grid_ccsds", e))
}

/// What finding the reference sample intervals' offsets costs, as a share of decoding them
/// (measured about 0.1 on 16-bit fields).
const SCAN_COST: f64 = 0.12;

/// Fields of at least this many values decode their CCSDS stream on every core.
const PARALLEL_CCSDS_SAMPLES: usize = 1 << 17;

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

#[cfg(test)]
mod tests {
    use super::complex::undifference;
    use super::*;

    #[test]
    fn large_ccsds_fields_decode_the_same_on_every_core() {
        // A field past the parallel threshold, with ecCodes' flags (no padding between
        // reference sample intervals), decoded in runs on a pool of 3 threads.
        let n = PARALLEL_CCSDS_SAMPLES + 12_345;
        let samples: Vec<u8> = (0..n as u32)
            .flat_map(|i| ((i * 37 + (i / 97) * 1001) as u16 & 0x0FFF).to_be_bytes())
            .collect();
        let simple = Simple {
            reference_value: 100.0,
            binary_scale_factor: -2,
            decimal_scale_factor: 0,
            bits_per_value: 12,
        };
        let params = ccsds_params(&simple, 14, 32, 128);
        let (stream, _) = szip::encode(&params, &samples).unwrap();
        let at = At {
            message: 0,
            offset: 0,
        };
        let mut parallel = vec![0.0; n];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| ccsds(&simple, 14, 32, 128, &stream, &mut parallel, at))
            .unwrap();
        let f = Formula::of(&simple);
        let mut one = vec![0.0; n];
        szip::decode_each(&params, &stream, n, |first, run| {
            for (o, &x) in one[first..first + run.len()].iter_mut().zip(run) {
                *o = f.value(f64::from(x));
            }
        })
        .unwrap();
        assert!(parallel == one);
        assert_eq!(one[5], f.value(f64::from((5 * 37) & 0x0FFF)));
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
