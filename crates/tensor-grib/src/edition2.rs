//! GRIB edition 2: sections 0 to 8, with sections 2–7 (or 3–7, or 4–7) repeated for each
//! field a message holds.

use crate::bits::{all_ones, be, signed};
use crate::context::At;
use crate::error::Result;
use crate::field::{Complex, Field, Grid, Key, Packing, Simple};
use crate::names::{self, Ident, level_key};

/// The sections a field is made of, as byte ranges of the file.
#[derive(Clone, Default)]
struct Pending {
    identification: Option<std::ops::Range<usize>>,
    local: Option<std::ops::Range<usize>>,
    grid: Option<std::ops::Range<usize>>,
    product: Option<std::ops::Range<usize>>,
    representation: Option<std::ops::Range<usize>>,
    bitmap: Bitmap,
}

/// What the last section 6 said.
#[derive(Clone, Default)]
enum Bitmap {
    /// No section 6 yet (for this field).
    #[default]
    Unseen,
    /// No bitmap: every point is present.
    None,
    /// The bitmap's bytes.
    At(std::ops::Range<usize>),
}

/// The fields of the edition 2 message `file[start..start + len]`.
pub(crate) fn fields(file: &[u8], start: usize, len: usize, at: At) -> Result<Vec<Field>> {
    let msg = &file[start..start + len];
    let discipline = msg[6];
    if &msg[len - 4..] != b"7777" {
        return Err(at.malformed("the message does not end with '7777' (section 8)"));
    }
    let mut pos = 16;
    let mut s = Pending::default();
    let mut out = Vec::new();
    while pos < len - 4 {
        let head = at.slice(msg, pos, 5, "a section header")?;
        let slen = be(&head[..4]) as usize;
        let number = head[4];
        if slen < 5 || pos + slen > len - 4 {
            return Err(at.malformed(format!(
                "section {number} at message offset {pos} claims {slen} bytes; {} remain before section 8",
                len - 4 - pos
            )));
        }
        let range = start + pos..start + pos + slen;
        match number {
            1 => s.identification = Some(range),
            2 => s.local = Some(range),
            3 => s.grid = Some(range),
            4 => s.product = Some(range),
            5 => s.representation = Some(range),
            6 => {
                let sec = &file[range.clone()];
                let indicator = *sec
                    .get(5)
                    .ok_or_else(|| at.truncated("section 6", "no bitmap indicator"))?;
                s.bitmap = match indicator {
                    0 => Bitmap::At(range.start + 6..range.end),
                    255 => Bitmap::None,
                    254 => {
                        // The bitmap defined earlier in this message.
                        let previous = out
                            .iter()
                            .rev()
                            .find_map(|f: &Field| f.bitmap.clone())
                            .ok_or_else(|| at.malformed("section 6 reuses a bitmap (indicator 254) no earlier field has"))?;
                        Bitmap::At(previous)
                    }
                    other => {
                        return Err(at.unsupported(format!(
                            "section 6 bitmap indicator {other} (a predefined bitmap)"
                        )));
                    }
                };
            }
            7 => {
                let field = build(
                    file,
                    &s,
                    discipline,
                    range.start + 5..range.end,
                    at,
                    out.len(),
                )?;
                out.push(field);
                s.bitmap = Bitmap::Unseen;
            }
            other => {
                return Err(at.malformed(format!(
                    "unknown section number {other} at message offset {pos}"
                )));
            }
        }
        pos += slen;
    }
    if out.is_empty() {
        return Err(at.malformed("the message has no data section (section 7)"));
    }
    Ok(out)
}

fn need<'a>(file: &'a [u8], r: Option<&std::ops::Range<usize>>, n: u8, at: At) -> Result<&'a [u8]> {
    r.map(|r| &file[r.clone()])
        .ok_or_else(|| at.malformed(format!("section 7 comes before any section {n}")))
}

fn build(
    file: &[u8],
    s: &Pending,
    discipline: u8,
    data: std::ops::Range<usize>,
    at: At,
    submessage: usize,
) -> Result<Field> {
    let s1 = need(file, s.identification.as_ref(), 1, at)?;
    let s3 = need(file, s.grid.as_ref(), 3, at)?;
    let s4 = need(file, s.product.as_ref(), 4, at)?;
    let s5 = need(file, s.representation.as_ref(), 5, at)?;
    let bitmap = match &s.bitmap {
        Bitmap::Unseen => return Err(at.malformed("section 7 comes before a section 6")),
        Bitmap::None => None,
        Bitmap::At(r) => Some(r.clone()),
    };

    let s1 = at.slice(s1, 0, 21, "section 1")?;
    let mut ident = Ident {
        edition: 2,
        centre: be(&s1[5..7]) as u16,
        data_date: be(&s1[12..14]) as i64 * 10000 + i64::from(s1[14]) * 100 + i64::from(s1[15]),
        data_time: i64::from(s1[16]) * 100 + i64::from(s1[17]),
        ..Ident::default()
    };
    ident.codes.push(("discipline", i64::from(discipline)));
    ident.codes.push(("subCentre", be(&s1[7..9]) as i64));
    ident.codes.push(("tablesVersion", i64::from(s1[9])));
    ident.codes.push(("localTablesVersion", i64::from(s1[10])));
    ident.codes.push(("typeOfProcessedData", i64::from(s1[20])));
    if let Some(local) = &s.local {
        local_mars(&file[local.clone()], &mut ident);
    }
    let (grid, points) = grid(s3, at)?;
    check_grid_points(&grid, points, at)?;
    // TIGGE data scale potential-vorticity surfaces differently (productionStatus 4, 5).
    product(s4, &mut ident, at, matches!(s1[19], 4 | 5))?;
    let (packing, packed_values) = representation(s5, at)?;

    if let Some(b) = &bitmap {
        let need_bytes = points.div_ceil(8);
        if (b.len() as u64) < need_bytes {
            return Err(at.truncated(
                "the bitmap (section 6)",
                format!(
                    "{points} points need {need_bytes} bytes, it has {}",
                    b.len()
                ),
            ));
        }
        let present = crate::unpack::count_present(&file[b.clone()], points);
        if present != packed_values {
            return Err(at.malformed(format!(
                "section 5 says {packed_values} values are packed, the bitmap marks {present} of {points} points present"
            )));
        }
    } else if packed_values != points {
        return Err(at.malformed(format!(
            "section 5 says {packed_values} values are packed, section 3 has {points} points and there is no bitmap"
        )));
    }
    let sections = [
        &s.identification,
        &s.local,
        &s.grid,
        &s.product,
        &s.representation,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    Ok(Field {
        message: at.message,
        submessage,
        offset: at.offset,
        length: 0,
        edition: 2,
        points,
        grid,
        packing,
        packed_values,
        ident,
        bitmap,
        data,
        sections: Some((discipline, sections)),
    })
}

/// ECMWF's local section: MARS class, type, stream, expver.
fn local_mars(s2: &[u8], ident: &mut Ident) {
    // ECMWF's MARS labelling in edition 2 (ecCodes' `grib2/mars_labeling.def`): after the
    // local section number, class, type and stream in two octets each, then the experiment
    // version's four characters (edition 1's local section gives class and type one octet).
    if ident.centre != 98 || s2.len() < 17 {
        return;
    }
    ident.local_mars = vec![
        ("class", names::mars_class(be(&s2[7..9]))),
        ("type", names::mars_type(be(&s2[9..11]))),
        ("stream", names::mars_stream(be(&s2[11..13]))),
        ("expver", String::from_utf8_lossy(&s2[13..17]).into_owned()),
    ];
}

/// `numberOfDataPoints` must be `Ni × Nj` on a grid that gives both: one that disagrees is
/// damaged (read as it stands, the field would come out as a vector of the wrong length).
fn check_grid_points(grid: &Grid, points: u64, at: At) -> Result<()> {
    if let (Some(ni), Some(nj)) = (grid.ni, grid.nj)
        && ni.checked_mul(nj) != Some(points)
    {
        return Err(at.malformed(format!(
            "section 3 gives {points} data points for a grid of {ni} × {nj}"
        )));
    }
    Ok(())
}

/// The shape of the Earth (code table 3.2, octet 15 of every template that has it), and the
/// radius a spherical Earth of shape 1 gives.
fn earth(s3: &[u8]) -> Vec<(&'static str, Key)> {
    let Some(t) = s3.get(14..20) else {
        return Vec::new();
    };
    let mut out = vec![("shapeOfTheEarth", Key::Int(i64::from(t[0])))];
    if t[0] == 1 && !all_ones(&t[1..2]) && !all_ones(&t[2..6]) {
        out.push((
            "radius",
            Key::Float(be(&t[2..6]) as f64 / 10f64.powi(i32::from(t[1]))),
        ));
    }
    out
}

/// A projection's parameters (templates 3.10 Mercator, 3.20 polar stereographic, 3.30
/// Lambert conformal), with ecCodes' names: corners and angles in degrees (stored in
/// millionths), grid lengths in metres (stored in thousandths).
fn projection(s3: &[u8], template: u64) -> Vec<(&'static str, Key)> {
    let mut out = earth(s3);
    let deg = |r: std::ops::Range<usize>| s3.get(r).and_then(|b| degrees(b, 1e6)).map(Key::Float);
    let metres = |r: std::ops::Range<usize>| {
        s3.get(r)
            .filter(|b| !all_ones(b))
            .map(|b| Key::Float(be(b) as f64 / 1e3))
    };
    let fields: Vec<(&'static str, Option<Key>)> = match template {
        10 => vec![
            ("latitudeOfFirstGridPointInDegrees", deg(38..42)),
            ("longitudeOfFirstGridPointInDegrees", deg(42..46)),
            ("LaDInDegrees", deg(47..51)),
            ("latitudeOfLastGridPointInDegrees", deg(51..55)),
            ("longitudeOfLastGridPointInDegrees", deg(55..59)),
            ("orientationOfTheGridInDegrees", deg(60..64)),
            ("DiInMetres", metres(64..68)),
            ("DjInMetres", metres(68..72)),
        ],
        20 | 30 => {
            let mut v = vec![
                ("latitudeOfFirstGridPointInDegrees", deg(38..42)),
                ("longitudeOfFirstGridPointInDegrees", deg(42..46)),
                ("LaDInDegrees", deg(47..51)),
                ("LoVInDegrees", deg(51..55)),
                ("DxInMetres", metres(55..59)),
                ("DyInMetres", metres(59..63)),
                (
                    "projectionCentreFlag",
                    s3.get(63).map(|&b| Key::Int(i64::from(b))),
                ),
            ];
            if template == 30 {
                v.extend([
                    ("Latin1InDegrees", deg(65..69)),
                    ("Latin2InDegrees", deg(69..73)),
                    ("latitudeOfSouthernPoleInDegrees", deg(73..77)),
                    ("longitudeOfSouthernPoleInDegrees", deg(77..81)),
                ]);
            }
            v
        }
        _ => Vec::new(),
    };
    out.extend(fields.into_iter().filter_map(|(k, v)| Some((k, v?))));
    out
}

/// The points per parallel of a reduced grid (`pl`), listed after the grid template (72
/// octets for templates 3.0 and 3.40, plus the rotation's 12 for 3.1 and 3.41), one per
/// row in as many octets as section 3 says; `None` when it lists none.
fn reduced_rows(
    s3: &[u8],
    head: &[u8],
    template: u64,
    rows: u64,
    at: At,
) -> Result<Option<Vec<u64>>> {
    let width = usize::from(head[10]);
    if width == 0 || head[11] != 1 {
        return Ok(None);
    }
    let start = if matches!(template, 1 | 41) { 84 } else { 72 };
    let rows = usize::try_from(rows).map_err(|_| at.malformed("a row count past memory"))?;
    let len = rows
        .checked_mul(width)
        .ok_or_else(|| at.malformed("a list of points per row past memory"))?;
    let list = at.slice(s3, start, len, "the points per row (section 3)")?;
    Ok(Some(list.chunks_exact(width).map(be).collect()))
}

/// Micro-degrees (sign and magnitude) to degrees, `None` when missing.
fn degrees(b: &[u8], unit: f64) -> Option<f64> {
    (!all_ones(b)).then(|| signed(b) as f64 / unit)
}

pub(crate) fn grid(s3: &[u8], at: At) -> Result<(Grid, u64)> {
    let head = at.slice(s3, 0, 14, "section 3")?;
    if head[5] != 0 {
        return Err(at.unsupported(format!(
            "a predefined grid (section 3 source of grid definition {})",
            head[5]
        )));
    }
    let points = be(&head[6..10]);
    let template = be(&head[12..14]);
    let name = match template {
        0 => "regular_ll",
        1 => "rotated_ll",
        40 => "regular_gg",
        41 => "rotated_gg",
        10 => "mercator",
        20 => "polar_stereographic",
        30 => "lambert",
        50 => "sh",
        90 => "space_view",
        101 => "unstructured_grid",
        150 => "healpix",
        _ => "unknown",
    };
    let mut grid = Grid {
        grid_type: name.to_owned(),
        ni: None,
        nj: None,
        first: None,
        last: None,
        di: None,
        dj: None,
        gaussian_n: None,
        scanning_mode: 0,
        resolution_flags: None,
        pl: None,
        parameters: Vec::new(),
    };
    match template {
        0 | 1 | 40 | 41 => {
            let t = at.slice(s3, 0, 72, "grid template 3.0/3.40")?;
            let ni = (!all_ones(&t[30..34])).then(|| be(&t[30..34]));
            let nj = (!all_ones(&t[34..38])).then(|| be(&t[34..38]));
            if ni.is_none() {
                grid.grid_type = if template >= 40 {
                    "reduced_gg".into()
                } else {
                    "reduced_ll".into()
                };
            }
            let basic = be(&t[38..42]);
            let sub = be(&t[42..46]);
            let unit = if basic == 0 || all_ones(&t[38..42]) || sub == 0 || all_ones(&t[42..46]) {
                1e6
            } else {
                sub as f64 / basic as f64
            };
            grid.ni = ni;
            grid.nj = nj;
            grid.first = degrees(&t[46..50], unit).zip(degrees(&t[50..54], unit));
            grid.last = degrees(&t[55..59], unit).zip(degrees(&t[59..63], unit));
            grid.di = degrees(&t[63..67], unit);
            if template >= 40 {
                grid.gaussian_n = (!all_ones(&t[67..71])).then(|| be(&t[67..71]));
            } else {
                grid.dj = degrees(&t[67..71], unit);
            }
            grid.scanning_mode = t[71];
            grid.resolution_flags = Some(t[54]);
            if let (None, Some(rows)) = (ni, nj) {
                grid.pl = reduced_rows(s3, head, template, rows, at)?;
            }
            grid.parameters = earth(s3);
            if matches!(template, 1 | 41)
                && let Ok(r) = at.slice(s3, 72, 12, "the rotation (template 3.1)")
            {
                grid.parameters.extend([
                    (
                        "latitudeOfSouthernPoleInDegrees",
                        Key::Float(signed(&r[0..4]) as f64 / unit),
                    ),
                    (
                        "longitudeOfSouthernPoleInDegrees",
                        Key::Float(be(&r[4..8]) as f64 / unit),
                    ),
                    (
                        "angleOfRotationInDegrees",
                        Key::Float(f64::from(f32::from_be_bytes([r[8], r[9], r[10], r[11]]))),
                    ),
                ]);
            }
        }
        10 | 20 | 30 => {
            let t = at.slice(s3, 0, 38, "grid template")?;
            grid.ni = Some(be(&t[30..34]));
            grid.nj = Some(be(&t[34..38]));
            let scan_at = if template == 10 { 59 } else { 64 };
            grid.scanning_mode = *s3.get(scan_at).unwrap_or(&0);
            grid.parameters = projection(s3, template);
            // Polar stereographic grids have no resolution flags in ecCodes' view.
            grid.resolution_flags = s3.get(46).copied().filter(|_| template != 20);
        }
        _ => {}
    }
    Ok((grid, points))
}

/// A fixed surface's value as ecCodes' `level` computes it: the scaled value divided by ten
/// once per unit of the scale factor (multiplied for a negative one), one operation at a
/// time as ecCodes does, so that the value is the same double; on a potential-vorticity
/// surface (109) the factor less 9 (6 for TIGGE data), giving PV units.
fn surface_value(surface: u8, factor: i64, scaled: u64, tigge: bool) -> f64 {
    let mut v = scaled as f64;
    let mut f = factor;
    if surface == 109 {
        f -= if tigge { 6 } else { 9 };
    }
    while f < 0 && v != 0.0 {
        v *= 10.0;
        f += 1;
    }
    while f > 0 && v != 0.0 {
        v /= 10.0;
        f -= 1;
    }
    v
}

fn product(s4: &[u8], ident: &mut Ident, at: At, tigge: bool) -> Result<()> {
    let head = at.slice(s4, 0, 9, "section 4")?;
    let template = be(&head[7..9]);
    ident.codes.push(("NV", be(&head[5..7]) as i64));
    // Templates 4.0 to 4.15 share octets 10–34 (parameter, time, levels).
    if template > 15 && !matches!(template, 40..=43 | 48 | 60 | 61) {
        ident.type_of_level = "unknown".into();
        ident.level = level_key(0.0);
        ident.step_range = "0".into();
        ident
            .codes
            .push(("productDefinitionTemplateNumber", template as i64));
        return Ok(());
    }
    // Atmospheric chemistry templates (4.40–4.43) put a 2-octet constituent type first.
    let shift = if matches!(template, 40..=43) {
        2
    } else if matches!(template, 48) {
        23
    } else {
        0
    };
    let t = at.slice(s4, 0, 34 + shift, "product template 4.0")?;
    ident.codes.push(("parameterCategory", i64::from(t[9])));
    ident.codes.push(("parameterNumber", i64::from(t[10])));
    let o = shift;
    let unit = t[17 + o];
    let forecast = signed(&t[18 + o..22 + o]);
    ident
        .codes
        .push(("typeOfGeneratingProcess", i64::from(t[11 + o])));
    let surface = t[22 + o];
    let factor = t[23 + o];
    let scaled = &t[24 + o..28 + o];
    let second = t[28 + o];
    let (second_factor, second_scaled) = (t[29 + o], &t[30 + o..34 + o]);
    if !all_ones(&[second_factor]) && !all_ones(second_scaled) {
        ident
            .codes
            .push(("scaleFactorOfSecondFixedSurface", signed(&[second_factor])));
        ident
            .codes
            .push(("scaledValueOfSecondFixedSurface", be(second_scaled) as i64));
    }
    ident
        .codes
        .push(("typeOfFirstFixedSurface", i64::from(surface)));
    ident
        .codes
        .push(("typeOfSecondFixedSurface", i64::from(second)));
    let value = if all_ones(&[factor]) || all_ones(scaled) {
        0.0
    } else {
        let f = signed(&[factor]);
        ident.codes.push(("scaleFactorOfFirstFixedSurface", f));
        ident
            .codes
            .push(("scaledValueOfFirstFixedSurface", be(scaled) as i64));
        surface_value(surface, f, be(scaled), tigge)
    };
    let (name, divisor) = names::level_type_2(surface, second, value);
    ident.type_of_level = name.into();
    // Whole hectopascals, truncated, as ecCodes' `level` gives them.
    ident.level = level_key(if divisor == 1.0 {
        value
    } else {
        (value / divisor).trunc()
    });
    let (start, step_unit) = names::step_hours(forecast, unit);
    ident.step_unit = step_unit;
    // Statistics over a period (4.8, 4.11...): the period's length.
    let stats = match template {
        8 => Some(34),
        11 => Some(37),
        9 => Some(47),
        12 => Some(36),
        _ => None,
    };
    ident.step_range = start.to_string();
    if let Some(p) = stats {
        // p: offset of the end-of-period year; then 7 octets of time, the number of ranges
        // (1), missing (4), then per range: process, increment type, unit, length.
        if let Ok(r) = at.slice(s4, p + 12, 8, "the statistics time range") {
            ident
                .codes
                .push(("typeOfStatisticalProcessing", i64::from(r[0])));
            // Parameters such as `mx2t6` are told from `mx2t` by the period's length.
            ident
                .codes
                .push(("indicatorOfUnitForTimeRange", i64::from(r[2])));
            ident.codes.push(("lengthOfTimeRange", be(&r[3..7]) as i64));
            let (length, unit2) = names::step_hours(be(&r[3..7]) as i64, r[2]);
            if unit2 == step_unit && length > 0 {
                ident.step_range = format!("{start}-{}", start + length);
            }
        }
    }
    if matches!(template, 1 | 11)
        && let Ok(e) = at.slice(s4, 34, 3, "the ensemble keys")
    {
        ident.codes.push(("perturbationNumber", i64::from(e[1])));
        ident
            .codes
            .push(("numberOfForecastsInEnsemble", i64::from(e[2])));
    }
    Ok(())
}

fn simple(t: &[u8]) -> Simple {
    Simple {
        reference_value: f64::from(f32::from_be_bytes([t[11], t[12], t[13], t[14]])),
        binary_scale_factor: signed(&t[15..17]) as i32,
        decimal_scale_factor: signed(&t[17..19]) as i32,
        bits_per_value: u32::from(t[19]),
    }
}

pub(crate) fn representation(s5: &[u8], at: At) -> Result<(Packing, u64)> {
    let head = at.slice(s5, 0, 11, "section 5")?;
    let values = be(&head[5..9]);
    let template = be(&head[9..11]);
    let packing = match template {
        0 => Packing::Simple(simple(at.slice(s5, 0, 21, "template 5.0")?)),
        42 => {
            let t = at.slice(s5, 0, 25, "template 5.42")?;
            Packing::Ccsds {
                simple: simple(t),
                flags: u32::from(t[21]),
                block_size: u32::from(t[22]),
                rsi: be(&t[23..25]) as u32,
            }
        }
        4 => {
            let t = at.slice(s5, 0, 12, "template 5.4")?;
            let bits = match t[11] {
                1 => 32,
                2 => 64,
                p => return Err(at.unsupported(format!("IEEE precision {p} (template 5.4)"))),
            };
            Packing::Ieee { bits }
        }
        2 | 3 => {
            let t = at.slice(
                s5,
                0,
                if template == 3 { 49 } else { 47 },
                "template 5.2/5.3",
            )?;
            let (order, octets) = if template == 3 {
                (t[47], t[48])
            } else {
                (0, 0)
            };
            if template == 3 && !matches!(order, 1 | 2) {
                return Err(at.malformed(format!(
                    "order of spatial differencing {order} (template 5.3)"
                )));
            }
            if template == 3 && !(1..=4).contains(&octets) {
                return Err(at.malformed(format!(
                    "{octets} octets per extra descriptor (template 5.3)"
                )));
            }
            if t[21] != 1 {
                return Err(
                    at.unsupported(format!("group splitting method {} (template 5.2)", t[21]))
                );
            }
            Packing::Complex(Complex {
                simple: simple(t),
                missing_management: t[22],
                groups: be(&t[31..35]),
                width_reference: u32::from(t[35]),
                width_bits: u32::from(t[36]),
                length_reference: be(&t[37..41]),
                length_increment: u64::from(t[41]),
                last_length: be(&t[42..46]),
                length_bits: u32::from(t[46]),
                order,
                descriptor_octets: octets,
            })
        }
        40 => Packing::Jpeg(simple(at.slice(s5, 0, 21, "template 5.40")?)),
        41 => Packing::Png(simple(at.slice(s5, 0, 21, "template 5.41")?)),
        50002 => {
            let t = at.slice(s5, 0, 33, "template 5.50002")?;
            let order = t[32];
            let (spd_width, spd_at) = if order > 0 {
                (
                    u32::from(
                        *s5.get(33)
                            .ok_or_else(|| at.truncated("template 5.50002", "no widthOfSPD"))?,
                    ),
                    34,
                )
            } else {
                (0, 33)
            };
            Packing::SecondOrder(crate::field::SecondOrder {
                simple: simple(t),
                first_order_bits: u32::from(t[20]),
                groups: be(&t[21..25]),
                width_bits: u32::from(t[29]),
                length_bits: u32::from(t[30]),
                boustrophedonic: t[31] & 0x80 != 0,
                order,
                spd: crate::unpack::spd(s5.get(spd_at..).unwrap_or(&[]), order, spd_width, at)?,
            })
        }
        50 | 51 => return Err(at.unsupported("spectral packing (templates 5.50, 5.51)")),
        other => return Err(at.unsupported(format!("data representation template 5.{other}"))),
    };
    if let Some(s) = packing.simple()
        && s.bits_per_value > 64
    {
        return Err(at.malformed(format!("{} bits per value (section 5)", s.bits_per_value)));
    }
    Ok((packing, values))
}

#[cfg(test)]
mod tests {
    use super::surface_value;

    #[test]
    fn surfaces_are_valued_as_eccodes_values_them() {
        // Potential vorticity: PV units (10⁻⁶), so the factor counts 9 less (6 in TIGGE).
        assert_eq!(surface_value(109, 9, 2, false), 2.0);
        assert_eq!(surface_value(109, 12, 1500, false), 1.5);
        assert_eq!(surface_value(109, 6, 2, true), 2.0);
        // One division at a time, as ecCodes divides: not 15 / 10³ in one.
        assert_eq!(surface_value(103, 3, 15, false), 15.0 / 10.0 / 10.0 / 10.0);
        assert_eq!(surface_value(103, -2, 3, false), 300.0);
        assert_eq!(surface_value(100, 0, 85000, false), 85000.0);
    }
}
