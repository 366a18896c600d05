#![doc = include_str!("../../../docs/formats/grib.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_core::Limits;
//! use tensor_grib::{Grib, Key};
//!
//! let bytes = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../testdata/grib/reference/simple.grib2"
//! ))?;
//! let grib = Grib::open(&bytes)?;
//! let field = &grib.fields()[0];
//! assert_eq!(field.shape(), [19, 36]);
//! let keys = field.keys();
//! assert!(keys.contains(&("shortName", Key::Text("2t".into()))));
//! let values = grib.values(0, &Limits::default())?;
//! assert_eq!(values.len(), 19 * 36);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod axes;
mod bits;
mod context;
pub mod cube;
mod edition1;
mod edition2;
mod error;
mod field;
mod file;
mod format;
mod formula;
mod headers;
mod jpeg2000;
mod key;
pub mod names;
mod naming;
pub mod sidecar;
mod unpack;
pub mod write;

pub use axes::{LL_AXES, regular_ll_axes};
pub use error::{Error, Result};
pub use field::{Complex, Field, Grid, Key, Packing, SecondOrder, Simple};
pub use file::Grib;
pub use format::GribFormat;
pub use naming::attribute_key;

/// The integers of a JPEG 2000 codestream (ITU-T T.800 Part 1) of one component and exactly
/// `samples` samples, row by row, as OpenJPEG gives them to ecCodes — what template 5.40
/// packs: the codestream on its own, outside any GRIB message (fuzzing, tools).
pub fn decode_jpeg2000(codestream: &[u8], samples: usize) -> Result<Vec<i32>> {
    let at = context::At {
        message: 0,
        offset: 0,
    };
    unpack::jpeg2000_samples(codestream, samples, at)
}
