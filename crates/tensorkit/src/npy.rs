//! NumPy `.npy` files (format version 1.0), for `tensorkit get -o`.
//!
//! The header is a Python dict literal `{'descr': ..., 'fortran_order': False, 'shape': (...), }`
//! padded with spaces and a newline so the data starts on a multiple of 64 bytes, as NumPy
//! writes it. Elements are written little-endian in C order.
//!
//! The machine-learning floats NumPy lacks are named as `ml_dtypes` names them
//! (`'descr': 'bfloat16'`, `'float8_e4m3fn'`, ...): `numpy.load` returns them typed once
//! `ml_dtypes` is imported. `ml_dtypes` keeps 4- and 6-bit floats one per byte, so packed
//! tensors are unpacked on the way out.

use crate::error::{Error, Result};
use crate::model::NamedTensor;
use tensor_core::Limits;
use tensor_dtype::Dtype;

/// NumPy's type string for `dtype` (an `ml_dtypes` name for the floats NumPy lacks), or
/// `None` for the bitmask.
#[must_use]
pub fn descr(dtype: Dtype) -> Option<&'static str> {
    Some(match dtype {
        Dtype::Bool => "|b1",
        Dtype::Int8 => "|i1",
        Dtype::Uint8 => "|u1",
        Dtype::Int16 => "<i2",
        Dtype::Uint16 => "<u2",
        Dtype::Int32 => "<i4",
        Dtype::Uint32 => "<u4",
        Dtype::Int64 => "<i8",
        Dtype::Uint64 => "<u8",
        Dtype::Float16 => "<f2",
        Dtype::Float32 => "<f4",
        Dtype::Float64 => "<f8",
        Dtype::Complex64 => "<c8",
        Dtype::Complex128 => "<c16",
        Dtype::Bfloat16 => "bfloat16",
        Dtype::Float8E4m3 => "float8_e4m3fn",
        Dtype::Float8E5m2 => "float8_e5m2",
        Dtype::Float8E4m3Fnuz => "float8_e4m3fnuz",
        Dtype::Float8E5m2Fnuz => "float8_e5m2fnuz",
        Dtype::Float8E8m0 => "float8_e8m0fnu",
        Dtype::Float6E2m3 => "float6_e2m3fn",
        Dtype::Float6E3m2 => "float6_e3m2fn",
        Dtype::Float4E2m1 => "float4_e2m1fn",
        _ => return None,
    })
}

/// The `.npy` header (magic to newline) for a tensor of `dtype` and `shape`.
pub fn header(dtype: Dtype, shape: &[u64], name: &str) -> Result<Vec<u8>> {
    let d = descr(dtype).ok_or_else(|| Error::CannotRepresent {
        format: "npy",
        what: format!("dtype {dtype} (tensor {name:?}); NumPy has no such type"),
    })?;
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{d}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    let len = u16::try_from(dict.len()).map_err(|_| Error::CannotRepresent {
        format: "npy",
        what: format!("a header of {} bytes (tensor {name:?})", dict.len()),
    })?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    Ok(out)
}

/// Writes tensor `t` (of an open file) as a `.npy` file to `out`, its elements streamed in
/// bounded runs (bool bytes other than 0/1 written as 1), decoded within its file's limits.
/// `name` names it in errors.
pub fn write(t: crate::TensorRef<'_>, name: &str, out: &mut dyn std::io::Write) -> Result<()> {
    write_tensor(t.tensor, name, &t.set.limits, out)
}

/// Writes `view` as a `.npy` file to `out`, as [`write()`] writes a tensor of a file (`limits`
/// bound the memory that unpacking 4- and 6-bit floats takes).
pub fn write_view(
    view: &tensor_dtype::TensorView<'_>,
    name: &str,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    write_tensor(
        &NamedTensor::borrowed(name, view.clone()),
        name,
        limits,
        out,
    )
}

fn write_tensor(
    t: &NamedTensor<'_>,
    name: &str,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let head = header(t.dtype(), t.shape(), name)?;
    let io = |e| tensor_core::Error::io("writing a .npy file", e);
    out.write_all(&head).map_err(io)?;
    if t.dtype().is_packed() {
        // One element per byte, as ml_dtypes holds them.
        let packed = t.le_bytes(limits)?;
        let n = tensor_dtype::shape::element_count(t.shape())?;
        let n = tensor_core::checked::to_usize(n, "element count")?;
        limits.check_total_bytes(n as u64)?;
        let mut unpacked = tensor_core::buffer::try_filled(n, 0u8, "unpacked elements")?;
        for (i, e) in unpacked.iter_mut().enumerate() {
            *e = tensor_dtype::minifloat::packed_code(t.dtype(), &packed, i).unwrap_or(0);
        }
        return out.write_all(&unpacked).map_err(|e| io(e).into());
    }
    t.write_canonical(limits, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_match_numpy() {
        let t = tensor_dtype::Tensor::from_elements(&[2, 3], &[0f32; 6]).unwrap();
        let h = header(t.dtype(), t.shape(), "x").unwrap();
        assert_eq!(h.len() % 64, 0);
        let text = String::from_utf8_lossy(&h[10..]);
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(text.ends_with(" \n"));
        let v = tensor_dtype::Tensor::from_elements(&[4], &[0u8; 4]).unwrap();
        assert!(
            String::from_utf8_lossy(&header(v.dtype(), v.shape(), "v").unwrap())
                .contains("'shape': (4,)")
        );
        let s = tensor_dtype::Tensor::from_elements(&[], &[1.5f64]).unwrap();
        assert!(
            String::from_utf8_lossy(&header(s.dtype(), s.shape(), "s").unwrap())
                .contains("'shape': ()")
        );
        let bf = tensor_dtype::Tensor::new(
            vec![0, 0],
            Dtype::Bfloat16,
            &[1],
            tensor_core::ByteOrder::Little,
        )
        .unwrap();
        assert!(
            String::from_utf8_lossy(&header(bf.dtype(), bf.shape(), "b").unwrap())
                .contains("'descr': 'bfloat16'")
        );
        assert!(
            header(Dtype::Bitmask, &[8], "m")
                .unwrap_err()
                .to_string()
                .contains("bitmask")
        );
    }
}
