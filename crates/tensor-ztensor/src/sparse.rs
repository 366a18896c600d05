//! Sparse tensors of zTensor 0.1, in the reference code's single-blob form.
//!
//! - CSR (`sparsecsr`): `indptr` (rows + 1 u64 LE), `indices` (nnz u64 LE), then the nnz
//!   values. Rows are the first dimension; columns the product of the others.
//! - COO (`sparsecoo`): nnz records, each the ndim u64 LE indices then one value.
//!
//! Indices are little-endian whatever the tensor's `data_endianness`; values follow it.

use crate::error::{Class, Error, Result};
use crate::v0_1::Layout;
use tensor_core::{ByteOrder, checked};
use tensor_dtype::{Dtype, Tensor, shape};

/// A sparse tensor's components, values in the machine's byte order.
#[derive(Clone, Debug, PartialEq)]
pub enum Sparse {
    /// Compressed sparse rows.
    Csr {
        /// The dense shape.
        shape: Vec<u64>,
        /// Row starts into `indices`/`values`, rows + 1 of them.
        indptr: Vec<u64>,
        /// Column of each non-zero.
        indices: Vec<u64>,
        /// The non-zeros, a 1-D tensor.
        values: Tensor,
    },
    /// Coordinates.
    Coo {
        /// The dense shape.
        shape: Vec<u64>,
        /// nnz × ndim indices, one row per non-zero.
        coords: Vec<u64>,
        /// The non-zeros, a 1-D tensor.
        values: Tensor,
    },
}

fn bad(name: &str, msg: impl std::fmt::Display) -> Error {
    Error::format(
        Class::SizeMismatch,
        format!("sparse tensor {name:?}: {msg}"),
    )
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect()
}

fn values(bytes: &[u8], dtype: Dtype, nnz: u64, order: ByteOrder) -> Result<Tensor> {
    Ok(Tensor::new(bytes.to_vec(), dtype, &[nnz], order)?.into_byte_order(ByteOrder::NATIVE))
}

impl Sparse {
    /// CSR components, checked: `indptr` has rows + 1 entries, starts at 0, never decreases
    /// and ends at the number of values; there is one column index per value, each in range.
    pub(crate) fn csr(
        dense: &[u64],
        indptr: Vec<u64>,
        indices: Vec<u64>,
        values_bytes: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        name: &str,
    ) -> Result<Self> {
        let (&rows, rest) = dense
            .split_first()
            .ok_or_else(|| bad(name, "a CSR tensor needs at least one dimension"))?;
        let cols = shape::element_count(rest)?;
        let nnz = (values_bytes.len() / dtype.byte_width().max(1)) as u64;
        if indptr.len() as u64 != rows.saturating_add(1)
            || indptr.first() != Some(&0)
            || indptr.windows(2).any(|p| p[0] > p[1])
            || indptr.last() != Some(&nnz)
            || indices.len() as u64 != nnz
        {
            return Err(bad(
                name,
                format!(
                    "indptr must hold {} non-decreasing entries from 0 to the {nnz} values, with one index per value",
                    rows.saturating_add(1)
                ),
            ));
        }
        if let Some(c) = indices.iter().find(|&&c| c >= cols) {
            return Err(bad(
                name,
                format!("column index {c} is outside {cols} columns"),
            ));
        }
        Ok(Sparse::Csr {
            shape: dense.to_vec(),
            indptr,
            indices,
            values: values(values_bytes, dtype, nnz, order)?,
        })
    }

    /// COO components, one row of `ndim` indices per value, checked against the shape.
    fn coo(
        dense: &[u64],
        coords: Vec<u64>,
        values_bytes: &[u8],
        dtype: Dtype,
        order: ByteOrder,
        name: &str,
    ) -> Result<Self> {
        let nnz = values_bytes.len() / dtype.byte_width().max(1);
        let ndim = dense.len();
        check_coordinate_count(coords.len(), nnz, ndim, name)?;
        for (k, c) in coords.iter().enumerate() {
            let axis = k % ndim.max(1);
            if *c >= dense[axis] {
                return Err(bad(
                    name,
                    format!(
                        "coordinate {c} is outside axis {axis} of extent {}",
                        dense[axis]
                    ),
                ));
            }
        }
        Ok(Sparse::Coo {
            shape: dense.to_vec(),
            coords,
            values: values(values_bytes, dtype, nnz as u64, order)?,
        })
    }

    /// COO components with coordinates in structure-of-arrays order (all first indices,
    /// then all second indices, ...), little-endian values.
    pub(crate) fn coo_soa(
        dense: &[u64],
        coords: &[u64],
        values_le: &[u8],
        dtype: Dtype,
        name: &str,
    ) -> Result<Self> {
        let nnz = values_le.len() / dtype.byte_width().max(1);
        let ndim = dense.len();
        // Checked before the transposition below indexes by it.
        check_coordinate_count(coords.len(), nnz, ndim, name)?;
        let aos = (0..nnz)
            .flat_map(|k| (0..ndim).map(move |axis| coords[axis * nnz + k]))
            .collect();
        Self::coo(dense, aos, values_le, dtype, ByteOrder::Little, name)
    }

    /// The single-blob forms of zTensor 0.1.
    pub(crate) fn parse(
        layout: &Layout,
        blob: &[u8],
        dtype: Dtype,
        dense: &[u64],
        order: ByteOrder,
        name: &str,
    ) -> Result<Self> {
        let w = dtype.byte_width() as u64;
        let len = blob.len() as u64;
        shape::element_count(dense).map_err(|_| {
            Error::format(
                Class::ShapeOverflow,
                format!("tensor {name:?}: shape overflows"),
            )
        })?;
        match layout {
            Layout::SparseCsr => {
                let rows = *dense
                    .first()
                    .ok_or_else(|| bad(name, "a CSR tensor needs at least one dimension"))?;
                let head = checked::mul(checked::add(rows, 1, "indptr")?, 8, "indptr")?;
                if head > len {
                    return Err(bad(
                        name,
                        format!("{rows} rows need {head} bytes of indptr; the blob holds {len}"),
                    ));
                }
                let indptr = u64s(&blob[..head as usize]);
                let nnz = indptr.last().copied().unwrap_or(0);
                let need =
                    checked::add(head, checked::mul(nnz, 8 + w, "non-zeros")?, "sparse blob")?;
                if need != len {
                    return Err(bad(
                        name,
                        format!("{nnz} non-zeros need a {need}-byte blob; it holds {len}"),
                    ));
                }
                let split = (head + 8 * nnz) as usize;
                let indices = u64s(&blob[head as usize..split]);
                Self::csr(dense, indptr, indices, &blob[split..], dtype, order, name)
            }
            Layout::SparseCoo => {
                let ndim = dense.len();
                let record = checked::add(checked::mul(ndim as u64, 8, "record")?, w, "record")?;
                if record == 0 || !len.is_multiple_of(record) {
                    return Err(bad(
                        name,
                        format!(
                            "the {len}-byte blob is not a whole number of {record}-byte records"
                        ),
                    ));
                }
                let mut coords = Vec::with_capacity((len / record) as usize * ndim);
                let mut vals = Vec::with_capacity((len / record * w) as usize);
                for rec in blob.chunks_exact(record as usize) {
                    coords.extend(u64s(&rec[..ndim * 8]));
                    vals.extend_from_slice(&rec[ndim * 8..]);
                }
                Self::coo(dense, coords, &vals, dtype, order, name)
            }
            other => Err(Error::format(
                Class::UnknownLayout,
                format!("tensor {name:?}: layout {:?} is not sparse", other.name()),
            )),
        }
    }

    /// The number of stored non-zeros.
    #[must_use]
    pub fn nnz(&self) -> usize {
        match self {
            Sparse::Csr { indices, .. } => indices.len(),
            Sparse::Coo { values, .. } => values.shape()[0] as usize,
        }
    }

    /// The dense tensor, zeros elsewhere (for COO, a repeated coordinate keeps its last value).
    pub fn to_dense(&self) -> Result<Tensor> {
        let (shape, values) = match self {
            Sparse::Csr { shape, values, .. } | Sparse::Coo { shape, values, .. } => {
                (shape, values)
            }
        };
        let w = values.dtype().byte_width();
        let n = shape::byte_len(values.dtype(), shape)?;
        let mut out = vec![0u8; checked::to_usize(n, "dense size")?];
        let src = values.data();
        let mut put = |flat: u64, k: usize| {
            let at = flat as usize * w;
            out[at..at + w].copy_from_slice(&src[k * w..(k + 1) * w]);
        };
        match self {
            Sparse::Csr {
                indptr, indices, ..
            } => {
                let cols = shape::element_count(&shape[1..])?;
                for (row, span) in indptr.windows(2).enumerate() {
                    let (start, end) = (span[0] as usize, span[1] as usize);
                    for (k, &col) in indices.iter().enumerate().take(end).skip(start) {
                        put(row as u64 * cols + col, k);
                    }
                }
            }
            Sparse::Coo { coords, .. } => {
                let strides = shape::c_strides(shape)?;
                let ndim = shape.len().max(1);
                for (k, c) in coords.chunks(ndim).enumerate().take(self.nnz()) {
                    put(c.iter().zip(&strides).map(|(a, s)| a * s).sum(), k);
                }
                if shape.is_empty() {
                    for k in 0..self.nnz() {
                        put(0, k);
                    }
                }
            }
        }
        Ok(Tensor::new(out, values.dtype(), shape, ByteOrder::NATIVE)?)
    }
}

/// COO needs one coordinate per dimension per value.
fn check_coordinate_count(count: usize, nnz: usize, ndim: usize, name: &str) -> Result<()> {
    if count == ndim * nnz {
        return Ok(());
    }
    Err(bad(
        name,
        format!("{count} coordinates for {nnz} values in {ndim} dimensions"),
    ))
}
