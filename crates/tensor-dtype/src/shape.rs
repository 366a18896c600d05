//! Shapes and strides.
//!
//! Shapes are `u64` dimension sizes; an empty shape is a 0-d tensor with one element, and a
//! zero anywhere gives an empty tensor. Element strides (what descriptors store) are `u64`;
//! byte strides (what views use) are `i64`, because views may walk backwards.

use crate::dtype::Dtype;
use crate::error::{Error, Result};
use tensor_core::checked;

/// The order in which a contiguous tensor's elements are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Row-major: the last index varies fastest (C, `NumPy`'s default).
    #[default]
    C,
    /// Column-major: the first index varies fastest (Fortran).
    Fortran,
}

/// The number of elements of `shape` (1 for a 0-d shape), with overflow reported.
pub fn element_count(shape: &[u64]) -> Result<u64> {
    Ok(checked::product(shape.iter().copied(), "element count")?)
}

/// Bytes a contiguous `dtype` tensor of `shape` occupies, with overflow reported.
pub fn byte_len(dtype: Dtype, shape: &[u64]) -> Result<u64> {
    dtype.payload_bytes(element_count(shape)?)
}

/// C-contiguous strides in elements: `strides[i] = strides[i + 1] * shape[i + 1]`, the last
/// one being 1. `[100, 200]` gives `[200, 1]`; `[4, 5, 6]` gives `[30, 6, 1]`.
pub fn c_strides(shape: &[u64]) -> Result<Vec<u64>> {
    let mut strides = vec![1u64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = checked::mul(strides[i + 1], shape[i + 1], "stride")?;
    }
    Ok(strides)
}

/// Fortran-contiguous strides in elements: `[100, 200]` gives `[1, 100]`.
pub fn f_strides(shape: &[u64]) -> Result<Vec<u64>> {
    let mut strides = vec![1u64; shape.len()];
    for i in 1..shape.len() {
        strides[i] = checked::mul(strides[i - 1], shape[i - 1], "stride")?;
    }
    Ok(strides)
}

/// Contiguous strides in elements for `order`.
pub fn strides(shape: &[u64], order: Order) -> Result<Vec<u64>> {
    match order {
        Order::C => c_strides(shape),
        Order::Fortran => f_strides(shape),
    }
}

/// Contiguous strides in bytes for elements of `item_size` bytes.
pub fn byte_strides(shape: &[u64], item_size: usize, order: Order) -> Result<Vec<i64>> {
    strides(shape, order)?
        .into_iter()
        .map(|s| {
            let bytes = checked::mul(s, item_size as u64, "byte stride")?;
            i64::try_from(bytes).map_err(|_| {
                Error::Core(tensor_core::Error::Overflow {
                    what: "byte stride",
                })
            })
        })
        .collect()
}

/// Whether byte `strides` describe a contiguous layout of `shape` in `order`. Dimensions of
/// size 1 may carry any stride, and a tensor with no elements is always contiguous.
#[must_use]
pub fn is_contiguous(shape: &[u64], strides: &[i64], item_size: usize, order: Order) -> bool {
    if shape.len() != strides.len() {
        return false;
    }
    if shape.contains(&0) {
        return true;
    }
    let mut expected: i128 = item_size as i128;
    let mut check = |dim: u64, stride: i64| {
        if dim != 1 && i128::from(stride) != expected {
            return false;
        }
        expected *= i128::from(dim);
        true
    };
    match order {
        Order::C => shape.iter().zip(strides).rev().all(|(&d, &s)| check(d, s)),
        Order::Fortran => shape.iter().zip(strides).all(|(&d, &s)| check(d, s)),
    }
}

/// The byte span `[min, max_end)` reachable from `offset` with `strides` over `shape`,
/// relative to the start of the buffer, or `None` for a tensor with no elements.
pub fn reachable_span(
    shape: &[u64],
    strides: &[i64],
    offset: u64,
    item_size: usize,
) -> Result<Option<(i128, i128)>> {
    if shape.len() != strides.len() {
        return Err(Error::InvalidStrides {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            reason: format!("{} strides for {} dimensions", strides.len(), shape.len()),
        });
    }
    if shape.contains(&0) {
        return Ok(None);
    }
    // i128 cannot overflow here: |stride| < 2^63 and dim - 1 < 2^64, over at most a few
    // hundred dimensions, is checked against i128's range as we go.
    let mut lo = i128::from(offset);
    let mut hi = i128::from(offset);
    for (&d, &s) in shape.iter().zip(strides) {
        let reach =
            i128::from(s)
                .checked_mul(i128::from(d - 1))
                .ok_or(tensor_core::Error::Overflow {
                    what: "stride span",
                })?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or(tensor_core::Error::Overflow {
                what: "stride span",
            })?;
        } else {
            hi = hi.checked_add(reach).ok_or(tensor_core::Error::Overflow {
                what: "stride span",
            })?;
        }
    }
    Ok(Some((lo, hi + item_size as i128)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::{ErrorKind, Kinded};

    #[test]
    fn c_and_f_strides_from_0d_to_5d() {
        let cases: [(&[u64], &[u64], &[u64]); 6] = [
            (&[], &[], &[]),
            (&[7], &[1], &[1]),
            (&[100, 200], &[200, 1], &[1, 100]),
            (&[4, 5, 6], &[30, 6, 1], &[1, 4, 20]),
            (&[2, 3, 4, 5], &[60, 20, 5, 1], &[1, 2, 6, 24]),
            (&[2, 3, 4, 5, 6], &[360, 120, 30, 6, 1], &[1, 2, 6, 24, 120]),
        ];
        for (shape, c, f) in cases {
            assert_eq!(c_strides(shape).unwrap(), c, "C {shape:?}");
            assert_eq!(f_strides(shape).unwrap(), f, "F {shape:?}");
            let cb = byte_strides(shape, 4, Order::C).unwrap();
            assert_eq!(cb, c.iter().map(|&s| s as i64 * 4).collect::<Vec<_>>());
            assert!(is_contiguous(shape, &cb, 4, Order::C));
            let fb = byte_strides(shape, 4, Order::Fortran).unwrap();
            assert!(is_contiguous(shape, &fb, 4, Order::Fortran));
            if shape.len() >= 2 {
                assert!(!is_contiguous(shape, &fb, 4, Order::C));
                assert!(!is_contiguous(shape, &cb, 4, Order::Fortran));
            }
        }
    }

    #[test]
    fn zero_d_has_one_element_and_zero_lengths_have_none() {
        assert_eq!(element_count(&[]).unwrap(), 1);
        assert_eq!(byte_len(Dtype::Float64, &[]).unwrap(), 8);
        assert_eq!(element_count(&[3, 0, 2]).unwrap(), 0);
        assert_eq!(byte_len(Dtype::Float64, &[3, 0, 2]).unwrap(), 0);
        // The seed's formula: a zero dimension zeroes the strides to its left.
        assert_eq!(c_strides(&[3, 0, 2]).unwrap(), vec![0, 2, 1]);
        assert!(is_contiguous(&[3, 0, 2], &[5, 7, 9], 1, Order::C));
        assert_eq!(reachable_span(&[3, 0], &[1, 1], 0, 1).unwrap(), None);
    }

    #[test]
    fn overflow_is_reported_never_wrapped() {
        let e = byte_len(Dtype::Float64, &[1 << 40, 1 << 40]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Malformed);
        assert!(byte_len(Dtype::Float64, &[1 << 31, 1 << 31]).is_err());
        assert!(c_strides(&[2, 1 << 40, 1 << 40]).is_err());
        assert!(f_strides(&[1 << 40, 1 << 40, 2]).is_err());
        // Strides overflow even when a zero dimension makes the element count 0.
        assert!(c_strides(&[0, 1 << 40, 1 << 40]).is_err());
        assert!(byte_strides(&[2, 1 << 62], 4, Order::C).is_err());
        assert!(element_count(&[u64::MAX, 2]).is_err());
    }

    #[test]
    fn size_one_dimensions_may_have_any_stride() {
        assert!(is_contiguous(&[1, 3], &[999, 4], 4, Order::C));
        assert!(!is_contiguous(&[2, 3], &[999, 4], 4, Order::C));
        assert!(!is_contiguous(&[2, 3], &[12], 4, Order::C));
    }

    #[test]
    fn spans_cover_negative_strides_and_offsets() {
        // shape [2, 3] of 4-byte items walking backwards along axis 1 from offset 8.
        assert_eq!(
            reachable_span(&[2, 3], &[12, -4], 8, 4).unwrap(),
            Some((0, 24))
        );
        assert_eq!(reachable_span(&[], &[], 16, 8).unwrap(), Some((16, 24)));
        assert!(reachable_span(&[2], &[], 0, 1).is_err());
        assert!(reachable_span(&[u64::MAX, u64::MAX, u64::MAX], &[i64::MAX; 3], 0, 1).is_err());
    }
}
