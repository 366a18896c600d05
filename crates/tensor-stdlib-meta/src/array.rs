//! Meta data plus a data buffer: a strided array whose every reachable byte is checked
//! before any access, with subscripts resolved through the index modes.

use crate::enums::{IndexMode, Order, StdlibDtype};
use crate::error::{Error, Result};
use crate::meta::MetaData;
use tensor_dtype::{Scalar, Tensor, TensorView, scalar, shape};

/// An ndarray over a borrowed data buffer, as stdlib's C side builds one — except that the
/// bounds are checked up front, so no subscript can ever reach outside the buffer.
#[derive(Clone, Debug)]
pub struct StridedArray<'a> {
    meta: MetaData,
    view: TensorView<'a>,
}

impl<'a> StridedArray<'a> {
    /// Builds the array, failing unless every byte any subscript can reach lies in `data`
    /// (negative strides, offsets, 0-d and empty arrays included).
    pub fn new(meta: &MetaData, data: &'a [u8]) -> Result<Self> {
        let dtype = meta
            .dtype
            .to_dtype()
            .ok_or(Error::UnviewableDtype(meta.dtype.name()))?;
        let view = TensorView::strided(
            data,
            dtype,
            &meta.shape,
            &meta.strides,
            meta.offset,
            meta.byte_order,
        )?;
        Ok(StridedArray {
            meta: meta.clone(),
            view,
        })
    }

    /// The meta data.
    #[must_use]
    pub fn meta(&self) -> &MetaData {
        &self.meta
    }

    /// The elements as a tensorkit view.
    #[must_use]
    pub fn view(&self) -> &TensorView<'a> {
        &self.view
    }

    /// Resolves subscripts (one per dimension) through the submodes, applied cyclically, to
    /// the byte position of the element in the data buffer.
    pub fn resolve(&self, subscripts: &[i64]) -> Result<usize> {
        let shape = &self.meta.shape;
        if subscripts.len() != shape.len() {
            return Err(Error::InvalidSubscripts(format!(
                "{} subscripts for a {}-dimensional array",
                subscripts.len(),
                shape.len()
            )));
        }
        if !shape.is_empty() && self.meta.submodes.is_empty() {
            return Err(Error::InvalidSubscripts(
                "the meta data lists no submodes to resolve subscripts with".into(),
            ));
        }
        let mut pos = i128::from(self.meta.offset);
        for (axis, (&index, &extent)) in subscripts.iter().zip(shape).enumerate() {
            let mode = self.meta.submodes[axis % self.meta.submodes.len()];
            let i = mode.resolve(index, extent).ok_or(Error::IndexOutOfRange {
                axis,
                index,
                extent,
                mode: mode.name(),
            })?;
            pos += i128::from(i) * i128::from(self.meta.strides[axis]);
        }
        // In bounds: the constructor checked every reachable position.
        Ok(pos as usize)
    }

    /// The element at `subscripts`.
    pub fn get(&self, subscripts: &[i64]) -> Result<Scalar> {
        let pos = self.resolve(subscripts)?;
        let dtype = self.view.dtype();
        let bytes = self.view_bytes();
        Ok(scalar::decode_one(
            dtype,
            &bytes[pos..pos + dtype.byte_width()],
            self.meta.byte_order,
        ))
    }

    /// The element at linear `index`, resolved through `mode` and counted in the declared
    /// order (row-major: last axis fastest; column-major: first axis fastest).
    pub fn iget(&self, index: i64) -> Result<Scalar> {
        let count = shape::element_count(&self.meta.shape)?;
        let linear = self
            .meta
            .mode
            .resolve(index, count)
            .ok_or(Error::IndexOutOfRange {
                axis: usize::MAX,
                index,
                extent: count,
                mode: self.meta.mode.name(),
            })?;
        let mut subs = vec![0i64; self.meta.shape.len()];
        let mut rest = linear;
        let axes: Vec<usize> = match self.meta.order {
            Order::RowMajor => (0..subs.len()).rev().collect(),
            Order::ColumnMajor => (0..subs.len()).collect(),
        };
        for axis in axes {
            let extent = self.meta.shape[axis];
            subs[axis] = (rest % extent) as i64;
            rest /= extent;
        }
        // The subscripts are in range, so resolve them as `throw` would.
        let mut pos = i128::from(self.meta.offset);
        for (axis, &s) in subs.iter().enumerate() {
            pos += i128::from(s) * i128::from(self.meta.strides[axis]);
        }
        let pos = pos as usize;
        let dtype = self.view.dtype();
        Ok(scalar::decode_one(
            dtype,
            &self.view_bytes()[pos..pos + dtype.byte_width()],
            self.meta.byte_order,
        ))
    }

    /// Copies the elements into a C-contiguous tensor in the machine's byte order.
    #[must_use]
    pub fn to_tensor(&self) -> Tensor {
        self.view.to_tensor()
    }

    fn view_bytes(&self) -> &'a [u8] {
        self.view.buffer()
    }
}

/// Meta data describing `view`: its dtype, shape, byte strides and offset, the order it is
/// contiguous in (row-major otherwise), `throw` indexing, and no flags.
pub fn meta_for_view(view: &TensorView<'_>) -> Result<MetaData> {
    let dtype = StdlibDtype::from_dtype(view.dtype()).ok_or(Error::NoStdlibDtype(view.dtype()))?;
    let order = match view.contiguous_order() {
        Some(tensor_dtype::Order::Fortran) if view.shape().len() > 1 => Order::ColumnMajor,
        _ => Order::RowMajor,
    };
    Ok(MetaData {
        byte_order: view.byte_order(),
        dtype,
        shape: view.shape().to_vec(),
        strides: view.strides().to_vec(),
        offset: view.offset() as u64,
        order,
        mode: IndexMode::Throw,
        submodes: vec![IndexMode::Throw],
        flags: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::ByteOrder;

    fn meta(shape: &[u64], strides: &[i64], offset: u64, submodes: &[IndexMode]) -> MetaData {
        MetaData {
            byte_order: ByteOrder::Little,
            dtype: StdlibDtype::Int16,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset,
            order: Order::RowMajor,
            mode: IndexMode::Throw,
            submodes: submodes.to_vec(),
            flags: 0,
        }
    }

    fn data(n: i16) -> Vec<u8> {
        (0..n).flat_map(i16::to_le_bytes).collect()
    }

    #[test]
    fn negative_strides_and_offsets_resolve_inside_the_buffer() {
        // A 3x4 int16 column-major array walked backwards on both axes, as in the fixture
        // two_d_int16_colmajor_negstrides (strides [-2, -6], offset 22).
        let buf = data(12);
        let m = meta(&[3, 4], &[-2, -6], 22, &[IndexMode::Throw]);
        let a = StridedArray::new(&m, &buf).unwrap();
        assert_eq!(a.get(&[0, 0]).unwrap(), Scalar::Int(11));
        assert_eq!(a.get(&[2, 3]).unwrap(), Scalar::Int(0));
        assert_eq!(a.iget(1).unwrap(), Scalar::Int(8));
        assert!(a.get(&[3, 0]).is_err());
        assert!(a.get(&[0]).is_err());
        let t = a.to_tensor();
        assert_eq!(
            &*t.view().typed::<i16>().unwrap(),
            &[11, 8, 5, 2, 10, 7, 4, 1, 9, 6, 3, 0]
        );
    }

    #[test]
    fn views_that_reach_outside_the_buffer_are_refused() {
        let buf = data(12);
        assert!(
            StridedArray::new(&meta(&[3, 4], &[-2, -6], 20, &[IndexMode::Throw]), &buf).is_err()
        );
        assert!(StridedArray::new(&meta(&[13], &[2], 0, &[IndexMode::Throw]), &buf).is_err());
        assert!(StridedArray::new(&meta(&[], &[], 24, &[IndexMode::Throw]), &buf).is_err());
        // Empty arrays reach nothing; 0-d arrays reach one element at the offset.
        assert!(
            StridedArray::new(&meta(&[0, 5], &[10, 2], 999, &[IndexMode::Throw]), &buf).is_ok()
        );
        let z = StridedArray::new(&meta(&[], &[], 6, &[IndexMode::Throw]), &buf).unwrap();
        assert_eq!(z.get(&[]).unwrap(), Scalar::Int(3));
        assert_eq!(z.iget(0).unwrap(), Scalar::Int(3));
        let mut generic = meta(&[2], &[0], 0, &[IndexMode::Throw]);
        generic.dtype = StdlibDtype::Generic;
        assert!(matches!(
            StridedArray::new(&generic, &buf),
            Err(Error::UnviewableDtype("generic"))
        ));
    }

    #[test]
    fn submodes_apply_cyclically() {
        let buf = data(12);
        let a = StridedArray::new(
            &meta(&[3, 4], &[8, 2], 0, &[IndexMode::Wrap, IndexMode::Clamp]),
            &buf,
        )
        .unwrap();
        assert_eq!(a.get(&[-1, 99]).unwrap(), Scalar::Int(11));
        assert_eq!(a.get(&[4, -3]).unwrap(), Scalar::Int(4));
        let b =
            StridedArray::new(&meta(&[3, 4], &[8, 2], 0, &[IndexMode::Normalize]), &buf).unwrap();
        assert_eq!(b.get(&[-1, -1]).unwrap(), Scalar::Int(11));
        assert!(b.get(&[-4, 0]).is_err());
        let none = StridedArray::new(&meta(&[3, 4], &[8, 2], 0, &[]), &buf).unwrap();
        assert!(matches!(
            none.get(&[0, 0]),
            Err(Error::InvalidSubscripts(_))
        ));
    }

    #[test]
    fn meta_for_a_view_round_trips() {
        let t = Tensor::from_elements(&[2, 3], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let m = meta_for_view(&t.view()).unwrap();
        assert_eq!(m.strides, vec![24, 8]);
        assert_eq!(m.order, Order::RowMajor);
        let bytes = m.serialize().unwrap();
        let back = crate::MetaDataRef::open(&bytes).unwrap().to_owned();
        let a = StridedArray::new(&back, t.data()).unwrap();
        assert_eq!(a.get(&[1, 2]).unwrap(), Scalar::Float(6.0));
        let f = TensorView::strided(
            t.data(),
            tensor_dtype::Dtype::Float64,
            &[3, 2],
            &[8, 24],
            0,
            ByteOrder::NATIVE,
        )
        .unwrap();
        assert_eq!(meta_for_view(&f).unwrap().order, Order::ColumnMajor);
        let bf = Tensor::new(
            vec![0, 0],
            tensor_dtype::Dtype::Bfloat16,
            &[1],
            ByteOrder::NATIVE,
        )
        .unwrap();
        assert!(matches!(
            meta_for_view(&bf.view()),
            Err(Error::NoStdlibDtype(_))
        ));
    }
}
