//! Byte order and byte swaps.
//!
//! Swaps work on whole elements of width 1, 2, 4 or 8 bytes. Complex numbers are swapped per
//! component (a complex64 swaps as two 4-byte floats), which callers express by passing the
//! component width; `tensor-dtype` knows it for every dtype.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The order of bytes within a multi-byte element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ByteOrder {
    /// Least significant byte first.
    #[default]
    Little,
    /// Most significant byte first.
    Big,
}

impl ByteOrder {
    /// The order of the machine running this code.
    #[cfg(target_endian = "little")]
    pub const NATIVE: ByteOrder = ByteOrder::Little;
    /// The order of the machine running this code.
    #[cfg(target_endian = "big")]
    pub const NATIVE: ByteOrder = ByteOrder::Big;

    /// Whether this is the order of the machine running this code.
    #[must_use]
    pub const fn is_native(self) -> bool {
        matches!(
            (self, ByteOrder::NATIVE),
            (ByteOrder::Little, ByteOrder::Little) | (ByteOrder::Big, ByteOrder::Big)
        )
    }

    /// `"little"` or `"big"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ByteOrder::Little => "little",
            ByteOrder::Big => "big",
        }
    }
}

impl fmt::Display for ByteOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ByteOrder {
    type Err = Error;

    /// Parses `"little"` or `"big"` (the spelling every format we read uses).
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "little" => Ok(ByteOrder::Little),
            "big" => Ok(ByteOrder::Big),
            other => Err(Error::InvalidArgument(format!(
                "unknown byte order {other:?} (expected \"little\" or \"big\")"
            ))),
        }
    }
}

fn check_width(len: usize, width: usize) -> Result<()> {
    if !matches!(width, 1 | 2 | 4 | 8) {
        return Err(Error::InvalidArgument(format!(
            "byte swap width must be 1, 2, 4 or 8, not {width}"
        )));
    }
    if !len.is_multiple_of(width) {
        return Err(Error::InvalidArgument(format!(
            "{len} bytes are not a whole number of {width}-byte elements"
        )));
    }
    Ok(())
}

// Each loop below is written over fixed-size arrays so that the compiler turns it into
// vector shuffles (it does for SSE2 and later), rather than per-byte moves.
macro_rules! swap_loops {
    ($bytes:expr, $n:literal, $int:ty) => {
        for chunk in $bytes.as_chunks_mut::<$n>().0 {
            *chunk = <$int>::from_ne_bytes(*chunk).swap_bytes().to_ne_bytes();
        }
    };
}

/// Reverses the bytes of every `width`-byte element of `bytes`, in place.
///
/// `width` must be 1, 2, 4 or 8 and divide `bytes.len()`.
pub fn swap_in_place(bytes: &mut [u8], width: usize) -> Result<()> {
    check_width(bytes.len(), width)?;
    match width {
        2 => swap_loops!(bytes, 2, u16),
        4 => swap_loops!(bytes, 4, u32),
        8 => swap_loops!(bytes, 8, u64),
        _ => {}
    }
    Ok(())
}

/// Copies `src` into `dst` reversing the bytes of every `width`-byte element.
///
/// `dst` must be as long as `src`; `width` must be 1, 2, 4 or 8 and divide the length.
pub fn swap_copy(src: &[u8], dst: &mut [u8], width: usize) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::InvalidArgument(format!(
            "swap_copy needs equal lengths, got {} and {}",
            src.len(),
            dst.len()
        )));
    }
    check_width(src.len(), width)?;
    macro_rules! copy_loop {
        ($n:literal, $int:ty) => {
            for (d, s) in dst
                .as_chunks_mut::<$n>()
                .0
                .iter_mut()
                .zip(src.as_chunks::<$n>().0)
            {
                *d = <$int>::from_ne_bytes(*s).swap_bytes().to_ne_bytes();
            }
        };
    }
    match width {
        2 => copy_loop!(2, u16),
        4 => copy_loop!(4, u32),
        8 => copy_loop!(8, u64),
        _ => dst.copy_from_slice(src),
    }
    Ok(())
}

/// Brings `bytes`, stored in `order`, into the machine's order in place.
pub fn to_native_in_place(order: ByteOrder, bytes: &mut [u8], width: usize) -> Result<()> {
    if order.is_native() {
        check_width(bytes.len(), width)
    } else {
        swap_in_place(bytes, width)
    }
}

/// Copies `src`, stored in `from`, into `dst` in order `to`.
pub fn convert_copy(
    src: &[u8],
    from: ByteOrder,
    dst: &mut [u8],
    to: ByteOrder,
    width: usize,
) -> Result<()> {
    if from == to {
        if src.len() != dst.len() {
            return Err(Error::InvalidArgument(format!(
                "convert_copy needs equal lengths, got {} and {}",
                src.len(),
                dst.len()
            )));
        }
        check_width(src.len(), width)?;
        dst.copy_from_slice(src);
        Ok(())
    } else {
        swap_copy(src, dst, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_width_swaps_as_expected() {
        let src: Vec<u8> = (0..16).collect();
        let cases: [(usize, Vec<u8>); 4] = [
            (1, src.clone()),
            (
                2,
                vec![1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14],
            ),
            (
                4,
                vec![3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12],
            ),
            (
                8,
                vec![7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8],
            ),
        ];
        for (width, expected) in cases {
            let mut b = src.clone();
            swap_in_place(&mut b, width).unwrap();
            assert_eq!(b, expected, "in place, width {width}");
            let mut d = vec![0; 16];
            swap_copy(&src, &mut d, width).unwrap();
            assert_eq!(d, expected, "copy, width {width}");
        }
    }

    #[test]
    fn values_round_trip_through_big_endian() {
        let vals = [1.5f64, -2.25, f64::MAX];
        let mut be: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
        to_native_in_place(ByteOrder::Big, &mut be, 8).unwrap();
        let back: Vec<f64> = be
            .chunks_exact(8)
            .map(|c| f64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back, vals);
    }

    #[test]
    fn bad_widths_and_lengths_are_errors() {
        let mut b = [0u8; 6];
        assert!(swap_in_place(&mut b, 3).is_err());
        assert!(swap_in_place(&mut b, 4).is_err());
        assert!(swap_in_place(&mut b, 16).is_err());
        assert!(swap_copy(&[0; 4], &mut [0; 2], 2).is_err());
        assert!(convert_copy(&[0; 4], ByteOrder::Big, &mut [0; 2], ByteOrder::Big, 2).is_err());
        assert!(to_native_in_place(ByteOrder::NATIVE, &mut b, 4).is_err());
    }

    #[test]
    fn names_parse_back() {
        for o in [ByteOrder::Little, ByteOrder::Big] {
            assert_eq!(o.as_str().parse::<ByteOrder>().unwrap(), o);
        }
        assert!("LITTLE".parse::<ByteOrder>().is_err());
        assert!(ByteOrder::NATIVE.is_native());
    }

    proptest! {
        #[test]
        fn swapping_twice_is_identity(data in proptest::collection::vec(any::<u8>(), 0..256), w in prop::sample::select(vec![1usize, 2, 4, 8])) {
            let len = data.len() / w * w;
            let mut b = data[..len].to_vec();
            swap_in_place(&mut b, w).unwrap();
            swap_in_place(&mut b, w).unwrap();
            prop_assert_eq!(&b[..], &data[..len]);
            let mut c = vec![0; len];
            convert_copy(&data[..len], ByteOrder::Little, &mut c, ByteOrder::Big, w).unwrap();
            let mut d = c.clone();
            swap_in_place(&mut d, w).unwrap();
            prop_assert_eq!(&d[..], &data[..len]);
        }
    }
}
