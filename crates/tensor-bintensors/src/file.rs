//! Reading a whole BinTensors file.

use crate::error::{Error, Result};
use crate::header::{self, Entry, Header, Layout};
use std::collections::{BTreeMap, HashMap};
use tensor_core::{ByteOrder, Limits, ReadOptions};
use tensor_dtype::{Dtype, TensorView};

/// Which layouts a reader tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LayoutChoice {
    /// The released layout first; if the file is not valid in it but is valid in the
    /// pre-release layout, that one.
    #[default]
    Detect,
    /// Only the released layout, as the reference reader does.
    Release,
    /// Only the pre-release layout.
    Legacy,
}

/// One tensor of a file: a name and a zero-copy view of its little-endian bytes.
#[derive(Clone, Debug)]
pub struct Tensor<'a> {
    /// The name, exactly as stored (the empty string and NUL characters are allowed).
    pub name: &'a str,
    /// The elements, borrowed from the file.
    pub view: TensorView<'a>,
}

/// A parsed BinTensors file, borrowing every name and tensor from the bytes it was read
/// from (typically a memory-mapped file).
#[derive(Debug)]
pub struct BinTensors<'a> {
    data: &'a [u8],
    layout: Layout,
    header_len: u64,
    metadata: Option<BTreeMap<&'a str, &'a str>>,
    entries: Vec<(&'a str, Dtype, std::ops::Range<usize>, u64, u64)>,
    dims: Vec<u64>,
    index: HashMap<&'a str, usize>,
}

pub(crate) fn framing(bytes: &[u8], limits: &Limits) -> Result<u64> {
    let len = bytes.len() as u64;
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(Error::HeaderTooSmall { len });
    };
    let n = u64::from_le_bytes(*prefix);
    if n > limits.max_header_bytes {
        return Err(Error::HeaderTooLarge {
            header_len: n,
            limit: limits.max_header_bytes,
        });
    }
    if n > len - 8 {
        return Err(Error::InvalidHeaderLength {
            header_len: n,
            available: len - 8,
        });
    }
    Ok(n)
}

impl<'a> BinTensors<'a> {
    /// Reads `bytes` with default options: either layout, the reference's leniency.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Reads `bytes`, a whole file, in either layout (the released one first).
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        Self::open_layout(bytes, options, LayoutChoice::Detect)
    }

    /// Reads `bytes`, a whole file, in the layouts `layout` allows.
    pub fn open_layout(
        bytes: &'a [u8],
        options: &ReadOptions,
        layout: LayoutChoice,
    ) -> Result<Self> {
        let n = framing(bytes, &options.limits)?;
        let window = &bytes[8..8 + n as usize];
        let data = &bytes[8 + n as usize..];
        let attempt = |layout: Layout| -> Result<(Header<'a>, HashMap<&'a str, usize>)> {
            let h = match layout {
                Layout::Release => header::decode_release(window, &options.limits)?,
                Layout::Legacy => header::decode_legacy(window, &options.limits)?,
            };
            let index = header::validate(&h, data.len() as u64, 8 + n)?;
            if options.strict {
                header::check_canonical(&h, window, data)?;
            }
            Ok((h, index))
        };
        let (layout, (h, index)) = match layout {
            LayoutChoice::Release => (Layout::Release, attempt(Layout::Release)?),
            LayoutChoice::Legacy => (Layout::Legacy, attempt(Layout::Legacy)?),
            LayoutChoice::Detect => match attempt(Layout::Release) {
                Ok(r) => (Layout::Release, r),
                // A file valid only in the old layout reads as that layout; otherwise the
                // error is the current layout's.
                Err(e) => match attempt(Layout::Legacy) {
                    Ok(r) => (Layout::Legacy, r),
                    Err(_) => return Err(e),
                },
            },
        };
        let metadata = h
            .metadata
            .map(|pairs| pairs.into_iter().collect::<BTreeMap<_, _>>());
        let entries = h
            .entries
            .into_iter()
            .map(
                |Entry {
                     name,
                     dtype,
                     dims,
                     begin,
                     end,
                 }| (name, dtype, dims, begin, end),
            )
            .collect();
        Ok(BinTensors {
            data,
            layout,
            header_len: n,
            metadata,
            entries,
            dims: h.dims,
            index,
        })
    }

    /// The layout the file uses.
    #[must_use]
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The header length (the window after the 8-byte prefix, padding included).
    #[must_use]
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// The file offset of the data section.
    #[must_use]
    pub fn data_start(&self) -> u64 {
        8 + self.header_len
    }

    /// The metadata map: `None` when the file stores none (distinct from an empty map).
    /// Keys are sorted by their bytes; for a key stored twice the last value wins.
    #[must_use]
    pub fn metadata(&self) -> Option<&BTreeMap<&'a str, &'a str>> {
        self.metadata.as_ref()
    }

    /// The number of tensors.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file holds no tensors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tensor names in stored (data) order.
    #[must_use]
    pub fn names(&self) -> impl ExactSizeIterator<Item = &'a str> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    fn tensor_at(&self, i: usize) -> Tensor<'a> {
        let (name, dtype, dims, begin, end) = &self.entries[i];
        let shape = &self.dims[dims.clone()];
        // Offsets, shape and dtype were validated against the data section.
        let bytes = &self.data[*begin as usize..*end as usize];
        let view = TensorView::new(bytes, *dtype, shape, ByteOrder::Little)
            .unwrap_or_else(|_| unreachable!("validated when the file was read"));
        Tensor { name, view }
    }

    /// The tensors in stored order.
    #[must_use]
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = Tensor<'a>> + '_ {
        (0..self.entries.len()).map(|i| self.tensor_at(i))
    }

    /// The tensor called `name`.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<Tensor<'a>> {
        self.index.get(name).map(|&i| self.tensor_at(i))
    }
}

impl<'a> tensor_dtype::TensorContainer<'a> for BinTensors<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(self.entries[i].0)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.entries[i].1)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.dims[self.entries[i].2.clone()])
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        Ok(Some(self.tensor_at(i).view))
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        Ok(tensor_dtype::container::copy_native(
            &self.tensor_at(i).view,
            dst,
        )?)
    }
}
