//! ggml's tensor types: the dense ones, and the quantized ones stored as blocks of a fixed
//! number of elements in a fixed number of bytes.

use tensor_core::ByteOrder;
use tensor_dtype::Dtype;

/// The elements in one block of the "K" and "IQ" quantizations (ggml's `QK_K`).
pub const QK_K: u64 = 256;

macro_rules! ggml_types {
    ($($variant:ident = $id:literal, $name:literal, $block:expr, $bytes:expr;)*) => {
        /// A ggml tensor type, as a GGUF tensor info stores it (its `u32` id).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(non_camel_case_types)]
        #[non_exhaustive]
        pub enum GgmlType {
            $(
                #[doc = concat!("ggml's `", $name, "` (id ", stringify!($id), ").")]
                $variant,
            )*
        }

        impl GgmlType {
            /// Every type this build knows, by id.
            pub const ALL: &'static [GgmlType] = &[$(GgmlType::$variant),*];

            /// The type with this id; `None` for an id ggml never had or has removed.
            #[must_use]
            pub const fn from_id(id: u32) -> Option<Self> {
                match id {
                    $($id => Some(GgmlType::$variant),)*
                    _ => None,
                }
            }

            /// The id GGUF stores.
            #[must_use]
            pub const fn id(self) -> u32 {
                match self {
                    $(GgmlType::$variant => $id,)*
                }
            }

            /// ggml's name for it (`Q4_K`, `IQ4_XS`, `F16`).
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(GgmlType::$variant => $name,)*
                }
            }

            /// Elements per block (1 for a dense type).
            #[must_use]
            pub const fn block_elements(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $block,)*
                }
            }

            /// Bytes per block.
            #[must_use]
            pub const fn block_bytes(self) -> u64 {
                match self {
                    $(GgmlType::$variant => $bytes,)*
                }
            }
        }
    };
}

ggml_types! {
    F32 = 0, "F32", 1, 4;
    F16 = 1, "F16", 1, 2;
    Q4_0 = 2, "Q4_0", 32, 2 + 16;
    Q4_1 = 3, "Q4_1", 32, 2 + 2 + 16;
    Q5_0 = 6, "Q5_0", 32, 2 + 4 + 16;
    Q5_1 = 7, "Q5_1", 32, 2 + 2 + 4 + 16;
    Q8_0 = 8, "Q8_0", 32, 2 + 32;
    Q8_1 = 9, "Q8_1", 32, 4 + 4 + 32;
    Q2_K = 10, "Q2_K", QK_K, 2 + 2 + QK_K / 16 + QK_K / 4;
    Q3_K = 11, "Q3_K", QK_K, 2 + QK_K / 4 + QK_K / 8 + 12;
    Q4_K = 12, "Q4_K", QK_K, 2 + 2 + QK_K / 2 + 12;
    Q5_K = 13, "Q5_K", QK_K, 2 + 2 + QK_K / 2 + QK_K / 8 + 12;
    Q6_K = 14, "Q6_K", QK_K, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16;
    Q8_K = 15, "Q8_K", QK_K, 4 + QK_K + QK_K / 8;
    IQ2_XXS = 16, "IQ2_XXS", QK_K, 2 + QK_K / 4;
    IQ2_XS = 17, "IQ2_XS", QK_K, 2 + QK_K / 4 + QK_K / 32;
    IQ3_XXS = 18, "IQ3_XXS", QK_K, 2 + QK_K / 4 + QK_K / 8;
    IQ1_S = 19, "IQ1_S", QK_K, 2 + QK_K / 8 + QK_K / 16;
    IQ4_NL = 20, "IQ4_NL", 32, 2 + 16;
    IQ3_S = 21, "IQ3_S", QK_K, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4;
    IQ2_S = 22, "IQ2_S", QK_K, 2 + QK_K / 4 + QK_K / 16;
    IQ4_XS = 23, "IQ4_XS", QK_K, 2 + 2 + QK_K / 2 + QK_K / 64;
    I8 = 24, "I8", 1, 1;
    I16 = 25, "I16", 1, 2;
    I32 = 26, "I32", 1, 4;
    I64 = 27, "I64", 1, 8;
    F64 = 28, "F64", 1, 8;
    IQ1_M = 29, "IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32;
    BF16 = 30, "BF16", 1, 2;
    TQ1_0 = 34, "TQ1_0", QK_K, 2 + 4 * 13;
    TQ2_0 = 35, "TQ2_0", QK_K, 2 + 64;
    MXFP4 = 39, "MXFP4", 32, 1 + 16;
    NVFP4 = 40, "NVFP4", 64, 4 + 32;
    Q1_0 = 41, "Q1_0", 128, 2 + 16;
}

/// Ids ggml once used and has removed (`Q4_2`, `Q4_3`, the `Q4_0_4_4` family, `IQ4_NL_4_4`…):
/// files with them are refused by name rather than as unknown.
pub const REMOVED_IDS: &[u32] = &[4, 5, 31, 32, 33, 36, 37, 38];

impl GgmlType {
    /// The dtype of a dense type's elements; `None` for a quantized type.
    #[must_use]
    pub const fn dense_dtype(self) -> Option<Dtype> {
        Some(match self {
            GgmlType::F32 => Dtype::Float32,
            GgmlType::F16 => Dtype::Float16,
            GgmlType::BF16 => Dtype::Bfloat16,
            GgmlType::F64 => Dtype::Float64,
            GgmlType::I8 => Dtype::Int8,
            GgmlType::I16 => Dtype::Int16,
            GgmlType::I32 => Dtype::Int32,
            GgmlType::I64 => Dtype::Int64,
            _ => return None,
        })
    }

    /// The dense type that holds `dtype`'s elements as they are.
    #[must_use]
    pub const fn for_dtype(dtype: Dtype) -> Option<Self> {
        Some(match dtype {
            Dtype::Float32 => GgmlType::F32,
            Dtype::Float16 => GgmlType::F16,
            Dtype::Bfloat16 => GgmlType::BF16,
            Dtype::Float64 => GgmlType::F64,
            Dtype::Int8 => GgmlType::I8,
            Dtype::Int16 => GgmlType::I16,
            Dtype::Int32 => GgmlType::I32,
            Dtype::Int64 => GgmlType::I64,
            _ => return None,
        })
    }

    /// The byte order of this type's bytes in a file of byte order `file`: the file's for
    /// every dense type, `BF16` included (gguf-py's endian converter swaps it as 16-bit
    /// words and llama.cpp on a big-endian host reads it natively), little-endian for
    /// blocks, whose byte layout is fixed.
    #[must_use]
    pub const fn stored_order(self, file: ByteOrder) -> ByteOrder {
        match self {
            GgmlType::F32
            | GgmlType::F16
            | GgmlType::BF16
            | GgmlType::F64
            | GgmlType::I8
            | GgmlType::I16
            | GgmlType::I32
            | GgmlType::I64 => file,
            _ => ByteOrder::Little,
        }
    }

    /// Whether the type stores blocks of quantized values rather than plain elements.
    #[must_use]
    pub const fn is_quantized(self) -> bool {
        self.dense_dtype().is_none()
    }

    /// The type called `name` (ggml's name, any case).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The bytes `elements` elements take, in whole blocks; `None` when `elements` is not a
    /// whole number of blocks or the size overflows.
    #[must_use]
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        if !elements.is_multiple_of(self.block_elements()) {
            return None;
        }
        (elements / self.block_elements()).checked_mul(self.block_bytes())
    }
}

impl std::fmt::Display for GgmlType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::GgmlType;

    #[test]
    fn ids_and_names_round_trip() {
        for &t in GgmlType::ALL {
            assert_eq!(GgmlType::from_id(t.id()), Some(t));
            assert_eq!(GgmlType::from_name(&t.name().to_lowercase()), Some(t));
        }
        assert_eq!(GgmlType::from_id(4), None);
        assert_eq!(GgmlType::Q4_K.bytes_for(512), Some(288));
        assert_eq!(GgmlType::Q4_K.bytes_for(100), None);
    }
}
