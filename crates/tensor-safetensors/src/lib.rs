//! # tensor-safetensors
//!
//! safetensors files over the `safetensors` crate (the reference implementation itself),
//! with what a reader of untrusted files needs on top: our [`Limits`](tensor_core::Limits),
//! errors that say where the file went wrong, repeated names refused instead of silently
//! keeping the last, every dtype of safetensors 0.8 (packed 4- and 6-bit floats counted in
//! elements), and a writer that streams one tensor at a time instead of reserving every
//! tensor's bytes at once.
//!
//! ```
//! use tensor_safetensors::{SafeTensors, serialize};
//! use tensor_dtype::Tensor;
//!
//! let w = Tensor::from_elements(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0])?;
//! let bytes = serialize([("w", w.view())], None)?;
//! let file = SafeTensors::open(&bytes)?; // zero-copy: views borrow `bytes`
//! assert_eq!(&*file.tensor("w").unwrap().view.typed::<f32>()?, &[1.5, -2.0, 0.25, 8.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
#![doc = include_str!("../../../docs/formats/safetensors.md")]
#![forbid(unsafe_code)]

pub mod dtype;
mod error;
mod header;
mod read;
mod write;

pub use error::{Error, Result};
pub use read::{SafeTensors, Tensor};
pub use write::{
    Entry, ROOM_AFTER_COPY, data_start, header_in_place, header_moved, serialize, write,
    write_streamed,
};

/// safetensors, as the format contract describes it.
#[derive(Clone, Copy, Debug)]
pub struct SafetensorsFormat;

impl tensor_dtype::Format for SafetensorsFormat {
    const INFO: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
        id: "safetensors",
        name: "safetensors",
        extensions: &["safetensors"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[tensor_dtype::WriteChoice::HeaderReserve],
        header_read_ahead: None,
        // Spaces after the JSON, which every reader skips: room for a licence key or a
        // chat template added later without rewriting the file.
        header_reserve: 4096,
        holds_attributes: false,
        unique_names: true,
        checks: tensor_dtype::Checks::None,
        header_first: true,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = SafeTensors<'a>;

    /// A length, then the JSON header's `{`.
    fn recognise(head: &[u8]) -> bool {
        head.len() >= 9 && head[8] == b'{'
    }

    fn open_with<'a>(
        bytes: &'a [u8],
        options: &tensor_core::ReadOptions,
    ) -> Result<SafeTensors<'a>> {
        SafeTensors::open_with(bytes, options)
    }

    /// The header's length, then the header.
    fn header_ranges(
        held: &dyn tensor_core::Held,
        limits: &tensor_core::Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        Ok(tensor_core::held::after_length_prefix(held, limits)?)
    }
}
