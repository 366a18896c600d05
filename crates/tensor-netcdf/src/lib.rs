#![doc = include_str!("../../../docs/formats/netcdf.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_netcdf::classic::{self, Classic};
//! use tensor_netcdf::{Attribute, Definition, Dimension, NcType, Variable};
//! use tensor_dtype::TensorContainer;
//!
//! let def = Definition {
//!     dimensions: vec![Dimension { name: "x".into(), len: 3, unlimited: false }],
//!     attributes: vec![Attribute::text("title", "three shorts")],
//!     variables: vec![Variable {
//!         name: "v".into(),
//!         dims: vec![0],
//!         attributes: vec![],
//!         nc_type: NcType::Short,
//!     }],
//!     format: None,
//! };
//! let mut out = std::io::Cursor::new(Vec::new());
//! classic::write::write(&mut out, &def, None, &mut |_, sink| {
//!     for x in [1i16, -2, 3] {
//!         sink.write_all(&x.to_be_bytes()).map_err(|e| tensor_core::Error::io("v", e))?;
//!     }
//!     Ok(())
//! })?;
//! let bytes = out.into_inner();
//! let file = Classic::open(&bytes)?;
//! assert_eq!(file.view(0)?.unwrap().typed::<i16>()?.as_ref(), &[1, -2, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod attribute;
pub mod carried;
pub mod cdl;
pub mod classic;
mod error;
mod model;
pub mod netcdf4;
pub mod output;
pub mod types;

pub use attribute::{Attribute, Values};
pub use error::{Error, Result};
pub use model::{BOOL_MARK, Definition, Dimension, NotRead, Strings, Variable, marked_bool};
pub use output::Output;
pub use tensor_core::ReadOptions;
pub use types::NcType;

use tensor_dtype::{Dtype, TensorContainer, TensorView};

/// HDF5's signature, with which a NetCDF-4 file starts.
pub const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// The first bytes asked for of a remote file whose header is still being read, at least.
const MIN_HEADER_READ: u64 = 64 << 10;

/// NetCDF, as the format contract describes it.
#[derive(Clone, Copy, Debug)]
pub struct NetcdfFormat;

/// A NetCDF file opened over its bytes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Netcdf<'a> {
    /// NetCDF-3: CDF-1, CDF-2 or CDF-5.
    Classic(classic::Classic<'a>),
    /// NetCDF-4: an HDF5 file.
    Netcdf4(netcdf4::Netcdf4<'a>),
}

impl<'a> Netcdf<'a> {
    /// Opens `bytes` (a whole file) with `options`.
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        if bytes.starts_with(HDF5_SIGNATURE) {
            return netcdf4::Netcdf4::open_with(bytes, options).map(Netcdf::Netcdf4);
        }
        classic::Classic::open_with(bytes, options).map(Netcdf::Classic)
    }

    /// Dimensions, global attributes and variables.
    #[must_use]
    pub fn definition(&self) -> &Definition {
        match self {
            Netcdf::Classic(c) => c.definition(),
            Netcdf::Netcdf4(n) => n.definition(),
        }
    }

    /// The variables of types no tensor holds, left out of [`definition`](Self::definition)
    /// (NetCDF-4's strings, compound, enum and variable-length types; a classic file has
    /// none).
    #[must_use]
    pub fn not_read(&self) -> &[NotRead] {
        match self {
            Netcdf::Classic(_) => &[],
            Netcdf::Netcdf4(n) => n.not_read(),
        }
    }

    /// The values of string variable `name` (NetCDF-4's; one of
    /// [`not_read`](Self::not_read)), read within `limits`; `None` for any other name.
    pub fn strings(&self, name: &str, limits: &tensor_core::Limits) -> Result<Option<Strings>> {
        match self {
            Netcdf::Classic(_) => Ok(None),
            Netcdf::Netcdf4(n) => n.strings(name, limits),
        }
    }

    /// What netCDF4-python's `data_model` says of the file: `NETCDF3_CLASSIC`,
    /// `NETCDF3_64BIT_OFFSET`, `NETCDF3_64BIT_DATA`, `NETCDF4_CLASSIC` or `NETCDF4`.
    #[must_use]
    pub fn data_model(&self) -> &str {
        match self {
            Netcdf::Classic(c) => c.version().data_model(),
            Netcdf::Netcdf4(n) => n.definition().format.as_deref().unwrap_or("NETCDF4"),
        }
    }

    /// How variable `i` is stored, for people, when it is not stored as it is (NetCDF-4's
    /// chunks and filters); `None` for a variable read in place.
    #[must_use]
    pub fn encoding(&self, i: usize) -> Option<String> {
        match self {
            Netcdf::Classic(_) => None,
            Netcdf::Netcdf4(n) => Some(n.encoding(i)),
        }
    }

    /// Reads `rows` of variable `i`'s outermost dimension (the whole of a scalar, `0..1`)
    /// into `dst` in the machine's byte order: NetCDF-4 decodes only the chunks those rows
    /// lie in; a classic file's rows are copied from the file.
    pub fn read_rows(&self, i: usize, rows: std::ops::Range<u64>, dst: &mut [u8]) -> Result<()> {
        match self {
            Netcdf::Netcdf4(n) => n.read_rows(i, rows, dst),
            Netcdf::Classic(c) => {
                let view = c.view(i)?.ok_or_else(|| {
                    Error::Core(tensor_core::Error::InvalidArgument(format!(
                        "variable {i} has no view"
                    )))
                })?;
                // A scalar is its one row.
                let rows = if view.shape().is_empty() && rows == (0..1) {
                    view
                } else {
                    view.rows(rows)?
                };
                rows.copy_native_into(dst).map_err(Error::Dtype)
            }
        }
    }

    /// The rows of variable `i`'s outermost dimension one chunk holds: what a reader a few
    /// rows at a time reads together (1 for a classic file's variables and unchunked ones).
    #[must_use]
    pub fn chunk_rows(&self, i: usize) -> u64 {
        match self {
            Netcdf::Classic(_) => 1,
            Netcdf::Netcdf4(n) => n.chunk_rows(i),
        }
    }
}

impl<'a> TensorContainer<'a> for Netcdf<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        match self {
            Netcdf::Classic(c) => c.len(),
            Netcdf::Netcdf4(n) => n.len(),
        }
    }

    fn name(&self, i: usize) -> Option<&str> {
        match self {
            Netcdf::Classic(c) => c.name(i),
            Netcdf::Netcdf4(n) => n.name(i),
        }
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        match self {
            Netcdf::Classic(c) => c.dtype(i),
            Netcdf::Netcdf4(n) => n.dtype(i),
        }
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        match self {
            Netcdf::Classic(c) => c.shape(i),
            Netcdf::Netcdf4(n) => n.shape(i),
        }
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        match self {
            Netcdf::Classic(c) => c.view(i),
            Netcdf::Netcdf4(n) => n.view(i),
        }
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        match self {
            Netcdf::Classic(c) => c.read_into(i, dst),
            Netcdf::Netcdf4(n) => n.read_into(i, dst),
        }
    }
}

impl tensor_dtype::Format for NetcdfFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "netcdf",
        name: "NetCDF",
        extensions: &["nc", "nc3", "nc4", "cdf", "netcdf"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[tensor_dtype::WriteChoice::Packing],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: true,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: true,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = Netcdf<'a>;

    /// `CDF` and a version byte (1, 2 or 5), or HDF5's signature at the start (NetCDF-4; a
    /// plain HDF5 file reads as netCDF-C reads one, its datasets as variables).
    /// NetCDF-3's magic, or an HDF5 file that follows netCDF's conventions
    /// ([`netcdf4::follows_netcdf`]): a plain HDF5 file (h5py's, Keras' weights) is another
    /// format's.
    fn recognise(head: &[u8]) -> bool {
        matches!(head, [b'C', b'D', b'F', 1 | 2 | 5, ..])
            || (head.starts_with(HDF5_SIGNATURE) && netcdf4::follows_netcdf(head))
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Netcdf<'a>> {
        Netcdf::open_with(bytes, options)
    }

    /// A classic header has no length of its own: it is parsed from the start as far as
    /// the bytes held go, and the next range asked for is four times what is held (at least
    /// 64 KiB), so that a header of megabytes takes a few requests.
    fn header_ranges(
        held: &dyn tensor_core::Held,
        limits: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let len = held.len();
        let prefix = tensor_core::held::held_prefix(held);
        let prefix_end = prefix.len() as u64;
        if prefix.starts_with(HDF5_SIGNATURE) {
            // NetCDF-4: its metadata (object headers, heaps, B-trees of groups and
            // attributes) lies before most data in the files netCDF-C writes. The prefix
            // held grows until everything the listing reads is in it; whatever is past it
            // is an error while more can be had.
            return match netcdf4::Netcdf4::open_with(
                prefix,
                &ReadOptions::default().limits(*limits),
            ) {
                Ok(_) => Ok(Vec::new()),
                Err(_) if prefix_end >= limits.max_header_bytes && prefix_end < len => {
                    Err(tensor_core::Error::LimitExceeded {
                        what: "NetCDF-4 metadata bytes",
                        requested: prefix_end + 1,
                        limit: limits.max_header_bytes,
                    }
                    .into())
                }
                Err(e)
                    if prefix_end < len
                        && !matches!(e, Error::Core(tensor_core::Error::LimitExceeded { .. })) =>
                {
                    Ok(vec![tensor_core::held::grown_prefix(
                        prefix_end,
                        len,
                        prefix_end + 1,
                        MIN_HEADER_READ,
                        limits,
                    )])
                }
                Err(e) => Err(e),
            };
        }
        match classic::header::parse(prefix, len, limits) {
            Ok(_) => Ok(Vec::new()),
            Err(Error::Core(e)) => {
                tensor_core::held::grown_after(e, prefix_end, len, MIN_HEADER_READ, limits)
                    .map(|next| vec![next])
                    .map_err(Error::Core)
            }
            Err(e) => Err(e),
        }
    }
}
