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
pub use file::{BinTensors, LayoutChoice, ReadOptions, Tensor};
pub use header::Layout;
pub use write::{Entry, serialize, write, write_streamed};
