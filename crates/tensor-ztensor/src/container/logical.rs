//! zTensor's logical types: the dtypes stored in another storage type (bool in uint8,
//! float8 and float4 in uint8, complex in float pairs), and the values they forbid.

use tensor_dtype::Dtype;

/// A logical type: the dtype it gives a storage type. The first name is the one zTensor 2
/// registers (its spec's Appendix A) and the one we write; the others are read too
/// (1.2's long spellings, `f8_e8m0fnu`).
pub(crate) struct LogicalType {
    pub(crate) names: &'static [&'static str],
    pub(crate) storage: Dtype,
    pub(crate) dtype: Dtype,
}

pub(crate) const LOGICAL_TYPES: [LogicalType; 9] = [
    LogicalType {
        names: &["bool"],
        storage: Dtype::Uint8,
        dtype: Dtype::Bool,
    },
    LogicalType {
        names: &["f8_e4m3fn", "float8_e4m3fn", "f8_e4m3", "float8_e4m3"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E4m3,
    },
    LogicalType {
        names: &["f8_e5m2", "float8_e5m2"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E5m2,
    },
    LogicalType {
        names: &["f8_e4m3fnuz", "float8_e4m3fnuz"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E4m3Fnuz,
    },
    LogicalType {
        names: &["f8_e5m2fnuz", "float8_e5m2fnuz"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E5m2Fnuz,
    },
    LogicalType {
        names: &["f8_e8m0", "f8_e8m0fnu", "float8_e8m0fnu"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float8E8m0,
    },
    LogicalType {
        names: &["f4_e2m1", "float4_e2m1fn"],
        storage: Dtype::Uint8,
        dtype: Dtype::Float4E2m1,
    },
    LogicalType {
        names: &["complex64"],
        storage: Dtype::Float32,
        dtype: Dtype::Complex64,
    },
    LogicalType {
        names: &["complex128"],
        storage: Dtype::Float64,
        dtype: Dtype::Complex128,
    },
];

/// The values a zTensor 2 logical type forbids: bool bytes other than 0 and 1, and a
/// non-zero unused nibble after an odd number of `f4_e2m1` elements. `last` says whether
/// `chunk` ends the part.
pub(crate) fn forbidden_values(
    dtype: Dtype,
    elements: u64,
    chunk: &[u8],
    last: bool,
) -> Option<&'static str> {
    match dtype {
        Dtype::Bool if chunk.iter().any(|&b| b > 1) => {
            Some("a bool holds a byte other than 0 or 1")
        }
        Dtype::Float4E2m1
            if last && elements % 2 == 1 && chunk.last().is_some_and(|&b| b & 0xF0 != 0) =>
        {
            Some("the unused high nibble after an odd number of f4_e2m1 elements is not zero")
        }
        _ => None,
    }
}

/// The storage dtype `name` stands for (short names in 1.x and 2.x, long ones in 1.x;
/// `bool` is 1.x only).
pub(crate) fn storage_dtype(name: &str) -> Option<Dtype> {
    STORAGE_DTYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, d)| d)
}

/// The storage dtypes by name: zTensor 2's short spellings and 1.x's long ones.
pub(crate) const STORAGE_DTYPES: [(&str, Dtype); 25] = [
    ("f32", Dtype::Float32),
    ("f64", Dtype::Float64),
    ("f16", Dtype::Float16),
    ("bf16", Dtype::Bfloat16),
    ("u8", Dtype::Uint8),
    ("i64", Dtype::Int64),
    ("i32", Dtype::Int32),
    ("i16", Dtype::Int16),
    ("i8", Dtype::Int8),
    ("u64", Dtype::Uint64),
    ("u32", Dtype::Uint32),
    ("u16", Dtype::Uint16),
    ("bool", Dtype::Bool),
    ("float32", Dtype::Float32),
    ("float64", Dtype::Float64),
    ("float16", Dtype::Float16),
    ("bfloat16", Dtype::Bfloat16),
    ("uint8", Dtype::Uint8),
    ("int64", Dtype::Int64),
    ("int32", Dtype::Int32),
    ("int16", Dtype::Int16),
    ("int8", Dtype::Int8),
    ("uint64", Dtype::Uint64),
    ("uint32", Dtype::Uint32),
    ("uint16", Dtype::Uint16),
];
