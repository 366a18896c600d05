//! One field written as a GRIB 2 message from its sections 1 to 5 (as a field read from a
//! GRIB 2 file gives them, [`Field::sections`](crate::Field::sections)) and its values: the
//! way back from a format that kept the sections beside the values.

use super::complex;
use super::repack::{encode, original_type, secondary_substitute};
use super::repacking::Repacking;
use super::sections::{self, section};
use crate::bits::be;
use crate::context::At;
use crate::error::{Error, Result};
use crate::field::{Packing, Simple};
use crate::file::Grib;
use tensor_core::Limits;

/// One field written: the message, what of the field's packing could not be kept, and the
/// keys the message gives, as read back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Written {
    /// The GRIB 2 message, sections 0 to 8.
    pub message: Vec<u8>,
    /// What was written otherwise than section 5 said, and why; `None` when nothing was.
    pub note: Option<String>,
    /// The written field's keys, as a field read from the message gives them
    /// ([`Field::attributes`](crate::Field::attributes)).
    pub attributes: Vec<(String, tensor_core::cbor::Value)>,
}

/// The GRIB 2 message of one field: section 0 for `discipline`, then `sections` — 1, the
/// local section 2 where there is one, 3, 4 and 5 — then a bitmap where `values` (one per
/// grid point, in the grid's order) has NaN, and the values present packed.
///
/// With `how` `None`, they are packed as section 5 says: simple and CCSDS packing with its
/// reference value, scale factors and width when those give every value back exactly (they
/// do for values read from such a field: section 5 and the data come out byte for byte as
/// they were), otherwise with the parameters ecCodes chooses at the same width; IEEE at the
/// same precision; complex packing with its scale factors, the groups split as ecCodes
/// splits them; PNG as an image of the same samples. Packings without an encoder here
/// (second-order, JPEG 2000) are written as simple packing with the same parameters, which
/// [`Written::note`] says.
/// With `how`, they are packed as it says. Sections 1 to 4 are kept byte for byte; the
/// message is read back before it is returned, so sections that do not describe `values`
/// are an error, never a message ecCodes would refuse.
pub fn field(
    discipline: u8,
    sections: &[u8],
    values: &[f64],
    how: Option<Repacking>,
    limits: &Limits,
) -> Result<Written> {
    let parts = split(sections)?;
    let s3 = parts[parts.len() - 3];
    let s5 = parts[parts.len() - 1];
    let at = At {
        message: 0,
        offset: 0,
    };
    let points = be(at.slice(s3, 6, 4, "section 3")?);
    if values.len() as u64 != points {
        return Err(Error::Write {
            what: format!(
                "{} values for a grid of {points} points (section 3)",
                values.len()
            ),
        });
    }
    let (packing, _) = crate::edition2::representation(s5, at)?;
    let (grid, _) = crate::edition2::grid(s3, at)?;
    let missing = values.iter().any(|v| v.is_nan());
    let present: std::borrow::Cow<'_, [f64]> = if missing {
        values.iter().copied().filter(|v| !v.is_nan()).collect()
    } else {
        values.into()
    };
    let bitmap = bitmap(values, missing);
    let image = sections::Image::of(&grid, points, present.len());
    let assemble = |(s5, s7): (Vec<u8>, Vec<u8>)| -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + sections.len() + bitmap.len() + s7.len() + 4);
        // Octets 5 and 6 are reserved: all ones, as ecCodes writes them.
        out.extend_from_slice(b"GRIB\xff\xff");
        out.push(discipline);
        out.push(2);
        out.extend_from_slice(&[0; 8]);
        for s in &parts[..parts.len() - 1] {
            out.extend_from_slice(s);
        }
        out.extend_from_slice(&s5);
        out.extend_from_slice(&bitmap);
        out.extend_from_slice(&s7);
        out.extend_from_slice(b"7777");
        let total = out.len() as u64;
        out[8..16].copy_from_slice(&total.to_be_bytes());
        out
    };
    if present.is_empty() {
        // Every point missing: nothing to pack, in no bits.
        let none = Simple {
            reference_value: 0.0,
            binary_scale_factor: 0,
            decimal_scale_factor: 0,
            bits_per_value: 0,
        };
        let message = assemble(sections::simple(&[], &none, 0)?);
        let (_, attributes) = read_back(&message, values, limits)?;
        return Ok(Written {
            message,
            note: None,
            attributes,
        });
    }
    if let Some(how) = how {
        let message = assemble(encode(&present, &packing, how, s5, image)?);
        return written(message, values.len(), None);
    }
    let ot = original_type(&packing, s5);
    let (kept, again, note) = match &packing {
        Packing::Ieee { bits } => {
            let message = assemble(sections::ieee(&present, *bits)?);
            return written(message, values.len(), None);
        }
        Packing::Simple(p) => (
            sections::simple(&present, p, ot),
            Repacking::Simple { bits: None },
            None,
        ),
        Packing::Ccsds { simple, .. } => (
            sections::ccsds(&present, simple, ot, sections::Coder::of(&packing)),
            Repacking::Ccsds { bits: None },
            None,
        ),
        Packing::Complex(c) => (
            complex::kept_scaling(&present, &c.simple).and_then(|scaling| {
                complex::pack(
                    &present,
                    &scaling,
                    c.order,
                    secondary_substitute(&packing, s5),
                )
            }),
            Repacking::Complex {
                bits: None,
                order: c.order,
            },
            None,
        ),
        Packing::Png(p) => (
            sections::png(&present, p, ot, image),
            Repacking::Png { bits: None },
            None,
        ),
        other => {
            let mut p = other.simple().copied().ok_or_else(|| Error::Write {
                what: format!("{} has no parameters to keep", other.name()),
            })?;
            // Second-order packing's width is its first-order values'; a value may need more.
            let widest = super::simple::codes(&present, &p).max().unwrap_or(0);
            p.bits_per_value = p.bits_per_value.max(64 - widest.leading_zeros());
            let note = format!(
                "{} is written as grid_simple with the same reference value and scale \
                 factors (tensorkit has no {} encoder)",
                other.name(),
                other.name()
            );
            (
                sections::simple(&present, &p, ot),
                Repacking::Simple { bits: None },
                Some(note),
            )
        }
    };
    // The parameters as they were, when they give every value back exactly.
    if let Ok(s57) = kept {
        let message = assemble(s57);
        if let (true, attributes) = read_back(&message, values, limits)? {
            return Ok(Written {
                message,
                note,
                attributes,
            });
        }
    }
    let message = assemble(encode(&present, &packing, again, s5, image)?);
    written(message, values.len(), note)
}

/// Sections 1 to 5 of `sections`, each with its header, checked to be those and in order.
fn split(sections: &[u8]) -> Result<Vec<&[u8]>> {
    let mut parts = Vec::new();
    let mut rest = sections;
    while !rest.is_empty() {
        let bad = |what: String| Error::Write {
            what: format!("the GRIB sections kept with the field: {what}"),
        };
        if rest.len() < 5 {
            return Err(bad(format!("{} bytes left over", rest.len())));
        }
        let len = usize::try_from(be(&rest[..4])).unwrap_or(usize::MAX);
        if len < 5 || len > rest.len() {
            return Err(bad(format!(
                "section {} claims {len} bytes; {} remain",
                rest[4],
                rest.len()
            )));
        }
        parts.push(&rest[..len]);
        rest = &rest[len..];
    }
    let numbers: Vec<u8> = parts.iter().map(|p| p[4]).collect();
    if numbers != [1, 3, 4, 5] && numbers != [1, 2, 3, 4, 5] {
        return Err(Error::Write {
            what: format!(
                "the GRIB sections kept with the field are numbered {numbers:?}, not 1 to 5"
            ),
        });
    }
    Ok(parts)
}

/// Section 6: a bitmap marking the points `values` has (not NaN) when some are `missing`,
/// otherwise "no bitmap" (indicator 255).
fn bitmap(values: &[f64], missing: bool) -> Vec<u8> {
    if !missing {
        return section(6, &[255]);
    }
    let mut body = vec![0u8; 1 + values.len().div_ceil(8)];
    for (i, v) in values.iter().enumerate() {
        if !v.is_nan() {
            body[1 + i / 8] |= 0x80 >> (i % 8);
        }
    }
    section(6, &body)
}

/// The headers of `message` read as ecCodes would: one field of `points` points, its
/// sections and bitmap consistent.
fn read_one(message: &[u8], points: usize) -> Result<Grib<'_>> {
    let grib = Grib::open(message)?;
    if grib.fields().len() != 1 || grib.fields()[0].points != points as u64 {
        return Err(Error::Write {
            what: "the message written does not read back as the one field given".into(),
        });
    }
    Ok(grib)
}

/// `message` as written, once its headers read back (the packing's bytes are the encoders'
/// own, tested against ecCodes).
fn written(message: Vec<u8>, points: usize, note: Option<String>) -> Result<Written> {
    let attributes = read_one(&message, points)?.fields()[0].attributes();
    Ok(Written {
        message,
        note,
        attributes,
    })
}

/// Reads `message` back as ecCodes would: it must be one field of `values.len()` points with
/// its missing points where `values` has NaN. Whether it gives every value back bit for bit,
/// and the field's keys.
fn read_back(
    message: &[u8],
    values: &[f64],
    limits: &Limits,
) -> Result<(bool, Vec<(String, tensor_core::cbor::Value)>)> {
    let grib = read_one(message, values.len())?;
    let back = grib.values(0, limits)?;
    let mut same = true;
    for (a, b) in back.iter().zip(values) {
        if a.is_nan() != b.is_nan() {
            return Err(Error::Write {
                what: "the message written does not mark the missing points given".into(),
            });
        }
        same &= a.to_bits() == b.to_bits() || a.is_nan();
    }
    Ok((same, grib.fields()[0].attributes()))
}
