//! DLPack capsules over tensor bytes, so that `torch.from_dlpack`, `jax.numpy.from_dlpack`
//! and `numpy.from_dlpack` take tensorkit's tensors without copying: the versioned (1.x)
//! capsule, which can say the bytes are read-only (a file's mapping) or a copy, and the
//! legacy one, which cannot and so is made only over writable bytes. `tensorkit/_tensor.py`
//! chooses which bytes to hand over; this module builds the C structures.
//!
//! The capsule holds the exporting object's buffer (a `PyBuffer`, released when the
//! consumer calls the deleter, or when the capsule is dropped unused), so the bytes — and the
//! file mapping behind them — live as long as the consumer's tensor does.
//!
//! This is the second of the crate's two `unsafe` modules: DLPack is a C interface.
#![allow(unsafe_code)]

use crate::errors::invalid;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{CStr, c_void};

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const KDL_CPU: i32 = 1;
const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 1 << 1;
const LEGACY: &CStr = c"dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";

/// What keeps a capsule's bytes alive, with the shape its `DLTensor` points to.
struct Context {
    _buffer: PyBuffer<u8>,
    shape: Vec<i64>,
}

/// DLPack's type code and bit width for tensorkit dtype `name`, one element per byte or
/// more; `None` for the packed dtypes (float4, float6), which DLPack 1.0 has no whole-byte
/// form of.
fn data_type(name: &str) -> Option<DLDataType> {
    let (code, bits) = match name {
        "bool" | "bitmask" => (6, 8),
        "int8" => (0, 8),
        "int16" => (0, 16),
        "int32" => (0, 32),
        "int64" => (0, 64),
        "uint8" => (1, 8),
        "uint16" => (1, 16),
        "uint32" => (1, 32),
        "uint64" => (1, 64),
        "float16" => (2, 16),
        "float32" => (2, 32),
        "float64" => (2, 64),
        "bfloat16" => (4, 16),
        "complex64" => (5, 64),
        "complex128" => (5, 128),
        "float8_e4m3" => (10, 8),
        "float8_e4m3fnuz" => (11, 8),
        "float8_e5m2" => (12, 8),
        "float8_e5m2fnuz" => (13, 8),
        "float8_e8m0" => (14, 8),
        _ => return None,
    };
    Some(DLDataType {
        code,
        bits,
        lanes: 1,
    })
}

/// Called by the consumer when it no longer needs the bytes (any thread, GIL or not:
/// `PyBuffer` releases itself under the GIL it takes).
unsafe extern "C" fn delete_legacy(managed: *mut DLManagedTensor) {
    if managed.is_null() {
        return;
    }
    // SAFETY: `managed` and its context were made by `Box::into_raw` in `capsule` and are
    // given back exactly once: by the consumer through this deleter, or by the capsule's
    // destructor when no consumer took it.
    unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx.cast::<Context>()));
    }
}

/// As [`delete_legacy`], for the versioned structure.
unsafe extern "C" fn delete_versioned(managed: *mut DLManagedTensorVersioned) {
    if managed.is_null() {
        return;
    }
    // SAFETY: as in `delete_legacy`.
    unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx.cast::<Context>()));
    }
}

/// The capsule's destructor: frees the tensor unless a consumer took it (a consumer renames
/// the capsule `used_dltensor…` and calls the deleter itself).
unsafe extern "C" fn destroy_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: Python calls this with the capsule being destroyed, the GIL held. A capsule
    // still bearing one of our names holds the pointer `capsule` stored; a renamed one
    // belongs to its consumer.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, LEGACY.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(capsule, LEGACY.as_ptr());
            delete_legacy(p.cast());
        } else if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let p = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr());
            delete_versioned(p.cast());
        }
    }
}

/// A DLPack capsule over `nbytes` bytes at `offset` of `obj`'s buffer, as a C-contiguous CPU
/// tensor of `dtype` and `shape`. `versioned`: the 1.x capsule, flagged read-only when the
/// buffer is, and as a copy when `copied`; else the legacy capsule, which is refused over
/// read-only bytes (it cannot say so, and a consumer may write).
#[pyfunction]
#[pyo3(signature = (obj, offset, dtype, shape, versioned, copied = false))]
pub(crate) fn dlpack_capsule(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    offset: usize,
    dtype: &str,
    shape: Vec<u64>,
    versioned: bool,
    copied: bool,
) -> PyResult<Py<PyAny>> {
    let dl_dtype = data_type(dtype).ok_or_else(|| {
        PyBufferError::new_err(format!("DLPack has no whole-byte form of dtype {dtype}"))
    })?;
    let buffer = PyBuffer::<u8>::get(obj)?;
    if !buffer.is_c_contiguous() {
        return Err(invalid("the exported buffer must be C-contiguous"));
    }
    let readonly = buffer.readonly();
    if readonly && !versioned {
        return Err(PyBufferError::new_err(
            "read-only bytes need the versioned DLPack capsule (ask with max_version=(1, 0))",
        ));
    }
    let mut elements = 1u64;
    let mut dims = Vec::with_capacity(shape.len());
    for &d in &shape {
        elements = elements
            .checked_mul(d)
            .ok_or_else(|| invalid(format!("shape {shape:?} overflows")))?;
        dims.push(i64::try_from(d).map_err(|_| invalid(format!("shape {shape:?} too large")))?);
    }
    let nbytes = elements
        .checked_mul(u64::from(dl_dtype.bits / 8))
        .ok_or_else(|| invalid(format!("shape {shape:?} overflows")))?;
    (offset as u64)
        .checked_add(nbytes)
        .filter(|&e| e <= buffer.len_bytes() as u64)
        .ok_or_else(|| {
            invalid(format!(
                "{nbytes} bytes at offset {offset} lie past the buffer's {}",
                buffer.len_bytes()
            ))
        })?;
    let ndim = i32::try_from(dims.len()).map_err(|_| invalid("too many dimensions"))?;
    // SAFETY: `offset` + the tensor's bytes lie within the buffer (checked above), which
    // the context keeps exported until the deleter runs.
    let data = unsafe { buffer.buf_ptr().cast::<u8>().add(offset) }.cast::<c_void>();
    let mut context = Box::new(Context {
        _buffer: buffer,
        shape: dims,
    });
    let tensor = DLTensor {
        data,
        device: DLDevice {
            device_type: KDL_CPU,
            device_id: 0,
        },
        ndim,
        dtype: dl_dtype,
        shape: context.shape.as_mut_ptr(),
        strides: std::ptr::null_mut(), // C-contiguous
        byte_offset: 0,
    };
    let manager_ctx = Box::into_raw(context).cast::<c_void>();
    let (pointer, name) = if versioned {
        let flags =
            if readonly { FLAG_READ_ONLY } else { 0 } | if copied { FLAG_IS_COPIED } else { 0 };
        let managed = Box::new(DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx,
            deleter: Some(delete_versioned),
            flags,
            dl_tensor: tensor,
        });
        (Box::into_raw(managed).cast::<c_void>(), VERSIONED)
    } else {
        let managed = Box::new(DLManagedTensor {
            dl_tensor: tensor,
            manager_ctx,
            deleter: Some(delete_legacy),
        });
        (Box::into_raw(managed).cast::<c_void>(), LEGACY)
    };
    // SAFETY: `pointer` is a live managed tensor that the capsule's destructor (or the
    // consumer, through the deleter) frees once; `name` is a static C string.
    let capsule = unsafe { ffi::PyCapsule_New(pointer, name.as_ptr(), Some(destroy_capsule)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made, so nothing else frees the tensor.
        unsafe {
            if versioned {
                delete_versioned(pointer.cast());
            } else {
                delete_legacy(pointer.cast());
            }
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `PyCapsule_New` returned a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) }.unbind())
}

#[cfg(test)]
mod tests {
    use super::data_type;

    #[test]
    fn whole_byte_dtypes_have_dlpack_codes_and_packed_ones_none() {
        let bf16 = data_type("bfloat16").unwrap();
        assert_eq!((bf16.code, bf16.bits, bf16.lanes), (4, 16, 1));
        assert_eq!(data_type("float8_e4m3").unwrap().code, 10);
        assert_eq!(data_type("complex128").unwrap().bits, 128);
        assert!(data_type("float4_e2m1").is_none());
        assert!(data_type("float6_e3m2").is_none());
    }
}
