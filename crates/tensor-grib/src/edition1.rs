//! GRIB edition 1: sections 0 to 5 (indicator, product definition, optional grid
//! description and bitmap, binary data, end).

use crate::bits::{be, ibm, signed};
use crate::context::At;
use crate::error::{Error, Result};
use crate::field::{Field, Grid, Key, Packing, Simple};
use crate::names::{self, Ident, level_key};

/// A section's 3-octet length at `pos` of `msg`, checked to lie inside it.
fn section(msg: &[u8], pos: usize, what: &str, at: At) -> Result<std::ops::Range<usize>> {
    let head = at.slice(msg, pos, 3, what)?;
    let len = be(head) as usize;
    if len < 3 || pos + len > msg.len().saturating_sub(4) {
        return Err(at.malformed(format!(
            "{what} at message offset {pos} claims {len} bytes; {} remain before section 5",
            msg.len().saturating_sub(4 + pos)
        )));
    }
    Ok(pos..pos + len)
}

/// The field of the edition 1 message `file[start..start + len]`.
pub(crate) fn field(file: &[u8], start: usize, len: usize, at: At) -> Result<Field> {
    let msg = &file[start..start + len];
    if &msg[len - 4..] != b"7777" {
        return Err(at.malformed("the message does not end with '7777' (section 5)"));
    }
    let pds = section(msg, 8, "section 1 (product definition)", at)?;
    let p = at.slice(&msg[pds.clone()], 0, 28, "section 1")?;
    let has_gds = p[7] & 0x80 != 0;
    let has_bms = p[7] & 0x40 != 0;
    let mut pos = pds.end;
    let gds = if has_gds {
        let r = section(msg, pos, "section 2 (grid description)", at)?;
        pos = r.end;
        Some(r)
    } else {
        None
    };
    let bms = if has_bms {
        let r = section(msg, pos, "section 3 (bitmap)", at)?;
        pos = r.end;
        Some(r)
    } else {
        None
    };
    let bds = section(msg, pos, "section 4 (binary data)", at)?;

    let mut ident = ident(p, &msg[pds.clone()]);
    ident.edition = 1;
    let (grid, points) = match &gds {
        Some(r) => grid(&msg[r.clone()], at)?,
        None => return Err(at.unsupported("a predefined grid (no section 2)")),
    };
    if let Some(r) = &gds {
        // NV: how many vertical coordinate values section 2 lists.
        ident.codes.push(("NV", i64::from(msg[r.start + 3])));
    }

    let bitmap = match &bms {
        Some(r) => {
            let b = at.slice(&msg[r.clone()], 0, 6, "section 3")?;
            if be(&b[4..6]) != 0 {
                return Err(at.unsupported(format!(
                    "a predefined bitmap (section 3 table reference {})",
                    be(&b[4..6])
                )));
            }
            let bytes = start + r.start + 6..start + r.end;
            if (bytes.len() as u64) < points.div_ceil(8) {
                return Err(at.truncated(
                    "the bitmap (section 3)",
                    format!(
                        "{points} points need {} bytes, it has {}",
                        points.div_ceil(8),
                        bytes.len()
                    ),
                ));
            }
            Some(bytes)
        }
        None => None,
    };
    let d = at.slice(&msg[bds.clone()], 0, 11, "section 4")?;
    let flags = d[3] >> 4;
    let unused_bits = u64::from(d[3] & 0x0f);
    if flags & 0x8 != 0 {
        return Err(at.unsupported("spherical harmonic coefficients (section 4)"));
    }
    if flags & 0x1 != 0 && flags & 0x4 == 0 {
        return Err(at.unsupported("additional flags in section 4 (matrix values)"));
    }
    let simple = Simple {
        reference_value: ibm([d[6], d[7], d[8], d[9]]),
        binary_scale_factor: signed(&d[4..6]) as i32,
        decimal_scale_factor: signed(&p[26..28]) as i32,
        bits_per_value: u32::from(d[10]),
    };
    let packed_values = match &bitmap {
        Some(b) => crate::unpack::count_present(&file[b.clone()], points),
        None => points,
    };
    let section = &msg[bds.clone()];
    let (packing, data_at) = if flags & 0x4 != 0 {
        second_order(section, simple, at)?
    } else {
        if simple.bits_per_value > 64 {
            return Err(at.malformed(format!(
                "{} bits per value (section 4)",
                simple.bits_per_value
            )));
        }
        let have = ((section.len() - 11) as u64 * 8).saturating_sub(unused_bits);
        let need = packed_values.saturating_mul(u64::from(simple.bits_per_value));
        if have < need {
            return Err(at.truncated(
                "the packed values (section 4)",
                format!(
                    "{packed_values} values of {} bits need {need} bits, it holds {have}",
                    simple.bits_per_value
                ),
            ));
        }
        // Section 4 gives its unused bits: what remains holds exactly the values, so a
        // section holding more values than the grid has points is damaged.
        if simple.bits_per_value > 0 && have / u64::from(simple.bits_per_value) > packed_values {
            return Err(at.malformed(format!(
                "section 4 holds {} values of {} bits; the grid has {packed_values} to pack",
                have / u64::from(simple.bits_per_value),
                simple.bits_per_value
            )));
        }
        (Packing::Simple(simple), 11)
    };
    Ok(Field {
        message: at.message,
        submessage: 0,
        offset: at.offset,
        length: len as u64,
        edition: 1,
        points,
        grid,
        packing,
        packed_values,
        ident,
        bitmap,
        data: start + bds.start + data_at..start + bds.end,
        sections: None,
    })
}

fn ident(p: &[u8], whole: &[u8]) -> Ident {
    let mut ident = Ident {
        centre: u16::from(p[4]),
        ..Ident::default()
    };
    ident.codes.push(("subCentre", i64::from(p[25])));
    ident.codes.push(("table2Version", i64::from(p[3])));
    ident.codes.push(("indicatorOfParameter", i64::from(p[8])));
    ident
        .codes
        .push(("indicatorOfTypeOfLevel", i64::from(p[9])));
    let (name, layer) = names::level_type_1(p[9]);
    ident.type_of_level = name.into();
    ident.level = if layer {
        level_key(f64::from(p[10]))
    } else {
        level_key(be(&p[10..12]) as f64)
    };
    let century = i64::from(p[24]);
    let year = (century - 1) * 100 + i64::from(p[12]);
    ident.data_date = year * 10000 + i64::from(p[13]) * 100 + i64::from(p[14]);
    ident.data_time = i64::from(p[15]) * 100 + i64::from(p[16]);
    let unit = p[17];
    let (p1, p2) = (i64::from(p[18]), i64::from(p[19]));
    let range = p[20];
    ident.codes.push(("timeRangeIndicator", i64::from(range)));
    // Table 5: 10 puts P1 and P2 together as one step; 2–5 are periods from P1 to P2.
    let (start, end) = match range {
        10 => ((p1 << 8) | p2, None),
        2..=5 => (p1, Some(p2)),
        _ => (p1, None),
    };
    // GRIB 1 table 4 units match code table 4.4 for the common ones.
    let (s, step_unit) = names::step_hours(start, unit);
    ident.step_unit = step_unit;
    ident.step_range = match end {
        Some(e) if e != start => format!("{s}-{}", names::step_hours(e, unit).0),
        _ => s.to_string(),
    };
    // ECMWF's local extension (octet 41 on): MARS class, type, stream, expver.
    if ident.centre == 98 && whole.len() >= 49 && whole[40] != 0 {
        ident.local_mars = vec![
            ("class", names::mars_class(u64::from(whole[41]))),
            ("type", names::mars_type(u64::from(whole[42]))),
            ("stream", names::mars_stream(be(&whole[43..45]))),
            (
                "expver",
                String::from_utf8_lossy(&whole[45..49]).into_owned(),
            ),
        ];
        if whole.len() >= 51 {
            ident
                .codes
                .push(("perturbationNumber", i64::from(whole[49])));
            ident
                .codes
                .push(("numberOfForecastsInEnsemble", i64::from(whole[50])));
        }
    }
    ident
}

/// Millidegrees (3 octets, sign and magnitude) to degrees.
fn degrees(b: &[u8]) -> f64 {
    signed(b) as f64 / 1000.0
}

fn grid(g: &[u8], at: At) -> Result<(Grid, u64)> {
    let head = at.slice(g, 0, 6, "section 2")?;
    let kind = head[5];
    let name = match kind {
        0 => "regular_ll",
        4 => "regular_gg",
        10 => "rotated_ll",
        14 => "rotated_gg",
        1 => "mercator",
        3 => "lambert",
        5 => "polar_stereographic",
        50 => "sh",
        _ => "unknown",
    };
    if matches!(kind, 1 | 3 | 5) {
        return projected(g, kind, name, at);
    }
    if !matches!(kind, 0 | 4 | 10 | 14) {
        return Err(at.unsupported(format!("GRIB 1 grid type {kind} ({name})")));
    }
    let t = at.slice(g, 0, 28, "the grid description (section 2)")?;
    let ni = be(&t[6..8]);
    let nj = be(&t[8..10]);
    let nv = u64::from(head[3]);
    let pv_pl = usize::from(head[4]);
    let mut grid = Grid {
        grid_type: name.to_owned(),
        ni: Some(ni),
        nj: Some(nj),
        first: Some((degrees(&t[10..13]), degrees(&t[13..16]))),
        last: Some((degrees(&t[17..20]), degrees(&t[20..23]))),
        di: (be(&t[23..25]) != 0xffff).then(|| be(&t[23..25]) as f64 / 1000.0),
        dj: None,
        gaussian_n: None,
        scanning_mode: t[27],
        resolution_flags: Some(t[16]),
        pl: None,
        parameters: Vec::new(),
    };
    if matches!(kind, 10 | 14) {
        // The rotation: the southern pole (millidegrees) and the angle (an IBM float).
        let r = at.slice(g, 32, 10, "the rotation (section 2)")?;
        grid.parameters = vec![
            (
                "latitudeOfSouthernPoleInDegrees",
                Key::Float(degrees(&r[0..3])),
            ),
            (
                "longitudeOfSouthernPoleInDegrees",
                Key::Float(degrees(&r[3..6])),
            ),
            (
                "angleOfRotationInDegrees",
                Key::Float(ibm([r[6], r[7], r[8], r[9]])),
            ),
        ];
    }
    if kind == 4 || kind == 14 {
        grid.gaussian_n = Some(be(&t[25..27]));
    } else {
        grid.dj = (be(&t[25..27]) != 0xffff).then(|| be(&t[25..27]) as f64 / 1000.0);
    }
    check_lat_lon(&grid, kind, at)?;
    let points = if ni == 0xffff {
        // A reduced grid: the number of points per row follows the vertical coordinates.
        if pv_pl == 0 || pv_pl == 255 {
            return Err(at.malformed("a reduced grid without its list of points per row"));
        }
        grid.ni = None;
        grid.grid_type = match kind {
            4 => "reduced_gg",
            14 => "reduced_rotated_gg",
            _ => "reduced_ll",
        }
        .into();
        let start = pv_pl - 1 + 4 * nv as usize;
        let rows = at.slice(g, start, 2 * nj as usize, "the points per row (section 2)")?;
        let pl: Vec<u64> = rows.chunks_exact(2).map(be).collect();
        let sum = pl.iter().sum();
        grid.pl = Some(pl);
        sum
    } else {
        ni * nj
    };
    Ok((grid, points))
}

/// Checks a latitude/longitude or Gaussian grid description against the type it claims, so
/// that another type's description (a patched type octet) is not read as this one: its
/// latitudes are latitudes, a Gaussian grid has rows for its `N`, and a regular grid's `Dj`
/// spans its rows (to a thousandth of a degree a row, what the octets hold).
fn check_lat_lon(grid: &Grid, kind: u8, at: At) -> Result<()> {
    let (Some((lat1, _)), Some((lat2, _))) = (grid.first, grid.last) else {
        return Ok(());
    };
    let bad = |what: String| Err(not_its_type(at, kind, "", &what));
    if lat1.abs() > 90.0 || lat2.abs() > 90.0 {
        return bad(format!(
            "latitudes {lat1}° and {lat2}° are not both within ±90°"
        ));
    }
    let nj = grid.nj.unwrap_or(0);
    let span = (lat2 - lat1).abs();
    if let Some(n) = grid.gaussian_n {
        // Gaussian latitudes lie inside ±90°, about 180° / 2N apart.
        let spacing = 90.0 / n.max(1) as f64;
        let expected = nj.saturating_sub(1) as f64 * spacing;
        if n == 0
            || nj > 2 * n
            || lat1.abs() >= 90.0
            || lat2.abs() >= 90.0
            || (span - expected).abs() > spacing + 0.001 * nj as f64
        {
            return bad(format!(
                "a Gaussian grid's {nj} rows from {lat1}° to {lat2}° are not rows of the 2 × \
                 {n} parallels of its N"
            ));
        }
    }
    if let Some(dj) = grid.dj
        && nj > 1
        && grid.ni.is_some()
    {
        let rows = (nj - 1) as f64;
        if (span - dj * rows).abs() > 0.001 * (rows + 1.0) {
            return bad(format!(
                "{nj} rows {dj}° apart do not span {lat1}° to {lat2}°"
            ));
        }
    }
    Ok(())
}

/// A grid description that does not fit the type it claims (`name`, when given, is the
/// type's): most likely another type's description under a patched type octet.
fn not_its_type(at: At, kind: u8, name: &str, what: &str) -> Error {
    let name = if name.is_empty() {
        String::new()
    } else {
        format!(" ({name})")
    };
    at.malformed(format!(
        "grid type {kind}{name}: {what} (is it another grid type's description?)"
    ))
}

/// Second-order packing (section 4 flags: complex packing of grid points) from section 4,
/// and where its group descriptions start. Only ECMWF's "general extended" variant, what
/// ecCodes writes, is read.
fn second_order(section: &[u8], simple: Simple, at: At) -> Result<(Packing, usize)> {
    let d = at.slice(section, 0, 26, "section 4 (second-order packing)")?;
    let extended = d[13];
    if extended & 0x08 == 0 {
        return Err(at.unsupported(
            "GRIB 1 second-order packing other than general extended (row by row, constant width)",
        ));
    }
    if extended & 0x60 != 0 {
        return Err(
            at.unsupported("GRIB 1 second-order packing with a matrix or a secondary bitmap")
        );
    }
    let order = (extended & 0x01) + 2 * ((extended >> 1) & 0x01);
    // Octet 26 holds the width of the spatial differencing values, which follow it.
    let (spd_width, spd_at) = if order > 0 {
        (u32::from(d[25]), 26)
    } else {
        (0, 25)
    };
    let spd_bytes = (u64::from(order) + 1) * u64::from(spd_width);
    let spd_len = if order > 0 {
        spd_bytes.div_ceil(8) as usize
    } else {
        0
    };
    let spd = crate::unpack::spd(section.get(spd_at..).unwrap_or(&[]), order, spd_width, at)?;
    let packing = Packing::SecondOrder(crate::field::SecondOrder {
        simple: Simple {
            bits_per_value: 0,
            ..simple
        },
        first_order_bits: u32::from(d[10]),
        groups: be(&d[16..18]) + 65536 * u64::from(d[20]),
        width_bits: u32::from(d[21]),
        length_bits: u32::from(d[22]),
        order,
        spd,
        boustrophedonic: extended & 0x04 != 0,
    });
    Ok((packing, spd_at + spd_len))
}

/// A grid on a projection's plane (data representation types 1 Mercator, 3 Lambert
/// conformal, 5 polar stereographic), its parameters under ecCodes' names for edition 1:
/// corners and angles in degrees (stored in thousandths), grid lengths in metres. The
/// Earth is a sphere of 6 367 470 m unless the resolution flags say it is oblate
/// (`earthIsOblate`).
fn projected(g: &[u8], kind: u8, name: &str, at: At) -> Result<(Grid, u64)> {
    // The octets each type's description holds (edition 1's table D).
    let len = match kind {
        3 => 40,
        1 => 34,
        _ => 32,
    };
    let t = at.slice(g, 0, len, "the grid description (section 2)")?;
    let (nx, ny) = (be(&t[6..8]), be(&t[8..10]));
    let flags = t[16];
    // Checked against the type it claims, so that another type's description (a patched
    // type octet) is not read as this one.
    let lat1 = degrees(&t[10..13]);
    let bad = |what: String| Err(not_its_type(at, kind, name, &what));
    if lat1.abs() > 90.0 {
        return bad(format!("the first latitude, {lat1}°, is not within ±90°"));
    }
    // Lambert and polar stereographic: bit 1 of the projection centre flag is the pole, bit
    // 2 bipolar, the others reserved, zero. (Grid lengths may be zero: ecCodes' own polar
    // stereographic sample has them so.)
    if kind != 1 && t[26] & 0x3f != 0 {
        return bad(format!(
            "projection centre flag {:#04x} sets reserved bits",
            t[26]
        ));
    }
    let deg = |r: std::ops::Range<usize>| Key::Float(degrees(&t[r]));
    let mut parameters = vec![
        ("latitudeOfFirstGridPointInDegrees", deg(10..13)),
        ("longitudeOfFirstGridPointInDegrees", deg(13..16)),
        ("earthIsOblate", Key::Int(i64::from(flags & 0x40 != 0))),
    ];
    let scanning_mode = t[27];
    if kind == 1 {
        parameters.extend([
            ("latitudeOfLastGridPointInDegrees", deg(17..20)),
            ("longitudeOfLastGridPointInDegrees", deg(20..23)),
            ("LaDInDegrees", deg(23..26)),
            ("orientationOfTheGridInDegrees", Key::Float(0.0)),
            ("DiInMetres", Key::Float(signed(&t[28..31]) as f64)),
            ("DjInMetres", Key::Float(signed(&t[31..34]) as f64)),
        ]);
    } else {
        let lov = if kind == 3 {
            "LoVInDegrees"
        } else {
            "orientationOfTheGridInDegrees"
        };
        parameters.extend([
            (lov, deg(17..20)),
            ("DxInMetres", Key::Float(be(&t[20..23]) as f64)),
            ("DyInMetres", Key::Float(be(&t[23..26]) as f64)),
            ("projectionCentreFlag", Key::Int(i64::from(t[26]))),
        ]);
        if kind == 5 {
            // True to scale at 60°, which edition 1 does not store.
            parameters.push(("LaDInDegrees", Key::Float(60.0)));
        } else {
            parameters.extend([
                ("LaDInDegrees", deg(28..31)),
                ("Latin1InDegrees", deg(28..31)),
                ("Latin2InDegrees", deg(31..34)),
                ("latitudeOfSouthernPoleInDegrees", deg(34..37)),
                ("longitudeOfSouthernPoleInDegrees", deg(37..40)),
            ]);
        }
    }
    let grid = Grid {
        grid_type: name.to_owned(),
        ni: Some(nx),
        nj: Some(ny),
        first: None,
        last: None,
        di: None,
        dj: None,
        gaussian_n: None,
        scanning_mode,
        resolution_flags: Some(flags),
        pl: None,
        parameters,
    };
    Ok((grid, nx * ny))
}
