//! The grid part of a cube: its dimensions and the coordinates of its points, computed as
//! ecCodes computes a field's `latitudes` and `longitudes`.

use super::coordinate::{Coordinate, Values};
use super::keys::Keys;
use crate::axes::{longitudes, number};
use tensor_core::cbor::Value;

/// The grid dimensions of a variable, their sizes, and the coordinates that go with them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Geography {
    pub dims: Vec<String>,
    pub shape: Vec<u64>,
    pub coordinates: Vec<Coordinate>,
    /// The grid's keys, so that two grids without coordinates are told apart.
    pub identity: Vec<(String, Value)>,
    /// The name of the CF grid mapping coordinate of a projected grid.
    pub grid_mapping: Option<String>,
}

/// The largest Gaussian `N` whose latitudes are computed (finding them costs `N²`): twice
/// the finest grid in operational use.
const MAX_GAUSSIAN_N: f64 = 16_384.0;

/// Grids whose points have a latitude and a longitude axis.
const AXES: [&str; 2] = ["regular_ll", "regular_gg"];
/// Grids of `Ny` rows of `Nx` points that are not on latitude/longitude axes (cfgrib's
/// list: a Mercator grid is a `values` dimension there).
const PLANE: [&str; 6] = [
    "rotated_ll",
    "rotated_gg",
    "lambert",
    "lambert_azimuthal_equal_area",
    "albers",
    "polar_stereographic",
];

/// ecCodes' `gridDefinitionDescription` of a grid type, which GRIB 1 words its own way.
pub(crate) fn description(edition: i64, grid_type: &str) -> Option<&'static str> {
    if edition == 1 {
        return Some(match grid_type {
            "regular_ll" | "reduced_ll" => "Latitude/Longitude Grid",
            "regular_gg" | "reduced_gg" => "Gaussian Latitude/Longitude Grid",
            "rotated_ll" => "Rotated Latitude/Longitude grid",
            "rotated_gg" => "Rotated Gaussian latitude/longitude grid",
            "polar_stereographic" => "Polar Stereographic Projection Grid",
            "lambert" => "Lambert Conformal",
            "mercator" => "Mercator Projection Grid",
            _ => return None,
        });
    }
    Some(match grid_type {
        "regular_ll" | "reduced_ll" => "Latitude/longitude",
        "rotated_ll" => "Rotated latitude/longitude",
        "regular_gg" | "reduced_gg" => "Gaussian latitude/longitude",
        "rotated_gg" => "Rotated Gaussian latitude/longitude",
        "lambert" => "Lambert Conformal",
        "polar_stereographic" => "Polar stereographic",
        "mercator" => "Mercator",
        "lambert_azimuthal_equal_area" => "Lambert azimuthal equal area",
        _ => return None,
    })
}

/// The grid keys cfgrib copies into `GRIB_*` attributes for each grid type.
fn cfgrib_grid_keys(grid_type: &str) -> &'static [&'static str] {
    const LATLON: [&str; 11] = [
        "Nx",
        "iDirectionIncrementInDegrees",
        "iScansNegatively",
        "longitudeOfFirstGridPointInDegrees",
        "longitudeOfLastGridPointInDegrees",
        "Ny",
        "jDirectionIncrementInDegrees",
        "jPointsAreConsecutive",
        "jScansPositively",
        "latitudeOfFirstGridPointInDegrees",
        "latitudeOfLastGridPointInDegrees",
    ];
    match grid_type {
        "regular_ll" => &LATLON,
        "rotated_ll" => &[
            "Nx",
            "Ny",
            "angleOfRotationInDegrees",
            "iDirectionIncrementInDegrees",
            "iScansNegatively",
            "jDirectionIncrementInDegrees",
            "jPointsAreConsecutive",
            "jScansPositively",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfLastGridPointInDegrees",
            "latitudeOfSouthernPoleInDegrees",
            "longitudeOfFirstGridPointInDegrees",
            "longitudeOfLastGridPointInDegrees",
            "longitudeOfSouthernPoleInDegrees",
        ],
        "regular_gg" => &[
            "N",
            "Ni",
            "Nj",
            "iDirectionIncrementInDegrees",
            "iScansNegatively",
            "jScansPositively",
            "jPointsAreConsecutive",
            "longitudeOfFirstGridPointInDegrees",
            "longitudeOfLastGridPointInDegrees",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfLastGridPointInDegrees",
        ],
        "reduced_gg" => &["N", "pl"],
        "lambert" => &[
            "LaDInDegrees",
            "LoVInDegrees",
            "iScansNegatively",
            "jPointsAreConsecutive",
            "jScansPositively",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfSouthernPoleInDegrees",
            "longitudeOfFirstGridPointInDegrees",
            "longitudeOfSouthernPoleInDegrees",
            "DyInMetres",
            "DxInMetres",
            "Latin2InDegrees",
            "Latin1InDegrees",
            "Ny",
            "Nx",
        ],
        "reduced_ll" => &[
            "Ny",
            "jDirectionIncrementInDegrees",
            "jPointsAreConsecutive",
            "jScansPositively",
            "latitudeOfFirstGridPointInDegrees",
            "latitudeOfLastGridPointInDegrees",
        ],
        _ => &[],
    }
}

/// The grid keys among a field's attributes that cfgrib shows as `GRIB_*` attributes, with
/// its names (`Nx`/`Ny` for our `Ni`/`Nj`).
pub(crate) fn grid_keys(k: &Keys<'_>) -> Vec<(String, Value)> {
    cfgrib_grid_keys(&k.grid_type)
        .iter()
        .filter_map(|&name| {
            let ours = match name {
                "Nx" => "Ni",
                "Ny" => "Nj",
                other => other,
            };
            let (_, v) = k.attributes.iter().find(|(n, _)| n == ours)?;
            Some((name.to_owned(), v.clone()))
        })
        .collect()
}

/// Every key of a field's attributes that describes its grid (those of the GRIB grid
/// templates: counts, corners, increments, scanning, projection parameters).
fn identity(k: &Keys<'_>) -> Vec<(String, Value)> {
    const NAMES: [&str; 8] = [
        "gridType",
        "numberOfDataPoints",
        "N",
        "Ni",
        "Nj",
        "pl",
        "Nx",
        "Ny",
    ];
    k.attributes
        .iter()
        .filter(|(n, _)| {
            NAMES.contains(&n.as_str())
                || n.ends_with("InDegrees")
                || n.ends_with("InMetres")
                || n.contains("Scans")
                || n.contains("Consecutive")
        })
        .cloned()
        .collect()
}

fn axis(name: &str, values: Vec<f64>, decreasing: bool) -> Coordinate {
    let (units, standard) = if name == "latitude" {
        ("degrees_north", "latitude")
    } else {
        ("degrees_east", "longitude")
    };
    let mut attributes = vec![
        ("units".to_owned(), Value::from(units)),
        ("standard_name".to_owned(), Value::from(standard)),
        ("long_name".to_owned(), Value::from(standard)),
    ];
    if decreasing {
        attributes.push(("stored_direction".into(), Value::from("decreasing")));
    }
    Coordinate {
        name: name.to_owned(),
        dims: vec![name.to_owned()],
        values: Values::Float(values),
        attributes,
    }
}

/// The geography of a field.
pub(crate) fn geography(k: &Keys<'_>) -> Geography {
    let n = |key: &str| number(k.attributes, key);
    let keys = identity(k);
    let rows = (n("Nj"), n("Ni"));
    if AXES.contains(&k.grid_type.as_str())
        && let (Some(nj), Some(ni)) = rows
        && k.shape == [nj as u64, ni as u64]
        && let Some((lat, lon)) = axes(k)
    {
        let decreasing = lat.first() > lat.last();
        return Geography {
            dims: vec!["latitude".into(), "longitude".into()],
            shape: k.shape.to_vec(),
            coordinates: vec![
                axis("latitude", lat, decreasing),
                axis("longitude", lon, false),
            ],
            identity: keys,
            grid_mapping: None,
        };
    }
    if PLANE.contains(&k.grid_type.as_str()) && k.shape.len() == 2 {
        let plane = super::projection::plane(k);
        let grid_mapping = plane.as_ref().map(|p| p.mapping.0.to_owned());
        return Geography {
            dims: vec!["y".into(), "x".into()],
            shape: k.shape.to_vec(),
            coordinates: plane.map_or_else(Vec::new, plane_coordinates),
            identity: keys,
            grid_mapping,
        };
    }
    let coordinates = match k.grid_type.as_str() {
        "reduced_gg" => reduced_gaussian(k),
        "reduced_ll" => reduced_latlon(k),
        "mercator" => super::projection::plane(k).map(|p| (p.lat, p.lon)),
        _ => None,
    }
    .map_or_else(Vec::new, |(lat, lon)| {
        vec![point_axis("latitude", lat), point_axis("longitude", lon)]
    });
    Geography {
        dims: vec!["values".into()],
        shape: vec![k.points],
        coordinates,
        identity: keys,
        grid_mapping: None,
    }
}

/// The coordinates of a grid on a plane: 2-D `latitude` and `longitude` as cfgrib gives
/// them, then (beyond cfgrib) the projected `x` and `y` and the CF grid mapping.
fn plane_coordinates(p: super::projection::Plane) -> Vec<Coordinate> {
    let yx = vec!["y".to_owned(), "x".to_owned()];
    let mut lat = axis("latitude", p.lat, false);
    lat.dims.clone_from(&yx);
    let mut lon = axis("longitude", p.lon, false);
    lon.dims = yx;
    let projected = |name: &str, values: Vec<f64>, (standard, units): (&str, &str)| Coordinate {
        name: name.to_owned(),
        dims: vec![name.to_owned()],
        values: Values::Float(values),
        attributes: vec![
            ("standard_name".into(), Value::from(standard)),
            ("units".into(), Value::from(units)),
            ("axis".into(), Value::from(name.to_uppercase())),
        ],
    };
    let (name, attributes) = p.mapping;
    vec![
        lat,
        lon,
        projected("x", p.x, p.axes[0]),
        projected("y", p.y, p.axes[1]),
        Coordinate {
            name: name.to_owned(),
            dims: Vec::new(),
            values: Values::Int(vec![0]),
            attributes,
        },
    ]
}

/// A coordinate of every point of a grid stored as one `values` dimension.
fn point_axis(name: &str, values: Vec<f64>) -> Coordinate {
    let mut c = axis(name, values, false);
    c.dims = vec!["values".into()];
    c
}

/// The latitude and longitude of every point of a global reduced Gaussian grid, row by row
/// as stored: each parallel's `pl` points evenly spaced from longitude 0 (ecCodes' points);
/// `None` for a sub-area or a grid whose keys do not add up.
fn reduced_gaussian(k: &Keys<'_>) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = |key: &str| number(k.attributes, key);
    let pl = points_per_row(k)?;
    let gauss = n("N")?;
    if !(1.0..=MAX_GAUSSIAN_N).contains(&gauss) {
        return None;
    }
    let total: u64 = pl.iter().try_fold(0u64, |a, &b| a.checked_add(b))?;
    if pl.len() as f64 != 2.0 * gauss
        || total != k.points
        || n("longitudeOfFirstGridPointInDegrees")? != 0.0
    {
        return None;
    }
    let lats = gaussian_latitudes(gauss as usize);
    let cap = usize::try_from(total).ok()?;
    let (mut lat, mut lon) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
    for (row, &count) in pl.iter().enumerate() {
        let step = 360.0 / count as f64;
        for i in 0..count {
            lat.push(lats[row]);
            lon.push(i as f64 * step);
        }
    }
    Some((lat, lon))
}

/// The points per row (`pl`) of a reduced grid.
fn points_per_row(k: &Keys<'_>) -> Option<Vec<u64>> {
    k.attributes
        .iter()
        .find(|(name, _)| name == "pl")?
        .1
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect()
}

/// The latitude and longitude of every point of a reduced latitude/longitude grid, as
/// ecCodes' iterator places them: rows `Dj` apart from the first latitude; on each, `pl`
/// points from the first longitude, spread over the whole circle when the area is global
/// (within two of the finest rows' steps) and from first to last longitude otherwise,
/// each one step on from the one before (summed, as ecCodes sums them).
fn reduced_latlon(k: &Keys<'_>) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = |key: &str| number(k.attributes, key);
    let pl = points_per_row(k)?;
    let total: u64 = pl.iter().try_fold(0u64, |a, &b| a.checked_add(b))?;
    let finest = *pl.iter().max()?;
    if total != k.points || finest == 0 {
        return None;
    }
    let (lat1, lat2) = (
        n("latitudeOfFirstGridPointInDegrees")?,
        n("latitudeOfLastGridPointInDegrees")?,
    );
    let (lon1, lon2) = (
        n("longitudeOfFirstGridPointInDegrees")?,
        n("longitudeOfLastGridPointInDegrees")?,
    );
    let dj = n("jDirectionIncrementInDegrees")?;
    let smallest = 360.0 / finest as f64;
    let (span, local) = if 360.0 - (lon2 - lon1).abs() < 2.0 * smallest {
        (360.0, 0)
    } else if lon2 < lon1 {
        (lon2 + 360.0 - lon1, 1)
    } else {
        (lon2 - lon1, 1)
    };
    let dj = if lat1 > lat2 { -dj } else { dj };
    let cap = usize::try_from(total).ok()?;
    let (mut lat, mut lon) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
    let mut row_lat = lat1;
    for &count in &pl {
        let step = span / (count.saturating_sub(local)).max(1) as f64;
        let mut at = lon1;
        for _ in 0..count {
            lat.push(row_lat);
            lon.push(at);
            at += step;
        }
        row_lat += dj;
    }
    Some((lat, lon))
}

/// The latitude and longitude axes of a regular lat/lon or regular Gaussian grid, in the
/// order the points are stored.
fn axes(k: &Keys<'_>) -> Option<(Vec<f64>, Vec<f64>)> {
    if k.grid_type == "regular_ll" {
        return crate::axes::regular_ll_axes(k.attributes, k.shape);
    }
    let n = |key: &str| number(k.attributes, key);
    let (ni, nj) = (k.shape[1], k.shape[0]);
    let gauss = n("N")?;
    if !(1.0..=MAX_GAUSSIAN_N).contains(&gauss) || nj > 2 * gauss as u64 {
        return None;
    }
    let all = gaussian_latitudes(gauss as usize);
    let lat1 = n("latitudeOfFirstGridPointInDegrees")?;
    let north_up = n("jScansPositively").unwrap_or(0.0) == 1.0;
    // The first row's latitude, as stored (to the precision of the template), picks the
    // parallel the field starts on.
    let start = all
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - lat1).abs().total_cmp(&(b.1 - lat1).abs()))?
        .0;
    let lat: Vec<f64> = if north_up {
        // South to north: parallels from `start` towards the north pole.
        (0..nj as usize)
            .map(|i| start.checked_sub(i).map(|j| all[j]))
            .collect::<Option<_>>()?
    } else {
        all.get(start..start + nj as usize)?.to_vec()
    };
    Some((lat, longitudes(k.attributes, ni)?))
}

/// The `2n` latitudes of a Gaussian grid of `n` parallels per hemisphere, north to south,
/// in degrees: the zeros of the Legendre polynomial of degree `2n`, found by Newton's
/// method from the asymptotic first guesses, as ecCodes finds them.
#[must_use]
pub fn gaussian_latitudes(n: usize) -> Vec<f64> {
    let degree = 2 * n;
    let d = degree as f64;
    let mut north = Vec::with_capacity(n);
    for i in 0..n {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (d + 0.5)).cos();
        for _ in 0..100 {
            // P_degree(z) and its derivative by the three-term recurrence.
            let (mut p0, mut p1) = (1.0f64, z);
            for k in 2..=degree {
                let kf = k as f64;
                let p2 = ((2.0 * kf - 1.0) * z * p1 - (kf - 1.0) * p0) / kf;
                p0 = p1;
                p1 = p2;
            }
            let dp = d * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-15 {
                break;
            }
        }
        north.push(90.0 - z.acos().to_degrees());
    }
    let south: Vec<f64> = north.iter().rev().map(|l| -l).collect();
    north.extend(south);
    north
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_latitudes_are_ecmwf_s() {
        // ecCodes' `distinctLatitudes` of an N8 regular Gaussian grid.
        let expected = [
            81.650_590_75,
            70.834_639_75,
            59.954_858_64,
            49.060_718_63,
            38.161_211_91,
            27.259_207_65,
            16.355_932_96,
            5.452_039_83,
        ];
        let got = gaussian_latitudes(8);
        assert_eq!(got.len(), 16);
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 1e-8, "{g} against {e}");
        }
        assert_eq!(got[15], -got[0]);
        // N1280 (the ECMWF high-resolution grid) converges too.
        let big = gaussian_latitudes(1280);
        assert!(big.windows(2).all(|w| w[0] > w[1]));
        assert!(big[0] < 90.0 && big[0] > 89.9);
    }
}
