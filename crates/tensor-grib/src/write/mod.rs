//! Writing GRIB 2. [`repack`] packs a file's fields again — simple, CCSDS or complex packing
//! at a number of bits per value, or IEEE floats — keeping every section but the data
//! representation (5) and the data (7) byte for byte, as `grib_set -r` does; [`field`] writes
//! one field from the sections 1 to 5 kept with it and its values. The parameters and bytes
//! are ecCodes' own ([`parameters`], and the complex packing's groups).

mod complex;
mod field;
mod keys;
mod sections;
mod simple;

pub use field::{Written, field};
pub use keys::{Keys, sections_from_keys};

pub use simple::{Previous, ccsds_parameters, pack, parameters, png_parameters};

use crate::bits::be;
use crate::error::{Error, Result};
use crate::field::Packing;
use crate::file::Grib;
use tensor_core::Limits;

/// How [`repack`] packs each field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repacking {
    /// Simple packing (`grid_simple`, template 5.0) at this many bits per value, or at the
    /// field's own when `None` (a field packed as IEEE floats: 32, as ecCodes takes it).
    Simple {
        /// Bits per value, 1 to 63.
        bits: Option<u32>,
    },
    /// CCSDS (`grid_ccsds`, template 5.42): simple packing's integers through the AEC coder,
    /// at this many bits per value (1 to 32) or the field's own; a CCSDS field keeps its
    /// coder options, any other takes ecCodes' defaults (flags 14, blocks of 32, RSI 128).
    Ccsds {
        /// Bits per value, 1 to 32.
        bits: Option<u32>,
    },
    /// Complex packing as ecCodes packs it: `order` 0 is `grid_complex` (template 5.2), 1
    /// and 2 `grid_complex_spatial_differencing` (5.3) of that order; the range scaled to
    /// this many bits (1 to 23) or the field's own (ecCodes packs at most 23 this way).
    Complex {
        /// Bits the range is scaled to, 1 to 23.
        bits: Option<u32>,
        /// Order of spatial differencing: 0, 1 or 2.
        order: u8,
    },
    /// PNG packing (`grid_png`, template 5.41) at 8, 16, 24 or 32 bits per value, or the
    /// field's own rounded up to whole bytes.
    Png {
        /// Bits per value: 8, 16, 24 or 32.
        bits: Option<u32>,
    },
    /// IEEE floats (`grid_ieee`, template 5.4) of 32 or 64 bits.
    Ieee {
        /// 32 or 64.
        bits: u32,
    },
}

impl std::str::FromStr for Repacking {
    type Err = Error;

    /// `simple`, `simple:BITS`, `ccsds`, `ccsds:BITS`, `ieee` (32 bits), `ieee32`, `ieee64`,
    /// and complex packing by wgrib2's names — `complex1` (no spatial differencing),
    /// `complex2` (first order), `complex3` (second order, as `complex`), each with `:BITS` —
    /// what `tensorkit convert in.grib2 out.grib2 --pipeline ...` takes.
    fn from_str(s: &str) -> Result<Self> {
        let (name, bits) = match s.split_once(':') {
            Some((name, bits)) => (name, Some(bits)),
            None => (s, None),
        };
        let bits = bits
            .map(|b| {
                b.parse::<u32>().map_err(|_| Error::Write {
                    what: format!("{s:?}: {b:?} is not a number of bits"),
                })
            })
            .transpose()?;
        let checked = |max: u32| match bits {
            Some(b) if !(1..=max).contains(&b) => Err(Error::Write {
                what: format!("{s:?}: {name} packs 1 to {max} bits per value"),
            }),
            _ => Ok(bits),
        };
        match (name, bits) {
            ("simple", _) => Ok(Repacking::Simple { bits: checked(63)? }),
            ("ccsds", _) => Ok(Repacking::Ccsds { bits: checked(32)? }),
            ("complex" | "complex3", _) => Ok(Repacking::Complex {
                bits: checked(23)?,
                order: 2,
            }),
            ("complex2", _) => Ok(Repacking::Complex {
                bits: checked(23)?,
                order: 1,
            }),
            ("complex1", _) => Ok(Repacking::Complex {
                bits: checked(23)?,
                order: 0,
            }),
            ("png", _) => match checked(32)? {
                Some(b) if b % 8 != 0 => Err(Error::Write {
                    what: format!("{s:?}: PNG packs 8, 16, 24 or 32 bits per value"),
                }),
                bits => Ok(Repacking::Png { bits }),
            },
            ("ieee" | "ieee32", None) => Ok(Repacking::Ieee { bits: 32 }),
            ("ieee64", None) => Ok(Repacking::Ieee { bits: 64 }),
            _ => Err(Error::Write {
                what: format!(
                    "{s:?} is not a GRIB packing: simple, simple:BITS, ccsds, ccsds:BITS, complex, complex:BITS (or complex1/2/3 by wgrib2's names), png, png:BITS, ieee, ieee64"
                ),
            }),
        }
    }
}

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
fn encode(
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
            let s = complex::scaling(values, bits.unwrap_or(own));
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
fn secondary_substitute(packing: &Packing, old: &[u8]) -> [u8; 4] {
    match (packing, old.get(27..31)) {
        (Packing::Complex(_), Some(b)) => [b[0], b[1], b[2], b[3]],
        _ => [0; 4],
    }
}

/// Octet 21 of a section 5 `old` of every template but IEEE's (5.4), which has none: whether
/// the original values were floats (0) or integers (1).
fn original_type(packing: &Packing, old: &[u8]) -> u8 {
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

#[cfg(test)]
mod tests {
    use super::Repacking;

    #[test]
    fn packings_are_named_as_the_command_takes_them() {
        let parse = |s: &str| s.parse::<Repacking>();
        assert_eq!(parse("simple").unwrap(), Repacking::Simple { bits: None });
        assert_eq!(
            parse("simple:12").unwrap(),
            Repacking::Simple { bits: Some(12) }
        );
        assert_eq!(
            parse("ccsds:32").unwrap(),
            Repacking::Ccsds { bits: Some(32) }
        );
        assert_eq!(parse("ieee").unwrap(), Repacking::Ieee { bits: 32 });
        assert_eq!(parse("ieee64").unwrap(), Repacking::Ieee { bits: 64 });
        assert_eq!(
            parse("complex").unwrap(),
            Repacking::Complex {
                bits: None,
                order: 2
            }
        );
        assert_eq!(
            parse("complex1:12").unwrap(),
            Repacking::Complex {
                bits: Some(12),
                order: 0
            }
        );
        assert_eq!(
            parse("complex2").unwrap(),
            Repacking::Complex {
                bits: None,
                order: 1
            }
        );
        for bad in [
            "ccsds:33",
            "simple:0",
            "simple:64",
            "ieee:16",
            "complex:24",
            "zfp",
            "simple:x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
