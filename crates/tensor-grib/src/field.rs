//! A GRIB field: what its sections say, and where its bitmap and data lie.

pub use crate::key::Key;
use crate::names;
use std::ops::Range;

/// The grid a field's points lie on.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// ecCodes' `gridType`: `regular_ll`, `rotated_ll`, `regular_gg`, or the template's name.
    pub grid_type: String,
    /// Points along a parallel (`Ni`); `None` on grids whose rows differ in length.
    pub ni: Option<u64>,
    /// Points along a meridian (`Nj`).
    pub nj: Option<u64>,
    /// `latitudeOfFirstGridPointInDegrees` and the other corners and increments, when the
    /// grid template has them.
    pub first: Option<(f64, f64)>,
    /// The last grid point (latitude, longitude) in degrees.
    pub last: Option<(f64, f64)>,
    /// `iDirectionIncrementInDegrees`, when given.
    pub di: Option<f64>,
    /// `jDirectionIncrementInDegrees`, when given.
    pub dj: Option<f64>,
    /// `N` of a Gaussian grid: parallels between a pole and the equator.
    pub gaussian_n: Option<u64>,
    /// The scanning mode flags (code table 3.4 / GRIB 1 table 8).
    pub scanning_mode: u8,
    /// The resolution and component flags (code table 3.3 / GRIB 1 table 7), on grids whose
    /// template has them.
    pub resolution_flags: Option<u8>,
    /// Points along each parallel (`pl`) of a reduced grid, north to south as stored.
    pub pl: Option<Vec<u64>>,
    /// The rest of the grid template, with ecCodes' names: the shape of the Earth, a
    /// rotated grid's pole, a projection's parameters (`LaDInDegrees`, `DxInMetres`...).
    pub parameters: Vec<(&'static str, Key)>,
}

impl Grid {
    /// Points along a row go from east to west (`iScansNegatively`).
    #[must_use]
    pub fn i_scans_negatively(&self) -> bool {
        self.scanning_mode & 0x80 != 0
    }

    /// Rows go from south to north (`jScansPositively`).
    #[must_use]
    pub fn j_scans_positively(&self) -> bool {
        self.scanning_mode & 0x40 != 0
    }

    /// Points are consecutive along a meridian (`jPointsAreConsecutive`): columns, not rows.
    #[must_use]
    pub fn j_points_are_consecutive(&self) -> bool {
        self.scanning_mode & 0x20 != 0
    }
}

/// Simple packing's parameters: `value = (X · 2^E + R) · 10^−D`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Simple {
    /// The reference value `R` as stored (already scaled by `10^D`), exactly.
    pub reference_value: f64,
    /// The binary scale factor `E`.
    pub binary_scale_factor: i32,
    /// The decimal scale factor `D`.
    pub decimal_scale_factor: i32,
    /// Bits per packed value.
    pub bits_per_value: u32,
}

/// Complex packing's group description (GRIB 2 templates 5.2 and 5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Complex {
    /// The reference, scales and the width of the group references.
    pub simple: Simple,
    /// Missing values inside the data: 0 none, 1 primary, 2 primary and secondary.
    pub missing_management: u8,
    /// Number of groups.
    pub groups: u64,
    /// Reference and bits of the group widths.
    pub width_reference: u32,
    /// Bits per group width.
    pub width_bits: u32,
    /// Reference, increment and bits of the group lengths, and the last group's true length.
    pub length_reference: u64,
    /// The group length increment.
    pub length_increment: u64,
    /// The true length of the last group.
    pub last_length: u64,
    /// Bits per scaled group length.
    pub length_bits: u32,
    /// Spatial differencing: order 0 (none), 1 or 2, and octets per extra descriptor.
    pub order: u8,
    /// Octets of each extra descriptor (spatial differencing's first values and minimum).
    pub descriptor_octets: u8,
}

/// Second-order packing, "general extended" (GRIB 2 template 5.50002, GRIB 1 second-order
/// packing with the general extended flag): groups of integers, each with its own first-order
/// value and width, then up to third-order spatial differencing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SecondOrder {
    /// The reference and scales (`bits_per_value` is 0 in GRIB 1, which does not store it).
    pub simple: Simple,
    /// Number of groups.
    pub groups: u64,
    /// Bits per first-order value, per group width and per group length.
    pub first_order_bits: u32,
    /// Bits per group width.
    pub width_bits: u32,
    /// Bits per group length.
    pub length_bits: u32,
    /// Order of spatial differencing (0 to 3).
    pub order: u8,
    /// The first `order` values, then the bias (sign and magnitude).
    pub spd: [i64; 4],
    /// Rows alternate direction (boustrophedonic ordering).
    pub boustrophedonic: bool,
}

/// How a field's values are packed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Packing {
    /// `grid_simple` (GRIB 2 template 5.0, GRIB 1 simple grid-point packing).
    Simple(Simple),
    /// `grid_ccsds` (template 5.42): simple packing's integers, AEC-compressed.
    Ccsds {
        /// The packing's parameters.
        simple: Simple,
        /// libaec flags as stored (`ccsdsFlags`).
        flags: u32,
        /// Samples per block (`ccsdsBlockSize`).
        block_size: u32,
        /// Blocks per reference sample interval (`ccsdsRsi`).
        rsi: u32,
    },
    /// `grid_complex` and `grid_complex_spatial_differencing` (templates 5.2, 5.3).
    Complex(Complex),
    /// `grid_second_order` (GRIB 2 template 5.50002, GRIB 1 general extended second-order).
    SecondOrder(SecondOrder),
    /// `grid_jpeg` (template 5.40): simple packing's integers as a JPEG 2000 codestream.
    Jpeg(Simple),
    /// `grid_png` (template 5.41): simple packing's integers as the samples of a PNG image.
    Png(Simple),
    /// `grid_ieee` (template 5.4): IEEE floats of 32 or 64 bits.
    Ieee {
        /// 32 or 64.
        bits: u32,
    },
}

impl Packing {
    /// ecCodes' `packingType`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Packing::Simple(_) => "grid_simple",
            Packing::Ccsds { .. } => "grid_ccsds",
            Packing::Complex(c) if c.order == 0 => "grid_complex",
            Packing::Complex(_) => "grid_complex_spatial_differencing",
            Packing::Ieee { .. } => "grid_ieee",
            Packing::Jpeg(_) => "grid_jpeg",
            Packing::Png(_) => "grid_png",
            Packing::SecondOrder(_) => "grid_second_order",
        }
    }

    /// The simple-packing parameters, for the packings that have them.
    #[must_use]
    pub fn simple(&self) -> Option<&Simple> {
        match self {
            Packing::Simple(s)
            | Packing::Jpeg(s)
            | Packing::Png(s)
            | Packing::Ccsds { simple: s, .. } => Some(s),
            Packing::Complex(c) => Some(&c.simple),
            Packing::SecondOrder(s) => Some(&s.simple),
            Packing::Ieee { .. } => None,
        }
    }
}

/// One field of a GRIB file: one tensor.
#[derive(Clone, Debug)]
pub struct Field {
    /// The message's index in the file.
    pub message: usize,
    /// The field's index inside its message (GRIB 2 messages may repeat sections 2–7).
    pub submessage: usize,
    /// The message's byte offset in the file.
    pub offset: u64,
    /// The message's length in bytes.
    pub length: u64,
    /// GRIB edition: 1 or 2.
    pub edition: u8,
    /// Grid points (`numberOfDataPoints`), missing ones included.
    pub points: u64,
    /// The grid.
    pub grid: Grid,
    /// How the values are packed.
    pub packing: Packing,
    /// Packed values (`numberOfValues`): the points the bitmap marks present.
    pub packed_values: u64,
    /// The identification, as ecCodes names it.
    pub ident: names::Ident,
    /// File bytes of the bitmap (one bit per point, 1 = present); `None` without a bitmap.
    pub(crate) bitmap: Option<Range<usize>>,
    /// File bytes of the packed data.
    pub(crate) data: Range<usize>,
    /// GRIB 2: the message's discipline and the file bytes of the sections 1 to 5 in effect
    /// for the field (2 where the message has one), in order.
    pub(crate) sections: Option<(u8, Vec<Range<usize>>)>,
}

impl Field {
    /// The tensor's shape: `[Nj, Ni]` as the points are stored (`[Ni, Nj]` when points are
    /// consecutive along meridians), or `[points]` on grids without a fixed row length.
    #[must_use]
    pub fn shape(&self) -> Vec<u64> {
        match (self.grid.ni, self.grid.nj) {
            (Some(ni), Some(nj)) if ni.checked_mul(nj) == Some(self.points) => {
                if self.grid.j_points_are_consecutive() {
                    vec![ni, nj]
                } else {
                    vec![nj, ni]
                }
            }
            _ => vec![self.points],
        }
    }

    /// Whether some points are missing (the field has a bitmap).
    #[must_use]
    pub fn has_bitmap(&self) -> bool {
        self.bitmap.is_some()
    }

    /// The bytes of the file the packed data occupies.
    #[must_use]
    pub fn data_range(&self) -> Range<usize> {
        self.data.clone()
    }

    /// A GRIB 2 field's discipline (section 0) and its sections 1 to 5 as the message holds
    /// them, one after the other (section 2 only where the message has one): everything
    /// but its bitmap and data, from which [`crate::write::field`] writes the field again as
    /// it was. `None` for GRIB 1.
    #[must_use]
    pub fn sections(&self, file: &[u8]) -> Option<(u8, Vec<u8>)> {
        let (discipline, ranges) = self.sections.as_ref()?;
        let mut out = Vec::with_capacity(ranges.iter().map(ExactSizeIterator::len).sum());
        for r in ranges {
            out.extend_from_slice(file.get(r.clone())?);
        }
        Some((*discipline, out))
    }

    /// The bytes of the file the bitmap occupies, when there is one.
    #[must_use]
    pub fn bitmap_range(&self) -> Option<Range<usize>> {
        self.bitmap.clone()
    }

    /// The identification keys users search by, with ecCodes' names: `shortName`,
    /// `paramId`, `typeOfLevel`, `level`, `dataDate`, `dataTime`, `stepRange`, the grid's
    /// geometry, the packing.
    #[must_use]
    pub fn keys(&self) -> Vec<(&'static str, Key)> {
        let mut k = self.ident.keys();
        let g = &self.grid;
        k.push(("gridType", Key::Text(g.grid_type.clone())));
        k.push(("numberOfDataPoints", Key::Int(self.points as i64)));
        if let Some(ni) = g.ni {
            k.push(("Ni", Key::Int(ni as i64)));
        }
        if let Some(nj) = g.nj {
            k.push(("Nj", Key::Int(nj as i64)));
        }
        if let Some((lat, lon)) = g.first {
            k.push(("latitudeOfFirstGridPointInDegrees", Key::Float(lat)));
            k.push(("longitudeOfFirstGridPointInDegrees", Key::Float(lon)));
        }
        if let Some((lat, lon)) = g.last {
            k.push(("latitudeOfLastGridPointInDegrees", Key::Float(lat)));
            k.push(("longitudeOfLastGridPointInDegrees", Key::Float(lon)));
        }
        if let Some(di) = g.di {
            k.push(("iDirectionIncrementInDegrees", Key::Float(di)));
        }
        if let Some(dj) = g.dj {
            k.push(("jDirectionIncrementInDegrees", Key::Float(dj)));
        }
        if let Some(n) = g.gaussian_n {
            k.push(("N", Key::Int(n as i64)));
        }
        k.push((
            "iScansNegatively",
            Key::Int(i64::from(g.i_scans_negatively())),
        ));
        k.push((
            "jScansPositively",
            Key::Int(i64::from(g.j_scans_positively())),
        ));
        k.push((
            "jPointsAreConsecutive",
            Key::Int(i64::from(g.j_points_are_consecutive())),
        ));
        k.extend(g.parameters.iter().cloned());
        if let Some(flags) = g.resolution_flags {
            k.push(("uvRelativeToGrid", Key::Int(i64::from(flags & 0x08 != 0))));
        }
        k.push(("packingType", self.packing.name().into()));
        if let Some(s) = self.packing.simple()
            && !(self.edition == 1 && matches!(self.packing, Packing::SecondOrder(_)))
        {
            k.push(("bitsPerValue", Key::Int(i64::from(s.bits_per_value))));
        }
        k.push((
            "numberOfMissing",
            Key::Int((self.points - self.packed_values) as i64),
        ));
        k
    }
}
