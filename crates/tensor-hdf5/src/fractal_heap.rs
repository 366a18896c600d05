//! Fractal heaps (`FRHP`, `FHDB`, `FHIB`): where dense groups keep their link messages and
//! dense attribute storage its attribute messages. An object is found by its heap ID:
//! managed objects through the root direct block or the indirect blocks' table of rows,
//! tiny objects inside the ID itself. Huge objects and filtered heaps are refused by name.

use crate::cursor::Cursor;
use crate::cursor::Sizes;
use crate::error::{Error, Result};
use crate::lookup3;

/// How deep indirect blocks may nest when an object is looked up.
const MAX_DEPTH: usize = 16;

/// A fractal heap's header: what finding an object takes.
#[derive(Clone, Debug)]
pub(crate) struct Heap {
    address: u64,
    id_len: u16,
    checksummed_blocks: bool,
    width: u64,
    start_block: u64,
    max_direct: u64,
    /// Bytes of a heap offset (the heap's maximum size in bits, rounded up to bytes).
    offset_bytes: u8,
    /// Bytes of a managed object's length in its heap ID.
    length_bytes: u8,
    root: Option<u64>,
    root_rows: u64,
    /// Rows of direct blocks an indirect block holds at most.
    max_direct_rows: u64,
}

fn log2(n: u64) -> u64 {
    u64::from(n.max(1).ilog2())
}

impl Heap {
    /// Reads the heap header at `address`.
    pub(crate) fn open(bytes: &[u8], address: u64, sizes: Sizes) -> Result<Self> {
        let mut c = sizes.cursor(bytes, address, "fractal heap header")?;
        let start = c.offset();
        if c.take(4)? != b"FRHP" {
            return Err(Error::malformed(
                "fractal heap header",
                start,
                "no `FRHP` signature",
            ));
        }
        let _version = c.u8()?;
        let id_len = c.u16()?;
        let filters_len = c.u16()?;
        if filters_len != 0 {
            return Err(Error::Unsupported("a fractal heap with I/O filters".into()));
        }
        let flags = c.u8()?;
        let max_managed = u64::from(c.u32()?);
        let _next_huge = c.length()?;
        let _huge_tree = c.address()?;
        let _free = c.length()?;
        let _free_manager = c.address()?;
        // Managed space, allocated, iterator offset, managed objects, huge size and count,
        // tiny size and count.
        for _ in 0..8 {
            c.length()?;
        }
        let width = u64::from(c.u16()?);
        let start_block = c.length()?;
        let max_direct = c.length()?;
        let max_heap_bits = u64::from(c.u16()?);
        let _start_rows = c.u16()?;
        let root = c.address()?;
        let root_rows = u64::from(c.u16()?);
        lookup3::verify(bytes, start, c.offset(), "fractal heap header")?;
        let power = |n: u64| n.is_power_of_two();
        if width == 0
            || !power(width)
            || !power(start_block)
            || !power(max_direct)
            || max_direct < start_block
            || max_heap_bits == 0
            || max_heap_bits > 64
        {
            return Err(Error::malformed(
                "fractal heap header",
                start,
                format!(
                    "table width {width}, blocks of {start_block} to {max_direct} bytes, {max_heap_bits}-bit offsets"
                ),
            ));
        }
        let offset_bytes = max_heap_bits.div_ceil(8) as u8;
        let length_bytes = log2(max_direct)
            .div_ceil(8)
            .min(log2(max_managed.max(1)).div_ceil(8))
            .max(1) as u8;
        Ok(Heap {
            address,
            id_len,
            checksummed_blocks: flags & 0x02 != 0,
            width,
            start_block,
            max_direct,
            offset_bytes,
            length_bytes,
            root,
            root_rows,
            max_direct_rows: log2(max_direct) - log2(start_block) + 2,
        })
    }

    /// Bytes of a heap ID.
    pub(crate) fn id_len(&self) -> u16 {
        self.id_len
    }

    /// Bytes of a block in row `row`.
    fn row_size(&self, row: u64) -> Result<u64> {
        let shift = row.saturating_sub(1);
        if shift >= 63 {
            return Err(Error::malformed(
                "fractal heap",
                self.address,
                format!("row {row}"),
            ));
        }
        Ok(self.start_block << shift)
    }

    /// The object with heap ID `id`, borrowed from the file.
    pub(crate) fn object<'a>(
        &self,
        bytes: &'a [u8],
        id: &'a [u8],
        sizes: Sizes,
    ) -> Result<&'a [u8]> {
        let mut c = Cursor {
            bytes: id,
            at: 0,
            offsets: sizes.offsets,
            lengths: sizes.lengths,
            what: "fractal heap ID",
        };
        let head = c.u8()?;
        match (head >> 4) & 0x3 {
            0 => {
                let offset = c.uint(self.offset_bytes)?;
                let len = c.uint(self.length_bytes)?;
                self.managed(bytes, offset, len, sizes)
            }
            2 => {
                let len = u64::from(head & 0x0f) + 1;
                c.take(len)
            }
            1 => Err(Error::Unsupported("a huge object in a fractal heap".into())),
            t => Err(Error::malformed(
                "fractal heap ID",
                self.address,
                format!("type {t}"),
            )),
        }
    }

    /// A managed object: found by its offset in the heap's space.
    fn managed<'a>(
        &self,
        bytes: &'a [u8],
        offset: u64,
        len: u64,
        sizes: Sizes,
    ) -> Result<&'a [u8]> {
        let root = self.root.ok_or_else(|| {
            Error::malformed(
                "fractal heap",
                self.address,
                "an object in a heap with no blocks",
            )
        })?;
        if self.root_rows == 0 {
            return self.in_direct(bytes, root, 0, self.start_block, offset, len, sizes);
        }
        let mut block = root;
        let mut block_offset = 0u64;
        let mut rows = self.root_rows;
        for _ in 0..MAX_DEPTH {
            // The indirect block: its header, then its direct entries, then its indirect ones.
            let mut c = sizes.cursor(bytes, block, "fractal heap indirect block")?;
            let start = c.offset();
            if c.take(4)? != b"FHIB" {
                return Err(Error::malformed(
                    "fractal heap indirect block",
                    start,
                    "no `FHIB` signature",
                ));
            }
            c.skip(1 + u64::from(sizes.offsets) + u64::from(self.offset_bytes))?;
            let entries_at = c.offset();
            let direct_rows = rows.min(self.max_direct_rows);
            // Which row and column the offset falls in.
            let mut at = block_offset;
            let mut found = None;
            for row in 0..rows {
                let size = self.row_size(row)?;
                let span = size
                    .checked_mul(self.width)
                    .ok_or(tensor_core::Error::Overflow {
                        what: "fractal heap row",
                    })?;
                if offset < at.saturating_add(span) {
                    let col = (offset - at) / size;
                    found = Some((row, col, at + col * size, size));
                    break;
                }
                at = at.saturating_add(span);
            }
            let (row, col, child_offset, size) = found.ok_or_else(|| {
                Error::malformed(
                    "fractal heap",
                    self.address,
                    format!("offset {offset} past the heap's rows"),
                )
            })?;
            let index = row * self.width + col;
            let entry = if row < direct_rows {
                entries_at + index * u64::from(sizes.offsets)
            } else {
                entries_at
                    + direct_rows * self.width * u64::from(sizes.offsets)
                    + (index - direct_rows * self.width) * u64::from(sizes.offsets)
            };
            let mut e = Cursor::at(
                bytes,
                entry,
                sizes.offsets,
                sizes.lengths,
                "fractal heap indirect block",
            )?;
            let child = e.address()?.ok_or_else(|| {
                Error::malformed(
                    "fractal heap",
                    self.address,
                    format!("offset {offset} in a block not allocated"),
                )
            })?;
            if row < direct_rows {
                return self.in_direct(bytes, child, child_offset, size, offset, len, sizes);
            }
            // A child indirect block of `size × width` bytes' worth of rows.
            block = child;
            block_offset = child_offset;
            rows = log2(size) - log2(self.start_block * self.width) + 1;
        }
        Err(Error::malformed(
            "fractal heap",
            self.address,
            "indirect blocks nested too deep",
        ))
    }

    /// An object at `offset` of the heap in the direct block at `block`, which starts at
    /// heap offset `block_offset` and is `size` bytes long.
    #[allow(clippy::too_many_arguments, reason = "the lookup's state")]
    fn in_direct<'a>(
        &self,
        bytes: &'a [u8],
        block: u64,
        block_offset: u64,
        size: u64,
        offset: u64,
        len: u64,
        sizes: Sizes,
    ) -> Result<&'a [u8]> {
        let mut c = sizes.cursor(bytes, block, "fractal heap direct block")?;
        let start = c.offset();
        if c.take(4)? != b"FHDB" {
            return Err(Error::malformed(
                "fractal heap direct block",
                start,
                "no `FHDB` signature",
            ));
        }
        if size > self.max_direct {
            return Err(Error::malformed(
                "fractal heap direct block",
                start,
                format!("{size} bytes"),
            ));
        }
        let header = 4
            + 1
            + u64::from(sizes.offsets)
            + u64::from(self.offset_bytes)
            + if self.checksummed_blocks { 4 } else { 0 };
        let within = offset - block_offset;
        if within < header || within.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::malformed(
                "fractal heap direct block",
                start,
                format!("an object of {len} bytes at {within} of a {size}-byte block"),
            ));
        }
        let mut b = Cursor::at(
            bytes,
            start,
            sizes.offsets,
            sizes.lengths,
            "fractal heap direct block",
        )?;
        let block = b.take(size)?;
        if self.checksummed_blocks {
            // Over the whole block, its checksum field taken as zeros.
            let field = (header - 4) as usize;
            let stored = u32::from_le_bytes([
                block[field],
                block[field + 1],
                block[field + 2],
                block[field + 3],
            ]);
            let mut zeroed = block.to_vec();
            zeroed[field..field + 4].fill(0);
            let computed = lookup3::hash(&zeroed, 0);
            if stored != computed {
                return Err(Error::Checksum {
                    what: "fractal heap direct block",
                    offset: start,
                    stored,
                    computed,
                });
            }
        }
        // Inside the block: checked above.
        Ok(&block[within as usize..(within + len) as usize])
    }
}
