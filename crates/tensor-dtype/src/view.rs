//! Borrowed tensor views and owned tensors.

use crate::dtype::Dtype;
use crate::error::{Error, Result};
use crate::minifloat;
use crate::shape::{self, Order};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use std::borrow::Cow;
use tensor_core::{ByteOrder, byte_order, checked};

/// A Rust type that is the in-memory form of one [`Dtype`].
pub trait Element: bytemuck::Pod {
    /// The dtype this type holds.
    const DTYPE: Dtype;
}

macro_rules! elements {
    ($($t:ty => $d:ident),* $(,)?) => { $(impl Element for $t { const DTYPE: Dtype = Dtype::$d; })* };
}
elements!(
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64,
    f16 => Float16, bf16 => Bfloat16, f32 => Float32, f64 => Float64,
);

/// A tensor whose bytes belong to someone else: a file mapping, a decode buffer, a slice.
///
/// A view records where element `[0, …, 0]` starts, the byte stride of each axis (which may
/// be negative) and the byte order of the elements. Constructors check that every byte the
/// view can reach lies inside its buffer, so no access through it can go out of bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorView<'a> {
    data: &'a [u8],
    dtype: Dtype,
    shape: Vec<u64>,
    strides: Vec<i64>,
    offset: usize,
    byte_order: ByteOrder,
}

impl<'a> TensorView<'a> {
    /// A C-contiguous view: `data` must hold exactly the tensor's bytes.
    pub fn new(data: &'a [u8], dtype: Dtype, shape: &[u64], byte_order: ByteOrder) -> Result<Self> {
        Self::contiguous(data, dtype, shape, Order::C, byte_order)
    }

    /// A contiguous view in either order: `data` must hold exactly the tensor's bytes.
    pub fn contiguous(
        data: &'a [u8],
        dtype: Dtype,
        shape: &[u64],
        order: Order,
        byte_order: ByteOrder,
    ) -> Result<Self> {
        let expected = shape::byte_len(dtype, shape)?;
        if expected != data.len() as u64 {
            return Err(Error::SizeMismatch {
                dtype,
                shape: shape.to_vec(),
                expected,
                actual: data.len() as u64,
            });
        }
        let strides = if dtype.is_packed() || expected == 0 && shape.contains(&0) {
            // Nothing is addressed: a tensor with no elements may have dimensions whose
            // strides would not fit in 64 bits (shape [0, 2^62] of float64).
            vec![0; shape.len()]
        } else {
            shape::byte_strides(shape, dtype.byte_width(), order)?
        };
        Ok(TensorView {
            data,
            dtype,
            shape: shape.to_vec(),
            strides,
            offset: 0,
            byte_order,
        })
    }

    /// A strided view: element `[i₀, …, iₙ]` starts at `offset + Σ iₖ·strides[k]` bytes into
    /// `data`. Fails unless every reachable byte lies inside `data`. Packed types (bitmasks,
    /// 4- and 6-bit floats) cannot be strided.
    pub fn strided(
        data: &'a [u8],
        dtype: Dtype,
        shape: &[u64],
        strides: &[i64],
        offset: u64,
        byte_order: ByteOrder,
    ) -> Result<Self> {
        let invalid = |reason: String| Error::InvalidStrides {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            reason,
        };
        if dtype.is_packed() {
            return Err(invalid(format!("{dtype} elements have no byte strides")));
        }
        shape::element_count(shape)?;
        if let Some((lo, hi)) = shape::reachable_span(shape, strides, offset, dtype.byte_width())?
            && (lo < 0 || hi > data.len() as i128)
        {
            return Err(invalid(format!(
                "from offset {offset} the view reaches bytes {lo}..{hi} of a {}-byte buffer",
                data.len()
            )));
        }
        Ok(TensorView {
            data,
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            offset: checked::to_usize(offset, "view offset")?,
            byte_order,
        })
    }

    /// The element type.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The dimensions.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The byte stride of each axis.
    #[must_use]
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }

    /// The whole buffer the offset and strides index into.
    #[must_use]
    pub fn buffer(&self) -> &'a [u8] {
        self.data
    }

    /// The byte offset of element `[0, …, 0]` in the buffer.
    #[must_use]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The byte order of the elements.
    #[must_use]
    pub fn byte_order(&self) -> ByteOrder {
        self.byte_order
    }

    /// Rows `rows` of the outermost dimension, as a view of the same buffer (the same rank):
    /// a record variable's records, a window of a large tensor. Fails for a scalar, packed
    /// elements (they have no byte strides) or rows past the dimension.
    pub fn rows(&self, rows: std::ops::Range<u64>) -> Result<TensorView<'a>> {
        let mut shape = self.shape.clone();
        match shape.first_mut() {
            Some(n) if rows.start <= rows.end && rows.end <= *n && !self.dtype.is_packed() => {
                *n = rows.end - rows.start;
            }
            _ => {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "rows {rows:?} of a {} view of shape {:?}",
                    self.dtype, self.shape
                ))
                .into());
            }
        }
        let offset = (self.offset as i128)
            .checked_add(i128::from(rows.start) * i128::from(self.strides[0]))
            .and_then(|o| u64::try_from(o).ok())
            .ok_or(tensor_core::Error::Overflow {
                what: "view offset",
            })?;
        TensorView::strided(
            self.data,
            self.dtype,
            &shape,
            &self.strides,
            offset,
            self.byte_order,
        )
    }

    /// Row `i` of the outermost dimension, with that dimension dropped (one rank fewer): a
    /// record of a record variable.
    pub fn row(&self, i: u64) -> Result<TensorView<'a>> {
        let mut one = self.rows(i..i.saturating_add(1))?;
        one.shape.remove(0);
        one.strides.remove(0);
        Ok(one)
    }

    /// The number of elements.
    #[must_use]
    pub fn element_count(&self) -> u64 {
        // Checked at construction.
        self.shape.iter().product()
    }

    /// Bytes the elements occupy when stored contiguously.
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        shape::byte_len(self.dtype, &self.shape).unwrap_or(u64::MAX)
    }

    /// The layout, when the elements are contiguous in C or Fortran order.
    #[must_use]
    pub fn contiguous_order(&self) -> Option<Order> {
        if self.dtype.is_packed() {
            return Some(Order::C);
        }
        let w = self.dtype.byte_width();
        [Order::C, Order::Fortran]
            .into_iter()
            .find(|&o| shape::is_contiguous(&self.shape, &self.strides, w, o))
    }

    /// The elements' bytes in storage order, when they are contiguous (in either order).
    #[must_use]
    pub fn contiguous_bytes(&self) -> Option<&'a [u8]> {
        self.contiguous_order()?;
        let len = self.byte_len() as usize;
        Some(&self.data[self.offset..self.offset + len])
    }

    /// The elements in C order as little-endian bytes, exactly as stored otherwise (a bool
    /// byte of 7 stays 7). Borrowed when nothing needs to change; a view that is not
    /// C-contiguous (strided, or laid out in Fortran order) is gathered.
    #[must_use]
    pub fn to_le_bytes(&self) -> Cow<'a, [u8]> {
        let mut bytes = match (self.contiguous_order(), self.contiguous_bytes()) {
            (Some(Order::C), Some(b)) => Cow::Borrowed(b),
            _ => Cow::Owned(self.gather()),
        };
        if self.byte_order == ByteOrder::Big && self.dtype.swap_width() > 1 {
            // The width always divides the length: checked at construction.
            let _ = byte_order::swap_in_place(bytes.to_mut(), self.dtype.swap_width());
        }
        bytes
    }

    /// What a writer stores: [`to_le_bytes`](Self::to_le_bytes) with bool elements
    /// normalised to 0 or 1 (every format defines bools that way; readers accept any
    /// non-zero byte as true, writers must not produce one).
    #[must_use]
    pub fn to_canonical_le_bytes(&self) -> Cow<'a, [u8]> {
        let mut bytes = self.to_le_bytes();
        if self.dtype == Dtype::Bool && bytes.iter().any(|&b| b > 1) {
            for b in bytes.to_mut() {
                *b = u8::from(*b != 0);
            }
        }
        bytes
    }

    /// Copies the elements into an owned C-contiguous tensor in the machine's byte order.
    #[must_use]
    pub fn to_tensor(&self) -> Tensor {
        let mut data = match (self.contiguous_order(), self.contiguous_bytes()) {
            (Some(Order::C), Some(b)) => tensor_core::buffer::copied(b),
            _ => self.gather(),
        };
        if !self.byte_order.is_native() {
            let _ = byte_order::swap_in_place(&mut data, self.dtype.swap_width());
        }
        Tensor {
            data,
            dtype: self.dtype,
            shape: self.shape.clone(),
            byte_order: ByteOrder::NATIVE,
        }
    }

    /// The elements as `T`, in C order and the machine's byte order: borrowed when the view is
    /// C-contiguous, native-order and aligned for `T`, copied otherwise.
    pub fn typed<T: Element>(&self) -> Result<Cow<'a, [T]>> {
        if T::DTYPE != self.dtype {
            return Err(Error::DtypeMismatch {
                expected: T::DTYPE.name().to_owned(),
                found: self.dtype,
            });
        }
        if self.byte_order.is_native()
            && self.contiguous_order() == Some(Order::C)
            && let Some(bytes) = self.contiguous_bytes()
            && let Ok(slice) = bytemuck::try_cast_slice::<u8, T>(bytes)
        {
            return Ok(Cow::Borrowed(slice));
        }
        Ok(Cow::Owned(bytemuck::pod_collect_to_vec(
            &self.to_tensor().data,
        )))
    }

    /// The elements of a real float tensor of at most 32 bits as `f32`, in C order.
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        match self.dtype {
            Dtype::Float32 => Ok(self.typed::<f32>()?.into_owned()),
            Dtype::Float16 => Ok(self.typed::<f16>()?.to_f32_vec()),
            Dtype::Bfloat16 => Ok(self.typed::<bf16>()?.to_f32_vec()),
            d if d.is_float() && d.byte_width() <= 1 => {
                let data = self.to_tensor().data;
                let n = self.element_count() as usize;
                Ok((0..n)
                    .map(|i| {
                        let code = minifloat::packed_code(d, &data, i).unwrap_or(data[i]);
                        minifloat::to_f32(d, code).unwrap_or(f32::NAN)
                    })
                    .collect())
            }
            found => Err(Error::DtypeMismatch {
                expected: "a float of at most 32 bits".into(),
                found,
            }),
        }
    }

    /// Copies the elements in C order into a new contiguous buffer (same byte order).
    fn gather(&self) -> Vec<u8> {
        if self.dtype.is_packed() {
            return tensor_core::buffer::copied(self.data);
        }
        let mut out = Vec::with_capacity(self.element_count() as usize * self.dtype.byte_width());
        let _ = self.for_each_run(&mut |run| {
            out.extend_from_slice(run);
            Ok(())
        });
        out
    }

    /// Calls `f` with each run of elements that lies contiguous in the buffer, in C order:
    /// the trailing dimensions whose strides are C-contiguous make one run, repeated over
    /// the others (a record variable's records, a transposed matrix's elements).
    fn for_each_run(&self, f: &mut dyn FnMut(&'a [u8]) -> Result<()>) -> Result<()> {
        if self.element_count() == 0 {
            return Ok(());
        }
        let mut inner = self.shape.len();
        let mut run = self.dtype.byte_width() as i128;
        while inner > 0 {
            let k = inner - 1;
            if self.shape[k] != 1 && i128::from(self.strides[k]) != run {
                break;
            }
            run *= i128::from(self.shape[k]);
            inner -= 1;
        }
        // Every reachable byte was checked to lie in the buffer at construction.
        let run = run as usize;
        let mut index = vec![0u64; inner];
        let mut pos = self.offset as i128;
        loop {
            let p = pos as usize;
            f(&self.data[p..p + run])?;
            // Odometer step over the outer index, last axis fastest.
            let mut axis = inner;
            loop {
                if axis == 0 {
                    return Ok(());
                }
                axis -= 1;
                index[axis] += 1;
                pos += i128::from(self.strides[axis]);
                if index[axis] < self.shape[axis] {
                    break;
                }
                pos -= i128::from(self.strides[axis]) * i128::from(self.shape[axis]);
                index[axis] = 0;
            }
        }
    }

    /// Copies the elements into `dst` in C order and the machine's byte order, which must
    /// be exactly [`byte_len`](Self::byte_len) bytes: run by run of contiguous elements,
    /// their bytes reversed on the way where the view's order is not the machine's (on every
    /// core for large runs, with tensor-core's `parallel`), with no copy between.
    pub fn copy_native_into(&self, dst: &mut [u8]) -> Result<()> {
        if dst.len() as u64 != self.byte_len() {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "the tensor holds {} bytes; the buffer has {}",
                self.byte_len(),
                dst.len()
            ))
            .into());
        }
        if self.dtype.is_packed() {
            dst.copy_from_slice(&self.to_le_bytes());
            return Ok(byte_order::to_native_in_place(
                ByteOrder::Little,
                dst,
                self.dtype.swap_width(),
            )?);
        }
        let width = self.dtype.swap_width();
        let mut at = 0;
        self.for_each_run(&mut |run| {
            let end = at + run.len();
            tensor_core::buffer::convert(
                &mut dst[at..end],
                run,
                self.byte_order,
                ByteOrder::NATIVE,
                width,
            )?;
            at = end;
            Ok(())
        })
    }
}

/// An owned, C-contiguous tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    data: Vec<u8>,
    dtype: Dtype,
    shape: Vec<u64>,
    byte_order: ByteOrder,
}

impl Tensor {
    /// A tensor over `data`, which must hold exactly the C-contiguous elements.
    pub fn new(data: Vec<u8>, dtype: Dtype, shape: &[u64], byte_order: ByteOrder) -> Result<Self> {
        TensorView::new(&data, dtype, shape, byte_order)?;
        Ok(Tensor {
            data,
            dtype,
            shape: shape.to_vec(),
            byte_order,
        })
    }

    /// A native-order tensor holding `values` with `shape`.
    pub fn from_elements<T: Element>(shape: &[u64], values: &[T]) -> Result<Self> {
        Self::new(
            bytemuck::cast_slice(values).to_vec(),
            T::DTYPE,
            shape,
            ByteOrder::NATIVE,
        )
    }

    /// A view of this tensor.
    #[must_use]
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            data: &self.data,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: if self.dtype.is_packed() {
                vec![0; self.shape.len()]
            } else {
                // Cannot fail: checked when the tensor was built.
                shape::byte_strides(&self.shape, self.dtype.byte_width(), Order::C)
                    .unwrap_or_default()
            },
            offset: 0,
            byte_order: self.byte_order,
        }
    }

    /// The element type.
    #[must_use]
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }

    /// The dimensions.
    #[must_use]
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The byte order of the elements.
    #[must_use]
    pub fn byte_order(&self) -> ByteOrder {
        self.byte_order
    }

    /// The raw bytes.
    #[must_use]
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The raw bytes, by value.
    #[must_use]
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }

    /// This tensor in the byte order `to`, swapping in place if needed.
    #[must_use]
    pub fn into_byte_order(mut self, to: ByteOrder) -> Self {
        if self.byte_order != to {
            let _ = byte_order::swap_in_place(&mut self.data, self.dtype.swap_width());
            self.byte_order = to;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensor_core::{ErrorKind, Kinded};

    #[test]
    fn rows_and_a_row_are_views_of_the_same_elements() {
        let data: Vec<u8> = (0..200u8).collect();
        // Records of 3 x 2 int16, each 24 bytes apart; and a reversed vector.
        let records = TensorView::strided(
            &data,
            Dtype::Int16,
            &[5, 3, 2],
            &[24, 4, 2],
            4,
            ByteOrder::Big,
        )
        .unwrap();
        let all = records.to_le_bytes();
        let rows = records.rows(1..4).unwrap();
        assert_eq!(rows.shape(), [3, 3, 2]);
        assert_eq!(rows.to_le_bytes().as_ref(), &all[12..48]);
        let row = records.row(4).unwrap();
        assert_eq!(row.shape(), [3, 2]);
        assert_eq!(row.to_le_bytes().as_ref(), &all[48..60]);
        let reversed =
            TensorView::strided(&data, Dtype::Uint8, &[10], &[-1], 9, ByteOrder::Little).unwrap();
        assert_eq!(
            reversed.rows(2..5).unwrap().to_le_bytes().as_ref(),
            [7, 6, 5]
        );
        #[allow(
            clippy::reversed_empty_ranges,
            reason = "a range that ends before it starts is refused"
        )]
        let backwards = 4..2;
        for bad in [records.rows(3..6), records.rows(backwards), records.row(5)] {
            assert_eq!(bad.unwrap_err().kind(), ErrorKind::InvalidArgument);
        }
        let scalar = TensorView::new(&data[..4], Dtype::Float32, &[], ByteOrder::Little).unwrap();
        assert!(scalar.row(0).is_err());
    }

    #[test]
    fn native_copies_match_gathered_bytes_for_every_layout() {
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 37 % 251) as u8).collect();
        // C order, Fortran order, records a gap apart, a reversed axis, a broadcast one.
        let layouts: [(&[u64], &[i64], u64); 5] = [
            (&[3, 4, 5], &[80, 20, 4], 0),
            (&[3, 4, 5], &[4, 12, 48], 0),
            (&[6, 2, 3], &[100, 12, 4], 8),
            (&[4, 5], &[-20, 4], 60),
            (&[3, 5], &[0, 4], 4),
        ];
        for (shape, strides, offset) in layouts {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                for dtype in [Dtype::Float32, Dtype::Int16, Dtype::Complex64] {
                    let w = dtype.byte_width() as i64;
                    let strides: Vec<i64> = strides.iter().map(|s| s / 4 * w).collect();
                    let v = TensorView::strided(
                        &data,
                        dtype,
                        shape,
                        &strides,
                        offset / 4 * w as u64,
                        order,
                    )
                    .unwrap();
                    // Element by element, in C order.
                    let mut want = Vec::new();
                    let count: u64 = shape.iter().product();
                    for flat in 0..count {
                        let (mut rest, mut at) = (flat, (offset / 4) as i64 * w);
                        for k in (0..shape.len()).rev() {
                            at += (rest % shape[k]) as i64 * strides[k];
                            rest /= shape[k];
                        }
                        let mut e = data[at as usize..(at + w) as usize].to_vec();
                        byte_order::to_native_in_place(order, &mut e, dtype.swap_width()).unwrap();
                        want.extend_from_slice(&e);
                    }
                    assert_eq!(
                        v.to_tensor().data(),
                        &want[..],
                        "to_tensor {shape:?} {strides:?}"
                    );
                    let mut got = vec![0u8; want.len()];
                    v.copy_native_into(&mut got).unwrap();
                    assert_eq!(got, want, "{shape:?} {strides:?} {order:?} {dtype}");
                }
            }
        }
        let v = TensorView::new(&data[..8], Dtype::Float32, &[2], ByteOrder::Big).unwrap();
        assert!(v.copy_native_into(&mut [0u8; 4]).is_err());
    }

    fn le_f32(vals: &[f32]) -> Vec<u8> {
        vals.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn empty_tensors_with_huge_dimensions_are_viewable() {
        // Found by fuzzing: no element is addressed, so strides past 2^63 do not matter.
        let v = TensorView::new(&[], Dtype::Float64, &[0, 1 << 62], ByteOrder::Little).unwrap();
        assert_eq!(v.element_count(), 0);
        assert_eq!(v.to_le_bytes().len(), 0);
        assert!(v.to_tensor().data().is_empty());
    }

    #[test]
    fn contiguous_views_check_their_size() {
        let bytes = le_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let v = TensorView::new(&bytes, Dtype::Float32, &[2, 3], ByteOrder::Little).unwrap();
        assert_eq!(v.strides(), &[12, 4]);
        assert_eq!(v.element_count(), 6);
        assert_eq!(v.contiguous_order(), Some(Order::C));
        let e = TensorView::new(&bytes, Dtype::Float32, &[2, 2], ByteOrder::Little).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(
            e.to_string()
                .contains("needs 16 bytes, but the buffer holds 24")
        );
        let scalar = TensorView::new(&bytes[..4], Dtype::Float32, &[], ByteOrder::Little).unwrap();
        assert_eq!(scalar.element_count(), 1);
        let empty = TensorView::new(&[], Dtype::Float64, &[3, 0], ByteOrder::Little).unwrap();
        assert_eq!(empty.to_tensor().data().len(), 0);
    }

    #[test]
    fn typed_borrows_when_it_can_and_copies_when_it_must() {
        let t = Tensor::from_elements(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let v = t.view();
        assert!(matches!(v.typed::<f32>().unwrap(), Cow::Borrowed(_)));
        assert!(v.typed::<f64>().is_err());
        // Misaligned: one byte into a buffer.
        let mut buf = [0u8; 17];
        buf[1..].copy_from_slice(bytemuck::cast_slice(&[1.0f32, 2.0, 3.0, 4.0]));
        let mis = TensorView::new(&buf[1..], Dtype::Float32, &[4], ByteOrder::NATIVE).unwrap();
        let typed = mis.typed::<f32>().unwrap();
        assert_eq!(&*typed, &[1.0, 2.0, 3.0, 4.0]);
        // Big-endian: swapped copy.
        let be: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_be_bytes()).collect();
        let bev = TensorView::new(&be, Dtype::Int32, &[2], ByteOrder::Big).unwrap();
        assert_eq!(&*bev.typed::<i32>().unwrap(), &[1, -2]);
        assert_eq!(bev.to_le_bytes().as_ref(), &le_i32(&[1, -2]));
    }

    fn le_i32(vals: &[i32]) -> Vec<u8> {
        vals.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn strided_views_stay_inside_the_buffer() {
        // A 2x3 int32 matrix, viewed transposed (3x2) and reversed along one axis.
        let bytes = le_i32(&[0, 1, 2, 3, 4, 5]);
        let t = TensorView::strided(
            &bytes,
            Dtype::Int32,
            &[3, 2],
            &[4, 12],
            0,
            ByteOrder::Little,
        )
        .unwrap();
        assert_eq!(t.contiguous_order(), Some(Order::Fortran));
        assert_eq!(&*t.typed::<i32>().unwrap(), &[0, 3, 1, 4, 2, 5]);
        // to_le_bytes gives C order, whatever the layout: what writers store.
        assert_eq!(
            t.to_le_bytes().as_ref(),
            le_i32(&[0, 3, 1, 4, 2, 5]).as_slice()
        );
        let r = TensorView::strided(
            &bytes,
            Dtype::Int32,
            &[2, 3],
            &[12, -4],
            8,
            ByteOrder::Little,
        )
        .unwrap();
        assert_eq!(r.contiguous_order(), None);
        assert_eq!(&*r.typed::<i32>().unwrap(), &[2, 1, 0, 5, 4, 3]);
        assert_eq!(
            r.to_le_bytes().as_ref(),
            le_i32(&[2, 1, 0, 5, 4, 3]).as_slice()
        );
        // Out of bounds in either direction, or a rank mismatch.
        for (strides, offset) in [(&[12i64, -4][..], 4u64), (&[12, 4], 4), (&[12, 4][..1], 0)] {
            let e = TensorView::strided(
                &bytes,
                Dtype::Int32,
                &[2, 3],
                strides,
                offset,
                ByteOrder::Little,
            );
            assert!(e.is_err(), "{strides:?} {offset}");
        }
        assert!(
            TensorView::strided(&bytes, Dtype::Bitmask, &[8], &[1], 0, ByteOrder::Little).is_err()
        );
        // A zero-length dimension reaches nothing, whatever the offset.
        let z = TensorView::strided(
            &bytes,
            Dtype::Int32,
            &[0, 3],
            &[12, 4],
            999,
            ByteOrder::Little,
        );
        assert!(z.is_ok());
    }

    #[test]
    fn half_and_float8_widen_to_f32() {
        let halves: Vec<f16> = [1.0f32, -0.5, 65504.0]
            .iter()
            .map(|&x| f16::from_f32(x))
            .collect();
        let tensor = Tensor::from_elements(&[3], &halves).unwrap();
        assert_eq!(tensor.view().to_f32().unwrap(), vec![1.0, -0.5, 65504.0]);
        let brains: Vec<bf16> = [1.5f32, -2.0].iter().map(|&x| bf16::from_f32(x)).collect();
        let tensor = Tensor::from_elements(&[2], &brains).unwrap();
        assert_eq!(tensor.view().to_f32().unwrap(), vec![1.5, -2.0]);
        let f8 = [0x30u8, 0x31];
        let e4 = TensorView::new(&f8, Dtype::Float8E4m3, &[2], ByteOrder::Little).unwrap();
        assert_eq!(e4.to_f32().unwrap(), vec![0.5, 0.5625]);
        let e5 = TensorView::new(&f8, Dtype::Float8E5m2, &[2], ByteOrder::Little).unwrap();
        assert_eq!(e5.to_f32().unwrap(), vec![0.125, 0.15625]);
        let ints = Tensor::from_elements(&[1], &[1i32]).unwrap();
        assert!(ints.view().to_f32().is_err());
    }

    #[test]
    fn bools_normalise_and_complex_swaps_per_component() {
        let b = [0u8, 7, 1];
        let v = TensorView::new(&b, Dtype::Bool, &[3], ByteOrder::Big).unwrap();
        assert_eq!(v.to_le_bytes().as_ref(), &[0, 7, 1]);
        assert_eq!(v.to_canonical_le_bytes().as_ref(), &[0, 1, 1]);
        let c: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
        let v = TensorView::new(&c, Dtype::Complex64, &[1], ByteOrder::Big).unwrap();
        assert_eq!(v.to_le_bytes().as_ref(), le_f32(&[1.0, 2.0]).as_slice());
        let t = v.to_tensor().into_byte_order(ByteOrder::Big);
        assert_eq!(t.data(), c.as_slice());
    }

    #[test]
    fn bitmasks_use_ceil_n_over_8_bytes() {
        let v = TensorView::new(&[0xFF, 0x80], Dtype::Bitmask, &[9], ByteOrder::Little).unwrap();
        assert_eq!(v.byte_len(), 2);
        assert_eq!(v.contiguous_bytes(), Some(&[0xFF, 0x80][..]));
        assert!(TensorView::new(&[0xFF], Dtype::Bitmask, &[9], ByteOrder::Little).is_err());
    }
}
