//! What opening a remote file's header gives: its tensors listed, with the header kept
//! parsed to read each tensor from its own bytes ([`ReadIn`]), or the ranges still needed.

// With some formats left out of the build, parts only the others use go unused.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

use crate::error::Result;
use crate::model::NamedTensor;
use std::ops::Range;
use std::path::Path;
use tensor_core::ReadOptions;

/// What opening a file's header gives a remote reader ([`Adapter::open_header`](super::Adapter::open_header)):
/// its tensors listed, or the byte ranges it must fetch first.
pub struct Opening<'a>(pub(crate) Opened<'a>);

impl Opening<'_> {
    /// These bytes are needed before the tensors can be listed.
    #[must_use]
    pub fn needs(ranges: Vec<Range<u64>>) -> Self {
        Opening(Opened::Needs(ranges))
    }
}

pub(crate) enum Opened<'a> {
    /// The tensors, and the header parsed to read them by.
    Listed(Listing, Box<dyn ReadIn + 'a>),
    /// These bytes (object frames a Tensogram message's metadata does not describe) are
    /// needed before the tensors can be listed.
    Needs(Vec<Range<u64>>),
}

impl<'a> Opening<'a> {
    /// The tensors `listing` lists, read through `header`.
    pub(crate) fn listed(listing: Listing, header: impl ReadIn + 'a) -> Self {
        Opening(Opened::Listed(listing, Box::new(header)))
    }
}

/// A file's header, index or manifest, parsed once: a remote reader reads any tensor from
/// its own bytes through it, without parsing the header again.
pub(crate) trait ReadIn: Send + Sync {
    /// Tensor `i`, listed over `span`, from `bytes`: exactly the file's bytes in `span`.
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        span: Range<u64>,
        bytes: &'w [u8],
        options: &ReadOptions,
    ) -> Result<NamedTensor<'w>>;
}

/// The header of a format whose tensors are stored as they are: each is fetched and used
/// as it arrives ([`Fetch::Raw`]), never read through the header.
pub(crate) struct Raw;

impl ReadIn for Raw {
    fn read_in<'w>(
        &'w self,
        path: &Path,
        i: usize,
        _: Range<u64>,
        _: &'w [u8],
        _: &ReadOptions,
    ) -> Result<NamedTensor<'w>> {
        Err(crate::Error::UnknownTarget {
            what: format!(
                "{}: tensor #{i} is read as stored, not through its header",
                path.display()
            ),
        })
    }
}

/// How a remote reader gets one tensor's elements once its bytes are fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// The bytes are the elements, contiguous in C order, in this byte order, and nothing
    /// checks them: they are used as they arrive.
    Raw(tensor_core::ByteOrder),
    /// The bytes are decoded (and their checksum or hash checked) by the format's reader,
    /// through the header parsed at open ([`ReadIn::read_in`]).
    Decode,
}

/// One tensor as a file's header describes it, without its bytes.
#[derive(Clone, Debug)]
pub(crate) struct Listed {
    pub(crate) name: Option<String>,
    pub(crate) dtype: tensor_dtype::Dtype,
    pub(crate) shape: Vec<u64>,
    /// As [`crate::TensorRef::encoding`] reports it; `None` for raw elements.
    pub(crate) encoding: Option<String>,
    pub(crate) location: Vec<(&'static str, u64)>,
    pub(crate) attributes: Vec<(String, tensor_core::cbor::Value)>,
    /// The bytes of the file the tensor's data occupies: everything [`ReadIn::read_in`] reads.
    pub(crate) span: Range<u64>,
    pub(crate) fetch: Fetch,
}

/// A file's tensors as its header describes them: what a remote reader lists before it
/// fetches any tensor.
#[derive(Clone, Debug)]
pub(crate) struct Listing {
    pub(crate) format: crate::Format,
    pub(crate) metadata: Option<serde_json::Map<String, serde_json::Value>>,
    pub(crate) metadata_types: std::collections::BTreeMap<String, String>,
    pub(crate) tensors: Vec<Listed>,
    /// What no tensor holds, by name, and why ([`TensorSet`](crate::TensorSet)'s `not_read`).
    pub(crate) not_read: Vec<crate::NotRead>,
}

/// The listing of a file whose tensors are all stored as they are, read by `read` (the
/// format's reader over `bytes`, run unverified: nothing is there to check until a tensor is
/// fetched): each tensor fetched and used as it is stored.
pub(crate) fn of_stored<'a>(
    bytes: &'a [u8],
    options: &ReadOptions,
    read: impl FnOnce(&ReadOptions) -> Result<crate::model::TensorSet<'a>>,
) -> Result<Opening<'a>> {
    let unverified = ReadOptions {
        verify: tensor_core::Verify::Never,
        ..*options
    };
    of_views(bytes, read(&unverified)?)
}

/// The listing of a set whose tensors are all views of `bytes`: each fetched and used as it
/// is stored.
fn of_views<'a>(bytes: &'a [u8], set: crate::model::TensorSet<'_>) -> Result<Opening<'a>> {
    let base = bytes.as_ptr() as usize;
    let tensors = set
        .tensors
        .into_iter()
        .map(|t| {
            let crate::model::TensorData::View(v) = &t.data else {
                return Err(crate::Error::UnknownTarget {
                    what: format!(
                        "tensor {:?} is not stored as it is, so it cannot be fetched as it is",
                        t.name.as_deref().unwrap_or("")
                    ),
                });
            };
            let start = (v.buffer().as_ptr() as usize - base + v.offset()) as u64;
            Ok(Listed {
                dtype: t.dtype(),
                shape: t.shape().to_vec(),
                encoding: None,
                span: start..start + v.byte_len(),
                fetch: Fetch::Raw(v.byte_order()),
                name: t.name,
                location: t.location,
                attributes: t.attributes,
            })
        })
        .collect::<Result<_>>()?;
    let listing = Listing {
        format: set.format,
        metadata: set.metadata,
        metadata_types: set.metadata_types,
        tensors,
        not_read: Vec::new(),
    };
    Ok(Opening::listed(listing, Raw))
}
