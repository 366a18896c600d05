//! The sections a field's packing is written in: 5 (data representation) and 7 (data).

use super::simple::pack;
use crate::error::{Error, Result};
use crate::field::Simple;

/// A section: its length (4 octets), its number, then `body`.
pub(super) fn section(number: u8, body: &[u8]) -> Vec<u8> {
    let mut s = Vec::with_capacity(5 + body.len());
    s.extend_from_slice(&((5 + body.len()) as u32).to_be_bytes());
    s.push(number);
    s.extend_from_slice(body);
    s
}

/// `v` in `n` octets (1 to 8) in GRIB's sign-and-magnitude form; `None` when its magnitude
/// needs the sign's bit.
pub(super) fn sign_magnitude(v: i64, n: usize) -> Option<Vec<u8>> {
    let mut b = v.unsigned_abs().to_be_bytes().get(8 - n..)?.to_vec();
    let fits = v.unsigned_abs() >> (8 * n - 1) == 0;
    if !fits {
        return None;
    }
    if v < 0 {
        b[0] |= 0x80;
    }
    Some(b)
}

/// A signed integer of 16 bits in GRIB's sign-and-magnitude form.
pub(super) fn signed16(v: i32) -> Result<[u8; 2]> {
    sign_magnitude(i64::from(v), 2)
        .map(|b| [b[0], b[1]])
        .ok_or_else(|| Error::Write {
            what: format!("scale factor {v} does not fit GRIB's 16 bits"),
        })
}

/// The number of packed values, `n`, as section 5 states it (4 octets).
fn count(n: usize) -> Result<[u8; 4]> {
    u32::try_from(n)
        .map(u32::to_be_bytes)
        .map_err(|_| Error::Write {
            what: format!("{n} values do not fit one GRIB 2 field"),
        })
}

/// The octets templates 5.0, 5.42 and their kin open with: the count of packed values `n`,
/// the template number, then `R`, `E`, `D`, the bits per value and the type of the original
/// values.
pub(super) fn packing_body(
    n: usize,
    template: u16,
    p: &Simple,
    original_type: u8,
) -> Result<Vec<u8>> {
    let mut body = Vec::with_capacity(20);
    body.extend_from_slice(&count(n)?);
    body.extend_from_slice(&template.to_be_bytes());
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the reference is an IEEE single already"
    )]
    body.extend_from_slice(&(p.reference_value as f32).to_be_bytes());
    body.extend_from_slice(&signed16(p.binary_scale_factor)?);
    body.extend_from_slice(&signed16(p.decimal_scale_factor)?);
    body.push(u8::try_from(p.bits_per_value).unwrap_or(u8::MAX));
    body.push(original_type);
    Ok(body)
}

/// Template 5.0 (`grid_simple`) and its data.
pub(super) fn simple(values: &[f64], p: &Simple, original_type: u8) -> Result<(Vec<u8>, Vec<u8>)> {
    let body = packing_body(values.len(), 0, p, original_type)?;
    Ok((section(5, &body), section(7, &pack(values, p)?)))
}

/// The AEC coder's options a CCSDS field records (`ccsdsFlags`, `ccsdsBlockSize`,
/// `ccsdsRsi`); by default ecCodes' template values.
#[derive(Clone, Copy, Debug)]
pub(super) struct Coder {
    pub(super) flags: u32,
    pub(super) block_size: u32,
    pub(super) rsi: u32,
}

impl Coder {
    /// A CCSDS field's own options; ecCodes' defaults for any other packing.
    pub(super) fn of(packing: &crate::field::Packing) -> Coder {
        match packing {
            crate::field::Packing::Ccsds {
                flags,
                block_size,
                rsi,
                ..
            } => Coder {
                flags: *flags,
                block_size: *block_size,
                rsi: *rsi,
            },
            _ => Coder::default(),
        }
    }
}

impl Default for Coder {
    fn default() -> Self {
        Coder {
            flags: 14,
            block_size: 32,
            rsi: 128,
        }
    }
}

/// Template 5.42 (`grid_ccsds`) and its data: the integers in big-endian containers of 1, 2
/// or 4 bytes through the AEC coder, as ecCodes hands them to libaec.
pub(super) fn ccsds(
    values: &[f64],
    p: &Simple,
    original_type: u8,
    coder: Coder,
) -> Result<(Vec<u8>, Vec<u8>)> {
    use tensor_pipeline::szip;
    let bits = p.bits_per_value;
    if bits > 32 {
        return Err(Error::Write {
            what: format!("CCSDS packing of {bits} bits per value (at most 32)"),
        });
    }
    let mut body = packing_body(values.len(), 42, p, original_type)?;
    body.push(u8::try_from(coder.flags).unwrap_or(u8::MAX));
    body.push(u8::try_from(coder.block_size).unwrap_or(u8::MAX));
    body.extend_from_slice(&u16::try_from(coder.rsi).unwrap_or(u16::MAX).to_be_bytes());
    if bits == 0 {
        return Ok((section(5, &body), section(7, &[])));
    }
    let params = szip::Params {
        bits_per_sample: bits,
        block_size: coder.block_size,
        rsi: coder.rsi,
        flags: (coder.flags & !szip::THREE_BYTE) | szip::MSB,
    };
    let width = params.sample_bytes();
    let samples = super::simple::containers(values, p, width)?;
    let (stream, _) = szip::encode(&params, &samples).map_err(|e| Error::Write {
        what: format!("the AEC coder refused the field: {e}"),
    })?;
    Ok((section(5, &body), section(7, &stream)))
}

/// Template 5.4's octets: the count of values `n`, the template number, the precision (32 or
/// 64 bits).
pub(super) fn ieee_body(n: usize, bits: u32) -> Result<Vec<u8>> {
    let mut body = Vec::with_capacity(7);
    body.extend_from_slice(&count(n)?);
    body.extend_from_slice(&4u16.to_be_bytes());
    body.push(if bits == 32 { 1 } else { 2 });
    Ok(body)
}

/// Template 5.4 (`grid_ieee`) and its data: big-endian floats of `bits` (32 or 64) bits.
pub(super) fn ieee(values: &[f64], bits: u32) -> Result<(Vec<u8>, Vec<u8>)> {
    let body = ieee_body(values.len(), bits)?;
    let mut data = Vec::with_capacity(values.len() * (bits as usize / 8));
    for &v in values {
        if bits == 32 {
            #[allow(
                clippy::cast_possible_truncation,
                reason = "32-bit IEEE packing rounds to singles, as ecCodes does"
            )]
            data.extend_from_slice(&(v as f32).to_be_bytes());
        } else {
            data.extend_from_slice(&v.to_be_bytes());
        }
    }
    Ok((section(5, &body), section(7, &data)))
}

/// The shape a PNG-packed field's image takes: `Ni` × `Nj` (swapped when points run along
/// meridians), or one row of every value on a grid of uneven rows or with missing points.
#[derive(Clone, Copy, Debug)]
pub(super) struct Image {
    pub(super) width: u32,
    pub(super) height: u32,
}

impl Image {
    /// The image of `present` values of a field on `grid` of `points` points, as ecCodes
    /// lays it out.
    pub(super) fn of(grid: &crate::field::Grid, points: u64, present: usize) -> Image {
        let row = Image {
            width: u32::try_from(present).unwrap_or(u32::MAX),
            height: 1,
        };
        match (grid.ni, grid.nj) {
            (Some(ni), Some(nj))
                if present as u64 == points && ni.checked_mul(nj) == Some(points) =>
            {
                let (w, h) = if grid.j_points_are_consecutive() {
                    (nj, ni)
                } else {
                    (ni, nj)
                };
                match (u32::try_from(w), u32::try_from(h)) {
                    (Ok(width), Ok(height)) => Image { width, height },
                    _ => row,
                }
            }
            _ => row,
        }
    }
}

/// Template 5.41 (`grid_png`) and its data: the integers, in whole bytes, as the samples of a
/// PNG image — grey of 8 or 16 bits, RGB for 24, RGBA for 32 — as ecCodes writes them (the
/// compressed bytes are the png crate's own; the samples are ecCodes'). A constant field has
/// no image.
pub(super) fn png(
    values: &[f64],
    p: &Simple,
    original_type: u8,
    image: Image,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let body = packing_body(values.len(), 41, p, original_type)?;
    if p.bits_per_value == 0 {
        return Ok((section(5, &body), section(7, &[])));
    }
    let width = p.bits_per_value.div_ceil(8) as usize;
    let (colour, depth) = match width {
        1 => (png::ColorType::Grayscale, png::BitDepth::Eight),
        2 => (png::ColorType::Grayscale, png::BitDepth::Sixteen),
        3 => (png::ColorType::Rgb, png::BitDepth::Eight),
        4 => (png::ColorType::Rgba, png::BitDepth::Eight),
        _ => {
            return Err(Error::Write {
                what: format!(
                    "PNG packing of {} bits per value (8, 16, 24 or 32)",
                    p.bits_per_value
                ),
            });
        }
    };
    let whole = Simple {
        bits_per_value: 8 * width as u32,
        ..*p
    };
    let samples = super::simple::containers(values, &whole, width)?;
    let mut out = Vec::new();
    let bad = |e: png::EncodingError| Error::Write {
        what: format!("the PNG encoder refused the field: {e}"),
    };
    let mut encoder = png::Encoder::new(&mut out, image.width, image.height);
    encoder.set_color(colour);
    encoder.set_depth(depth);
    let mut writer = encoder.write_header().map_err(bad)?;
    writer.write_image_data(&samples).map_err(bad)?;
    writer.finish().map_err(bad)?;
    Ok((section(5, &body), section(7, &out)))
}

#[cfg(test)]
mod tests {
    use super::sign_magnitude;

    #[test]
    fn signs_take_the_top_bit_and_magnitudes_the_rest() {
        assert_eq!(sign_magnitude(-3, 2).unwrap(), [0x80, 3]);
        assert_eq!(sign_magnitude(0x7fff, 2).unwrap(), [0x7f, 0xff]);
        assert!(sign_magnitude(0x8000, 2).is_none());
        assert!(sign_magnitude(-0x8000, 2).is_none());
        assert_eq!(
            sign_magnitude(-90_000_000, 4).unwrap(),
            [0x85, 0x5d, 0x4a, 0x80]
        );
        assert!(sign_magnitude(i64::MIN, 8).is_none());
    }
}
