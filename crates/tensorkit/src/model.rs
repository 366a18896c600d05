//! The format-neutral view of a tensor file that every command works on.
// With some formats left out of the build, parts only the others use go unused.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

use crate::error::Result;
use crate::format::Format;
use serde_json::{Map, Value};
use std::sync::Arc;
use tensor_core::Limits;
use tensor_dtype::{Dtype, Tensor, TensorView};

/// The most bytes a streamed tensor hands its consumer at once
/// ([`TensorRef::stream`](crate::TensorRef::stream)): runs big enough to amortise per-run
/// work, small enough that memory stays flat for any tensor size.
pub const RUN_BYTES: usize = 4 << 20;

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

/// A tensor's elements in memory: borrowed from the file, or decoded.
#[derive(Debug)]
pub(crate) enum Loaded<'s> {
    /// Borrowed.
    View(TensorView<'s>),
    /// Decoded.
    Owned(Tensor),
}

/// One tensor of a file.
#[derive(Clone)]
pub(crate) struct NamedTensor<'a> {
    /// The tensor's name, for formats that name tensors.
    pub name: Option<String>,
    /// The elements.
    pub data: TensorData<'a>,
    /// Where it sits in formats with nested structure, e.g. `[("message", 0), ("object", 2)]`.
    pub location: Vec<(&'static str, u64)>,
    /// Per-tensor metadata, for formats that store it (e.g. zTensor custom keys).
    pub attributes: Vec<(String, tensor_core::cbor::Value)>,
    /// Checks the stored elements against the checksum or digest the file keeps for them
    /// (zTensor), when the file was opened to verify. Run before the elements are streamed or
    /// decoded ([`load`](Self::load), [`stream`](Self::stream)...) or while they are copied
    /// (on another core, for large tensors), not for a zero-copy view: a view of a large
    /// tensor costs nothing until the digest is asked for
    /// ([`TensorRef::verify`](crate::TensorRef::verify)).
    pub check: Option<Arc<CheckFn<'a>>>,
}

/// Checks a tensor's stored elements against the digest its file keeps for them.
pub(crate) type CheckFn<'a> = dyn Fn() -> Result<()> + Send + Sync + 'a;

impl std::fmt::Debug for NamedTensor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedTensor")
            .field("name", &self.name)
            .field("data", &self.data)
            .field("location", &self.location)
            .field("attributes", &self.attributes)
            .field("check", &self.check.is_some())
            .finish()
    }
}

impl<'a> NamedTensor<'a> {
    /// A named tensor borrowing `view`, with no location or attributes.
    #[must_use]
    pub(crate) fn borrowed(name: impl Into<String>, view: TensorView<'a>) -> Self {
        NamedTensor {
            name: Some(name.into()),
            data: TensorData::View(view),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        }
    }

    /// The dtype, without decoding anything.
    #[must_use]
    pub(crate) fn dtype(&self) -> Dtype {
        match &self.data {
            TensorData::View(v) => v.dtype(),
            TensorData::Owned(t) => t.dtype(),
            TensorData::Encoded(l) => l.dtype,
        }
    }

    /// The shape, without decoding anything.
    #[must_use]
    pub(crate) fn shape(&self) -> &[u64] {
        match &self.data {
            TensorData::View(v) => v.shape(),
            TensorData::Owned(t) => t.shape(),
            TensorData::Encoded(l) => &l.shape,
        }
    }

    /// Bytes of the decoded elements, without decoding anything.
    #[must_use]
    pub(crate) fn byte_len(&self) -> u64 {
        tensor_dtype::shape::byte_len(self.dtype(), self.shape()).unwrap_or(u64::MAX)
    }

    /// A quantized tensor's stored blocks (GGUF) and the shape of those bytes: its element
    /// shape with the last dimension in bytes (`[4, 1024]` of `Q4_K` is `[4, 576]`); `None`
    /// for every other tensor.
    #[must_use]
    pub(crate) fn blocks(&self) -> Option<(Blocks<'a>, Vec<u64>)> {
        let TensorData::Encoded(Lazy {
            blocks: Some(b), ..
        }) = &self.data
        else {
            return None;
        };
        let mut shape = self.shape().to_vec();
        match shape.last_mut() {
            Some(last) => *last = *last / b.scheme.block_elements * b.scheme.block_bytes,
            None => shape.push(b.scheme.block_bytes),
        }
        Some((b.clone(), shape))
    }

    /// Runs the tensor's [`check`](Self::check), if it has one.
    pub(crate) fn verify(&self) -> Result<()> {
        self.check.as_ref().map_or(Ok(()), |check| check())
    }

    /// The elements in memory: borrowed when stored as they are, decoded (one tensor,
    /// checked against `limits` and allocated fallibly) otherwise.
    pub(crate) fn load(&self, limits: &Limits) -> Result<Loaded<'_>> {
        self.verify()?;
        Ok(match &self.data {
            TensorData::View(v) => Loaded::View(v.clone()),
            TensorData::Owned(t) => Loaded::View(t.view()),
            TensorData::Encoded(l) => Loaded::Owned((l.decode)(limits)?),
        })
    }

    /// The little-endian elements (in storage order, as [`TensorView::to_le_bytes`]):
    /// borrowed where they are stored that way, decoded (one tensor, within `limits`)
    /// otherwise.
    pub(crate) fn le_bytes(&self, limits: &Limits) -> Result<std::borrow::Cow<'_, [u8]>> {
        self.verify()?;
        Ok(match &self.data {
            TensorData::View(v) => v.to_le_bytes(),
            TensorData::Owned(t) => t.view().to_le_bytes(),
            TensorData::Encoded(l) => {
                let t = (l.decode)(limits)?;
                let (order, width) = (t.byte_order(), t.dtype().swap_width());
                let mut data = t.into_data();
                if order == tensor_core::ByteOrder::Big && width > 1 {
                    tensor_core::byte_order::swap_in_place(&mut data, width)?;
                }
                std::borrow::Cow::Owned(data)
            }
        })
    }

    /// Hands the little-endian, C-order elements to `sink` in runs of at most
    /// [`RUN_BYTES`] (whole elements): memory stays bounded whatever the tensor's size, for
    /// hashing, copying and checking.
    pub(crate) fn stream(
        &self,
        limits: &Limits,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.verify()?;
        let view = match &self.data {
            TensorData::Encoded(l) => return (l.stream)(limits, RUN_BYTES, sink),
            TensorData::View(v) => v.clone(),
            TensorData::Owned(t) => t.view(),
        };
        stream_view(&view, sink)
    }

    /// Writes the elements as every format stores them — little-endian, bool bytes as 0 or
    /// 1 — streamed in bounded runs: what writers and `get -o` copy, one tensor at a time.
    /// Exactly [`byte_len`](Self::byte_len) bytes are written, or it is an error (a header
    /// written before them already promised that many).
    pub(crate) fn write_canonical(
        &self,
        limits: &Limits,
        out: &mut dyn std::io::Write,
    ) -> Result<()> {
        let bools = self.dtype() == Dtype::Bool;
        let mut run = Vec::new();
        let mut written = 0u64;
        let want = self.byte_len();
        self.stream(limits, &mut |c| {
            written += c.len() as u64;
            if written > want {
                return Err(tensor_core::Error::InvalidArgument(format!(
                    "tensor {:?} decoded to more than its {want} bytes",
                    self.name.as_deref().unwrap_or("")
                ))
                .into());
            }
            let c = if bools && c.iter().any(|&b| b > 1) {
                run.clear();
                run.extend(c.iter().map(|&b| u8::from(b != 0)));
                &run[..]
            } else {
                c
            };
            out.write_all(c)
                .map_err(|e| tensor_core::Error::io("writing tensor data", e).into())
        })?;
        if written != want {
            return Err(tensor_core::Error::InvalidArgument(format!(
                "tensor {:?} decoded to {written} of its {want} bytes",
                self.name.as_deref().unwrap_or("")
            ))
            .into());
        }
        Ok(())
    }
}

/// Hands a view's little-endian elements (in storage order, as
/// [`TensorView::to_le_bytes`]) to `sink` in runs of at most [`RUN_BYTES`].
pub(crate) fn stream_view(
    view: &TensorView<'_>,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    // Whole elements per run; three bytes hold a whole number of every packed type.
    let width = match view.dtype().byte_width() {
        0 => 3,
        w => w,
    };
    let run = (RUN_BYTES / width).max(1) * width;
    // Borrowed from the file when stored little-endian and contiguous.
    view.to_le_bytes().chunks(run).try_for_each(sink)
}

/// Tensors to write: those of an open file ([`File::tensor_set`](crate::File::tensor_set)),
/// or put together from several ([`TensorSet::new`], [`TensorSet::push`]), with file-level
/// metadata. Nothing is decoded or copied until the set is saved
/// ([`save_set`](crate::save_set)): its tensors stay where their files hold them.
#[derive(Clone, Debug)]
pub struct TensorSet<'a> {
    /// The format the file was read as.
    pub(crate) format: Format,
    /// File-level metadata, when the format stores any.
    pub(crate) metadata: Option<Map<String, Value>>,
    /// The type each metadata value has in its file, for formats whose values are typed
    /// beyond what JSON tells apart (GGUF: `UINT32`, `FLOAT32`, `ARRAY[STRING]`); empty for
    /// the others. A writer of such a format gives a value its recorded type when the value
    /// still fits it.
    pub(crate) metadata_types: std::collections::BTreeMap<String, String>,
    /// The tensors, in the order the file stores them.
    pub(crate) tensors: Vec<NamedTensor<'a>>,
    /// The limits the file was read with; tensors are decoded within them.
    pub(crate) limits: Limits,
    /// The memory-mapped files the tensors borrow from, if any (filled in by
    /// [`open`](crate::open)): writers have the kernel copy a stored tensor's bytes from
    /// them rather than write them through memory
    /// ([`AtomicFile::copying_from`](tensor_core::atomic::AtomicFile::copying_from)).
    pub(crate) mapped: Vec<&'a tensor_core::MmapSource>,
}

impl<'a> TensorSet<'a> {
    /// An empty set, to put tensors of open files into ([`push`](Self::push)); `format` is
    /// what [`format`](Self::format) reports, `limits` those its tensors are decoded within.
    #[must_use]
    pub fn new(format: Format, limits: Limits) -> Self {
        TensorSet {
            format,
            metadata: None,
            metadata_types: std::collections::BTreeMap::new(),
            tensors: Vec::new(),
            limits,
            mapped: Vec::new(),
        }
    }

    /// The format the file was read as (for a set put together, the one it was made with).
    #[must_use]
    pub fn format(&self) -> Format {
        self.format
    }

    /// Adds `view` under `name`, at the end: how a format read outside tensorkit
    /// ([`Adapter::read`](crate::adapter::Adapter::read)) lists a tensor its file stores as
    /// it is, borrowing its bytes.
    pub fn push_view(&mut self, name: impl Into<String>, view: TensorView<'a>) {
        self.tensors.push(NamedTensor::borrowed(name, view));
    }

    /// Adds `tensor`, decoded, under `name`, at the end (a format read outside tensorkit
    /// whose file stores the tensor otherwise than as it is).
    pub fn push_owned(&mut self, name: impl Into<String>, tensor: Tensor) {
        self.tensors.push(NamedTensor {
            name: Some(name.into()),
            data: TensorData::Owned(tensor),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        });
    }

    /// File-level metadata, when the format stores any.
    #[must_use]
    pub fn metadata(&self) -> Option<&Map<String, Value>> {
        self.metadata.as_ref()
    }

    /// The metadata to write, to change in place.
    pub fn metadata_mut(&mut self) -> &mut Option<Map<String, Value>> {
        &mut self.metadata
    }

    /// The type each metadata value has in its file, for formats whose values are typed
    /// beyond what JSON tells apart (GGUF: `UINT32`, `FLOAT32`, `ARRAY[STRING]`); empty for
    /// the others.
    #[must_use]
    pub fn metadata_types(&self) -> &std::collections::BTreeMap<String, String> {
        &self.metadata_types
    }

    /// The recorded metadata types, to change in place: a writer of a typed format gives a
    /// value its recorded type when the value still fits it.
    pub fn metadata_types_mut(&mut self) -> &mut std::collections::BTreeMap<String, String> {
        &mut self.metadata_types
    }

    /// The limits its tensors are decoded within.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// How many tensors it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether it holds no tensors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}

impl TensorSet<'_> {
    /// Decodes every tensor in bounded runs, within the set's limits, discarding the
    /// values: what `verify` and `validate` do for data no checksum covers.
    pub fn decode_every_tensor(&self) -> Result<()> {
        self.tensors
            .iter()
            .try_for_each(|t| t.stream(&self.limits, &mut |_| Ok(())))
    }

    /// Fails, naming the tensor and both positions, when two tensors share a name (every
    /// format we write requires unique names).
    pub fn check_unique_names(&self, format: &'static str) -> Result<()> {
        let names = self.names();
        let mut first = std::collections::HashMap::with_capacity(names.len());
        for (i, n) in names.iter().enumerate() {
            if let Some(j) = first.insert(n.as_str(), i) {
                return Err(crate::error::Error::RepeatedName {
                    format,
                    name: n.clone(),
                    first: j,
                    second: i,
                });
            }
        }
        Ok(())
    }

    /// Renames every repeat of a name: `<name>~m<message>` for tensors located in a
    /// Tensogram message, `<name>~<n>` for the n-th repeat otherwise (and `_` appended
    /// until the name is free). The first tensor of each name keeps it.
    pub fn disambiguate(&mut self) {
        let names = self.names();
        let mut taken: std::collections::HashSet<String> = names.iter().cloned().collect();
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (t, name) in self.tensors.iter_mut().zip(&names) {
            let count = seen.entry(name.as_str()).or_insert(0);
            *count += 1;
            if *count == 1 {
                continue;
            }
            let message = t
                .location
                .iter()
                .find(|(k, _)| *k == "message")
                .map(|l| l.1);
            let mut new = match message {
                Some(m) => format!("{name}~m{m}"),
                None => format!("{name}~{}", *count - 1),
            };
            while taken.contains(&new) {
                new.push('_');
            }
            taken.insert(new.clone());
            t.name = Some(new);
        }
    }

    /// Every tensor's name, with `tensor_<i>` for tensors that have none (formats that
    /// require names get these when writing).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.tensors
            .iter()
            .enumerate()
            .map(|(i, t)| t.name.clone().unwrap_or_else(|| format!("tensor_{i}")))
            .collect()
    }

    /// The error for a tensor `name` that `file` (this set) does not hold, naming the first
    /// few it does.
    pub(crate) fn no_such_tensor(&self, file: &std::path::Path, name: &str) -> crate::Error {
        crate::Error::NoSuchTensor {
            file: file.display().to_string(),
            name: name.to_owned(),
            names: self
                .names()
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(produce: usize) -> NamedTensor<'static> {
        NamedTensor {
            name: Some("t".into()),
            data: TensorData::Encoded(Lazy {
                blocks: None,
                encoding: "test".into(),
                dtype: Dtype::Bool,
                shape: vec![4],
                stream: Arc::new(move |_, _, sink| sink(&vec![7u8; produce])),
                decode: Arc::new(|_| unreachable!("not decoded whole")),
                packed: None,
                decode_into: None,
            }),
            location: Vec::new(),
            attributes: Vec::new(),
            check: None,
        }
    }

    #[test]
    fn canonical_bytes_are_exactly_the_tensor_and_bools_are_0_or_1() {
        let mut out = Vec::new();
        lazy(4)
            .write_canonical(&Limits::default(), &mut out)
            .unwrap();
        assert_eq!(out, [1, 1, 1, 1]);
        for wrong in [3, 5] {
            let e = lazy(wrong)
                .write_canonical(&Limits::default(), &mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains("tensor \"t\" decoded to"), "{e}");
        }
    }
}
