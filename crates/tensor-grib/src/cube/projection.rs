//! Grids on a plane (rotated latitude/longitude, Lambert conformal, polar stereographic,
//! Mercator): every point's latitude and longitude as ecCodes' iterators compute them on a
//! spherical Earth, the projected `x`/`y` of the rows and columns, and the CF grid mapping
//! that relates them (what pyproj and cartopy read).
// The formulas keep Snyder's one-letter names (r, f, x, y).
#![allow(clippy::many_single_char_names)]

use super::keys::Keys;
use crate::axes::number;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4};
use tensor_core::cbor::Value;

/// A grid's points on its plane and on the globe.
pub(crate) struct Plane {
    /// Latitude of every point, row-major `[Ny, Nx]`, in degrees.
    pub lat: Vec<f64>,
    /// Longitude of every point, in degrees.
    pub lon: Vec<f64>,
    /// The projected coordinate of each column.
    pub x: Vec<f64>,
    /// The projected coordinate of each row.
    pub y: Vec<f64>,
    /// `x`'s and `y`'s CF standard names and units.
    pub axes: [(&'static str, &'static str); 2],
    /// The CF grid mapping: its name and attributes.
    pub mapping: (&'static str, Vec<(String, Value)>),
}

/// The Earth's radius for shapes of code table 3.2 that are spheres (edition 1: 6 367 470 m
/// unless `earthIsOblate`); `None` for an oblate Earth.
fn radius(k: &Keys<'_>) -> Option<f64> {
    if let Some(oblate) = number(k.attributes, "earthIsOblate") {
        return (oblate == 0.0).then_some(6_367_470.0);
    }
    match number(k.attributes, "shapeOfTheEarth")? as i64 {
        0 => Some(6_367_470.0),
        1 => number(k.attributes, "radius").filter(|r| *r > 0.0),
        6 => Some(6_371_229.0),
        8 => Some(6_371_200.0),
        _ => None,
    }
}

/// The plane of a field's grid, when it is one of the grids above on a spherical Earth, its
/// parameters are all present and its shape is `[Nj, Ni]`.
pub(crate) fn plane(k: &Keys<'_>) -> Option<Plane> {
    let n = |key: &str| number(k.attributes, key);
    let (ni, nj) = (n("Ni")?, n("Nj")?);
    if k.shape != [nj as u64, ni as u64] || n("jPointsAreConsecutive").unwrap_or(0.0) != 0.0 {
        return None;
    }
    match k.grid_type.as_str() {
        "rotated_ll" => rotated(k),
        "lambert" => lambert(k, radius(k)?),
        "polar_stereographic" => polar_stereographic(k, radius(k)?),
        "mercator" => mercator(k, radius(k)?),
        _ => None,
    }
}

fn attr(name: &str, v: impl Into<Value>) -> (String, Value) {
    (name.to_owned(), v.into())
}

/// Longitudes in (−180, 180].
fn wrap180(lon: f64) -> f64 {
    let l = lon.rem_euclid(360.0);
    if l > 180.0 { l - 360.0 } else { l }
}

/// Longitudes in [0, 360), as ecCodes gives a projection's points.
fn wrap360(lon: f64) -> f64 {
    let l = lon.rem_euclid(360.0);
    if l >= 360.0 { 0.0 } else { l }
}

/// The grid's rows and columns in projected metres, from the first point's projected
/// position: `Dx` along a row and `Dy` along a column, whatever the scanning flags say, as
/// ecCodes' Lambert, polar stereographic and Mercator iterators place them (its GRIB-405:
/// rows always go north from the first point; the flags reorder only the iterator's
/// values, not the `latitudes` and `longitudes` cfgrib reads).
fn steps(k: &Keys<'_>, dx: f64, dy: f64, first: (f64, f64)) -> (Vec<f64>, Vec<f64>) {
    let x = (0..k.shape[1]).map(|i| first.0 + i as f64 * dx).collect();
    let y = (0..k.shape[0]).map(|j| first.1 + j as f64 * dy).collect();
    (x, y)
}

/// Every point of the grid, inverse-projected.
fn points(x: &[f64], y: &[f64], inverse: impl Fn(f64, f64) -> (f64, f64)) -> (Vec<f64>, Vec<f64>) {
    let mut lat = Vec::with_capacity(x.len() * y.len());
    let mut lon = Vec::with_capacity(x.len() * y.len());
    for &yy in y {
        for &xx in x {
            let (a, b) = inverse(xx, yy);
            lat.push(a);
            lon.push(b);
        }
    }
    (lat, lon)
}

/// `degrees` to a millionth, rounded as ecCodes rounds a rotated grid's points: the
/// scaled value taken to single precision, then rounded half away from zero.
#[allow(clippy::cast_possible_truncation)]
fn micro(degrees: f64) -> f64 {
    f64::from(((degrees * 1e6) as f32).round()) / 1e6
}

/// A rotated latitude/longitude grid: regular axes on the rotated sphere, each point turned
/// back to the geographic sphere (the rotated sphere's south pole at the given point, no
/// further rotation about it): about the y axis by −(90° + the pole's latitude), then about
/// the polar axis by the pole's longitude.
fn rotated(k: &Keys<'_>) -> Option<Plane> {
    let n = |key: &str| number(k.attributes, key);
    let (sp_lat, sp_lon) = (
        n("latitudeOfSouthernPoleInDegrees")?,
        n("longitudeOfSouthernPoleInDegrees")?,
    );
    if n("angleOfRotationInDegrees").unwrap_or(0.0) != 0.0 {
        return None;
    }
    let (rlat, mut rlon) = crate::axes::lat_lon_axes(k.attributes, k.shape)?;
    // Rotated longitudes are stored from 0 to 360; the grid's own axis reads better about 0.
    if rlon.first().is_some_and(|&l| l > 180.0) {
        for l in &mut rlon {
            *l -= 360.0;
        }
    }
    let (theta, phi) = (-(90.0 + sp_lat).to_radians(), sp_lon.to_radians());
    let (lat, lon) = points(&rlon, &rlat, |x, y| {
        let (la, lo) = (y.to_radians(), x.to_radians());
        let (cx, cy, cz) = (lo.cos() * la.cos(), lo.sin() * la.cos(), la.sin());
        // Turn by θ about the y axis, then by φ about the z axis.
        let (x1, z1) = (
            theta.cos() * cx + theta.sin() * cz,
            -theta.sin() * cx + theta.cos() * cz,
        );
        let (x2, y2) = (
            phi.cos() * x1 - phi.sin() * cy,
            phi.sin() * x1 + phi.cos() * cy,
        );
        (
            micro(z1.clamp(-1.0, 1.0).asin().to_degrees()),
            micro(y2.atan2(x2).to_degrees()),
        )
    });
    let mapping = vec![
        attr("grid_mapping_name", "rotated_latitude_longitude"),
        attr("grid_north_pole_latitude", -sp_lat),
        attr("grid_north_pole_longitude", wrap180(sp_lon + 180.0)),
    ];
    Some(Plane {
        lat,
        lon,
        x: rlon,
        y: rlat,
        axes: [("grid_longitude", "degrees"), ("grid_latitude", "degrees")],
        mapping: ("rotated_latitude_longitude", mapping),
    })
}

/// Lambert conformal conic on a sphere of radius `r` (Snyder's formulas): the cone through
/// `Latin1` and `Latin2`, the origin at (`LaD`, `LoV`).
fn lambert(k: &Keys<'_>, r: f64) -> Option<Plane> {
    let n = |key: &str| number(k.attributes, key);
    let (lat1, lon1) = (
        n("latitudeOfFirstGridPointInDegrees")?.to_radians(),
        n("longitudeOfFirstGridPointInDegrees")?,
    );
    let (lad, lov) = (n("LaDInDegrees")?.to_radians(), n("LoVInDegrees")?);
    let (p1, p2) = (
        n("Latin1InDegrees")?.to_radians(),
        n("Latin2InDegrees")?.to_radians(),
    );
    let (dx, dy) = (n("DxInMetres")?, n("DyInMetres")?);
    let t = |phi: f64| (FRAC_PI_4 + phi / 2.0).tan();
    let cone = if (p1 - p2).abs() < 1e-9 {
        p1.sin()
    } else {
        (p1.cos() / p2.cos()).ln() / (t(p2) / t(p1)).ln()
    };
    if !cone.is_finite() || cone == 0.0 {
        return None;
    }
    let f = p1.cos() * t(p1).powf(cone) / cone;
    let rho = |phi: f64| r * f / t(phi).powf(cone);
    let rho0 = rho(lad);
    let forward = |phi: f64, lam: f64| {
        let angle = cone * wrap180(lam - lov).to_radians();
        (rho(phi) * angle.sin(), rho0 - rho(phi) * angle.cos())
    };
    let (x, y) = steps(k, dx, dy, forward(lat1, lon1));
    let (lat, lon) = points(&x, &y, |x, y| {
        let (mut xx, mut yy) = (x, rho0 - y);
        let mut rr = xx.hypot(yy);
        if cone < 0.0 {
            rr = -rr;
            xx = -xx;
            yy = -yy;
        }
        let theta = xx.atan2(yy);
        let phi = 2.0 * (r * f / rr).powf(1.0 / cone).atan() - FRAC_PI_2;
        (phi.to_degrees(), wrap360(lov + (theta / cone).to_degrees()))
    });
    let parallels = if (p1 - p2).abs() < 1e-9 {
        Value::Float(p1.to_degrees())
    } else {
        Value::Array(vec![
            Value::Float(p1.to_degrees()),
            Value::Float(p2.to_degrees()),
        ])
    };
    let parameters = vec![
        ("standard_parallel".into(), parallels),
        attr("longitude_of_central_meridian", lov),
        attr("latitude_of_projection_origin", lad.to_degrees()),
    ];
    Some(projected(
        "lambert_conformal_conic",
        parameters,
        r,
        (lat, lon),
        (x, y),
    ))
}

/// Polar stereographic on a sphere of radius `r`, true to scale at `LaD`, about the north
/// pole (or the south pole when the projection centre flag says so).
fn polar_stereographic(k: &Keys<'_>, r: f64) -> Option<Plane> {
    let n = |key: &str| number(k.attributes, key);
    let south = n("projectionCentreFlag").unwrap_or(0.0) as u64 & 0x80 != 0;
    let sign = if south { -1.0 } else { 1.0 };
    let (lat1, lon1) = (
        n("latitudeOfFirstGridPointInDegrees")?,
        n("longitudeOfFirstGridPointInDegrees")?,
    );
    // Edition 1 calls LoV the grid's orientation.
    let lov = n("LoVInDegrees").or_else(|| n("orientationOfTheGridInDegrees"))?;
    let lad = n("LaDInDegrees")?;
    let (dx, dy) = (n("DxInMetres")?, n("DyInMetres")?);
    // The scale factor at the pole that makes the scale true at LaD.
    let k0 = f64::midpoint(1.0, (sign * lad).to_radians().sin());
    let forward = |phi: f64, lam: f64| {
        let rho = 2.0 * r * k0 * (FRAC_PI_4 - sign * phi.to_radians() / 2.0).tan();
        let a = (lam - lov).to_radians();
        (rho * a.sin(), -sign * rho * a.cos())
    };
    let (x, y) = steps(k, dx, dy, forward(lat1, lon1));
    let (lat, lon) = points(&x, &y, |x, y| {
        let rho = x.hypot(y);
        let c = 2.0 * (rho / (2.0 * r * k0)).atan();
        let phi = sign * c.cos().clamp(-1.0, 1.0).asin();
        (
            phi.to_degrees(),
            wrap360(lov + x.atan2(-sign * y).to_degrees()),
        )
    });
    let parameters = vec![
        attr("straight_vertical_longitude_from_pole", lov),
        attr("latitude_of_projection_origin", sign * 90.0),
        attr("standard_parallel", lad),
    ];
    Some(projected(
        "polar_stereographic",
        parameters,
        r,
        (lat, lon),
        (x, y),
    ))
}

/// Mercator on a sphere of radius `r`, true to scale at `LaD`, its origin at the first
/// point's longitude.
fn mercator(k: &Keys<'_>, r: f64) -> Option<Plane> {
    let n = |key: &str| number(k.attributes, key);
    let (lat1, lon1) = (
        n("latitudeOfFirstGridPointInDegrees")?,
        n("longitudeOfFirstGridPointInDegrees")?,
    );
    let lad = n("LaDInDegrees")?;
    let (dx, dy) = (n("DiInMetres")?, n("DjInMetres")?);
    let scaled = r * lad.to_radians().cos();
    let forward = |phi: f64, lam: f64| {
        (
            scaled * wrap180(lam - lon1).to_radians(),
            scaled * (FRAC_PI_4 + phi.to_radians() / 2.0).tan().ln(),
        )
    };
    let (x, y) = steps(k, dx, dy, forward(lat1, lon1));
    let (lat, lon) = points(&x, &y, |x, y| {
        let phi = FRAC_PI_2 - 2.0 * (-y / scaled).exp().atan();
        (phi.to_degrees(), wrap360(lon1 + (x / scaled).to_degrees()))
    });
    let parameters = vec![
        attr("longitude_of_projection_origin", lon1),
        attr("standard_parallel", lad),
    ];
    Some(projected("mercator", parameters, r, (lat, lon), (x, y)))
}

/// A grid on a projection's plane in metres: its points, and the CF grid mapping `name`
/// with the projection's `parameters`, no false origin, and the sphere's radius.
fn projected(
    name: &'static str,
    parameters: Vec<(String, Value)>,
    r: f64,
    (lat, lon): (Vec<f64>, Vec<f64>),
    (x, y): (Vec<f64>, Vec<f64>),
) -> Plane {
    let mut mapping = vec![attr("grid_mapping_name", name)];
    mapping.extend(parameters);
    mapping.extend([
        attr("false_easting", 0.0),
        attr("false_northing", 0.0),
        attr("earth_radius", r),
    ]);
    Plane {
        lat,
        lon,
        x,
        y,
        axes: [
            ("projection_x_coordinate", "m"),
            ("projection_y_coordinate", "m"),
        ],
        mapping: (name, mapping),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longitudes_wrap_to_a_half_turn_either_side() {
        assert_eq!(wrap180(190.0), -170.0);
        assert_eq!(wrap180(-190.0), 170.0);
        assert_eq!(wrap180(180.0), 180.0);
        assert_eq!(wrap360(-10.0), 350.0);
        assert_eq!(wrap360(370.0), 10.0);
    }
}
