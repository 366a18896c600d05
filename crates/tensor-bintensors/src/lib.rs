#![doc = include_str!("../../../docs/formats/bintensors.md")]
//!
//! ## Using this crate
//!
//! ```
//! use std::collections::BTreeMap;
//! use tensor_bintensors::{BinTensors, Layout, ReadOptions, serialize};
//! use tensor_dtype::Tensor;
//!
//! let weights = Tensor::from_elements(&[2, 2], &[0.5f32, -1.0, 2.0, 0.25])?;
//! let bias = Tensor::from_elements(&[2], &[1i64, 2])?;
//! let metadata = BTreeMap::from([("format".to_owned(), "pt".to_owned())]);
//! let bytes = serialize([("w", weights.view()), ("b", bias.view())], Some(&metadata), Layout::Release)?;
//!
//! let file = BinTensors::open(&bytes)?;
//! assert_eq!(file.names().collect::<Vec<_>>(), ["b", "w"]); // dtype id descending
//! let w = file.tensor("w").unwrap();
//! assert_eq!(&*w.view.typed::<f32>()?, &[0.5, -1.0, 2.0, 0.25]);
//! assert_eq!(file.metadata().unwrap()["format"], "pt");
//!
//! // A strict reader also refuses what only a non-conforming writer produces.
//! BinTensors::open_with(&bytes, &ReadOptions::default().strict(true))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod dtype;
mod error;
mod file;
mod header;
mod wire;
mod write;

pub use error::{DecodeFailure, Error, Result};
pub use file::{BinTensors, LayoutChoice, Tensor};
pub use header::Layout;
pub use tensor_core::ReadOptions;
pub use write::{Entry, data_start, header_in_place, serialize, write, write_streamed};

/// BinTensors, either header layout, as the format contract describes it.
#[derive(Clone, Copy, Debug)]
pub struct BintensorsFormat;

impl BintensorsFormat {
    /// The pre-release header layout, as a target of its own (reading tells the layouts
    /// apart by themselves).
    pub const LEGACY: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "bintensors-legacy",
        name: "BinTensors (pre-release layout)",
        ..<Self as tensor_dtype::Format>::INFO
    };
}

impl tensor_dtype::Format for BintensorsFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "bintensors",
        name: "BinTensors",
        extensions: &["bt", "bintensors"],
        writes: true,
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
    type Error = Error;
    type Reader<'a> = BinTensors<'a>;

    /// A plausible length (see [`tensor_core::held::plausible_length_prefix`]), then a
    /// header whose first byte is a bincode option tag (0 or 1: whether the metadata map is
    /// present) — the weakest recognition of any format, tried last.
    fn recognise(head: &[u8]) -> bool {
        head.len() >= 9 && head[8] <= 1 && tensor_core::held::plausible_length_prefix(head)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<BinTensors<'a>> {
        BinTensors::open_with(bytes, options)
    }

    /// The header's length, then the header.
    fn header_ranges(
        held: &dyn tensor_core::Held,
        limits: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(tensor_core::held::after_length_prefix(held, limits)?)
    }
}
