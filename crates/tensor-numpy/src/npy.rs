//! One `.npy` file: magic, version, header, elements.

use crate::descr;
use crate::error::{Error, Result};
use crate::header::{self, Header};
use std::borrow::Cow;
use tensor_core::{ByteOrder, Limits, checked};
use tensor_dtype::{Dtype, Order, Tensor, TensorView};

/// Every `.npy` file starts with these six bytes, then its format version.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// A `.npy` file read over its bytes.
#[derive(Clone, Debug)]
pub struct Npy<'a> {
    /// Its format version (1, 2 or 3).
    pub version: u8,
    /// The element type.
    pub dtype: Dtype,
    /// The shape.
    pub shape: Vec<u64>,
    /// C or Fortran order.
    pub order: Order,
    /// The elements' byte order.
    pub byte_order: ByteOrder,
    /// The elements as stored: one byte each for 4- and 6-bit floats (as `ml_dtypes` holds
    /// them), packed otherwise.
    pub data: &'a [u8],
    /// Where the elements start.
    pub data_offset: u64,
    /// NumPy's own type, where the dtype stands for one tensors do not have: a date or a
    /// time span (`datetime64[s]`), read as the 64-bit integers that count its unit.
    pub numpy_type: Option<String>,
}

impl<'a> Npy<'a> {
    /// Reads the header of `bytes` (a whole `.npy` file) and finds its elements. Refused:
    /// headers longer than `limits.max_header_bytes`, object, string and structured arrays,
    /// fewer bytes than the shape needs.
    pub fn open(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        let bad = |reason: String| Error::Header {
            at: String::new(),
            reason,
        };
        if bytes.len() < 10 || &bytes[..6] != MAGIC {
            return Err(bad(format!(
                "it does not start with \\x93NUMPY (first bytes {:02x?})",
                &bytes[..bytes.len().min(8)]
            )));
        }
        let version = bytes[6];
        let (len, start) = match version {
            1 => (u64::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10u64),
            2 | 3 => {
                let b = bytes
                    .get(8..12)
                    .ok_or_else(|| bad("cut short in its header length".into()))?;
                (u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])), 12)
            }
            v => {
                return Err(Error::Unsupported(format!(
                    ".npy format version {v}.{} (1 to 3 are read)",
                    bytes[7]
                )));
            }
        };
        limits.check_header_bytes(len)?;
        let text = &bytes[checked::range(start, len, bytes.len() as u64, ".npy header")?];
        let Header {
            descr,
            fortran_order,
            shape,
        } = header::parse(text)?;
        let (dtype, byte_order) = descr::parse(&descr)?;
        let data_offset = start + len;
        let count = tensor_dtype::shape::element_count(&shape)?;
        let stored = if dtype.is_packed() {
            count
        } else {
            checked::mul(count, dtype.byte_width() as u64, "array bytes")?
        };
        let data =
            &bytes[checked::range(data_offset, stored, bytes.len() as u64, ".npy elements")?];
        let order = if fortran_order && shape.len() > 1 {
            Order::Fortran
        } else {
            Order::C
        };
        Ok(Npy {
            version,
            dtype,
            shape,
            order,
            byte_order,
            data,
            data_offset,
            numpy_type: descr::time_type(&descr),
        })
    }

    /// The elements in place, when stored as tensorkit holds them (all but the 4- and
    /// 6-bit floats, which `ml_dtypes` keeps a byte each).
    pub fn view(&self) -> Result<Option<TensorView<'a>>> {
        if self.dtype.is_packed() {
            return Ok(None);
        }
        Ok(Some(TensorView::contiguous(
            self.data,
            self.dtype,
            &self.shape,
            self.order,
            self.byte_order,
        )?))
    }

    /// The elements, packed where the dtype is, in C order and the machine's byte order.
    pub fn to_tensor(&self, limits: &Limits) -> Result<Tensor> {
        if let Some(v) = self.view()? {
            limits.check_total_bytes(v.byte_len())?;
            return Ok(v.to_tensor());
        }
        // One code per byte, in Fortran order if so stored: put into C order, then packed.
        let codes: Cow<'_, [u8]> = if self.order == Order::Fortran {
            let v = TensorView::contiguous(
                self.data,
                Dtype::Uint8,
                &self.shape,
                Order::Fortran,
                ByteOrder::Little,
            )?;
            v.to_le_bytes()
        } else {
            Cow::Borrowed(self.data)
        };
        let packed = tensor_dtype::minifloat::pack_codes(self.dtype, &codes).ok_or_else(|| {
            Error::Unsupported(format!("{} elements of codes outside the type", self.dtype))
        })?;
        Ok(Tensor::new(
            packed,
            self.dtype,
            &self.shape,
            ByteOrder::NATIVE,
        )?)
    }
}

/// The bytes of a `.npy` file's start, magic to newline, for `dtype` and `shape` in C
/// order as `numpy.save` writes them (version 1.0, or 2.0 for a header over 64 KiB; the
/// elements start at a multiple of 64). `name` names the array in errors.
pub fn header_bytes(dtype: Dtype, shape: &[u64], name: &str) -> Result<Vec<u8>> {
    let d = descr::descr(dtype).ok_or_else(|| {
        Error::CannotWrite(format!(
            "dtype {dtype} (array {name:?}): NumPy has no such type"
        ))
    })?;
    let mut text = header::text(d, false, shape, 10);
    let mut out = MAGIC.to_vec();
    if let Ok(len) = u16::try_from(text.len()) {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&len.to_le_bytes());
    } else {
        text = header::text(d, false, shape, 12);
        let len = u32::try_from(text.len()).map_err(|_| {
            Error::CannotWrite(format!("a header of {} bytes (array {name:?})", text.len()))
        })?;
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(text.as_bytes());
    Ok(out)
}

/// How many bytes a `.npy` file of `dtype` and `shape` stores its elements in: packed
/// 4- and 6-bit floats take a byte each.
pub fn element_bytes(dtype: Dtype, shape: &[u64]) -> Result<u64> {
    let count = tensor_dtype::shape::element_count(shape)?;
    if dtype.is_packed() {
        Ok(count)
    } else {
        Ok(checked::mul(
            count,
            dtype.byte_width() as u64,
            "array bytes",
        )?)
    }
}
