//! The coordinates of a field's grid from ecCodes' keys, as a field's attributes carry them
//! (GRIB files, and files converted from GRIB that kept those attributes).

use tensor_core::cbor::Value;

/// A number among `attributes` under ecCodes' key `key`.
pub(crate) fn number(attributes: &[(String, Value)], key: &str) -> Option<f64> {
    match &attributes.iter().find(|(k, _)| k == key)?.1 {
        Value::Float(f) => Some(*f),
        // Grid counts and flags: small integers, exact in f64.
        v => v.as_i128().map(|n| n as f64),
    }
}

/// `num` values from `start` to `stop`, both included, evenly spaced: element `i` is
/// `i * step + start` and the last is `stop` itself (the values numpy's `linspace` gives).
fn evenly(start: f64, stop: f64, num: u64) -> Vec<f64> {
    let div = num.saturating_sub(1).max(1) as f64;
    let spacing = (stop - start) / div;
    let mut v: Vec<f64> = (0..num).map(|i| i as f64 * spacing + start).collect();
    if let (Some(last), true) = (v.last_mut(), num > 1) {
        *last = stop;
    }
    v
}

/// What cfgrib calls a regular latitude/longitude grid's two dimensions, and their CF units:
/// `latitude` in `degrees_north`, `longitude` in `degrees_east`.
pub const LL_AXES: [(&str, &str); 2] =
    [("latitude", "degrees_north"), ("longitude", "degrees_east")];

/// The latitudes and longitudes, in degrees, of a field on a regular latitude/longitude
/// grid (`gridType` `regular_ll`) stored row by row with `shape` `[Nj, Ni]`: one value per
/// row and one per column, in the order the points are stored. Longitudes run past 360
/// where the grid crosses the meridian it starts west of (as ecCodes' `Ni` points do).
/// `None` for any other grid, a shape that does not match, or a key missing.
#[must_use]
pub fn regular_ll_axes(
    attributes: &[(String, Value)],
    shape: &[u64],
) -> Option<(Vec<f64>, Vec<f64>)> {
    let text = |k: &str| attributes.iter().find(|(key, _)| key == k)?.1.as_text();
    if text("gridType") != Some("regular_ll") {
        return None;
    }
    lat_lon_axes(attributes, shape)
}

/// [`regular_ll_axes`] of any grid laid out as a regular lat/lon grid is (a rotated grid's
/// axes on its own sphere), whatever its `gridType`.
pub(crate) fn lat_lon_axes(
    attributes: &[(String, Value)],
    shape: &[u64],
) -> Option<(Vec<f64>, Vec<f64>)> {
    if number(attributes, "jPointsAreConsecutive").unwrap_or(0.0) != 0.0 {
        return None;
    }
    let n = |k| number(attributes, k);
    let (ni, nj) = (n("Ni")?, n("Nj")?);
    let (lat1, lat2) = (
        n("latitudeOfFirstGridPointInDegrees")?,
        n("latitudeOfLastGridPointInDegrees")?,
    );
    if shape != [nj as u64, ni as u64] || ni < 1.0 || nj < 1.0 {
        return None;
    }
    Some((
        evenly(lat1, lat2, shape[0]),
        longitudes(attributes, shape[1])?,
    ))
}

/// The `ni` longitudes of a row of a regular grid (lat/lon, Gaussian or rotated), from its
/// first to its last point, in the order they are stored, as ecCodes' points give them:
///
/// - eastward, a row whose first point is east of its last (330° to 90°) starts 360° lower
///   (−30° to 90°) when its last point lies more than one step east of 0°; otherwise (330°
///   to 0°, 359.5° to 0.5° by 0.5°) it keeps its first point and runs past 360°;
/// - westward, ecCodes keeps the first point, so a row whose last point is east of its first
///   (90° to 330°) runs below 0° (90° to −30°).
///
/// ecCodes gives every point but the last so; the last it gives as coded (90°, or 330°
/// westward), 360° away where the row crosses 0°: here the axis stays monotonic, as a
/// coordinate must.
pub(crate) fn longitudes(attributes: &[(String, Value)], ni: u64) -> Option<Vec<f64>> {
    let n = |k| number(attributes, k);
    let (mut lon1, mut lon2) = (
        n("longitudeOfFirstGridPointInDegrees")?,
        n("longitudeOfLastGridPointInDegrees")?,
    );
    let west = n("iScansNegatively").unwrap_or(0.0) == 1.0;
    if !west && lon2 < lon1 {
        // The step between the points (ecCodes spreads them over the span, whatever
        // increment the message codes, and decides on that step).
        let step = (lon2 + 360.0 - lon1) / (ni.max(2) - 1) as f64;
        if lon2 > step {
            lon1 -= 360.0;
        } else {
            lon2 += 360.0;
        }
    }
    if west && lon2 > lon1 {
        lon2 -= 360.0;
    }
    Some(evenly(lon1, lon2, ni))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(lon1: f64, lon2: f64, west: u64) -> Vec<(String, Value)> {
        [
            ("gridType", Value::Text("regular_ll".into())),
            ("Ni", Value::Uint(4)),
            ("Nj", Value::Uint(3)),
            ("latitudeOfFirstGridPointInDegrees", Value::Float(60.0)),
            ("latitudeOfLastGridPointInDegrees", Value::Uint(0)),
            ("longitudeOfFirstGridPointInDegrees", Value::Float(lon1)),
            ("longitudeOfLastGridPointInDegrees", Value::Float(lon2)),
            ("iScansNegatively", Value::Uint(west)),
            ("jPointsAreConsecutive", Value::Uint(0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    #[test]
    fn a_regular_grid_has_evenly_spaced_axes() {
        let (lat, lon) = regular_ll_axes(&grid(0.0, 270.0, 0), &[3, 4]).unwrap();
        assert_eq!(lat, [60.0, 30.0, 0.0]);
        assert_eq!(lon, [0.0, 90.0, 180.0, 270.0]);
        // Crossing 0°, as ecCodes' points give it (ecCodes 2.50, `longitudes`): eastward
        // from 360° lower when the last point lies more than a step east of 0°, else on past
        // 360°; westward from the first point down.
        let lon = |a, b, west| regular_ll_axes(&grid(a, b, west), &[3, 4]).unwrap().1;
        assert_eq!(lon(330.0, 60.0, 0), [-30.0, 0.0, 30.0, 60.0]);
        assert_eq!(lon(359.0, 2.0, 0), [-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(
            lon(180.0, 90.0, 0),
            [180.0, 270.0, 360.0, 450.0],
            "90 is one step"
        );
        assert_eq!(lon(270.0, 0.0, 0), [270.0, 300.0, 330.0, 360.0]);
        assert_eq!(lon(240.0, 30.0, 0), [240.0, 290.0, 340.0, 390.0]);
        assert_eq!(lon(90.0, 180.0, 1), [90.0, 0.0, -90.0, -180.0]);
        assert_eq!(lon(90.0, 0.0, 1), [90.0, 60.0, 30.0, 0.0]);
        // The coded increment does not decide (ecCodes steps over the span).
        let mut g = grid(330.0, 60.0, 0);
        g.push(("iDirectionIncrementInDegrees".into(), Value::Float(70.0)));
        assert_eq!(
            regular_ll_axes(&g, &[3, 4]).unwrap().1,
            [-30.0, 0.0, 30.0, 60.0]
        );
    }

    #[test]
    fn other_grids_and_shapes_have_none() {
        assert!(regular_ll_axes(&grid(0.0, 270.0, 0), &[4, 3]).is_none());
        assert!(regular_ll_axes(&grid(0.0, 270.0, 0), &[12]).is_none());
        let mut g = grid(0.0, 270.0, 0);
        g[0].1 = Value::Text("regular_gg".into());
        assert!(regular_ll_axes(&g, &[3, 4]).is_none());
        let g = grid(0.0, 270.0, 0)[1..].to_vec();
        assert!(regular_ll_axes(&g, &[3, 4]).is_none());
    }
}
