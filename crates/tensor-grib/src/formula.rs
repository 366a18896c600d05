//! Simple packing's formula, `Y = (X·2^E + R)·10^−D`, as ecCodes evaluates it: the scale
//! factors computed its way, and the constant field. Every packing built on simple packing
//! ends in it.

use crate::field::Simple;

/// `n` to the power `s` as ecCodes computes it (`codes_power`): repeated multiplication or
/// division by `n`, one step at a time. `10^−D` this way is not always the correctly
/// rounded power, and the decoded values depend on it.
pub(crate) fn codes_power(s: i64, n: f64) -> f64 {
    let mut r = 1.0;
    if s == 0 {
        return 1.0;
    }
    if s == 1 {
        return n;
    }
    let mut s = s;
    while s < 0 {
        r /= n;
        s += 1;
    }
    while s > 0 {
        r *= n;
        s -= 1;
    }
    r
}

impl Simple {
    /// The factors ecCodes scales by, `(2^E, 10^−D)`, computed as ecCodes computes them
    /// (one multiplication or division at a time).
    #[must_use]
    pub fn scales(&self) -> (f64, f64) {
        (
            codes_power(i64::from(self.binary_scale_factor), 2.0),
            codes_power(-i64::from(self.decimal_scale_factor), 10.0),
        )
    }
}

/// The simple-packing formula as ecCodes evaluates it, `Y = (X·2^E + R)·10^−D`, with its
/// factors computed once per field: every packing built on simple packing ends in it.
#[derive(Clone, Copy)]
pub(crate) struct Formula {
    s: f64,
    r: f64,
    d: f64,
}

impl Formula {
    pub(crate) fn of(p: &Simple) -> Self {
        let (s, d) = p.scales();
        Formula {
            s,
            r: p.reference_value,
            d,
        }
    }

    /// The value of packed integer `x`.
    #[inline]
    pub(crate) fn value(self, x: f64) -> f64 {
        (x * self.s + self.r) * self.d
    }
}

/// ecCodes' constant field: with 0 bits per value every value is the reference value as it
/// is (not scaled by 10^−D). Whether `out` was filled so.
pub(crate) fn constant(p: &Simple, out: &mut [f64]) -> bool {
    let is = p.bits_per_value == 0;
    if is {
        out.fill(p.reference_value);
    }
    is
}

#[cfg(test)]
mod tests {
    use super::codes_power;

    #[test]
    fn powers_are_computed_step_by_step() {
        assert_eq!(codes_power(0, 10.0), 1.0);
        assert_eq!(codes_power(-1, 10.0), 0.1);
        assert_eq!(codes_power(-2, 10.0), 0.1 / 10.0);
        assert_eq!(codes_power(3, 2.0), 8.0);
        assert_eq!(codes_power(-3, 2.0), 0.125);
    }
}
