//! NumPy's files: `.npy` (one array: a magic, a version, a Python dict literal of
//! `descr`, `fortran_order` and `shape`, then the elements) and `.npz` (a zip archive of
//! `.npy` files). Read with every size checked and the elements viewed where they lie (C or
//! Fortran order, either byte order); written as `numpy.save` and `numpy.savez` write them.
//! Object arrays, whose elements are pickles, are refused. See `docs/formats/numpy.md`.
//!
//! ```
//! let header = tensor_numpy::header_bytes(tensor_dtype::Dtype::Float32, &[2], "x")?;
//! let mut file = header.clone();
//! file.extend_from_slice(&[0, 0, 128, 63, 0, 0, 0, 64]);
//! let npy = tensor_numpy::Npy::open(&file, &tensor_core::Limits::default())?;
//! assert_eq!(&*npy.view()?.unwrap().typed::<f32>()?, &[1.0, 2.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod descr;
mod error;
pub mod header;
mod npy;
pub mod npz;

pub use error::{Error, Result};
pub use npy::{MAGIC, Npy, element_bytes, header_bytes};
pub use npz::{Member, NpzWriter};

/// `.npy` files, as the format contract describes them.
#[derive(Clone, Copy, Debug)]
pub struct NpyFormat;

/// `.npz` archives, as the format contract describes them.
#[derive(Clone, Copy, Debug)]
pub struct NpzFormat;

impl tensor_dtype::Format for NpyFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "npy",
        name: "NumPy .npy",
        extensions: &["npy"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: true,
        // One array a file: a set of several is written to `.npz`.
        any_tensor: false,
    };

    type Error = Error;
    type Reader<'a> = Npy<'a>;

    fn recognise(head: &[u8]) -> bool {
        head.starts_with(MAGIC) || (head.len() < 6 && MAGIC.starts_with(head) && head.len() >= 4)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &tensor_core::ReadOptions) -> Result<Npy<'a>> {
        Npy::open(bytes, &options.limits)
    }

    fn header_ranges(
        held: &dyn tensor_core::Held,
        _: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(held.missing(0..held.len()).into_iter().collect())
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for Npy<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        1
    }

    fn name(&self, _: usize) -> Option<&str> {
        None
    }

    fn dtype(&self, _: usize) -> Result<tensor_dtype::Dtype> {
        Ok(self.dtype)
    }

    fn shape(&self, _: usize) -> Result<&[u64]> {
        Ok(&self.shape)
    }

    fn view(&self, _: usize) -> Result<Option<tensor_dtype::TensorView<'a>>> {
        Npy::view(self)
    }

    fn read_into(&self, _: usize, dst: &mut [u8]) -> Result<()> {
        let t = self.to_tensor(&tensor_core::Limits::default())?;
        if dst.len() != t.data().len() {
            return Err(Error::Core(tensor_core::Error::InvalidArgument(format!(
                "a buffer of {} bytes for {} bytes of elements",
                dst.len(),
                t.data().len()
            ))));
        }
        dst.copy_from_slice(t.data());
        Ok(())
    }
}

/// Whether `head` is a zip archive whose first entry is a `.npy` file, or an archive of no
/// entries (what `numpy.savez` writes of no arrays).
#[must_use]
pub fn npz_recognise(head: &[u8]) -> bool {
    head.starts_with(b"PK\x05\x06")
        || tensor_zip::first_entry_name(head).is_some_and(|n| n.ends_with(b".npy"))
}

impl tensor_dtype::Format for NpzFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "npz",
        name: "NumPy .npz",
        extensions: &["npz"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };

    type Error = Error;
    type Reader<'a> = NpzReader<'a>;

    fn recognise(head: &[u8]) -> bool {
        npz_recognise(head)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &tensor_core::ReadOptions) -> Result<NpzReader<'a>> {
        let (members, left_out) = npz::open(bytes, &options.limits)?;
        let described = members
            .iter()
            .map(|m| m.npy(&options.limits).map(|n| (n.dtype, n.shape)))
            .collect::<Result<_>>()?;
        Ok(NpzReader {
            members,
            left_out,
            described,
            limits: options.limits,
        })
    }

    fn header_ranges(
        held: &dyn tensor_core::Held,
        _: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(held.missing(0..held.len()).into_iter().collect())
    }
}

/// An `.npz` archive read: its members.
#[derive(Clone, Debug)]
pub struct NpzReader<'a> {
    /// Its arrays, in the archive's order.
    pub members: Vec<Member<'a>>,
    /// Members no tensor holds (object arrays, strings), with why.
    pub left_out: Vec<(String, String)>,
    described: Vec<(tensor_dtype::Dtype, Vec<u64>)>,
    limits: tensor_core::Limits,
}

impl<'a> tensor_dtype::TensorContainer<'a> for NpzReader<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.members.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.members[i].name)
    }

    fn dtype(&self, i: usize) -> Result<tensor_dtype::Dtype> {
        Ok(self.described[i].0)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.described[i].1)
    }

    fn view(&self, i: usize) -> Result<Option<tensor_dtype::TensorView<'a>>> {
        match &self.members[i].bytes {
            std::borrow::Cow::Borrowed(b) => Npy::open(b, &self.limits)?.view(),
            std::borrow::Cow::Owned(_) => Ok(None),
        }
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let npy = self.members[i].npy(&self.limits)?;
        tensor_dtype::TensorContainer::read_into(&npy, 0, dst)
    }
}
