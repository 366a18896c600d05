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

pub use tensor_numpy::descr::descr;

/// The `.npy` header (magic to newline) for a tensor of `dtype` and `shape`.
pub fn header(dtype: tensor_dtype::Dtype, shape: &[u64], name: &str) -> Result<Vec<u8>> {
    tensor_numpy::header_bytes(dtype, shape, name).map_err(|e| Error::CannotRepresent {
        format: "npy",
        what: e.to_string(),
    })
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

pub(crate) fn write_tensor(
    t: &NamedTensor<'_>,
    name: &str,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let head = header(t.dtype(), t.shape(), name)?;
    out.write_all(&head)
        .map_err(|e| tensor_core::Error::io("writing a .npy file", e))?;
    write_elements(t, limits, out)
}

/// Writes the elements of `t` as a `.npy` file holds them: little-endian in C order, bools
/// as 0 and 1, 4- and 6-bit floats a byte each.
pub(crate) fn write_elements(
    t: &NamedTensor<'_>,
    limits: &Limits,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let io = |e| tensor_core::Error::io("writing a .npy file", e);
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
    use tensor_dtype::Dtype;

    #[test]
    fn headers_are_numpys() {
        let h = header(Dtype::Float32, &[2, 3], "x").unwrap();
        assert_eq!(h.len() % 64, 0);
        let text = String::from_utf8_lossy(&h[10..]);
        assert!(text.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(
            String::from_utf8_lossy(&header(Dtype::Bfloat16, &[1], "b").unwrap())
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
