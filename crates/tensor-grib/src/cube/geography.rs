//! The grid part of a cube: its dimensions and the coordinates of its points, computed as
//! ecCodes computes a field's `latitudes` and `longitudes`.

use super::keys::Keys;
use super::{Coordinate, Values};
use crate::axes::{evenly, number};
use tensor_core::cbor::Value;

/// The grid dimensions of a variable, their sizes, and the coordinates that go with them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Geography {
    pub dims: Vec<String>,
    pub shape: Vec<u64>,
    pub coordinates: Vec<Coordinate>,
    /// The grid's keys, so that two grids without coordinates are told apart.
    pub keys: Vec<(String, Value)>,
}

/// Grids whose points have a latitude and a longitude axis.
const AXES: [&str; 2] = ["regular_ll", "regular_gg"];
/// Grids of `Ny` rows of `Nx` points that are not on latitude/longitude axes.
const PLANE: [&str; 7] = [
    "rotated_ll",
    "rotated_gg",
    "lambert",
    "lambert_azimuthal_equal_area",
    "albers",
    "polar_stereographic",
    "mercator",
];

/// ecCodes' `gridDefinitionDescription` of a grid type, which GRIB 1 words its own way.
pub(crate) fn description(edition: i64, grid_type: &str) -> Option<&'static str> {
    if edition == 1 {
        return Some(match grid_type {
            "regular_ll" => "Latitude/Longitude Grid",
            "regular_gg" | "reduced_gg" => "Gaussian Latitude/Longitude Grid",
            "rotated_ll" => "Rotated Latitude/Longitude grid",
            _ => return None,
        });
    }
    Some(match grid_type {
        "regular_ll" => "Latitude/longitude",
        "rotated_ll" => "Rotated latitude/longitude",
        "regular_gg" | "reduced_gg" => "Gaussian latitude/longitude",
        "rotated_gg" => "Rotated Gaussian latitude/longitude",
        "lambert" => "Lambert conformal",
        "polar_stereographic" => "Polar stereographic projection",
        "mercator" => "Mercator",
        "lambert_azimuthal_equal_area" => "Lambert azimuthal equal area",
        _ => return None,
    })
}

/// The grid keys among a field's attributes, as cfgrib names them in `GRIB_*` attributes:
/// `Nx`/`Ny` for `Ni`/`Nj`.
pub(crate) fn grid_keys(k: &Keys<'_>) -> Vec<(String, Value)> {
    const KEYS: [&str; 14] = [
        "N",
        "Ni",
        "Nj",
        "iDirectionIncrementInDegrees",
        "jDirectionIncrementInDegrees",
        "iScansNegatively",
        "jScansPositively",
        "jPointsAreConsecutive",
        "latitudeOfFirstGridPointInDegrees",
        "longitudeOfFirstGridPointInDegrees",
        "latitudeOfLastGridPointInDegrees",
        "longitudeOfLastGridPointInDegrees",
        "latitudeOfSouthernPoleInDegrees",
        "longitudeOfSouthernPoleInDegrees",
    ];
    let regular = k.grid_type != "regular_gg";
    k.attributes
        .iter()
        .filter(|(n, _)| KEYS.contains(&n.as_str()))
        .map(|(n, v)| {
            let name = match n.as_str() {
                "Ni" if regular => "Nx",
                "Nj" if regular => "Ny",
                other => other,
            };
            (name.to_owned(), v.clone())
        })
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
    let keys = grid_keys(k);
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
            keys,
        };
    }
    if PLANE.contains(&k.grid_type.as_str()) && k.shape.len() == 2 {
        return Geography {
            dims: vec!["y".into(), "x".into()],
            shape: k.shape.to_vec(),
            coordinates: Vec::new(),
            keys,
        };
    }
    Geography {
        dims: vec!["values".into()],
        shape: vec![k.points],
        coordinates: Vec::new(),
        keys,
    }
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
    if !(1.0..=100_000.0).contains(&gauss) || nj > 2 * gauss as u64 {
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
    let (mut lon1, mut lon2) = (
        n("longitudeOfFirstGridPointInDegrees")?,
        n("longitudeOfLastGridPointInDegrees")?,
    );
    let west = n("iScansNegatively").unwrap_or(0.0) == 1.0;
    if !west && lon2 < lon1 {
        lon2 += 360.0;
    }
    if west && lon2 > lon1 {
        lon1 += 360.0;
    }
    Some((lat, evenly(lon1, lon2, ni)))
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
