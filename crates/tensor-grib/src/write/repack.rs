//! Packing a file's fields again ([`repack`]), and the sections 5 and 7 of one field's values
//! packed as asked ([`encode`]).

use super::complex;
use super::repacking::Repacking;
use super::sections;
use super::simple::{Previous, ccsds_parameters, parameters, png_parameters};
use crate::bits::be;
use crate::error::{Error, Result};
use crate::field::Packing;
use crate::file::Grib;
use tensor_core::Limits;

/// Every GRIB 2 message of `file` with its fields packed again by `how`; sections 0 to 4 and
/// 6 (the bitmap) kept as they are, the length in section 0 set anew. GRIB 1 messages are
/// refused, naming the message.
pub fn repack(file: &[u8], how: Repacking, limits: &Limits) -> Result<Vec<u8>> {
    repack_open(&Grib::open(file)?, how, limits)
}

/// [`repack`] of a file already open.
pub fn repack_open(grib: &Grib<'_>, how: Repacking, limits: &Limits) -> Result<Vec<u8>> {
    if let Repacking::Ieee { bits } = how
        && bits != 32
        && bits != 64
    {
        return Err(Error::Write {
            what: format!("IEEE packing of {bits} bits (32 or 64)"),
        });
    }
    let file = grib.bytes();
    let fields = grib.fields();
    let mut out = Vec::with_capacity(file.len());
    let mut i = 0;
    while i < fields.len() {
        let message = fields[i].message;
        let start = usize::try_from(fields[i].offset).unwrap_or(usize::MAX);
        let len = usize::try_from(fields[i].length).unwrap_or(usize::MAX);
        if fields[i].edition != 2 {
            return Err(Error::Write {
                what: format!("message #{message} is GRIB edition 1; only edition 2 is repacked"),
            });
        }
        let mut present_values = Vec::new();
        let mut j = i;
        while j < fields.len() && fields[j].message == message {
            let values = grib.values(j, limits)?;
            let f = &fields[j];
            let present: Vec<f64> = match f.present(file) {
                Some(mask) => values
                    .iter()
                    .zip(mask)
                    .filter_map(|(&v, keep)| keep.then_some(v))
                    .collect(),
                None => values,
            };
            present_values.push(present);
            j += 1;
        }
        rebuild(
            &file[start..start + len],
            &fields[i..j],
            &present_values,
            how,
            &mut out,
        )?;
        i = j;
    }
    Ok(out)
}

/// Sections 5 and 7 for one field's present values, packed as `how` says; `packing` is the
/// field's packing as it was and `old` its section 5 (its "type of original field values"
/// and a CCSDS field's coder options are kept); `image` the shape PNG packing gives them.
pub(super) fn encode(
    values: &[f64],
    packing: &Packing,
    how: Repacking,
    old: &[u8],
    image: sections::Image,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let (own, previous) = match packing.simple() {
        Some(s) => (
            s.bits_per_value,
            Previous {
                binary_scale_factor: s.binary_scale_factor,
                decimal_scale_factor: s.decimal_scale_factor,
            },
        ),
        None => (32, Previous::default()),
    };
    let original_type = original_type(packing, old);
    match how {
        Repacking::Ieee { bits } => sections::ieee(values, bits),
        Repacking::Simple { bits } => {
            let p = parameters(values, bits.unwrap_or(own), previous)?;
            sections::simple(values, &p, original_type)
        }
        Repacking::Ccsds { bits } => {
            let p = ccsds_parameters(values, bits.unwrap_or(own), previous)?;
            sections::ccsds(values, &p, original_type, sections::Coder::of(packing))
        }
        Repacking::Complex { bits, order } => {
            let s = complex::scaling(values, bits.unwrap_or(own))?;
            complex::pack(values, &s, order, secondary_substitute(packing, old))
        }
        Repacking::Png { bits } => {
            let bits = bits.unwrap_or_else(|| own.div_ceil(8).clamp(1, 4) * 8);
            let p = png_parameters(values, bits, previous)?;
            sections::png(values, &p, original_type, image)
        }
    }
}

/// The secondary missing value substitute a complex field's section 5 `old` keeps (ecCodes
/// leaves it as it is); 0 for a field packed otherwise, as ecCodes' template starts it.
pub(super) fn secondary_substitute(packing: &Packing, old: &[u8]) -> [u8; 4] {
    match (packing, old.get(27..31)) {
        (Packing::Complex(_), Some(b)) => [b[0], b[1], b[2], b[3]],
        _ => [0; 4],
    }
}

/// Octet 21 of a section 5 `old` of every template but IEEE's (5.4), which has none: whether
/// the original values were floats (0) or integers (1).
pub(super) fn original_type(packing: &Packing, old: &[u8]) -> u8 {
    match packing {
        Packing::Ieee { .. } => 0,
        _ => old.get(20).copied().unwrap_or(0),
    }
}

/// `message` again with each field's sections 5 and 7 packed anew from `values` (the present
/// values of `fields`, in order).
fn rebuild(
    message: &[u8],
    fields: &[crate::Field],
    values: &[Vec<f64>],
    how: Repacking,
    out: &mut Vec<u8>,
) -> Result<()> {
    let begin = out.len();
    out.extend_from_slice(&message[..16]);
    let end = message.len() - 4;
    let mut pos = 16;
    let mut field = 0;
    let mut data = Vec::new();
    while pos < end {
        let slen = usize::try_from(be(&message[pos..pos + 4])).unwrap_or(usize::MAX);
        let section = &message[pos..pos + slen];
        match message[pos + 4] {
            5 => {
                let f = &fields[field];
                let image = sections::Image::of(&f.grid, f.points, values[field].len());
                let (s5, s7) = encode(&values[field], &f.packing, how, section, image)?;
                out.extend_from_slice(&s5);
                data = s7;
            }
            7 => {
                out.extend_from_slice(&data);
                field += 1;
            }
            _ => out.extend_from_slice(section),
        }
        pos += slen;
    }
    out.extend_from_slice(b"7777");
    let total = (out.len() - begin) as u64;
    out[begin + 8..begin + 16].copy_from_slice(&total.to_be_bytes());
    Ok(())
}
