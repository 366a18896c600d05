//! The BinTensors dtype table: on-disk ids 0–14.

use tensor_dtype::Dtype;

/// `(id, reference spelling, tensorkit dtype)`, in id order.
const TABLE: [(u32, &str, Dtype); 15] = [
    (0, "BOOL", Dtype::Bool),
    (1, "U8", Dtype::Uint8),
    (2, "I8", Dtype::Int8),
    (3, "F8_E5M2", Dtype::Float8E5m2),
    (4, "F8_E4M3", Dtype::Float8E4m3),
    (5, "I16", Dtype::Int16),
    (6, "U16", Dtype::Uint16),
    (7, "F16", Dtype::Float16),
    (8, "BF16", Dtype::Bfloat16),
    (9, "I32", Dtype::Int32),
    (10, "U32", Dtype::Uint32),
    (11, "F32", Dtype::Float32),
    (12, "F64", Dtype::Float64),
    (13, "I64", Dtype::Int64),
    (14, "U64", Dtype::Uint64),
];

/// The largest assigned id.
pub const MAX_ID: u32 = 14;

/// The tensorkit dtype stored as `id`.
#[must_use]
pub fn from_id(id: u32) -> Option<Dtype> {
    TABLE.get(id as usize).map(|e| e.2)
}

/// The on-disk id of `dtype`, if BinTensors can store it (not bitmask or complex).
#[must_use]
pub fn to_id(dtype: Dtype) -> Option<u32> {
    TABLE.iter().find(|e| e.2 == dtype).map(|e| e.0)
}

/// The reference's spelling of `dtype` (`"F32"`, `"F8_E4M3"`, ...).
#[must_use]
pub fn reference_name(dtype: Dtype) -> Option<&'static str> {
    TABLE.iter().find(|e| e.2 == dtype).map(|e| e.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_widths_never_grow_along_the_write_order() {
        for (id, _, d) in TABLE {
            assert_eq!(from_id(id), Some(d));
            assert_eq!(to_id(d), Some(id));
        }
        assert_eq!(from_id(15), None);
        assert_eq!(to_id(Dtype::Complex64), None);
        assert_eq!(reference_name(Dtype::Float8E4m3), Some("F8_E4M3"));
        // Writers order tensors by id, descending: widths must not increase along that
        // order, so that every tensor stays aligned to its element size.
        let widths: Vec<usize> = TABLE.iter().rev().map(|e| e.2.byte_width()).collect();
        assert!(widths.windows(2).all(|w| w[0] >= w[1]), "{widths:?}");
    }
}
