//! Simple packing as ecCodes encodes it (`grid_simple`, GRIB 2 template 5.0), so that the
//! bytes match ecCodes' own encoding of the same values: the reference value is the largest
//! IEEE single not above the minimum, the binary scale factor the one ecCodes' search settles
//! on, and each value `⌊(v · 10^D − R) · 2^−E + 0.5⌋`, the operations in ecCodes' order.

use crate::error::{Error, Result};
use crate::field::Simple;

/// The largest binary scale factor, and the bound on the decimal one's search (ecCodes'
/// `last`, for GRIB 2).
const LAST: i32 = 127;

/// `n^s` as ecCodes computes it (`codes_power`): one multiplication or division at a time,
/// so that `10^D` rounds as ecCodes' does.
pub(crate) fn power(s: i64, n: f64) -> f64 {
    let mut v = 1.0;
    if s < 0 {
        for _ in 0..s.unsigned_abs() {
            v /= n;
        }
    } else {
        for _ in 0..s {
            v *= n;
        }
    }
    v
}

/// The largest IEEE single-precision value not above `x`, as a double (ecCodes'
/// `grib_nearest_smaller_ieee_float`, which GRIB 2's reference value is stored through). Below
/// the smallest normal single, positive values give 0 and negative ones minus that normal, as
/// ecCodes' table does.
pub(crate) fn nearest_smaller_single(x: f64) -> Result<f64> {
    if x == 0.0 {
        return Ok(0.0);
    }
    if !x.is_finite() || x.abs() > f64::from(f32::MAX) {
        return Err(Error::Write {
            what: format!("{x} cannot be a GRIB 2 reference value (an IEEE single)"),
        });
    }
    if x.abs() < f64::from(f32::MIN_POSITIVE) {
        return Ok(if x > 0.0 {
            0.0
        } else {
            -f64::from(f32::MIN_POSITIVE)
        });
    }
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounded to the nearest single, then stepped down"
    )]
    let mut f = x as f32;
    if f64::from(f) > x {
        f = f.next_down();
    }
    Ok(f64::from(f))
}

/// The binary scale factor that fits `max − min` into `bits` bits, as ecCodes'
/// `grib_get_binary_scale_fact` searches for it.
pub(crate) fn binary_scale_factor(max: f64, min: f64, bits: u32) -> Result<i32> {
    let range = max - min;
    if !range.is_finite() || bits >= 64 {
        return Err(Error::Write {
            what: format!("a range of {range} in {bits} bits cannot be packed"),
        });
    }
    if bits == 0 || range == 0.0 {
        return Ok(0);
    }
    let dmaxint = power(i64::from(bits), 2.0) - 1.0;
    let maxint = (1u64 << bits) - 1;
    let mut zs = 1.0f64;
    let mut scale = 0i32;
    // A range so small (subnormal) or large that the scale leaves the doubles cannot be
    // packed: ecCodes' search would not end.
    let lost = || Error::Write {
        what: format!("a range of {range} cannot be scaled to {bits} bits"),
    };
    while range * zs <= dmaxint {
        scale -= 1;
        zs *= 2.0;
        if !zs.is_finite() {
            return Err(lost());
        }
    }
    while range * zs > dmaxint {
        scale += 1;
        zs /= 2.0;
        if zs == 0.0 {
            return Err(lost());
        }
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "C's (unsigned long) conversion, as ecCodes makes it"
    )]
    let rounded = |zs: f64| (range * zs + 0.5) as u64;
    while rounded(zs) <= maxint {
        scale -= 1;
        zs *= 2.0;
        if !zs.is_finite() {
            return Err(lost());
        }
    }
    while rounded(zs) > maxint {
        scale += 1;
        zs /= 2.0;
        if zs == 0.0 || !zs.is_finite() {
            return Err(lost());
        }
    }
    if scale > LAST {
        return Err(Error::Write {
            what: format!("a range of {range} needs a binary scale factor above {LAST}"),
        });
    }
    Ok(scale.max(-LAST))
}

/// What a field's simple packing already says, which ecCodes' choice starts from.
#[derive(Clone, Copy, Debug, Default)]
pub struct Previous {
    /// Its binary scale factor `E`.
    pub binary_scale_factor: i32,
    /// Its decimal scale factor `D`.
    pub decimal_scale_factor: i32,
}

/// The packing parameters ecCodes chooses for `values` (the points present) at `bits` bits
/// per value, from a field whose packing said `previous` (ecCodes' `pack_double` of
/// `grid_simple`): a constant field packs in 0 bits; a field that gave a decimal scale factor
/// with a zero binary one keeps `D` and takes the bits its range needs; otherwise `D` starts
/// from 0 and `E` is searched for.
pub fn parameters(values: &[f64], bits: u32, previous: Previous) -> Result<Simple> {
    choose(values, bits, previous, Scheme::Simple)
}

/// The parameters ecCodes chooses for `grid_png` (its `pack_double` there): the decimal scale
/// kept, `R` the largest single not above the scaled minimum, `E` the binary scale that fits
/// the range into `bits` (8, 16, 24 or 32); a constant field packs in 0 bits.
pub fn png_parameters(values: &[f64], bits: u32, previous: Previous) -> Result<Simple> {
    let Some(&first) = values.first() else {
        return Err(Error::Write {
            what: "a field with no values to pack".into(),
        });
    };
    if !matches!(bits, 8 | 16 | 24 | 32) {
        return Err(Error::Write {
            what: format!("PNG packing of {bits} bits per value (8, 16, 24 or 32)"),
        });
    }
    let (min, max) = range(values)?;
    let d = previous.decimal_scale_factor;
    if min == max {
        return Ok(Simple {
            reference_value: nearest_smaller_single(first * power(i64::from(d), 10.0))?,
            binary_scale_factor: 0,
            decimal_scale_factor: d,
            bits_per_value: 0,
        });
    }
    let decimal = power(i64::from(d), 10.0);
    let reference = nearest_smaller_single(min * decimal)?;
    Ok(Simple {
        reference_value: reference,
        binary_scale_factor: binary_scale_factor(max * decimal, reference, bits)?,
        decimal_scale_factor: d,
        bits_per_value: bits,
    })
}

/// The parameters ecCodes chooses for `grid_ccsds` (its `pack_double` there): as for simple
/// packing, but a field that gave a decimal scale factor with a zero binary one keeps its
/// bits and has `E` searched for at that `D`.
pub fn ccsds_parameters(values: &[f64], bits: u32, previous: Previous) -> Result<Simple> {
    choose(values, bits, previous, Scheme::Ccsds)
}

/// Which packing's rules [`choose`] follows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Simple,
    Ccsds,
}

fn choose(values: &[f64], bits: u32, previous: Previous, scheme: Scheme) -> Result<Simple> {
    let Some(&first) = values.first() else {
        return Err(Error::Write {
            what: "a field with no values to pack".into(),
        });
    };
    let (min, max) = range(values)?;
    if max == min {
        return Ok(Simple {
            reference_value: nearest_smaller_single(first)?,
            binary_scale_factor: 0,
            decimal_scale_factor: previous.decimal_scale_factor,
            bits_per_value: 0,
        });
    }
    let mut bits = bits;
    let given_decimal = previous.binary_scale_factor == 0 && previous.decimal_scale_factor != 0;
    match scheme {
        Scheme::Simple if bits == 0 && previous.decimal_scale_factor == 0 => bits = 24,
        Scheme::Ccsds if bits == 0 => bits = 24,
        _ => {}
    }
    if bits == 0 || given_decimal {
        let d = previous.decimal_scale_factor;
        let decimal = power(i64::from(d), 10.0);
        let (lo, hi) = (min * decimal, max * decimal);
        let reference = nearest_smaller_single(lo)?;
        if scheme == Scheme::Ccsds {
            return Ok(Simple {
                reference_value: reference,
                binary_scale_factor: binary_scale_factor(hi, reference, bits)?,
                decimal_scale_factor: d,
                bits_per_value: bits,
            });
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "C's (unsigned long) conversion of a non-negative value"
        )]
        let span = (hi - lo).abs().ceil() as u64;
        return Ok(Simple {
            reference_value: reference,
            binary_scale_factor: 0,
            decimal_scale_factor: d,
            bits_per_value: 64 - span.leading_zeros(),
        });
    }
    let f = power(i64::from(bits), 2.0) - 1.0;
    let (min_range, max_range) = (
        power(-i64::from(LAST), 2.0) * f,
        power(i64::from(LAST), 2.0) * f,
    );
    let (mut d, mut decimal) = (0i32, 1.0f64);
    let (mut lo, mut hi) = (min, max);
    let mut range = hi - lo;
    while range < min_range {
        d += 1;
        decimal *= 10.0;
        lo = min * decimal;
        hi = max * decimal;
        range = hi - lo;
    }
    while range > max_range {
        d -= 1;
        decimal /= 10.0;
        lo = min * decimal;
        hi = max * decimal;
        range = hi - lo;
    }
    let reference = nearest_smaller_single(lo)?;
    Ok(Simple {
        reference_value: reference,
        binary_scale_factor: binary_scale_factor(hi, reference, bits)?,
        decimal_scale_factor: d,
        bits_per_value: bits,
    })
}

/// The smallest and largest of `values` (not empty), runs of them side by side; of equal
/// ones (0 and −0) the first, as ecCodes' comparisons keep it. A value that is not finite is
/// an error.
pub(crate) fn range(values: &[f64]) -> Result<(f64, f64)> {
    use rayon::prelude::*;
    let lower = |a: f64, b: f64| if b < a { b } else { a };
    let higher = |a: f64, b: f64| if b > a { b } else { a };
    // In order, as ecCodes compares: of equal values the first is kept.
    let in_order = |run: &[f64]| {
        run.iter().fold(
            (f64::INFINITY, f64::NEG_INFINITY, false),
            |(lo, hi, nan), &v| (lower(lo, v), higher(hi, v), nan | v.is_nan()),
        )
    };
    // Eight lanes at a time, which the compiler keeps in vector registers; lanes may meet
    // equal values out of order, which only matters for 0 and −0: a run whose extreme is a
    // zero, and that holds a zero of the other sign, is scanned again in order.
    let in_lanes = |run: &[f64]| {
        let (mut lo, mut hi, mut nan) = ([f64::INFINITY; 8], [f64::NEG_INFINITY; 8], [false; 8]);
        let mut eights = run.chunks_exact(8);
        for e in eights.by_ref() {
            for l in 0..8 {
                lo[l] = lower(lo[l], e[l]);
                hi[l] = higher(hi[l], e[l]);
                nan[l] |= e[l].is_nan();
            }
        }
        let rest = in_order(eights.remainder());
        let r = (0..8).fold(rest, |(a, b, c), l| {
            (lower(a, lo[l]), higher(b, hi[l]), c | nan[l])
        });
        let other_zero = |z: f64| {
            z == 0.0
                && run
                    .iter()
                    .any(|v| *v == 0.0 && v.is_sign_negative() != z.is_sign_negative())
        };
        if other_zero(r.0) || other_zero(r.1) {
            in_order(run)
        } else {
            r
        }
    };
    let (min, max, nan) = values.par_chunks(RUN).map(in_lanes).reduce(
        || (f64::INFINITY, f64::NEG_INFINITY, false),
        |a, b| (lower(a.0, b.0), higher(a.1, b.1), a.2 | b.2),
    );
    if nan || !min.is_finite() || !max.is_finite() {
        let bad = values
            .iter()
            .find(|v| !v.is_finite())
            .copied()
            .unwrap_or(min);
        return Err(Error::Write {
            what: format!("{bad} cannot be packed (a missing point goes in the bitmap)"),
        });
    }
    Ok((min, max))
}

/// The integer each value packs to (ecCodes' `⌊(v · 10^D − R) · 2^−E + 0.5⌋`).
pub(crate) fn codes<'v>(values: &'v [f64], p: &Simple) -> impl Iterator<Item = u64> + 'v {
    let decimal = power(i64::from(p.decimal_scale_factor), 10.0);
    let divisor = power(-i64::from(p.binary_scale_factor), 2.0);
    let reference = p.reference_value;
    values.iter().map(move |&v| {
        let x = ((v * decimal) - reference) * divisor + 0.5;
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "C's (unsigned long) conversion, as ecCodes makes it"
        )]
        let q = x as u64;
        q
    })
}

/// Values packed per task when a field is packed on several cores: a multiple of 8, so that
/// each run of values fills whole bytes whatever the width.
const RUN: usize = 1 << 16;

/// `values` packed with `p`, most significant bit first (ecCodes'
/// `grib_encode_double_array`): `ceil(n · bits / 8)` bytes. Runs of values are packed side by
/// side, each into its own whole bytes.
pub fn pack(values: &[f64], p: &Simple) -> Result<Vec<u8>> {
    use rayon::prelude::*;
    let bits = p.bits_per_value;
    if bits > 63 {
        return Err(Error::Write {
            what: format!("{bits} bits per value"),
        });
    }
    let n = values.len() as u64;
    let len = tensor_core::checked::mul(n, u64::from(bits), "packed bits")?.div_ceil(8);
    let mut out = tensor_core::buffer::try_filled(
        tensor_core::checked::to_usize(len, "packed bytes")?,
        0u8,
        "packed bytes",
    )?;
    if bits == 0 {
        return Ok(out);
    }
    let run_bytes = RUN / 8 * bits as usize;
    out.par_chunks_mut(run_bytes)
        .zip(values.par_chunks(RUN))
        .for_each(|(dst, run)| pack_run(run, p, dst));
    Ok(out)
}

/// The code of each value in a big-endian container of `width` bytes (1 to 4), as ecCodes
/// hands CCSDS packing's integers to the coder and lays out PNG packing's samples; runs of
/// values side by side.
pub(crate) fn containers(values: &[f64], p: &Simple, width: usize) -> Result<Vec<u8>> {
    use rayon::prelude::*;
    let len = tensor_core::checked::mul(values.len() as u64, width as u64, "packed samples")?;
    let mut out = tensor_core::buffer::try_filled(
        tensor_core::checked::to_usize(len, "packed samples")?,
        0u8,
        "packed samples",
    )?;
    out.par_chunks_mut(RUN * width)
        .zip(values.par_chunks(RUN))
        .for_each(|(dst, run)| whole_bytes(codes(run, p), width, dst));
    Ok(out)
}

/// `codes` written into `dst` in big-endian containers of `width` bytes (1 to 4), each its
/// code's low bytes (ecCodes' cast to the container).
fn whole_bytes(codes: impl Iterator<Item = u64>, width: usize, dst: &mut [u8]) {
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the code's low bytes, as ecCodes' cast to the container"
    )]
    fn put<const W: usize>(codes: impl Iterator<Item = u64>, dst: &mut [u8]) {
        for (d, q) in dst.chunks_exact_mut(W).zip(codes) {
            d.copy_from_slice(&(q as u32).to_be_bytes()[4 - W..]);
        }
    }
    match width {
        1 => put::<1>(codes, dst),
        2 => put::<2>(codes, dst),
        3 => put::<3>(codes, dst),
        _ => put::<4>(codes, dst),
    }
}

/// One run of values packed into `dst`: in whole bytes directly at 8, 16, 24 and 32 bits.
fn pack_run(values: &[f64], p: &Simple, dst: &mut [u8]) {
    let q = codes(values, p);
    match p.bits_per_value {
        bits @ (8 | 16 | 24 | 32) => whole_bytes(q, bits as usize / 8, dst),
        bits => {
            let mut packer = tensor_pipeline::dense_bits::Packer::new(dst, bits);
            for code in q {
                packer.push(code);
            }
            packer.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_the_largest_single_not_above_the_minimum() {
        for x in [
            280.123_456_789_f64,
            -3.3,
            1e-30,
            -1e-30,
            1.0,
            0.1,
            101_325.0,
        ] {
            let r = nearest_smaller_single(x).unwrap();
            assert!(r <= x, "{x} {r}");
            #[allow(clippy::cast_possible_truncation)]
            let up = (r as f32).next_up();
            assert!(
                f64::from(up) > x,
                "{x}: {r} is not the largest single below it"
            );
        }
        assert_eq!(nearest_smaller_single(1e-40).unwrap(), 0.0);
        assert_eq!(
            nearest_smaller_single(-1e-40).unwrap(),
            -f64::from(f32::MIN_POSITIVE)
        );
        assert!(nearest_smaller_single(f64::NAN).is_err());
    }

    #[test]
    fn packing_round_trips_within_half_a_step_and_constants_take_no_bits() {
        let values: Vec<f64> = (0..1000).map(|i| 250.0 + f64::from(i) * 0.0731).collect();
        for bits in [1, 7, 12, 16, 24, 31] {
            let p = parameters(&values, bits, Previous::default()).unwrap();
            let packed = pack(&values, &p).unwrap();
            assert_eq!(packed.len(), (1000 * bits as usize).div_ceil(8));
            let step = power(i64::from(p.binary_scale_factor), 2.0);
            let mut r = crate::bits::BitReader::new(&packed);
            for &v in &values {
                let q = r.read(bits).unwrap();
                let back = p.reference_value + q as f64 * step;
                assert!((back - v).abs() <= step / 2.0 + 1e-9, "{bits}: {v} {back}");
            }
        }
        let flat = parameters(&[5.0; 10], 16, Previous::default()).unwrap();
        assert_eq!((flat.bits_per_value, flat.reference_value), (0, 5.0));
        assert!(pack(&[5.0; 10], &flat).unwrap().is_empty());
        assert!(parameters(&[1.0, f64::NAN], 16, Previous::default()).is_err());
        assert!(parameters(&[], 16, Previous::default()).is_err());
    }

    #[test]
    fn a_decimal_scale_with_no_binary_one_decides_the_bits() {
        let p = parameters(
            &[1.25, 2.5, 3.75],
            12,
            Previous {
                binary_scale_factor: 0,
                decimal_scale_factor: 2,
            },
        )
        .unwrap();
        // 125..375: a span of 250 needs 8 bits.
        assert_eq!(
            (
                p.decimal_scale_factor,
                p.binary_scale_factor,
                p.bits_per_value
            ),
            (2, 0, 8)
        );
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;

    #[test]
    fn the_first_of_equal_extremes_is_kept_as_ecodes_keeps_it() {
        let mut v = vec![1.0; 1000];
        v[3] = -0.0;
        v[700] = 0.0;
        let (min, _) = range(&v).unwrap();
        assert!(min == 0.0 && min.is_sign_negative());
        v[3] = 0.0;
        v[700] = -0.0;
        let (min, _) = range(&v).unwrap();
        assert!(min == 0.0 && min.is_sign_positive());
        let mut w = vec![-1.0; 1000];
        w[10] = 0.0;
        w[20] = -0.0;
        let (_, max) = range(&w).unwrap();
        assert!(max.is_sign_positive());
        let big: Vec<f64> = (0..200_000).map(|i| f64::from(i % 977) - 300.5).collect();
        assert_eq!(range(&big).unwrap(), (-300.5, 675.5));
        assert!(range(&[1.0, f64::INFINITY]).is_err());
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;

    #[test]
    fn ranges_past_the_doubles_are_errors_not_endless_searches() {
        assert!(binary_scale_factor(5e-324, 0.0, 32).is_err());
        assert!(binary_scale_factor(1e308, -1e308, 8).is_err());
        assert_eq!(binary_scale_factor(4095.0, 0.0, 12).unwrap(), 0);
    }
}
