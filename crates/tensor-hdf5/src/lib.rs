//! HDF5 read in pure Rust, every size checked against the file and `Limits` before
//! anything is allocated: the superblock (versions 0 to 3), object headers (versions 1 and
//! 2, checksums verified), groups (old-style symbol tables, compact and dense new-style
//! ones: fractal heaps and version 2 B-trees), attributes (compact and dense), and
//! datasets: their type, shape, layout and filters, and their elements — compact,
//! contiguous, or chunked through a version 1 B-tree, a single chunk, implicit chunks, a
//! fixed array or an extensible array, each chunk through deflate, shuffle and Fletcher-32
//! (verified); and a dataset's rows alone, decoding only their chunks. [`write`](mod@write) writes
//! HDF5 streamed, as the library lays out what netCDF-C asks of it. It is the base NetCDF-4
//! and HDF5 weight files are read and written on (issues 70 and 71).
//!
//! Not read yet, and refused by name when met: huge fractal heap objects and filtered
//! heaps, committed datatypes, virtual datasets, paged fixed and extensible arrays, chunks
//! indexed by a version 2 B-tree, the szip, nbit and scale-offset filters.
#![forbid(unsafe_code)]

mod btree2;
mod cursor;
mod data;
mod error;
mod extensible_array;
pub mod file;
mod fractal_heap;
mod global_heap;
mod group;
pub mod lookup3;
pub mod message;
pub mod object_header;
pub mod superblock;
pub mod tensors;
pub mod values;
pub mod write;

pub use data::Dataset;
pub use error::{Error, Result};
pub use file::{Hdf5, Kind, Object};
pub use superblock::{SIGNATURE, Superblock};
pub use tensors::{Hdf5Format, Tensors};
pub use values::Values;
