#![doc = include_str!("../../../docs/formats/gguf.md")]
//!
//! ## Using this crate
//!
//! ```
//! use tensor_gguf::{Gguf, GgmlType, Value, Writer};
//!
//! let mut w = Writer::new();
//! w.metadata("general.architecture", Value::String("llama".into()));
//! w.dense("norm", &[4], tensor_dtype::Dtype::Float32, &[0u8; 16])?;
//! let bytes = w.to_vec()?;
//!
//! let file = Gguf::open(&bytes)?;
//! assert_eq!(file.tensors()[0].ggml_type, GgmlType::F32);
//! assert_eq!(file.header().get("general.architecture").and_then(Value::as_str), Some("llama"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod cursor;
pub mod dequant;
mod error;
pub mod ggml;
#[cfg(feature = "json")]
pub mod json;
pub mod quant;
mod read;
pub mod split;
pub mod value;
mod write;

pub use error::{Error, Result};
pub use ggml::GgmlType;
pub use read::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT, Gguf, Header, MAGIC, MAX_DIMS, TensorInfo};
pub use tensor_core::ReadOptions;
pub use value::{Array, Value, ValueType};
pub use write::{
    Entry, PADDING_KEY, VERSION, Writer, header_in_place, header_moved, with_padding,
    write_streamed,
};

/// GGUF (llama.cpp's format), as the format contract describes it.
#[derive(Clone, Copy, Debug)]
pub struct GgufFormat;

/// The first bytes asked for of a remote file whose header is still being read, at least.
const MIN_HEADER_READ: u64 = 1 << 20;

impl tensor_dtype::Format for GgufFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "gguf",
        name: "GGUF",
        extensions: &["gguf"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[
            tensor_dtype::WriteChoice::HeaderReserve,
            tensor_dtype::WriteChoice::Quantize,
        ],
        header_read_ahead: None,
        // GGUF's room is a `tensorkit.padding` key, which gguf-py lists with the
        // file's own: only on request.
        header_reserve: 0,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: true,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = Gguf<'a>;

    /// The magic `GGUF` (the same bytes whatever the file's byte order).
    fn recognise(head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Gguf<'a>> {
        Gguf::open_with(bytes, options)
    }

    /// The header has no length of its own: it is parsed from the start as far as the bytes
    /// held go, and the next range asked for is four times what is held (at least 1 MiB; a
    /// remote reader widens it further), so that a header of megabytes (a large vocabulary)
    /// takes three requests in all.
    fn header_ranges(
        held: &dyn tensor_core::Held,
        limits: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        let len = held.len();
        let prefix = tensor_core::held::held_prefix(held);
        let prefix_end = prefix.len() as u64;
        let options = ReadOptions::default().limits(*limits);
        match Header::parse(prefix, len, &options) {
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
