//! How a tensor's elements are held: borrowed from its file, decoded, or still encoded
//! ([`Lazy`]) and decoded when asked, with the forms a writer may keep as they are (packed
//! values, quantized blocks).

use crate::error::Result;
use std::sync::Arc;
use tensor_core::Limits;
use tensor_dtype::{Dtype, Tensor, TensorView};

/// A tensor's elements: borrowed from the file when they are stored as they are, owned when
/// they had to be decoded (expanded from a sparse form), or still encoded and decoded only
/// when asked — one tensor at a time, or in bounded runs.
#[derive(Clone, Debug)]
pub(crate) enum TensorData<'a> {
    /// Borrowed from the file.
    View(TensorView<'a>),
    /// Decoded into memory.
    Owned(Tensor),
    /// Stored encoded (compressed, packed); decoded on demand.
    Encoded(Lazy<'a>),
}

/// Streams a tensor's decoded elements, little-endian and in C order, in runs of at most
/// the given size (whole elements), to a sink.
pub(crate) type StreamFn<'a> =
    dyn Fn(&Limits, usize, &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> + Send + Sync + 'a;

/// Decodes a whole tensor into memory (after checking its size against the limits).
pub(crate) type DecodeFn<'a> = dyn Fn(&Limits) -> Result<Tensor> + Send + Sync + 'a;

/// Decodes a whole tensor into a caller's buffer of exactly its size, in the machine's byte
/// order, with no buffer of its own.
pub(crate) type DecodeIntoFn<'a> = dyn Fn(&Limits, &mut [u8]) -> Result<()> + Send + Sync + 'a;

/// A tensor's values as Tensogram's `simple_packing` (optionally followed by `szip`) holds
/// them, ready to be written as they are (`--pipeline keep`): decoding them gives the
/// tensor's values bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Packed {
    /// Bits per packed value.
    pub bits_per_value: u32,
    /// The reference value, unscaled (Tensogram's `R`).
    pub reference_value: f64,
    /// The binary scale factor `E`.
    pub binary_scale_factor: i32,
    /// The decimal scale factor `D`.
    pub decimal_scale_factor: i32,
    /// szip's parameters when the payload is szip-compressed.
    pub szip: Option<PackedSzip>,
    /// The payload.
    pub payload: Vec<u8>,
}

/// The szip stage of a [`Packed`] payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PackedSzip {
    /// Blocks per reference sample interval.
    pub rsi: u32,
    /// Samples per block.
    pub block_size: u32,
    /// libaec flags as Tensogram stores them.
    pub flags: u32,
    /// The bit offset where each reference sample interval starts.
    pub block_offsets: Vec<u64>,
}

/// A tensor's [`Packed`] form, or why it has none that decodes to its values exactly.
pub(crate) type PackFn<'a> =
    dyn Fn(&Limits) -> Result<std::result::Result<Packed, String>> + Send + Sync + 'a;

/// An encoded tensor: what it decodes to, and how.
#[derive(Clone)]
pub(crate) struct Lazy<'a> {
    /// How the tensor is stored, for people: `simple_packing+szip`, `zstd`, `sparse_csr`...
    pub encoding: String,
    /// The decoded dtype.
    pub dtype: Dtype,
    /// The decoded shape.
    pub shape: Vec<u64>,
    /// Decoded in runs, for hashing, copying and checking in bounded memory.
    pub stream: Arc<StreamFn<'a>>,
    /// Decoded whole, for everything that needs all elements at once.
    pub decode: Arc<DecodeFn<'a>>,
    /// The packed form a Tensogram object can hold as it is, for tensors that have one
    /// (GRIB simple and CCSDS packing).
    pub packed: Option<Arc<PackFn<'a>>>,
    /// Decoded straight into a caller's buffer, for formats whose decoder writes elements
    /// in place (GRIB): what [`TensorRef::read_into`](crate::TensorRef::read_into) uses.
    pub decode_into: Option<Arc<DecodeIntoFn<'a>>>,
    /// The blocks of a ggml quantized type as a GGUF file stores them, which a GGUF writer
    /// keeps as they are.
    pub blocks: Option<Blocks<'a>>,
}

/// A quantized tensor's blocks (GGUF's ggml types): as its file stores them, or made from
/// its values when it is written.
#[derive(Clone, Debug)]
pub(crate) struct Blocks<'a> {
    /// The block type.
    pub scheme: BlockScheme,
    /// The blocks.
    pub bytes: BlockBytes<'a>,
}

/// A type of quantized blocks, as the format that defines it names and sizes it: a
/// format-neutral handle that a writer of that format turns back into its own type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockScheme {
    /// Its name in its format (ggml's `Q4_K`).
    pub name: &'static str,
    /// Elements per block.
    pub block_elements: u64,
    /// Bytes per block.
    pub block_bytes: u64,
}

/// Where a quantized tensor's blocks come from.
#[derive(Clone)]
pub(crate) enum BlockBytes<'a> {
    /// As its file stores them.
    Stored(&'a [u8]),
    /// Quantized from its values when written (`--quantize`).
    Quantized(Arc<QuantizeFn<'a>>),
}

/// Quantizes a tensor's values into its blocks (checked against the limits).
pub(crate) type QuantizeFn<'a> = dyn Fn(&Limits) -> Result<Vec<u8>> + Send + Sync + 'a;

impl std::fmt::Debug for BlockBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BlockBytes::Stored(b) => write!(f, "Stored({} bytes)", b.len()),
            BlockBytes::Quantized(_) => f.write_str("Quantized"),
        }
    }
}

impl<'a> Blocks<'a> {
    /// The blocks as the file stores them; `None` for blocks made when written.
    #[must_use]
    pub(crate) fn stored(&self) -> Option<&'a [u8]> {
        match self.bytes {
            BlockBytes::Stored(b) => Some(b),
            BlockBytes::Quantized(_) => None,
        }
    }
}

impl std::fmt::Debug for Lazy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy")
            .field("encoding", &self.encoding)
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}
