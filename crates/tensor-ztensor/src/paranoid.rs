//! The `paranoid` feature: every file the writers produce is read back and compared, tensor
//! by tensor, with what they were given.

use crate::any::AnyZTensor;
use crate::error::{Error, Result};
use tensor_dtype::TensorView;

/// What one tensor must read back as: name and canonical little-endian bytes.
pub(crate) type Expected = (String, Vec<u8>);

/// Reads `bytes` back and compares every tensor in `expected`.
pub(crate) fn check(bytes: &[u8], expected: &[Expected]) -> Result<()> {
    let fail = |what: String| Error::SelfCheck(what);
    let file =
        AnyZTensor::open(bytes).map_err(|e| fail(format!("the file does not read back: {e}")))?;
    file.verify_all()
        .map_err(|e| fail(format!("a checksum does not verify: {e}")))?;
    for (name, le) in expected {
        let i = file
            .position(name)
            .ok_or_else(|| fail(format!("tensor {name:?} is missing")))?;
        let d = file
            .read(i)
            .map_err(|e| fail(format!("tensor {name:?} does not read back: {e}")))?;
        let view = TensorView::new(&d.data, d.dtype, &d.shape, d.byte_order)?;
        if view.to_canonical_le_bytes().as_ref() != le.as_slice() {
            return Err(fail(format!(
                "tensor {name:?} reads back with other values"
            )));
        }
    }
    Ok(())
}

/// Reads what [`write_streamed`](crate::v2::write_streamed) wrote back: every object is
/// there with its dtype and shape, and every digest verifies (the digests were computed
/// from the bytes as they were handed over).
pub(crate) fn check_written(bytes: &[u8], entries: &[crate::v2::ObjectEntry<'_>]) -> Result<()> {
    let fail = |what: String| Error::SelfCheck(what);
    let file =
        AnyZTensor::open(bytes).map_err(|e| fail(format!("the file does not read back: {e}")))?;
    file.verify_all()
        .map_err(|e| fail(format!("a digest does not verify: {e}")))?;
    for e in entries {
        let i = file
            .position(e.name)
            .ok_or_else(|| fail(format!("tensor {:?} is missing", e.name)))?;
        let d = file
            .read(i)
            .map_err(|err| fail(format!("tensor {:?} does not read back: {err}", e.name)))?;
        if d.dtype != e.dtype || d.shape != e.shape {
            return Err(fail(format!(
                "tensor {:?} reads back as {} {:?}",
                e.name, d.dtype, d.shape
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatches_are_reported() {
        let t = tensor_dtype::Tensor::from_elements(&[2], &[1u16, 2]).unwrap();
        let opts = crate::v0_1::TensorOptions::default();
        let bytes = crate::v0_1::serialize([("a", t.view(), opts)]).unwrap();
        check(&bytes, &[("a".into(), vec![1, 0, 2, 0])]).unwrap();
        assert!(check(&bytes, &[("a".into(), vec![1, 0, 3, 0])]).is_err());
        assert!(check(&bytes, &[("b".into(), vec![1, 0, 2, 0])]).is_err());
    }
}
