//! Decoding the header window, in either layout, and validating it as the reference does.

use crate::dtype;
use crate::error::{DecodeFailure, Error, Result};
use crate::wire::Cursor;
use std::collections::HashMap;
use std::ops::Range;
use tensor_core::Limits;
use tensor_dtype::Dtype;

/// Which of the two header layouts a file uses. Neither carries a magic number or version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// What every released package writes (Rust 0.1.x, Python 0.1.x/0.2.0): an optional
    /// metadata map, then a list of (name, dtype, shape, offsets) in data order.
    Release,
    /// The pre-release layout the original specification describes: an optional metadata
    /// map, a list of unnamed (dtype, shape, offsets), then a name → index map.
    Legacy,
}

// In-memory sizes the reference claims from its decode budget, per item (64-bit targets).
const CLAIM_RELEASE_ENTRY: u64 = 72;
const CLAIM_LEGACY_INFO: u64 = 48;
const CLAIM_METADATA_PAIR: u64 = 48;
const CLAIM_INDEX_PAIR: u64 = 32;
const CLAIM_DIM: u64 = 8;

/// One tensor as the header describes it.
#[derive(Clone, Debug)]
pub(crate) struct Entry<'a> {
    pub(crate) name: &'a str,
    pub(crate) dtype: Dtype,
    pub(crate) dims: Range<usize>,
    pub(crate) begin: u64,
    pub(crate) end: u64,
}

/// A decoded (not yet validated) header.
pub(crate) struct Header<'a> {
    pub(crate) metadata: Option<Vec<(&'a str, &'a str)>>,
    pub(crate) entries: Vec<Entry<'a>>,
    pub(crate) dims: Vec<u64>,
    /// Bytes the bincode structure takes; the rest of the window is padding.
    pub(crate) struct_len: usize,
    pub(crate) canonical_varints: bool,
}

fn metadata<'a>(c: &mut Cursor<'a>) -> Result<Option<Vec<(&'a str, &'a str)>>> {
    if !c.option("metadata tag")? {
        return Ok(None);
    }
    let n = c.count("metadata entry count", CLAIM_METADATA_PAIR, 2)?;
    let mut pairs = Vec::with_capacity(n);
    for _ in 0..n {
        let k = c.str("metadata key")?;
        let v = c.str("metadata value")?;
        pairs.push((k, v));
    }
    Ok(Some(pairs))
}

fn tensor_info(c: &mut Cursor<'_>, dims: &mut Vec<u64>) -> Result<(Dtype, Range<usize>, u64, u64)> {
    let id = c.u32("dtype")?;
    let dtype = dtype::from_id(id).ok_or_else(|| {
        c.fail(
            DecodeFailure::UnexpectedVariant,
            format!("dtype id {id} (assigned ids are 0 to {})", dtype::MAX_ID),
        )
    })?;
    let rank = c.count("shape rank", CLAIM_DIM, 1)?;
    let start = dims.len();
    for _ in 0..rank {
        dims.push(c.u64("dimension")?);
    }
    let begin = c.u64("begin offset")?;
    let end = c.u64("end offset")?;
    Ok((dtype, start..dims.len(), begin, end))
}

fn check_count(limits: &Limits, n: usize) -> Result<()> {
    Ok(limits.check_tensor_count(n as u64)?)
}

impl<'a> Header<'a> {
    /// The decoded header, with how far the cursor read and whether every varint was in its
    /// shortest form.
    fn finish(
        c: &Cursor<'_>,
        metadata: Option<Vec<(&'a str, &'a str)>>,
        entries: Vec<Entry<'a>>,
        dims: Vec<u64>,
    ) -> Self {
        Header {
            metadata,
            entries,
            dims,
            struct_len: c.position(),
            canonical_varints: c.all_canonical(),
        }
    }
}

/// Decodes the release layout: `(Option<map>, Vec<(name, info)>)`.
pub(crate) fn decode_release<'a>(window: &'a [u8], limits: &Limits) -> Result<Header<'a>> {
    let mut c = Cursor::new(window, 8, limits.max_header_bytes);
    let metadata = metadata(&mut c)?;
    let n = c.count("tensor count", CLAIM_RELEASE_ENTRY, 5)?;
    check_count(limits, n)?;
    let mut entries = Vec::with_capacity(n);
    let mut dims = Vec::with_capacity(n * 2);
    for _ in 0..n {
        let name = c.str("tensor name")?;
        let (dtype, dims_range, begin, end) = tensor_info(&mut c, &mut dims)?;
        entries.push(Entry {
            name,
            dtype,
            dims: dims_range,
            begin,
            end,
        });
    }
    Ok(Header::finish(&c, metadata, entries, dims))
}

/// Decodes the pre-release layout: `(Option<map>, Vec<info>, map<name, index>)`. Every index
/// must name a distinct tensor and every tensor must have a name: the old format let several
/// names share one tensor, which is refused here.
pub(crate) fn decode_legacy<'a>(window: &'a [u8], limits: &Limits) -> Result<Header<'a>> {
    let mut c = Cursor::new(window, 8, limits.max_header_bytes);
    let metadata = metadata(&mut c)?;
    let n = c.count("tensor count", CLAIM_LEGACY_INFO, 4)?;
    check_count(limits, n)?;
    let mut infos = Vec::with_capacity(n);
    let mut dims = Vec::with_capacity(n * 2);
    for _ in 0..n {
        infos.push(tensor_info(&mut c, &mut dims)?);
    }
    let m = c.count("index map size", CLAIM_INDEX_PAIR, 2)?;
    let mut names: Vec<Option<&'a str>> = vec![None; n];
    for _ in 0..m {
        let name = c.str("index map name")?;
        let index = c.u64("index map value")?;
        let slot = usize::try_from(index)
            .ok()
            .and_then(|i| names.get_mut(i))
            .ok_or_else(|| Error::ValidationMismatch {
                name: format!("{name} (index {index} of {n} tensors)"),
            })?;
        if slot.replace(name).is_some() {
            return Err(Error::ValidationMismatch {
                name: format!("{name} (index {index} is named twice)"),
            });
        }
    }
    let mut entries = Vec::with_capacity(n);
    for (i, (dtype, dims_range, begin, end)) in infos.into_iter().enumerate() {
        let name = names[i].ok_or_else(|| Error::ValidationMismatch {
            name: format!("(tensor {i} has no name)"),
        })?;
        entries.push(Entry {
            name,
            dtype,
            dims: dims_range,
            begin,
            end,
        });
    }
    Ok(Header::finish(&c, metadata, entries, dims))
}

/// The reference's checks after decoding, in its order: unique names, then per entry
/// contiguous offsets, no overflow, matching span; then exact coverage of the data section.
/// Returns the name → position index.
pub(crate) fn validate<'a>(
    header: &Header<'a>,
    data_len: u64,
    data_start: u64,
) -> Result<HashMap<&'a str, usize>> {
    let mut index = HashMap::with_capacity(header.entries.len());
    for (i, e) in header.entries.iter().enumerate() {
        if index.insert(e.name, i).is_some() {
            return Err(Error::ValidationMismatch {
                name: e.name.to_owned(),
            });
        }
    }
    let mut cursor = 0u64;
    for e in &header.entries {
        if e.begin != cursor || e.end < e.begin {
            return Err(Error::InvalidOffset {
                name: e.name.to_owned(),
                begin: e.begin,
                end: e.end,
                expected: cursor,
            });
        }
        let shape = &header.dims[e.dims.clone()];
        let expected = tensor_dtype::shape::byte_len(e.dtype, shape).map_err(|_| {
            Error::ValidationOverflow {
                name: e.name.to_owned(),
                shape: shape.to_vec(),
            }
        })?;
        if e.end - e.begin != expected {
            return Err(Error::TensorInvalidInfo {
                name: e.name.to_owned(),
                actual: e.end - e.begin,
                expected,
            });
        }
        cursor = e.end;
    }
    if cursor != data_len {
        return Err(Error::MetadataIncompleteBuffer {
            end: cursor,
            data_len,
            data_start,
        });
    }
    Ok(index)
}

/// The writer's sort key: dtype id descending, then name bytes.
fn writer_rank<'a>(e: &Entry<'a>) -> (std::cmp::Reverse<Option<u32>>, &'a [u8]) {
    (std::cmp::Reverse(dtype::to_id(e.dtype)), e.name.as_bytes())
}

/// What a strict reader refuses beyond the reference's checks: anything a conforming writer
/// would not have produced.
pub(crate) fn check_canonical(header: &Header<'_>, window: &[u8], data: &[u8]) -> Result<()> {
    let fail = |m: String| Err(Error::NotCanonical(m));
    if !header.canonical_varints {
        return fail("a varint is not in its shortest form".into());
    }
    let pad = (8 - header.struct_len % 8) % 8;
    if window.len() != header.struct_len + pad {
        return fail(format!(
            "the header window is {} bytes; the structure takes {} and padding to 8 would make it {}",
            window.len(),
            header.struct_len,
            header.struct_len + pad
        ));
    }
    if let Some(at) = window[header.struct_len..].iter().position(|&b| b != b' ') {
        return fail(format!(
            "padding byte at file offset {} is not 0x20",
            8 + header.struct_len + at
        ));
    }
    if let Some(m) = &header.metadata
        && let Some(w) = m.windows(2).find(|w| w[0].0 >= w[1].0)
    {
        return fail(format!(
            "metadata keys {:?} and {:?} are not strictly sorted",
            w[0].0, w[1].0
        ));
    }
    if let Some(w) = header
        .entries
        .windows(2)
        .find(|w| writer_rank(&w[0]) > writer_rank(&w[1]))
    {
        return fail(format!(
            "tensors {:?} and {:?} are not in writer order (dtype id descending, then name)",
            w[0].name, w[1].name
        ));
    }
    for e in header.entries.iter().filter(|e| e.dtype == Dtype::Bool) {
        let bytes = &data[e.begin as usize..e.end as usize];
        if let Some(at) = bytes.iter().position(|&b| b > 1) {
            return fail(format!(
                "bool tensor {:?} holds byte {} at element {at}",
                e.name, bytes[at]
            ));
        }
    }
    Ok(())
}
