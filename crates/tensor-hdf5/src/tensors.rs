//! An HDF5 file as named tensors, as files of weights (Keras' `.h5`, h5py's) are read: every
//! dataset of numbers a tensor named by its path with dots (`model_weights/dense/kernel:0`
//! is `model_weights.dense.kernel:0`), every attribute a value named the same way (the root
//! group's by their own names), and what holds no numbers named with the reason.

use crate::data::Dataset;
use crate::error::Result;
use crate::file::{Hdf5, Kind};
use crate::values::Values;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;

/// One dataset of numbers.
#[derive(Clone, Debug)]
pub struct Named<'a> {
    /// Its path, dotted.
    pub name: String,
    /// The dataset.
    pub dataset: Dataset<'a>,
    /// Its element type.
    pub dtype: Dtype,
    /// The byte order its elements are stored in.
    pub byte_order: ByteOrder,
}

/// What a file holds, as tensors and values.
#[derive(Clone, Debug, Default)]
pub struct Listing<'a> {
    /// Datasets of numbers, in the order the file lists them.
    pub tensors: Vec<Named<'a>>,
    /// Attributes, by dotted name.
    pub attributes: Vec<(String, Values)>,
    /// Datasets and attributes of other types (strings, compounds, references), by dotted
    /// name, with why they are left out.
    pub left_out: Vec<(String, String)>,
}

/// `path` (`/a/b`) as a dotted name (`a.b`).
#[must_use]
pub fn dotted(path: &str) -> String {
    path.trim_start_matches('/').replace('/', ".")
}

impl<'a> Hdf5<'a> {
    /// Every dataset of numbers as a named tensor, and every attribute as a value, within
    /// `limits` (the count of tensors; the bytes of string values).
    pub fn tensors(&self, limits: &Limits) -> Result<Listing<'a>> {
        let mut out = Listing::default();
        for object in self.objects()? {
            let base = dotted(&object.path);
            for a in &object.attributes {
                let name = if base.is_empty() {
                    a.name.clone()
                } else {
                    format!("{base}.{}", a.name)
                };
                match self.attribute_values(a, limits) {
                    Ok(v) => out.attributes.push((name, v)),
                    Err(e) => out.left_out.push((name, e.to_string())),
                }
            }
            let Kind::Dataset(dataset) = object.kind else {
                continue;
            };
            match dataset.datatype.dtype() {
                Some((dtype, byte_order)) => {
                    limits.check_tensor_count(out.tensors.len() as u64 + 1)?;
                    out.tensors.push(Named {
                        name: base,
                        dataset,
                        dtype,
                        byte_order,
                    });
                }
                None => out.left_out.push((
                    base,
                    format!(
                        "a dataset of HDF5 class {} holds no numbers",
                        dataset.datatype.class_name()
                    ),
                )),
            }
        }
        Ok(out)
    }

    /// Reads rows `rows` of `dataset`'s outermost dimension into `out`, in the machine's
    /// byte order.
    pub fn read_rows_native(
        &self,
        dataset: &Dataset<'_>,
        order: ByteOrder,
        width: usize,
        rows: std::ops::Range<u64>,
        out: &mut [u8],
    ) -> Result<()> {
        self.read_rows(dataset, rows, out)?;
        tensor_core::byte_order::to_native_in_place(order, out, width.max(1))?;
        Ok(())
    }
}

/// An HDF5 file read as tensors: the file and what it holds.
#[derive(Clone, Debug)]
pub struct Tensors<'a> {
    /// The file.
    pub file: Hdf5<'a>,
    /// Its tensors and values.
    pub listing: Listing<'a>,
    shapes: Vec<Vec<u64>>,
}

impl<'a> Tensors<'a> {
    /// Reads `bytes` as tensors within `limits`.
    pub fn open(bytes: &'a [u8], limits: Limits) -> Result<Self> {
        let file = Hdf5::open(bytes, limits)?;
        let listing = file.tensors(&limits)?;
        let shapes = listing
            .tensors
            .iter()
            .map(|t| t.dataset.dataspace.dims.clone())
            .collect();
        Ok(Tensors {
            file,
            listing,
            shapes,
        })
    }

    /// Tensor `i`'s elements where they lie in the file, when stored as they are (compact or
    /// contiguous, not filtered).
    pub fn stored_view(&self, i: usize) -> Result<Option<tensor_dtype::TensorView<'a>>> {
        let t = &self.listing.tensors[i];
        Ok(match self.file.stored(&t.dataset)? {
            Some(bytes) => Some(
                tensor_dtype::TensorView::new(bytes, t.dtype, &self.shapes[i], t.byte_order)
                    .map_err(|e| {
                        crate::Error::malformed("dataset", 0, format!("{}: {e}", t.name))
                    })?,
            ),
            None => None,
        })
    }

    /// Rows `rows` of tensor `i`'s outermost dimension into `out`, in the machine's byte
    /// order.
    pub fn read_rows(&self, i: usize, rows: std::ops::Range<u64>, out: &mut [u8]) -> Result<()> {
        let t = &self.listing.tensors[i];
        self.file
            .read_rows_native(&t.dataset, t.byte_order, t.dtype.byte_width(), rows, out)
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for Tensors<'a> {
    type Error = crate::Error;

    fn len(&self) -> usize {
        self.listing.tensors.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.listing.tensors[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.listing.tensors[i].dtype)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.shapes[i])
    }

    fn view(&self, i: usize) -> Result<Option<tensor_dtype::TensorView<'a>>> {
        self.stored_view(i)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let rows = self.shapes[i].first().copied().unwrap_or(1);
        self.read_rows(i, 0..rows, dst)
    }
}

/// Plain HDF5 files of datasets (h5py's, Keras' weights), as the format contract describes
/// them: read only.
#[derive(Clone, Copy, Debug)]
pub struct Hdf5Format;

impl tensor_dtype::Format for Hdf5Format {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "hdf5",
        name: "HDF5",
        extensions: &["h5", "hdf5", "he5"],
        writes: false,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: true,
        any_tensor: true,
    };

    type Error = crate::Error;
    type Reader<'a> = Tensors<'a>;

    fn recognise(head: &[u8]) -> bool {
        head.starts_with(crate::SIGNATURE)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &tensor_core::ReadOptions) -> Result<Tensors<'a>> {
        Tensors::open(bytes, options.limits)
    }

    fn header_ranges(
        held: &dyn tensor_core::Held,
        _: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(held.missing(0..held.len()).into_iter().collect())
    }
}
