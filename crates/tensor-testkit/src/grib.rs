//! GRIB 2 messages made here, for tests that need fields of a chosen size: a regular
//! latitude/longitude grid (template 3.0), an analysis on one isobaric level (4.0), simple
//! packing (5.0) of 16-bit values, no bitmap.

/// One GRIB 2 message of temperature on `level` hPa over an `ni` × `nj` grid, value `k`
/// of the grid `base + k mod 1000` (as 16-bit packed integers, the reference value `base`).
#[must_use]
pub fn simple_message(ni: u32, nj: u32, level: u32, base: f32) -> Vec<u8> {
    let points = ni * nj;
    let mut s1 = vec![0, 0, 0, 21, 1];
    s1.extend_from_slice(&98u16.to_be_bytes()); // centre: ECMWF
    s1.extend_from_slice(&0u16.to_be_bytes()); // sub-centre
    s1.extend_from_slice(&[28, 0, 1]); // tables version, local version, reference time: start of forecast
    s1.extend_from_slice(&2026u16.to_be_bytes());
    s1.extend_from_slice(&[11, 20, 0, 0, 0, 0, 0]); // month .. second, status, type: analysis
    let mut s3 = vec![0, 0, 0, 72, 3, 0];
    s3.extend_from_slice(&points.to_be_bytes());
    s3.extend_from_slice(&[0, 0, 0, 0]); // no optional list, template 3.0
    s3.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // spherical Earth, 6371229 m
    s3.extend_from_slice(&ni.to_be_bytes());
    s3.extend_from_slice(&nj.to_be_bytes());
    s3.extend_from_slice(&[0; 8]); // basic angle, subdivisions: micro-degrees
    let step = |n: u32| 1_000_000 * 10 / n.max(2); // grid spacing in micro-degrees
    let (di, dj) = (step(ni), step(nj));
    s3.extend_from_slice(&(90_000_000u32).to_be_bytes()); // La1
    s3.extend_from_slice(&0u32.to_be_bytes()); // Lo1
    s3.push(48); // increments given
    s3.extend_from_slice(&(90_000_000 - dj * (nj - 1)).to_be_bytes()); // La2
    s3.extend_from_slice(&(di * (ni - 1)).to_be_bytes()); // Lo2
    s3.extend_from_slice(&di.to_be_bytes());
    s3.extend_from_slice(&dj.to_be_bytes());
    s3.push(0); // scanning: west to east, north to south
    let mut s4 = vec![0, 0, 0, 34, 4, 0, 0, 0, 0];
    s4.extend_from_slice(&[0, 0, 2, 0, 0, 0, 0, 0, 1]); // temperature; analysis; hours
    s4.extend_from_slice(&0u32.to_be_bytes()); // forecast time
    s4.extend_from_slice(&[100, 0]); // isobaric surface, in Pa
    s4.extend_from_slice(&(level * 100).to_be_bytes());
    s4.extend_from_slice(&[255, 0, 0, 0, 0, 0]);
    let mut s5 = vec![0, 0, 0, 21, 5];
    s5.extend_from_slice(&points.to_be_bytes());
    s5.extend_from_slice(&0u16.to_be_bytes());
    s5.extend_from_slice(&base.to_bits().to_be_bytes());
    s5.extend_from_slice(&[0, 0, 0, 0, 16, 0]); // E = 0, D = 0, 16 bits, floats
    let s6 = vec![0, 0, 0, 6, 6, 255];
    let data_len = 5 + 2 * points;
    let mut s7 = data_len.to_be_bytes().to_vec();
    s7.push(7);
    s7.extend((0..points).flat_map(|k| ((k % 1000) as u16).to_be_bytes()));
    let body: Vec<u8> = [s1, s3, s4, s5, s6, s7].concat();
    let total = 16 + body.len() as u64 + 4;
    let mut out = b"GRIB\0\0\0\x02".to_vec();
    out.extend_from_slice(&total.to_be_bytes());
    out.extend(body);
    out.extend_from_slice(b"7777");
    out
}
