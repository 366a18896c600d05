//! # tensorkit
//!
//! Read, write, validate and convert the binary formats people use to store N-dimensional
//! tensors — weather fields, model weights, masks — safely and byte-compatibly with the
//! reference implementations.
//!
//! This crate is the front door: it re-exports the workspace's crates as modules, and the
//! handful of types everyone needs at the root. Each format crate joins behind a feature of
//! its own, through one adapter in the format registry ([`adapter::Adapter`],
//! [`register`] for formats defined elsewhere); the `full` feature (on by default) enables
//! all of them, and any one alone builds the front door with that format only.
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | (root) | this crate (feature `files`, which any format brings) | [`open`], [`save`], [`File`], [`TensorRef`], [`Format`], [`register`]: every format through one door |
//! | [`adapter`] | this crate | the [`Adapter`](adapter::Adapter) trait each format implements to join the registry |
//! | [`bytes`] | `tensor-core` | error kinds, [`Limits`], byte order and swaps, checked sizes, byte sources, atomic files |
//! | [`dtype`] | `tensor-dtype` | [`Dtype`], shapes and strides, [`TensorView`], [`Tensor`] |
//! | `bintensors` | `tensor-bintensors` (feature `bintensors`) | BinTensors files, both header layouts |
//! | `descriptor` | `tensor-descriptor` (feature `descriptor`) | Tensogram's CBOR data-object descriptor |
//! | `gguf` | `tensor-gguf` (feature `gguf`) | GGUF files (llama.cpp): reader, dequantization, writer |
//! | `frame` | `tensor-frame` (feature `frame`) | Tensogram v3 messages and `.tgm` files: buffered and streaming encode, random access, scanning, validation |
//! | `pipeline` | `tensor-pipeline` (feature `pipeline`) | encoding stages (simple packing, shuffle, szip, zstd, lz4, masks) with bounded decoding |
//! | `ztensor` | `tensor-ztensor` (feature `ztensor`) | zTensor files, every generation |
//! | `safetensors` | `tensor-safetensors` (feature `safetensors`) | safetensors files: checked zero-copy reader, streaming writer |
//! | `stdlib_meta` | `tensor-stdlib-meta` (feature `stdlib-meta`) | stdlib-js ndarray meta data and checked strided views |
//!
//! ```
//! use tensorkit::{ByteOrder, Dtype, Tensor, TensorView};
//!
//! // A big-endian float32 field as a file might store it, viewed without copying...
//! let stored: Vec<u8> = [271.5f32, 272.0, 273.25, 274.0]
//!     .iter()
//!     .flat_map(|v| v.to_be_bytes())
//!     .collect();
//! let view = TensorView::new(&stored, Dtype::Float32, &[2, 2], ByteOrder::Big)?;
//! assert_eq!(view.strides(), &[8, 4]);
//!
//! // ...and brought into the machine's order when the values are needed.
//! let values = view.typed::<f32>()?;
//! assert_eq!(&*values, &[271.5, 272.0, 273.25, 274.0]);
//!
//! let owned: Tensor = view.to_tensor();
//! assert!(owned.byte_order().is_native());
//! # Ok::<(), tensorkit::dtype::Error>(())
//! ```
//!
//! ## Any file: open, read, save
//!
//! [`open`] reads any supported file — the format is told by its content — and [`save`] /
//! [`save_tensors`] write any format, atomically. One [`ReadOptions`] (limits, strictness,
//! verification) and one [`WriteOptions`] (format, metadata, Tensogram pipeline) serve every
//! format.
//!
//! ```
//! # #[cfg(all(feature = "safetensors", feature = "frame"))] {
//! use tensorkit::{Format, Tensor, WriteOptions};
//! let dir = tempfile::tempdir()?;
//! let w = Tensor::from_elements(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0])?;
//! let path = dir.path().join("w.safetensors");
//! tensorkit::save_tensors(&path, [("w", w.view())], &WriteOptions::default())?; // format from the extension
//!
//! let file = tensorkit::open(&path)?;
//! assert_eq!((file.format(), file.len()), (Format::SAFETENSORS, 1));
//! for t in file.tensors() {
//!     println!("{} {} {:?} {} attributes", t.name(), t.dtype(), t.shape(), t.attributes().len());
//! }
//! let t = file.get("w")?;
//! let v = t.view()?; // zero-copy from the memory map
//! assert_eq!(&*v.typed::<f32>()?, &[1.5, -2.0, 0.25, 8.0]);
//! let owned = t.to_tensor()?; // decoded, the machine's byte order
//! let mut buf = vec![0u8; t.byte_len() as usize];
//! t.read_into(&mut buf)?; // decoded into the caller's buffer
//! assert_eq!(buf, owned.data());
//!
//! let tgm = dir.path().join("w.tgm");
//! tensorkit::save(&tgm, &file, &WriteOptions::for_format(Format::TENSOGRAM))?;
//! assert_eq!(tensorkit::open(&tgm)?.get("w")?.to_tensor()?, owned);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## BinTensors: write, read, convert
//!
//! ```
//! # #[cfg(feature = "bintensors")] {
//! use tensorkit::bintensors::{BinTensors, Layout, serialize};
//! use tensorkit::Tensor;
//!
//! let w = Tensor::from_elements(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0])?;
//! let bytes = serialize([("w", w.view())], None, Layout::Release)?;
//! let file = BinTensors::open(&bytes)?; // zero-copy: views borrow `bytes`
//! let back = file.tensor("w").unwrap();
//! assert_eq!(&*back.view.typed::<f32>()?, &[1.5, -2.0, 0.25, 8.0]);
//!
//! // Converting is re-writing the same views in another layout (or format).
//! let legacy = serialize([("w", back.view)], None, Layout::Legacy)?;
//! assert_eq!(BinTensors::open(&legacy)?.layout(), Layout::Legacy);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Tensogram: write, read, convert
//!
//! ```
//! # #[cfg(all(feature = "frame", feature = "ztensor"))] {
//! use tensorkit::frame::descriptor::DataObjectDescriptor;
//! use tensorkit::frame::{DecodeOptions, EncodeOptions, GlobalMetadata, Message, serialize};
//! use tensorkit::{ByteOrder, Dtype, Tensor};
//!
//! // A float64 field packed to 16 bits and szip-coded, as weather archives store it.
//! let t2m = Tensor::from_elements(&[2, 3], &[271.5f64, 272.0, 273.25, 274.0, 275.5, 276.0])?;
//! let mut desc = DataObjectDescriptor::new(Dtype::Float64, &[2, 3], ByteOrder::NATIVE);
//! desc.encoding = "simple_packing".into();
//! desc.params.insert("sp_bits_per_value".into(), 16u64.into());
//! let msg = serialize(&GlobalMetadata::default(), &[desc], &[t2m.data()], &EncodeOptions::default())?;
//!
//! let m = Message::open(&msg)?;
//! let back = m.decode_object(0, DecodeOptions { verify_hash: true, ..DecodeOptions::default() })?;
//! let values = back.view().typed::<f64>()?;
//! assert!((values[3] - 274.0).abs() < 1e-3); // within half a quantisation step
//!
//! // Into zTensor 2: the decoded tensor, another container.
//! let mut zt = Vec::new();
//! tensorkit::ztensor::v2::write(&mut zt, [("t2m", back.view(), None)], None)?;
//! assert_eq!(tensorkit::ztensor::AnyZTensor::open(&zt)?.len(), 1);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## zTensor: write, read, convert
//!
//! ```
//! # #[cfg(all(feature = "ztensor", feature = "bintensors"))] {
//! use tensorkit::ztensor::v0_1::{TensorOptions, WriteEncoding, ZTensor, serialize};
//! use tensorkit::Tensor;
//!
//! let mask = Tensor::from_elements(&[4], &[0u8, 1, 1, 0])?;
//! let zstd = TensorOptions { encoding: WriteEncoding::Zstd(3), ..TensorOptions::default() };
//! let bytes = serialize([("mask", mask.view(), zstd)])?;
//! let file = ZTensor::open(&bytes)?;
//! let back = file.read(0)?.into_tensor()?;
//! assert_eq!(back, mask);
//!
//! // Into BinTensors: the same tensor, another container.
//! let bt = tensorkit::bintensors::serialize([("mask", back.view())], None, tensorkit::bintensors::Layout::Release)?;
//! assert_eq!(tensorkit::bintensors::BinTensors::open(&bt)?.len(), 1);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## stdlib-js ndarray meta data
//!
//! ```
//! # #[cfg(feature = "stdlib-meta")] {
//! use tensorkit::stdlib_meta::{MetaDataRef, StridedArray, meta_for_view};
//! use tensorkit::Tensor;
//!
//! // Describe a tensor the way @stdlib/ndarray would, and read it back through the record.
//! let t = Tensor::from_elements(&[2, 3], &[1i32, 2, 3, 4, 5, 6])?;
//! let bytes = meta_for_view(&t.view())?.serialize()?;
//! let meta = MetaDataRef::open(&bytes)?.to_owned();
//! let array = StridedArray::new(&meta, t.data())?;
//! assert_eq!(array.get(&[1, 0])?, tensorkit::dtype::Scalar::Int(4));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

#[cfg(feature = "bintensors")]
pub use tensor_bintensors as bintensors;
pub use tensor_core as bytes;
#[cfg(feature = "descriptor")]
pub use tensor_descriptor as descriptor;
pub use tensor_dtype as dtype;
#[cfg(feature = "frame")]
pub use tensor_frame as frame;
#[cfg(feature = "gguf")]
pub use tensor_gguf as gguf;
#[cfg(feature = "grib")]
pub use tensor_grib as grib;
#[cfg(feature = "pipeline")]
pub use tensor_pipeline as pipeline;
#[cfg(feature = "safetensors")]
pub use tensor_safetensors as safetensors;
#[cfg(feature = "stdlib-meta")]
pub use tensor_stdlib_meta as stdlib_meta;
#[cfg(feature = "ztensor")]
pub use tensor_ztensor as ztensor;

// The checks' types are the crate root's (`tensorkit::Validation`, …).
#[cfg(feature = "files")]
pub mod adapter;
#[cfg(feature = "files")]
mod cf;
#[cfg(feature = "files")]
mod check;
#[cfg(feature = "frame")]
pub mod doctor;
#[cfg(feature = "files")]
pub mod edit;
#[cfg(feature = "files")]
pub mod error;
#[cfg(feature = "files")]
mod foreign;
#[cfg(feature = "files")]
mod format;
#[cfg(feature = "files")]
mod formats;
#[cfg(feature = "files")]
mod join;
#[cfg(feature = "files")]
mod local;
#[cfg(feature = "files")]
mod migrate;
#[cfg(feature = "files")]
mod model;
#[cfg(feature = "files")]
pub mod npy;
#[cfg(feature = "files")]
mod open;
#[cfg(feature = "frame")]
pub use tensor_frame::pipeline_spec;
#[cfg(feature = "files")]
mod registry;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "grib")]
mod repack;
#[cfg(feature = "files")]
pub mod shards;

mod split;
#[cfg(feature = "files")]
mod write;

#[cfg(feature = "files")]
pub use check::report::{Checks, Location, Problem, Severity, Validation, Verification};
#[cfg(feature = "files")]
pub use check::{validate, verify};
#[cfg(feature = "files")]
pub use edit::{EditOptions, EditReport, Edits, edit};
#[cfg(feature = "files")]
pub use error::{Error, Result};
#[cfg(feature = "files")]
pub use format::Format;
#[cfg(feature = "gguf")]
pub use formats::gguf::Dequantize;
#[cfg(feature = "files")]
pub use migrate::{Migrated, migrate};
#[cfg(feature = "files")]
pub use model::{BlockScheme, NotRead, RUN_BYTES, TensorSet};
#[cfg(feature = "files")]
pub use open::{
    File, Progress, ReadOptions, TensorRef, WriteOptions, is_url, open, open_bytes,
    open_bytes_with, open_many, open_with, save, save_set, save_tensors, serialize_tensors,
};
#[cfg(feature = "remote")]
pub use open::{open_url_async, open_url_with};
#[cfg(feature = "files")]
pub use registry::register;
#[cfg(feature = "grib")]
pub use repack::repack_grib;
pub use split::SplitBy;
pub use tensor_core::atomic::Durability;
pub use tensor_core::{ByteOrder, ErrorKind, Kinded, Limits, Verify};
pub use tensor_dtype::{Dtype, Tensor, TensorView};
pub use tensor_dtype::{Level, ValidateOptions};
