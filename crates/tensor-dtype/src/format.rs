//! [`Format`]: the contract every format crate implements — what the format is called,
//! how its bytes are recognised, how a file is opened, which bytes a reader needs before it
//! can list the tensors, and the names the format keeps for itself. Code written once
//! against it (the `tensorkit` facade, its registry of formats) reads every format.

use crate::TensorContainer;
use std::ops::Range;
use tensor_core::{Held, Kinded, ReadOptions};

/// What a format is, as tools name and list it. Each format crate fills one in (so its
/// fields are all public, and a new one is a change to the contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent facts about a format, each a yes or a no; no two make a state"
)]
pub struct FormatInfo {
    /// The id tools use (`safetensors`, `ztensor-2`, `grib`): lower case, stable.
    pub id: &'static str,
    /// The name people know it by.
    pub name: &'static str,
    /// File extensions, without the dot; the first is the one writers use.
    pub extensions: &'static [&'static str],
    /// Whether tensorkit writes it.
    pub writes: bool,
    /// Per-tensor attribute keys the format keeps for itself: a writer refuses them, and a
    /// converter leaves them out (they are the format's own, read back from its structure).
    pub reserved_keys: &'static [&'static str],
    /// What its writer lets a caller choose beyond the tensors and their metadata.
    pub write_choices: &'static [WriteChoice],
    /// How far past each part of the header it asks for a remote reader should read, where
    /// the format knows better than the reader's default: a GRIB message's header is its
    /// first kilobytes, then come megabytes of data. `None`: the reader's own.
    pub header_read_ahead: Option<u64>,
    /// The room, in bytes, its writer leaves in a header for later edits in place
    /// ([`WriteChoice::HeaderReserve`]) when the caller does not choose: non-zero only where
    /// every reference reader skips the room and none lists it as the file's content
    /// (safetensors' spaces after its JSON). 0 for the others.
    pub header_reserve: u64,
    /// Whether it stores per-tensor attributes (zTensor's object attributes, Tensogram's
    /// `base` entries); a converter into a format without them says what it left out.
    pub holds_attributes: bool,
    /// Whether each tensor's name must differ from every other's (a writer refuses a
    /// repeat); `false` where names are metadata that may repeat (Tensogram).
    pub unique_names: bool,
    /// What the format carries for a reader to verify its bytes by.
    pub checks: Checks,
    /// Whether everything a reader needs to list the tensors is at the file's start
    /// (safetensors, BinTensors, GGUF); `false` where an index or footer may be at its end
    /// (zTensor, Tensogram) or headers are spread through it (GRIB), so that a remote reader
    /// reads the last bytes with the first.
    pub header_first: bool,
    /// Whether any set of named tensors of dtypes it stores can be written to it, with no
    /// keys of the format's own: `false` for GRIB, whose fields need a grid and a product,
    /// and for NumPy's `.npy`, which holds one array.
    pub any_tensor: bool,
}

/// What a format carries for a reader to verify its bytes by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Checks {
    /// Hashes of its frames and objects (Tensogram).
    Hashes,
    /// Checksums and digests of its tensors (zTensor).
    Checksums,
    /// Nothing: the format stores no checksums (safetensors, BinTensors, GRIB, GGUF).
    None,
}

/// A choice a format's writer offers beyond the tensors and metadata every writer takes;
/// a format lists those it offers ([`FormatInfo::write_choices`]), and a writer asked for
/// one its format does not offer refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteChoice {
    /// Room left in the header, so that later edits of the metadata fit in place.
    HeaderReserve,
    /// Tensor data placed at multiples of a chosen alignment.
    Alignment,
    /// An encoding pipeline (packing, filters, compression) applied to each tensor.
    Pipeline,
    /// Tensors quantized to a block type.
    Quantize,
    /// Values packed as a named packing (GRIB's `simple:16`, `ccsds`, `ieee`).
    Packing,
    /// Tensors grouped into several messages, one after another in the file (Tensogram's
    /// `--split-by variable|record`).
    Messages,
}

impl WriteChoice {
    /// What the choice is, for people: `a header reserve`, `an alignment`...
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            WriteChoice::HeaderReserve => "a header reserve",
            WriteChoice::Alignment => "an alignment",
            WriteChoice::Pipeline => "a pipeline",
            WriteChoice::Quantize => "quantization",
            WriteChoice::Packing => "a packing",
            WriteChoice::Messages => "a split into messages",
        }
    }
}

impl FormatInfo {
    /// Whether `key` is one of the format's own attribute keys.
    #[must_use]
    pub fn reserves(&self, key: &str) -> bool {
        self.reserved_keys.contains(&key)
    }

    /// Whether its writer offers `choice`.
    #[must_use]
    pub fn offers(&self, choice: WriteChoice) -> bool {
        self.write_choices.contains(&choice)
    }
}

/// One format: a zero-sized type each format crate defines (one per format generation a
/// user can tell apart) and implements.
pub trait Format {
    /// The format's name, extensions and reserved keys.
    const INFO: FormatInfo;

    /// The format crate's error.
    type Error: Kinded + std::error::Error + Send + Sync + 'static;

    /// The format's reader, borrowing the file's bytes.
    type Reader<'a>: TensorContainer<'a, Error = Self::Error>;

    /// Whether `head`, the first bytes of a file (at least 16 when the file has them),
    /// begin like this format. A file cut short after its magic still counts, so that its
    /// reader reports it as truncated rather than unknown.
    fn recognise(head: &[u8]) -> bool;

    /// Opens a whole file, checking its structure against `options`.
    fn open_with<'a>(
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<Self::Reader<'a>, Self::Error>;

    /// The byte ranges still needed, given what `held` holds of a file, before its tensors
    /// can be listed ([`open_with`](Format::open_with) over a stand-in in which only the held
    /// bytes are present): empty when nothing more is needed. A remote reader calls it
    /// until it answers empty, each answer found from the bytes the previous ones fetched.
    /// Sizes read along the way are checked against `limits`.
    fn header_ranges(
        held: &dyn Held,
        limits: &tensor_core::Limits,
    ) -> Result<Vec<Range<u64>>, Self::Error>;
}

/// Whether `bytes` begin like the 8-byte `magic`: all of it, or — for a file cut short —
/// at least its first 4 bytes, so that a truncated file is reported as such.
#[must_use]
pub fn starts_like(bytes: &[u8], magic: &[u8; 8]) -> bool {
    let n = bytes.len().min(8);
    n >= 4 && bytes[..n] == magic[..n]
}

#[cfg(test)]
mod tests {
    use super::starts_like;

    #[test]
    fn a_magic_cut_short_still_counts_from_four_bytes() {
        assert!(starts_like(b"TENSOGRAM....", b"TENSOGRA"));
        assert!(starts_like(b"TENS", b"TENSOGRA"));
        assert!(!starts_like(b"TEN", b"TENSOGRA"));
        assert!(!starts_like(b"TENSOGRB", b"TENSOGRA"));
    }
}
