//! Single element values, for display, comparison and JSON output.

use crate::dtype::Dtype;
use crate::minifloat;
use half::{bf16, f16};
use tensor_core::ByteOrder;

/// One decoded element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A bool or bitmask element.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A real float, widened to f64 (exactly: every narrower float fits).
    Float(f64),
    /// A complex number, widened to f64 components.
    Complex(f64, f64),
}

fn array<const N: usize>(bytes: &[u8], order: ByteOrder) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[..N]);
    if !order.is_native() {
        a.reverse();
    }
    a
}

/// Decodes the elements of `bytes`, a contiguous run of `dtype` values stored in `order`,
/// starting at element `first` and yielding at most `count` values. Packed types follow
/// [`minifloat::packed_code`]'s bit order.
#[must_use]
pub fn decode(
    dtype: Dtype,
    bytes: &[u8],
    order: ByteOrder,
    first: usize,
    count: usize,
) -> Vec<Scalar> {
    if dtype.is_packed() {
        let total = bytes.len() * 8 / dtype.bit_width();
        return (first..total.min(first.saturating_add(count)))
            .filter_map(|i| minifloat::packed_code(dtype, bytes, i))
            .map(|code| decode_one(dtype, &[code], order))
            .collect();
    }
    let width = dtype.byte_width();
    bytes
        .chunks_exact(width)
        .skip(first)
        .take(count)
        .map(|e| decode_one(dtype, e, order))
        .collect()
}

/// Decodes one element of `dtype` from its `byte_width()` bytes (a packed element: one byte
/// holding its code in the low bits).
#[must_use]
pub fn decode_one(dtype: Dtype, e: &[u8], order: ByteOrder) -> Scalar {
    match dtype {
        Dtype::Bool | Dtype::Bitmask => Scalar::Bool(e[0] != 0),
        Dtype::Int8 => Scalar::Int(i64::from(e[0] as i8)),
        Dtype::Int16 => Scalar::Int(i64::from(i16::from_ne_bytes(array(e, order)))),
        Dtype::Int32 => Scalar::Int(i64::from(i32::from_ne_bytes(array(e, order)))),
        Dtype::Int64 => Scalar::Int(i64::from_ne_bytes(array(e, order))),
        Dtype::Uint8 => Scalar::Uint(u64::from(e[0])),
        Dtype::Uint16 => Scalar::Uint(u64::from(u16::from_ne_bytes(array(e, order)))),
        Dtype::Uint32 => Scalar::Uint(u64::from(u32::from_ne_bytes(array(e, order)))),
        Dtype::Uint64 => Scalar::Uint(u64::from_ne_bytes(array(e, order))),
        Dtype::Float8E4m3
        | Dtype::Float8E5m2
        | Dtype::Float8E4m3Fnuz
        | Dtype::Float8E5m2Fnuz
        | Dtype::Float8E8m0
        | Dtype::Float6E2m3
        | Dtype::Float6E3m2
        | Dtype::Float4E2m1 => Scalar::Float(f64::from(
            minifloat::to_f32(dtype, e[0]).unwrap_or(f32::NAN),
        )),
        Dtype::Float16 => Scalar::Float(f64::from(f16::from_ne_bytes(array(e, order)).to_f32())),
        Dtype::Bfloat16 => Scalar::Float(f64::from(bf16::from_ne_bytes(array(e, order)).to_f32())),
        Dtype::Float32 => Scalar::Float(f64::from(f32::from_ne_bytes(array(e, order)))),
        Dtype::Float64 => Scalar::Float(f64::from_ne_bytes(array(e, order))),
        Dtype::Complex64 => Scalar::Complex(
            f64::from(f32::from_ne_bytes(array(e, order))),
            f64::from(f32::from_ne_bytes(array(&e[4..], order))),
        ),
        Dtype::Complex128 => Scalar::Complex(
            f64::from_ne_bytes(array(e, order)),
            f64::from_ne_bytes(array(&e[8..], order)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_decodes_in_both_orders() {
        let le = |v: &[u8]| decode_one(Dtype::Int16, v, ByteOrder::Little);
        assert_eq!(le(&[0xFE, 0xFF]), Scalar::Int(-2));
        assert_eq!(
            decode_one(Dtype::Int16, &[0xFF, 0xFE], ByteOrder::Big),
            Scalar::Int(-2)
        );
        assert_eq!(
            decode_one(Dtype::Uint32, &[0, 0, 1, 0], ByteOrder::Big),
            Scalar::Uint(256)
        );
        assert_eq!(
            decode_one(Dtype::Float32, &1.5f32.to_be_bytes(), ByteOrder::Big),
            Scalar::Float(1.5)
        );
        assert_eq!(
            decode_one(Dtype::Float64, &(-0.25f64).to_le_bytes(), ByteOrder::Little),
            Scalar::Float(-0.25)
        );
        assert_eq!(
            decode_one(Dtype::Bfloat16, &[0xC0, 0xBF], ByteOrder::Little),
            Scalar::Float(-1.5)
        );
        assert_eq!(
            decode_one(Dtype::Float16, &[0x00, 0xBC], ByteOrder::Little),
            Scalar::Float(-1.0)
        );
        assert_eq!(
            decode_one(Dtype::Float8E4m3, &[0x30], ByteOrder::Big),
            Scalar::Float(0.5)
        );
        assert_eq!(
            decode_one(Dtype::Float8E5m2, &[0x30], ByteOrder::Big),
            Scalar::Float(0.125)
        );
        assert_eq!(
            decode_one(Dtype::Int8, &[0x80], ByteOrder::Big),
            Scalar::Int(-128)
        );
        assert_eq!(
            decode_one(Dtype::Uint8, &[0x80], ByteOrder::Big),
            Scalar::Uint(128)
        );
        assert_eq!(
            decode_one(Dtype::Bool, &[7], ByteOrder::Big),
            Scalar::Bool(true)
        );
        assert_eq!(
            decode_one(Dtype::Int64, &i64::MIN.to_le_bytes(), ByteOrder::Little),
            Scalar::Int(i64::MIN)
        );
        assert_eq!(
            decode_one(Dtype::Uint64, &u64::MAX.to_be_bytes(), ByteOrder::Big),
            Scalar::Uint(u64::MAX)
        );
        let c64: Vec<u8> = [1.0f32, -2.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        assert_eq!(
            decode_one(Dtype::Complex64, &c64, ByteOrder::Big),
            Scalar::Complex(1.0, -2.0)
        );
        let c128: Vec<u8> = [3.0f64, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            decode_one(Dtype::Complex128, &c128, ByteOrder::Little),
            Scalar::Complex(3.0, 4.0)
        );
    }

    #[test]
    fn runs_and_bitmasks_decode_from_any_start() {
        let bytes: Vec<u8> = (0u16..10).flat_map(u16::to_le_bytes).collect();
        let v = decode(Dtype::Uint16, &bytes, ByteOrder::Little, 8, 8);
        assert_eq!(v, vec![Scalar::Uint(8), Scalar::Uint(9)]);
        let bits = decode(
            Dtype::Bitmask,
            &[0b1010_0000, 0b0000_0001],
            ByteOrder::Little,
            0,
            16,
        );
        assert_eq!(bits.len(), 16);
        assert_eq!(bits[0], Scalar::Bool(true));
        assert_eq!(bits[1], Scalar::Bool(false));
        assert_eq!(bits[2], Scalar::Bool(true));
        assert_eq!(bits[15], Scalar::Bool(true));
        assert!(decode(Dtype::Bitmask, &[0xFF], ByteOrder::Little, 9, usize::MAX).is_empty());
    }
}
