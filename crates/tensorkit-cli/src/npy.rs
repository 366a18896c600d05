//! NumPy `.npy` files (format version 1.0), for `tensorkit get -o`.
//!
//! The header is a Python dict literal `{'descr': ..., 'fortran_order': False, 'shape': (...), }`
//! padded with spaces and a newline so the data starts on a multiple of 64 bytes, as NumPy
//! writes it. Elements are written little-endian in C order.

use crate::error::{Error, Result};
use crate::model::NamedTensor;
use tensor_core::Limits;
use tensor_dtype::Dtype;

/// NumPy's type string for `dtype`, or `None` for dtypes NumPy has no type for.
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

/// Writes tensor `t` as a `.npy` file to `out`, its elements streamed in bounded runs
/// (bool bytes other than 0/1 written as 1).
pub fn write(
    t: &NamedTensor<'_>,
    name: &str,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let head = header(t.dtype(), t.shape(), name)?;
    let io = |e| tensor_core::Error::io("writing a .npy file", e);
    out.write_all(&head).map_err(io)?;
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
            header(bf.dtype(), bf.shape(), "b")
                .unwrap_err()
                .to_string()
                .contains("bfloat16")
        );
    }
}
