//! Size arithmetic that reports overflow instead of wrapping.
//!
//! Every size read from a file goes through these functions before it is used to index or
//! allocate. Each takes a short description of the quantity, which ends up in the error.

use crate::error::{Error, Result};

/// `a * b`, or an overflow error naming `what`.
pub fn mul(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_mul(b).ok_or(Error::Overflow { what })
}

/// `a + b`, or an overflow error naming `what`.
pub fn add(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_add(b).ok_or(Error::Overflow { what })
}

/// The product of `factors` (1 for none), or an overflow error naming `what`.
pub fn product<I>(factors: I, what: &'static str) -> Result<u64>
where
    I: IntoIterator,
    I::Item: Into<u64>,
{
    factors
        .into_iter()
        .try_fold(1u64, |acc, f| mul(acc, f.into(), what))
}

/// `value` as a `usize`, or an overflow error on targets where it does not fit.
pub fn to_usize(value: u64, what: &'static str) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::Overflow { what })
}

/// Checks that `len` bytes starting at `offset` lie within an input of `total` bytes and
/// returns the range as `usize` indices.
pub fn range(
    offset: u64,
    len: u64,
    total: u64,
    what: &'static str,
) -> Result<std::ops::Range<usize>> {
    let end = add(offset, len, what)?;
    if end > total {
        return Err(Error::Truncated {
            what,
            offset,
            needed: len,
            available: total,
        });
    }
    Ok(to_usize(offset, what)?..to_usize(end, what)?)
}

/// Rounds `value` up to a multiple of `align` (a power of two or any non-zero value).
pub fn align_up(value: u64, align: u64, what: &'static str) -> Result<u64> {
    if align == 0 {
        return Err(Error::InvalidArgument(format!(
            "alignment of {what} must not be zero"
        )));
    }
    let rem = value % align;
    if rem == 0 {
        Ok(value)
    } else {
        add(value, align - rem, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, Kinded};

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        assert_eq!(mul(1 << 32, 1 << 31, "x").unwrap(), 1 << 63);
        let e = mul(1 << 40, 1 << 40, "element count").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
        assert_eq!(e.to_string(), "element count overflows 64-bit arithmetic");
        assert!(add(u64::MAX, 1, "x").is_err());
        assert_eq!(product([2u64, 3, 4], "x").unwrap(), 24);
        assert_eq!(product(Vec::<u64>::new(), "x").unwrap(), 1);
        assert_eq!(product([0u64, u64::MAX, u64::MAX], "x").unwrap(), 0);
        assert!(product([u64::MAX, 2], "x").is_err());
    }

    #[test]
    fn ranges_stay_inside_the_input() {
        assert_eq!(range(8, 4, 12, "x").unwrap(), 8..12);
        assert_eq!(range(12, 0, 12, "x").unwrap(), 12..12);
        let e = range(8, 5, 12, "tensor data").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert!(e.to_string().contains("offset 8"));
        assert!(range(u64::MAX, 2, u64::MAX, "x").is_err());
    }

    #[test]
    fn align_up_rounds_and_checks() {
        assert_eq!(align_up(0, 64, "x").unwrap(), 0);
        assert_eq!(align_up(1, 64, "x").unwrap(), 64);
        assert_eq!(align_up(64, 64, "x").unwrap(), 64);
        assert_eq!(align_up(65, 8, "x").unwrap(), 72);
        assert!(align_up(u64::MAX, 64, "x").is_err());
        assert!(align_up(3, 0, "x").is_err());
        assert_eq!(to_usize(7, "x").unwrap(), 7);
    }
}
