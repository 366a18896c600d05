//! The dtype table: every dtype safetensors 0.8 defines, and ours.

use safetensors::tensor::Dtype as StDtype;
use tensor_dtype::Dtype;

/// Every dtype safetensors 0.8 defines, and ours. Packed types count elements in the
/// shape, as the crate does (`F4` of shape `[n]` holds `n / 2` bytes).
const DTYPES: [(StDtype, Dtype); 22] = [
    (StDtype::BOOL, Dtype::Bool),
    (StDtype::F4, Dtype::Float4E2m1),
    (StDtype::F6_E2M3, Dtype::Float6E2m3),
    (StDtype::F6_E3M2, Dtype::Float6E3m2),
    (StDtype::U8, Dtype::Uint8),
    (StDtype::I8, Dtype::Int8),
    (StDtype::F8_E5M2, Dtype::Float8E5m2),
    (StDtype::F8_E4M3, Dtype::Float8E4m3),
    (StDtype::F8_E8M0, Dtype::Float8E8m0),
    (StDtype::F8_E4M3FNUZ, Dtype::Float8E4m3Fnuz),
    (StDtype::F8_E5M2FNUZ, Dtype::Float8E5m2Fnuz),
    (StDtype::I16, Dtype::Int16),
    (StDtype::U16, Dtype::Uint16),
    (StDtype::F16, Dtype::Float16),
    (StDtype::BF16, Dtype::Bfloat16),
    (StDtype::I32, Dtype::Int32),
    (StDtype::U32, Dtype::Uint32),
    (StDtype::F32, Dtype::Float32),
    (StDtype::C64, Dtype::Complex64),
    (StDtype::F64, Dtype::Float64),
    (StDtype::I64, Dtype::Int64),
    (StDtype::U64, Dtype::Uint64),
];

/// Our dtype for a safetensors dtype.
#[must_use]
pub fn from_reference(d: StDtype) -> Option<Dtype> {
    DTYPES
        .iter()
        .find(|(st, _)| *st == d)
        .map(|&(_, ours)| ours)
}

/// The safetensors dtype for ours, when safetensors has it.
#[must_use]
pub fn to_reference(d: Dtype) -> Option<StDtype> {
    DTYPES
        .iter()
        .find(|(_, ours)| *ours == d)
        .map(|&(st, _)| st)
}

/// The name safetensors gives a dtype of ours in its header (`F8_E4M3FNUZ`), when it
/// has one.
#[must_use]
pub fn reference_name(d: Dtype) -> Option<String> {
    to_reference(d).map(|st| format!("{st:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_map_both_ways_where_safetensors_has_them() {
        for d in Dtype::ALL {
            match to_reference(d) {
                Some(st) => {
                    assert_eq!(from_reference(st), Some(d));
                    let name = reference_name(d).unwrap();
                    let header = serde_json::to_string(&st).unwrap();
                    assert_eq!(header, format!("{name:?}"), "the name the header holds");
                }
                None => assert!(matches!(d, Dtype::Bitmask | Dtype::Complex128)),
            }
        }
        assert_eq!(from_reference(StDtype::F4), Some(Dtype::Float4E2m1));
    }
}
