//! The element types every tensorkit format uses.

use std::fmt;

/// One element type. The set is the union of what our formats store; a format that lacks a
/// type reports it when asked to write it, it never casts silently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Dtype {
    /// One byte per element, zero is false and anything else true.
    Bool,
    /// Packed bits, eight elements per byte, most significant bit first.
    Bitmask,
    /// Signed 8-bit integer.
    Int8,
    /// Signed 16-bit integer.
    Int16,
    /// Signed 32-bit integer.
    Int32,
    /// Signed 64-bit integer.
    Int64,
    /// Unsigned 8-bit integer.
    Uint8,
    /// Unsigned 16-bit integer.
    Uint16,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Unsigned 64-bit integer.
    Uint64,
    /// 8-bit float, 4 exponent and 3 mantissa bits, no infinities (the "e4m3fn" variant).
    Float8E4m3,
    /// 8-bit float, 5 exponent and 2 mantissa bits (IEEE-like, with infinities).
    Float8E5m2,
    /// 8-bit float, 4 exponent and 3 mantissa bits, bias 8, no infinities and no negative
    /// zero: `0x80` is the only NaN (AMD's "e4m3fnuz").
    Float8E4m3Fnuz,
    /// 8-bit float, 5 exponent and 2 mantissa bits, bias 16, no infinities and no negative
    /// zero: `0x80` is the only NaN (AMD's "e5m2fnuz").
    Float8E5m2Fnuz,
    /// 8-bit unsigned power of two, `2^(bits - 127)`, `0xFF` is NaN: the OCP microscaling
    /// block scale ("e8m0fnu").
    Float8E8m0,
    /// 6-bit float, 2 exponent and 3 mantissa bits, no infinities or NaN (OCP "e2m3fn").
    /// Packed: element `i` is bits `6i .. 6i+6` of the payload read as one little-endian
    /// bit stream (least significant bit of byte 0 first).
    Float6E2m3,
    /// 6-bit float, 3 exponent and 2 mantissa bits, no infinities or NaN (OCP "e3m2fn").
    /// Packed like [`Dtype::Float6E2m3`].
    Float6E3m2,
    /// 4-bit float, 2 exponent and 1 mantissa bit, no infinities or NaN (OCP "e2m1fn").
    /// Packed two per byte, element `2k` in the low nibble of byte `k`; an odd count leaves
    /// the last high nibble unused.
    Float4E2m1,
    /// IEEE 754 half precision.
    Float16,
    /// Brain float: float32's exponent with a 7-bit mantissa.
    Bfloat16,
    /// IEEE 754 single precision.
    Float32,
    /// IEEE 754 double precision.
    Float64,
    /// Two float32: real, imaginary.
    Complex64,
    /// Two float64: real, imaginary.
    Complex128,
}

impl Dtype {
    /// Every dtype, in declaration order.
    pub const ALL: [Dtype; 24] = [
        Dtype::Bool,
        Dtype::Bitmask,
        Dtype::Int8,
        Dtype::Int16,
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Uint8,
        Dtype::Uint16,
        Dtype::Uint32,
        Dtype::Uint64,
        Dtype::Float8E4m3,
        Dtype::Float8E5m2,
        Dtype::Float8E4m3Fnuz,
        Dtype::Float8E5m2Fnuz,
        Dtype::Float8E8m0,
        Dtype::Float6E2m3,
        Dtype::Float6E3m2,
        Dtype::Float4E2m1,
        Dtype::Float16,
        Dtype::Bfloat16,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Complex64,
        Dtype::Complex128,
    ];

    /// Bytes per element; 0 for the packed types ([`is_packed`](Self::is_packed)), whose
    /// elements are smaller than a byte (use [`payload_bytes`](Self::payload_bytes) for
    /// their size).
    #[must_use]
    pub const fn byte_width(self) -> usize {
        match self {
            Dtype::Bitmask | Dtype::Float6E2m3 | Dtype::Float6E3m2 | Dtype::Float4E2m1 => 0,
            Dtype::Bool
            | Dtype::Int8
            | Dtype::Uint8
            | Dtype::Float8E4m3
            | Dtype::Float8E5m2
            | Dtype::Float8E4m3Fnuz
            | Dtype::Float8E5m2Fnuz
            | Dtype::Float8E8m0 => 1,
            Dtype::Int16 | Dtype::Uint16 | Dtype::Float16 | Dtype::Bfloat16 => 2,
            Dtype::Int32 | Dtype::Uint32 | Dtype::Float32 => 4,
            Dtype::Int64 | Dtype::Uint64 | Dtype::Float64 | Dtype::Complex64 => 8,
            Dtype::Complex128 => 16,
        }
    }

    /// Bits per element (1 for a bitmask, 4 and 6 for the packed floats).
    #[must_use]
    pub const fn bit_width(self) -> usize {
        match self {
            Dtype::Bitmask => 1,
            Dtype::Float4E2m1 => 4,
            Dtype::Float6E2m3 | Dtype::Float6E3m2 => 6,
            other => other.byte_width() * 8,
        }
    }

    /// Whether elements are narrower than a byte and packed together: such tensors have no
    /// byte strides, are never byte-swapped and are stored whole.
    #[must_use]
    pub const fn is_packed(self) -> bool {
        self.bit_width() < 8
    }

    /// The unit of byte swapping: the element width, except for complex numbers, which swap
    /// per component, and single bytes or bits, which never swap (1).
    #[must_use]
    pub const fn swap_width(self) -> usize {
        match self {
            Dtype::Bitmask | Dtype::Float6E2m3 | Dtype::Float6E3m2 | Dtype::Float4E2m1 => 1,
            Dtype::Complex64 => 4,
            Dtype::Complex128 => 8,
            other => other.byte_width(),
        }
    }

    /// The canonical lowercase name (`"float32"`, `"float8_e4m3"`, ...).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::Bitmask => "bitmask",
            Dtype::Int8 => "int8",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Uint8 => "uint8",
            Dtype::Uint16 => "uint16",
            Dtype::Uint32 => "uint32",
            Dtype::Uint64 => "uint64",
            Dtype::Float8E4m3 => "float8_e4m3",
            Dtype::Float8E5m2 => "float8_e5m2",
            Dtype::Float8E4m3Fnuz => "float8_e4m3fnuz",
            Dtype::Float8E5m2Fnuz => "float8_e5m2fnuz",
            Dtype::Float8E8m0 => "float8_e8m0",
            Dtype::Float6E2m3 => "float6_e2m3",
            Dtype::Float6E3m2 => "float6_e3m2",
            Dtype::Float4E2m1 => "float4_e2m1",
            Dtype::Float16 => "float16",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Complex64 => "complex64",
            Dtype::Complex128 => "complex128",
        }
    }

    /// Whether elements are real floating-point numbers (any width).
    #[must_use]
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::Float8E4m3
                | Dtype::Float8E5m2
                | Dtype::Float8E4m3Fnuz
                | Dtype::Float8E5m2Fnuz
                | Dtype::Float8E8m0
                | Dtype::Float6E2m3
                | Dtype::Float6E3m2
                | Dtype::Float4E2m1
                | Dtype::Float16
                | Dtype::Bfloat16
                | Dtype::Float32
                | Dtype::Float64
        )
    }

    /// Whether elements are complex numbers.
    #[must_use]
    pub const fn is_complex(self) -> bool {
        matches!(self, Dtype::Complex64 | Dtype::Complex128)
    }

    /// Whether elements are signed integers.
    #[must_use]
    pub const fn is_signed_int(self) -> bool {
        matches!(
            self,
            Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64
        )
    }

    /// Whether elements are unsigned integers.
    #[must_use]
    pub const fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Uint64
        )
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_and_name_round_trip() {
        let expected: [(Dtype, usize, &str); 24] = [
            (Dtype::Bool, 1, "bool"),
            (Dtype::Bitmask, 0, "bitmask"),
            (Dtype::Int8, 1, "int8"),
            (Dtype::Int16, 2, "int16"),
            (Dtype::Int32, 4, "int32"),
            (Dtype::Int64, 8, "int64"),
            (Dtype::Uint8, 1, "uint8"),
            (Dtype::Uint16, 2, "uint16"),
            (Dtype::Uint32, 4, "uint32"),
            (Dtype::Uint64, 8, "uint64"),
            (Dtype::Float8E4m3, 1, "float8_e4m3"),
            (Dtype::Float8E5m2, 1, "float8_e5m2"),
            (Dtype::Float8E4m3Fnuz, 1, "float8_e4m3fnuz"),
            (Dtype::Float8E5m2Fnuz, 1, "float8_e5m2fnuz"),
            (Dtype::Float8E8m0, 1, "float8_e8m0"),
            (Dtype::Float6E2m3, 0, "float6_e2m3"),
            (Dtype::Float6E3m2, 0, "float6_e3m2"),
            (Dtype::Float4E2m1, 0, "float4_e2m1"),
            (Dtype::Float16, 2, "float16"),
            (Dtype::Bfloat16, 2, "bfloat16"),
            (Dtype::Float32, 4, "float32"),
            (Dtype::Float64, 8, "float64"),
            (Dtype::Complex64, 8, "complex64"),
            (Dtype::Complex128, 16, "complex128"),
        ];
        assert_eq!(expected.len(), Dtype::ALL.len());
        for (d, width, name) in expected {
            assert_eq!(d.byte_width(), width, "{d:?}");
            assert_eq!(d.name(), name);
            assert_eq!(d.to_string(), name);
            assert_eq!(name.parse::<Dtype>().unwrap(), d);
            if !d.is_packed() {
                assert_eq!(d.bit_width(), width * 8);
                assert_eq!(d.payload_bytes(3).unwrap(), 3 * width as u64);
            }
        }
    }

    #[test]
    fn bitmask_is_the_sub_byte_edge_case() {
        let b = Dtype::Bitmask;
        assert_eq!(b.byte_width(), 0);
        assert_eq!(b.bit_width(), 1);
        assert_eq!(b.payload_bytes(0).unwrap(), 0);
        assert_eq!(b.payload_bytes(1).unwrap(), 1);
        assert_eq!(b.payload_bytes(8).unwrap(), 1);
        assert_eq!(b.payload_bytes(9).unwrap(), 2);
        assert_eq!(b.payload_bytes(u64::MAX).unwrap(), u64::MAX / 8 + 1);
    }

    #[test]
    fn packed_floats_count_bits_not_bytes() {
        let f4 = Dtype::Float4E2m1;
        assert!(f4.is_packed() && Dtype::Float6E2m3.is_packed() && !Dtype::Uint8.is_packed());
        assert_eq!(f4.payload_bytes(3).unwrap(), 2);
        assert_eq!(f4.payload_bytes(4).unwrap(), 2);
        assert_eq!(Dtype::Float6E3m2.payload_bytes(4).unwrap(), 3);
        assert_eq!(Dtype::Float6E3m2.payload_bytes(5).unwrap(), 4);
        assert_eq!(Dtype::Float6E2m3.payload_bytes(u64::MAX).unwrap(), 3 << 62);
        assert_eq!(f4.swap_width(), 1);
    }

    #[test]
    fn swap_widths_split_complex_numbers() {
        assert_eq!(Dtype::Complex64.swap_width(), 4);
        assert_eq!(Dtype::Complex128.swap_width(), 8);
        assert_eq!(Dtype::Float64.swap_width(), 8);
        assert_eq!(Dtype::Uint8.swap_width(), 1);
        assert_eq!(Dtype::Bitmask.swap_width(), 1);
    }

    #[test]
    fn unknown_and_non_canonical_names_are_refused() {
        for bad in ["F32", "Float32", "f4", "", "float8", "complex32"] {
            let e = bad.parse::<Dtype>().unwrap_err();
            assert!(e.to_string().contains("unknown dtype"), "{e}");
        }
    }

    #[test]
    fn classes_partition_the_numeric_types() {
        for d in Dtype::ALL {
            let n = [
                d.is_float(),
                d.is_complex(),
                d.is_signed_int(),
                d.is_unsigned_int(),
            ]
            .iter()
            .filter(|x| **x)
            .count();
            let expected = usize::from(!matches!(d, Dtype::Bool | Dtype::Bitmask));
            assert_eq!(n, expected, "{d}");
        }
        assert!(Dtype::Float64.payload_bytes(u64::MAX / 4).is_err());
    }
}
