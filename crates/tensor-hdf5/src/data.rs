//! A dataset's elements, read into the caller's buffer in C order as stored (the file's byte
//! order): from the header (compact), one run (contiguous), or chunk by chunk through the
//! chunk index — a version 1 B-tree, a single chunk, implicit chunks or a fixed array —
//! each chunk through its filters in reverse (deflate, shuffle, fletcher32 verified) into
//! exactly its size. Space never written reads as zeros.

use crate::cursor::Cursor;
use crate::cursor::Sizes;
use crate::error::{Error, Result};
use crate::lookup3;
use crate::message::Filter;
use crate::message::layout::{ChunkIndex, Layout};
use crate::message::{Dataspace, Datatype};

/// What a dataset is: its element type, shape, layout and filters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset<'a> {
    /// Its element type.
    pub datatype: Datatype,
    /// Its shape.
    pub dataspace: Dataspace,
    /// Where its elements are.
    pub layout: Layout<'a>,
    /// The filters its chunks went through, in order.
    pub filters: Vec<Filter>,
    /// What space never written holds: one element's bytes (zeros when `None`).
    pub fill: Option<Vec<u8>>,
}

impl Dataset<'_> {
    /// The rows of its outermost dimension one chunk holds (1 when not chunked, or of no
    /// dimension): how many rows a reader of rows takes at once to decode each chunk once.
    #[must_use]
    pub fn chunk_rows(&self) -> u64 {
        match &self.layout {
            crate::message::Layout::Chunked { chunk, .. } => {
                chunk.first().copied().unwrap_or(1).max(1)
            }
            _ => 1,
        }
    }

    /// How its elements are stored, in a few words: `contiguous`, `compact`, or
    /// `chunked 1x721x1440 shuffle+deflate` (the chunk shape, then the filters).
    #[must_use]
    pub fn storage(&self) -> String {
        match &self.layout {
            crate::message::Layout::Compact(_) => "compact".into(),
            crate::message::Layout::Contiguous { .. } => "contiguous".into(),
            crate::message::Layout::Chunked { chunk, .. } => {
                let shape: Vec<String> = chunk.iter().map(u64::to_string).collect();
                let filters: Vec<&str> = self
                    .filters
                    .iter()
                    .map(crate::message::Filter::name)
                    .collect();
                let mut s = format!("chunked {}", shape.join("x"));
                if !filters.is_empty() {
                    s.push(' ');
                    s.push_str(&filters.join("+"));
                }
                s
            }
        }
    }

    /// Bytes of its elements as stored (a variable-length element's: its reference), or an
    /// overflow error.
    pub fn byte_len(&self) -> Result<u64> {
        Ok(self
            .dataspace
            .elements()?
            .checked_mul(u64::from(self.datatype.size()))
            .ok_or(tensor_core::Error::Overflow {
                what: "HDF5 dataset size",
            })?)
    }
}

/// One stored chunk: where its first element is (element coordinates), where its bytes
/// are and how many, and which filters it skipped.
#[derive(Clone, Debug)]
struct Chunk {
    origin: Vec<u64>,
    address: u64,
    size: u64,
    mask: u32,
}

/// How many chunks are decoded side by side before they are placed.
const BATCH: usize = 16;

/// The most chunks one dataset's index is walked for: a bound on the memory and time a
/// dataset's chunk list can ask for (a dataset of 20 GB in chunks of 1 MB has 20 000).
const MAX_CHUNKS: usize = 1 << 20;

/// Reads `dataset`'s elements into `out`, exactly its bytes.
pub(crate) fn read(
    bytes: &[u8],
    sizes: Sizes,
    limits: &tensor_core::Limits,
    dataset: &Dataset<'_>,
    out: &mut [u8],
) -> Result<()> {
    let rows = dataset.dataspace.dims.first().copied().unwrap_or(1);
    read_rows(bytes, sizes, limits, dataset, 0..rows, out)
}

/// Reads the elements of `rows` of `dataset`'s outermost dimension (all of a scalar's) into
/// `out`, exactly their bytes: only the chunks those rows lie in are decoded.
pub(crate) fn read_rows(
    bytes: &[u8],
    sizes: Sizes,
    limits: &tensor_core::Limits,
    dataset: &Dataset<'_>,
    rows: std::ops::Range<u64>,
    out: &mut [u8],
) -> Result<()> {
    let element = u64::from(dataset.datatype.size());
    let total = dataset.byte_len()?;
    let dims = &dataset.dataspace.dims;
    let all = dims.first().copied().unwrap_or(1);
    if rows.start > rows.end || rows.end > all {
        return Err(tensor_core::Error::InvalidArgument(format!(
            "rows {rows:?} of a dataset of {all}"
        ))
        .into());
    }
    // Bytes per row; the window's place in the elements.
    let row = total.checked_div(all).unwrap_or(0);
    let (start, len) = (rows.start * row, (rows.end - rows.start) * row);
    if out.len() as u64 != len {
        return Err(tensor_core::Error::InvalidArgument(format!(
            "rows {rows:?} of the dataset hold {len} bytes; the buffer has {}",
            out.len()
        ))
        .into());
    }
    let mut window = |data: &[u8], what: &'static str, at: u64| -> Result<()> {
        let src = usize::try_from(start)
            .ok()
            .and_then(|s| data.get(s..s + out.len()))
            .ok_or_else(|| {
                Error::malformed(
                    what,
                    at,
                    format!("{} bytes where {total} belong", data.len()),
                )
            })?;
        out.copy_from_slice(src);
        Ok(())
    };
    match &dataset.layout {
        Layout::Compact(data) => window(data, "compact dataset", 0),
        Layout::Contiguous { address: None, .. } => {
            fill(out, dataset.fill.as_deref());
            Ok(())
        }
        Layout::Contiguous {
            address: Some(a),
            size,
        } => {
            if *size < total {
                return Err(Error::malformed(
                    "contiguous dataset",
                    *a,
                    format!("{size} bytes where {total} belong"),
                ));
            }
            let mut c = sizes.cursor(bytes, *a, "contiguous dataset")?;
            c.skip(start)?;
            out.copy_from_slice(c.take(len)?);
            Ok(())
        }
        Layout::Chunked {
            chunk,
            index,
            kind,
            filtered_single,
        } => {
            out.fill(0);
            if chunk.len() != dims.len() || chunk.is_empty() || chunk.contains(&0) {
                return Err(Error::malformed(
                    "chunked dataset",
                    0,
                    format!("chunks of {chunk:?} for a shape of {dims:?}"),
                ));
            }
            let Some(index) = *index else { return Ok(()) };
            let chunk_bytes = chunk
                .iter()
                .try_fold(element, |n, &d| n.checked_mul(d))
                .ok_or(tensor_core::Error::Overflow {
                    what: "HDF5 chunk size",
                })?;
            let chunks = match kind {
                ChunkIndex::BTreeV1 => btree_chunks(bytes, sizes, index, dims.len())?,
                ChunkIndex::Single => vec![Chunk {
                    origin: vec![0; dims.len()],
                    address: index,
                    size: filtered_single.map_or(chunk_bytes, |(s, _)| s),
                    mask: filtered_single.map_or(0, |(_, m)| m),
                }],
                ChunkIndex::Implicit => grid(dims, chunk)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, origin)| Chunk {
                        origin,
                        address: index + i as u64 * chunk_bytes,
                        size: chunk_bytes,
                        mask: 0,
                    })
                    .collect(),
                ChunkIndex::FixedArray => fixed_array_chunks(
                    bytes,
                    sizes,
                    index,
                    dims,
                    chunk,
                    chunk_bytes,
                    !dataset.filters.is_empty(),
                )?,
                ChunkIndex::ExtensibleArray => extensible_chunks(
                    bytes,
                    sizes,
                    index,
                    dims,
                    chunk,
                    chunk_bytes,
                    !dataset.filters.is_empty(),
                    dataset.dataspace.max.as_deref(),
                )?,
                ChunkIndex::BTreeV2 => {
                    return Err(Error::Unsupported(
                        "chunks indexed by a version 2 B-tree".into(),
                    ));
                }
            };
            // Only the chunks the rows lie in.
            let chunks: Vec<Chunk> = chunks
                .into_iter()
                .filter(|ch| {
                    ch.origin[0] < rows.end && ch.origin[0].saturating_add(chunk[0]) > rows.start
                })
                .collect();
            // A batch of chunks decoded side by side (feature `parallel`), then placed: memory
            // holds one batch of decoded chunks beyond `out`.
            for batch in chunks.chunks(BATCH) {
                let decode = |ch: &Chunk| -> Result<Vec<u8>> {
                    let mut c = sizes.cursor(bytes, ch.address, "chunk")?;
                    let stored = c.take(ch.size)?;
                    // Before anything of the chunk's size is allocated.
                    limits.check_expansion(ch.size, chunk_bytes)?;
                    unfilter(stored, &dataset.filters, ch.mask, chunk_bytes)
                };
                #[cfg(feature = "parallel")]
                let decoded: Vec<Result<Vec<u8>>> = {
                    use rayon::prelude::*;
                    batch.par_iter().map(decode).collect()
                };
                #[cfg(not(feature = "parallel"))]
                let decoded: Vec<Result<Vec<u8>>> = batch.iter().map(decode).collect();
                for (ch, data) in batch.iter().zip(decoded) {
                    place(out, &data?, &ch.origin, dims, chunk, element, &rows)?;
                }
            }
            Ok(())
        }
    }
}

/// `out` filled with the fill value's element over and over (zeros without one).
fn fill(out: &mut [u8], value: Option<&[u8]>) {
    match value {
        Some(v) if !v.is_empty() && v.iter().any(|&b| b != 0) => {
            for (o, b) in out.iter_mut().zip(v.iter().cycle()) {
                *o = *b;
            }
        }
        _ => out.fill(0),
    }
}

/// The origins of a chunk grid's chunks, in row-major order.
fn grid(dims: &[u64], chunk: &[u64]) -> Result<Vec<Vec<u64>>> {
    let counts: Vec<u64> = dims
        .iter()
        .zip(chunk)
        .map(|(&d, &c)| d.div_ceil(c))
        .collect();
    let n = counts
        .iter()
        .try_fold(1u64, |n, &c| n.checked_mul(c))
        .ok_or_else(|| {
            Error::malformed("chunked dataset", 0, format!("a grid of {counts:?} chunks"))
        })?;
    if n > MAX_CHUNKS as u64 {
        return Err(tensor_core::Error::LimitExceeded {
            what: "HDF5 chunks of one dataset",
            requested: n,
            limit: MAX_CHUNKS as u64,
        }
        .into());
    }
    Ok((0..n)
        .map(|mut i| {
            let mut origin = vec![0; dims.len()];
            for k in (0..dims.len()).rev() {
                origin[k] = (i % counts[k]) * chunk[k];
                i /= counts[k];
            }
            origin
        })
        .collect())
}

/// Copies a chunk's elements (its full chunk shape, C order) into `out` — the dataset's
/// `rows` of its outermost dimension — where they belong, the parts past the dataset's
/// edges and outside the rows left out.
fn place(
    out: &mut [u8],
    data: &[u8],
    origin: &[u64],
    dims: &[u64],
    chunk: &[u64],
    element: u64,
    rows: &std::ops::Range<u64>,
) -> Result<()> {
    let rank = dims.len();
    if origin.iter().zip(dims).any(|(&o, &d)| o >= d) {
        return Err(Error::malformed(
            "chunk index",
            0,
            format!("a chunk at {origin:?} outside {dims:?}"),
        ));
    }
    // The chunk's rows inside the window: from `first` on, `outer[0]` of them.
    let first = rows.start.saturating_sub(origin[0]);
    let last = (origin[0] + chunk[0]).min(dims[0]).min(rows.end);
    if origin[0] + first >= last {
        return Ok(());
    }
    // The last dimension's run within the dataset, copied once per index of the others
    // (of a vector, one run: its rows).
    let (run, outer): (u64, Vec<u64>) = if rank == 1 {
        ((last - origin[0] - first) * element, Vec::new())
    } else {
        let run = (dims[rank - 1] - origin[rank - 1]).min(chunk[rank - 1]) * element;
        let mut outer: Vec<u64> = (0..rank - 1)
            .map(|k| (dims[k] - origin[k]).min(chunk[k]))
            .collect();
        outer[0] = last - origin[0] - first;
        (run, outer)
    };
    let count: u64 = outer.iter().product();
    let mut index = vec![0u64; rank - 1];
    for _ in 0..count {
        let (mut src, mut dst) = (0u64, 0u64);
        for k in 0..rank {
            let i = if k < rank - 1 { index[k] } else { 0 };
            if k == 0 {
                // The chunk's row `first + i` is the window's row `origin + first - start + i`.
                src = first + i;
                dst = origin[0] + first - rows.start + i;
            } else {
                src = src * chunk[k] + i;
                dst = dst * dims[k] + origin[k] + i;
            }
        }
        let (src, dst) = ((src * element) as usize, (dst * element) as usize);
        out[dst..dst + run as usize].copy_from_slice(&data[src..src + run as usize]);
        for k in (0..rank - 1).rev() {
            index[k] += 1;
            if index[k] < outer[k] {
                break;
            }
            index[k] = 0;
        }
    }
    Ok(())
}

/// A chunk's stored bytes through its filters, last first (those its mask skips left
/// out), into exactly `size` bytes.
fn unfilter(stored: &[u8], filters: &[Filter], mask: u32, size: u64) -> Result<Vec<u8>> {
    let mut data = tensor_core::buffer::try_copied(stored, "an HDF5 chunk")?;
    for (i, f) in filters.iter().enumerate().rev() {
        if i < 32 && mask & (1 << i) != 0 {
            continue;
        }
        data = match f.id {
            1 => inflate(&data, size)?,
            2 => unshuffle(&data, f.values.first().copied().unwrap_or(1) as usize),
            3 => fletcher32(&data)?,
            _ => {
                return Err(Error::Unsupported(format!(
                    "the {} filter (id {})",
                    f.name(),
                    f.id
                )));
            }
        };
    }
    if data.len() as u64 != size {
        return Err(Error::malformed(
            "chunk",
            0,
            format!("{} bytes after its filters where {size} belong", data.len()),
        ));
    }
    Ok(data)
}

/// A zlib stream inflated into exactly `size` bytes (never more is allocated).
fn inflate(data: &[u8], size: u64) -> Result<Vec<u8>> {
    let size = usize::try_from(size).map_err(|_| tensor_core::Error::Overflow {
        what: "HDF5 chunk size",
    })?;
    let mut out = tensor_core::buffer::try_filled(size, 0u8, "an inflated HDF5 chunk")?;
    let mut z = flate2::Decompress::new(true);
    let status = z
        .decompress(data, &mut out, flate2::FlushDecompress::Finish)
        .map_err(|e| Error::malformed("deflated chunk", 0, e.to_string()))?;
    if status != flate2::Status::StreamEnd || z.total_out() as usize != size {
        return Err(Error::malformed(
            "deflated chunk",
            0,
            format!(
                "it inflates to {} bytes or more where {size} belong",
                z.total_out()
            ),
        ));
    }
    Ok(out)
}

/// HDF5's shuffle undone: byte `b` of every element was stored in the `b`-th plane.
pub(crate) fn unshuffle(data: &[u8], width: usize) -> Vec<u8> {
    if width <= 1 || data.len() < width {
        return data.to_vec();
    }
    let n = data.len() / width;
    let mut out = tensor_core::buffer::copied(data);
    for b in 0..width {
        for i in 0..n {
            out[i * width + b] = data[b * n + i];
        }
    }
    out
}

/// HDF5's Fletcher-32 over 16-bit big-endian words (a last odd byte as the high half).
pub(crate) fn fletcher32_of(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    for block in data.chunks(720) {
        for pair in block.chunks(2) {
            let word = (u32::from(pair[0]) << 8) | pair.get(1).map_or(0, |&b| u32::from(b));
            sum1 += word;
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

/// The data before its Fletcher-32 checksum, verified (HDF5 accepts it in either byte
/// order: old releases stored it reversed).
fn fletcher32(data: &[u8]) -> Result<Vec<u8>> {
    let n = data
        .len()
        .checked_sub(4)
        .ok_or_else(|| Error::malformed("fletcher32 chunk", 0, "shorter than its checksum"))?;
    let stored = u32::from_le_bytes([data[n], data[n + 1], data[n + 2], data[n + 3]]);
    let computed = fletcher32_of(&data[..n]);
    if stored != computed && stored != computed.swap_bytes() {
        return Err(Error::Checksum {
            what: "chunk (Fletcher-32)",
            offset: 0,
            stored,
            computed,
        });
    }
    Ok(data[..n].to_vec())
}

/// Every chunk a version 1 B-tree (node type 1) indexes.
fn btree_chunks(bytes: &[u8], sizes: Sizes, root: u64, rank: usize) -> Result<Vec<Chunk>> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    let mut visited = 0usize;
    let key_len = 8 + 8 * (rank as u64 + 1);
    while let Some(node) = stack.pop() {
        visited += 1;
        if visited > MAX_CHUNKS {
            return Err(Error::malformed("chunk B-tree", node, "too many nodes"));
        }
        let mut c = sizes.cursor(bytes, node, "chunk B-tree node")?;
        if c.take(4)? != b"TREE" {
            return Err(Error::malformed(
                "chunk B-tree node",
                node,
                "no `TREE` signature",
            ));
        }
        let node_type = c.u8()?;
        if node_type != 1 {
            return Err(Error::malformed(
                "chunk B-tree node",
                node,
                format!("node type {node_type}"),
            ));
        }
        let level = c.u8()?;
        let used = c.u16()?;
        c.skip(2 * u64::from(sizes.offsets))?;
        c.check_count(u64::from(used), key_len + u64::from(sizes.offsets))?;
        let mut children = Vec::with_capacity(usize::from(used));
        for _ in 0..used {
            let size = u64::from(c.u32()?);
            let mask = c.u32()?;
            let mut origin = Vec::with_capacity(rank);
            for _ in 0..rank {
                origin.push(c.u64()?);
            }
            c.skip(8)?;
            let child = c.address()?.ok_or_else(|| {
                Error::malformed("chunk B-tree node", node, "a child at an undefined address")
            })?;
            if level == 0 {
                out.push(Chunk {
                    origin,
                    address: child,
                    size,
                    mask,
                });
                if out.len() > MAX_CHUNKS {
                    return Err(Error::malformed("chunk B-tree", node, "too many chunks"));
                }
            } else {
                children.push(child);
            }
        }
        stack.extend(children.into_iter().rev());
    }
    Ok(out)
}

/// A chunk entry's stored size and filter mask after its address (an array's element of
/// `entry` bytes): read when the chunks are filtered, the chunk's size and no mask when not.
fn entry_size(
    c: &mut Cursor<'_>,
    entry: u64,
    filtered: bool,
    chunk_bytes: u64,
    what: &'static str,
    at: u64,
) -> Result<(u64, u32)> {
    if !filtered {
        return Ok((chunk_bytes, 0));
    }
    let width = entry
        .checked_sub(u64::from(c.offsets) + 4)
        .filter(|&w| (1..=8).contains(&w))
        .ok_or_else(|| Error::malformed(what, at, format!("entries of {entry} bytes")))?;
    // 1 to 8: checked just above.
    Ok((c.uint(width as u8)?, c.u32()?))
}

/// Every chunk a fixed array indexes (unpaged).
#[allow(clippy::too_many_arguments, reason = "the dataset's geometry")]
fn fixed_array_chunks(
    bytes: &[u8],
    sizes: Sizes,
    header: u64,
    dims: &[u64],
    chunk: &[u64],
    chunk_bytes: u64,
    filtered: bool,
) -> Result<Vec<Chunk>> {
    let mut c = sizes.cursor(bytes, header, "fixed array header")?;
    let start = c.offset();
    if c.take(4)? != b"FAHD" {
        return Err(Error::malformed(
            "fixed array header",
            start,
            "no `FAHD` signature",
        ));
    }
    c.skip(2)?;
    let entry = u64::from(c.u8()?);
    let page_bits = c.u8()?;
    let count = c.length()?;
    let block = c.address()?;
    lookup3::verify(bytes, start, c.offset(), "fixed array header")?;
    let Some(block) = block else {
        return Ok(Vec::new());
    };
    if page_bits < 64 && count > (1u64 << page_bits) {
        return Err(Error::Unsupported("a paged fixed array of chunks".into()));
    }
    let origins = grid(dims, chunk)?;
    if origins.len() as u64 != count {
        return Err(Error::malformed(
            "fixed array header",
            start,
            format!("{count} entries for {} chunks", origins.len()),
        ));
    }
    let mut d = sizes.cursor(bytes, block, "fixed array data block")?;
    let dstart = d.offset();
    if d.take(4)? != b"FADB" {
        return Err(Error::malformed(
            "fixed array data block",
            dstart,
            "no `FADB` signature",
        ));
    }
    d.skip(2 + u64::from(sizes.offsets))?;
    d.check_count(count, entry)?;
    let mut out = Vec::with_capacity(origins.len());
    for origin in origins {
        let address = d.address()?;
        let (size, mask) = entry_size(
            &mut d,
            entry,
            filtered,
            chunk_bytes,
            "fixed array data block",
            dstart,
        )?;
        if let Some(address) = address {
            out.push(Chunk {
                origin,
                address,
                size,
                mask,
            });
        }
    }
    lookup3::verify(bytes, dstart, d.offset(), "fixed array data block")?;
    Ok(out)
}

/// Every chunk an extensible array indexes: chunk `i` of the grid (row-major, the
/// unlimited dimension, which must be the first, slowest).
#[allow(clippy::too_many_arguments, reason = "the dataset's geometry")]
fn extensible_chunks(
    bytes: &[u8],
    sizes: Sizes,
    header: u64,
    dims: &[u64],
    chunk: &[u64],
    chunk_bytes: u64,
    filtered: bool,
    max: Option<&[u64]>,
) -> Result<Vec<Chunk>> {
    if let Some(max) = max
        && max.iter().skip(1).any(|&m| m == u64::MAX)
    {
        return Err(Error::Unsupported(
            "an extensible array over an unlimited dimension other than the first".into(),
        ));
    }
    let array = crate::extensible_array::Array::open(bytes, header, sizes)?;
    let mut out = Vec::new();
    for (i, origin) in grid(dims, chunk)?.into_iter().enumerate() {
        let Some(entry) = array.element(i as u64)? else {
            continue;
        };
        let mut e = Cursor {
            bytes: entry,
            at: 0,
            offsets: sizes.offsets,
            lengths: sizes.lengths,
            what: "extensible array element",
        };
        let Some(address) = e.address()? else {
            continue;
        };
        let (size, mask) = entry_size(
            &mut e,
            entry.len() as u64,
            filtered,
            chunk_bytes,
            "extensible array element",
            header,
        )?;
        out.push(Chunk {
            origin,
            address,
            size,
            mask,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{fletcher32_of, unshuffle};

    #[test]
    fn shuffle_planes_come_back_as_elements() {
        assert_eq!(unshuffle(&[1, 3, 5, 2, 4, 6], 2), vec![1, 2, 3, 4, 5, 6]);
        // Two words: 0x0102, 0x0300 (the odd byte high): sums 0x0402 and 0x0504.
        assert_eq!(fletcher32_of(&[1, 2, 3]), 0x0504_0402);
    }
}
