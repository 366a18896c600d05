//! The globals a checkpoint's pickle may name — torch's rebuild functions, storage classes,
//! dtypes, `collections.OrderedDict` and the few builtins protocol 2 needs for plain values —
//! the same set torch's own `weights_only` unpickler allows, less what needs objects
//! (quantization schemes, layouts). Nothing is imported: a name resolves to what this
//! reader does with it, or is refused.

use super::value::{Global, TorchDtype};
use tensor_dtype::Dtype;

/// Why a global is not resolved.
pub(super) enum Unknown {
    /// Not one a state dict uses: refused, with a hint for the usual cause.
    Refused(&'static str),
    /// One of torch's that this reader does not read, described.
    Unsupported(&'static str),
}

/// What `module.name` stands for.
pub(super) fn resolve(module: &str, name: &str) -> Result<Global, Unknown> {
    Ok(match (module, name) {
        ("collections", "OrderedDict" | "Counter") => Global::OrderedDict,
        ("torch._utils", "_rebuild_tensor") => Global::RebuildTensor,
        ("torch._utils", "_rebuild_tensor_v2") => Global::RebuildTensorV2,
        ("torch._utils", "_rebuild_tensor_v3") => Global::RebuildTensorV3,
        ("torch._utils", "_rebuild_parameter") => Global::RebuildParameter,
        ("torch._utils", "_rebuild_parameter_with_state") => Global::RebuildParameterWithState,
        ("torch._utils", "_rebuild_qtensor") => {
            return Err(Unknown::Unsupported("quantized tensors"));
        }
        ("torch._utils", "_rebuild_sparse_tensor" | "_rebuild_sparse_csr_tensor") => {
            return Err(Unknown::Unsupported("sparse tensors"));
        }
        ("torch._utils", "_rebuild_nested_tensor") => {
            return Err(Unknown::Unsupported("nested tensors"));
        }
        ("torch._utils", "_rebuild_meta_tensor_no_storage") => {
            return Err(Unknown::Unsupported(
                "tensors on the meta device (they hold no values)",
            ));
        }
        ("torch._utils", _) => {
            return Err(Unknown::Unsupported(
                "tensors of a device or kind saved through its own rebuild function",
            ));
        }
        ("torch._tensor", "_rebuild_from_type_v2") => Global::RebuildFromType,
        ("numpy.core.multiarray" | "numpy._core.multiarray", "_reconstruct") => {
            Global::NumpyReconstruct
        }
        ("numpy.core.multiarray" | "numpy._core.multiarray", "scalar") => Global::NumpyScalar,
        ("numpy", "ndarray") => Global::NumpyNdarray,
        ("numpy", "dtype") => Global::NumpyDtype,
        ("torch" | "torch._tensor", "Tensor") | ("torch.nn.parameter", "Parameter") => {
            Global::TensorClass
        }
        ("torch", "Size") => Global::Size,
        ("torch", "device") => Global::Device,
        ("_codecs", "encode") => Global::Encode,
        ("builtins" | "__builtin__", "set" | "frozenset") => Global::Set,
        ("builtins" | "__builtin__", "bytearray") => Global::Bytearray,
        ("torch" | "torch.storage", "UntypedStorage") => Global::StorageType(None),
        ("torch", storage) if storage.ends_with("Storage") => {
            Global::StorageType(Some(storage_dtype(storage).ok_or(Unknown::Refused(""))?))
        }
        ("torch", dtype) => Global::Dtype(torch_dtype(dtype).ok_or_else(|| hint(module))?),
        _ => return Err(hint(module)),
    })
}

fn hint(module: &str) -> Unknown {
    Unknown::Refused(
        if module == "__main__"
            || module.starts_with("torch.nn.modules")
            || module.starts_with("torch.nn")
        {
            " (the file pickles a whole model or other objects, not a state dict: save model.state_dict() instead)"
        } else {
            ""
        },
    )
}

/// The dtype of a legacy storage class, `FloatStorage`.
fn storage_dtype(name: &str) -> Option<TorchDtype> {
    Some(TorchDtype::Known(match name {
        "DoubleStorage" => Dtype::Float64,
        "FloatStorage" => Dtype::Float32,
        "HalfStorage" => Dtype::Float16,
        "BFloat16Storage" => Dtype::Bfloat16,
        "LongStorage" => Dtype::Int64,
        "IntStorage" => Dtype::Int32,
        "ShortStorage" => Dtype::Int16,
        "CharStorage" => Dtype::Int8,
        "ByteStorage" => Dtype::Uint8,
        "BoolStorage" => Dtype::Bool,
        "ComplexFloatStorage" => Dtype::Complex64,
        "ComplexDoubleStorage" => Dtype::Complex128,
        "QInt8Storage" => return Some(TorchDtype::Other("qint8")),
        "QUInt8Storage" => return Some(TorchDtype::Other("quint8")),
        "QInt32Storage" => return Some(TorchDtype::Other("qint32")),
        "QUInt4x2Storage" => return Some(TorchDtype::Other("quint4x2")),
        "QUInt2x4Storage" => return Some(TorchDtype::Other("quint2x4")),
        _ => return None,
    }))
}

/// A `torch.<dtype>` global, by any of its names.
fn torch_dtype(name: &str) -> Option<TorchDtype> {
    Some(TorchDtype::Known(match name {
        "float64" | "double" => Dtype::Float64,
        "float32" | "float" => Dtype::Float32,
        "float16" | "half" => Dtype::Float16,
        "bfloat16" => Dtype::Bfloat16,
        "int64" | "long" => Dtype::Int64,
        "int32" | "int" => Dtype::Int32,
        "int16" | "short" => Dtype::Int16,
        "int8" => Dtype::Int8,
        "uint8" => Dtype::Uint8,
        "uint16" => Dtype::Uint16,
        "uint32" => Dtype::Uint32,
        "uint64" => Dtype::Uint64,
        "bool" => Dtype::Bool,
        "complex64" | "cfloat" => Dtype::Complex64,
        "complex128" | "cdouble" => Dtype::Complex128,
        "float8_e4m3fn" => Dtype::Float8E4m3,
        "float8_e5m2" => Dtype::Float8E5m2,
        "float8_e4m3fnuz" => Dtype::Float8E4m3Fnuz,
        "float8_e5m2fnuz" => Dtype::Float8E5m2Fnuz,
        "float8_e8m0fnu" => Dtype::Float8E8m0,
        "complex32" | "chalf" => return Some(TorchDtype::Other("complex32")),
        "float4_e2m1fn_x2" => return Some(TorchDtype::Other("float4_e2m1fn_x2")),
        "qint8" | "quint8" | "qint32" | "quint4x2" | "quint2x4" | "bits1x8" | "bits2x4"
        | "bits4x2" | "bits8" | "bits16" | "int1" | "int2" | "int3" | "int4" | "int5" | "int6"
        | "int7" | "uint1" | "uint2" | "uint3" | "uint4" | "uint5" | "uint6" | "uint7" => {
            return Some(TorchDtype::Other(other_name(name)));
        }
        _ => return None,
    }))
}

/// `name` as a `'static` string, for the dtypes kept by name.
fn other_name(name: &str) -> &'static str {
    const NAMES: &[&str] = &[
        "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2",
        "bits8", "bits16", "int1", "int2", "int3", "int4", "int5", "int6", "int7", "uint1",
        "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    ];
    NAMES
        .iter()
        .find(|n| **n == name)
        .copied()
        .unwrap_or("an unknown dtype")
}
