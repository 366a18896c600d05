//! [`Repacking`]: how fields are packed when written, by name as the command takes it.

use crate::error::{Error, Result};

/// How [`repack`](super::repack) and [`field`](super::field) pack each field.
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
            ("jpeg" | "jpeg2000" | "j2k" | "grid_jpeg", _) => Err(Error::Write {
                what: format!(
                    "{s:?}: JPEG 2000 packing (template 5.40) is read but not written, having no well-kept pure-Rust encoder to write it with (decision 0018); ccsds packs the same integers losslessly and ecCodes reads it"
                ),
            }),
            _ => Err(Error::Write {
                what: format!(
                    "{s:?} is not a GRIB packing: simple, simple:BITS, ccsds, ccsds:BITS, complex, complex:BITS (or complex1/2/3 by wgrib2's names), png, png:BITS, ieee, ieee64"
                ),
            }),
        }
    }
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
        for jpeg in ["jpeg", "jpeg2000", "grid_jpeg", "jpeg:16"] {
            let refused = parse(jpeg).unwrap_err().to_string();
            assert!(
                refused.contains("JPEG 2000 packing (template 5.40)"),
                "{refused}"
            );
        }
    }
}
