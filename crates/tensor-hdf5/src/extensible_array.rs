//! Extensible arrays (`EAHD`, `EAIB`, `EASB`, `EADB`): how HDF5's latest format indexes the
//! chunks of a dataset with an unlimited dimension. Elements are found by index: the first
//! few in the index block, the rest in data blocks of growing sizes, reached from the index
//! block directly or through super blocks. Paged data blocks are refused by name.

use crate::cursor::Sizes;
use crate::error::{Error, Result};
use crate::lookup3;

/// An extensible array, its header and index block read.
pub(crate) struct Array<'a> {
    bytes: &'a [u8],
    sizes: Sizes,
    element: u64,
    index_elements: u64,
    data_min: u64,
    page_elements: u64,
    offset_bytes: u8,
    /// The index block's elements.
    direct: &'a [u8],
    /// The index block's data block addresses.
    data_blocks: Vec<Option<u64>>,
    /// The index block's super block addresses.
    super_blocks: Vec<Option<u64>>,
    /// Super blocks whose data blocks the index block points to.
    index_supers: u64,
}

impl<'a> Array<'a> {
    /// Reads the header at `address` and its index block.
    pub(crate) fn open(bytes: &'a [u8], address: u64, sizes: Sizes) -> Result<Self> {
        let mut c = sizes.cursor(bytes, address, "extensible array header")?;
        let start = c.offset();
        if c.take(4)? != b"EAHD" {
            return Err(Error::malformed(
                "extensible array header",
                start,
                "no `EAHD` signature",
            ));
        }
        c.skip(2)?;
        let element = u64::from(c.u8()?);
        let max_bits = u64::from(c.u8()?);
        let index_elements = u64::from(c.u8()?);
        let data_min = u64::from(c.u8()?);
        let super_min = u64::from(c.u8()?);
        let page_bits = u64::from(c.u8()?);
        for _ in 0..6 {
            c.length()?;
        }
        let index = c.address()?;
        lookup3::verify(bytes, start, c.offset(), "extensible array header")?;
        let pow2 = |n: u64| n.is_power_of_two();
        if element == 0
            || !pow2(data_min)
            || !pow2(super_min)
            || max_bits == 0
            || max_bits > 64
            || page_bits >= 64
            || u64::from(data_min.ilog2()) > max_bits
        {
            return Err(Error::malformed(
                "extensible array header",
                start,
                "sizes no extensible array has",
            ));
        }
        let supers = 1 + max_bits - u64::from(data_min.ilog2());
        let index_supers = (2 * u64::from(super_min.ilog2())).min(supers);
        let n_data = 2 * (super_min - 1);
        let n_super = supers - index_supers;
        let offset_bytes = max_bits.div_ceil(8) as u8;
        let mut array = Array {
            bytes,
            sizes,
            element,
            index_elements,
            data_min,
            page_elements: 1 << page_bits,
            offset_bytes,
            direct: &[],
            data_blocks: Vec::new(),
            super_blocks: Vec::new(),
            index_supers,
        };
        let Some(index) = index else { return Ok(array) };
        let mut b = sizes.cursor(bytes, index, "extensible array index block")?;
        let istart = b.offset();
        if b.take(4)? != b"EAIB" {
            return Err(Error::malformed(
                "extensible array index block",
                istart,
                "no `EAIB` signature",
            ));
        }
        b.skip(2 + u64::from(sizes.offsets))?;
        array.direct = b.take(index_elements * element)?;
        b.check_count(n_data + n_super, u64::from(sizes.offsets))?;
        for _ in 0..n_data {
            array.data_blocks.push(b.address()?);
        }
        for _ in 0..n_super {
            array.super_blocks.push(b.address()?);
        }
        lookup3::verify(bytes, istart, b.offset(), "extensible array index block")?;
        Ok(array)
    }

    /// Element `i`'s bytes, `None` where its block was never written.
    pub(crate) fn element(&self, i: u64) -> Result<Option<&'a [u8]>> {
        if i < self.index_elements {
            let at = (i * self.element) as usize;
            return Ok(self.direct.get(at..at + self.element as usize));
        }
        let mut rest = i - self.index_elements;
        // Super block u holds 2^(u/2) data blocks of 2^((u+1)/2) × data_min elements.
        let mut first_block = 0u64;
        for u in 0..64u64 {
            let blocks = 1u64 << (u / 2);
            let per = (1u64 << u.div_ceil(2)) * self.data_min;
            let span = blocks.saturating_mul(per);
            if rest >= span {
                rest -= span;
                first_block += blocks;
                continue;
            }
            let (block, within) = (rest / per, rest % per);
            if per > self.page_elements {
                return Err(Error::Unsupported(
                    "paged extensible array data blocks".into(),
                ));
            }
            let address = if u < self.index_supers {
                self.data_blocks
                    .get((first_block + block) as usize)
                    .copied()
                    .flatten()
            } else {
                let Some(Some(sup)) = self.super_blocks.get((u - self.index_supers) as usize)
                else {
                    return Ok(None);
                };
                let mut s = self
                    .sizes
                    .cursor(self.bytes, *sup, "extensible array super block")?;
                let sstart = s.offset();
                if s.take(4)? != b"EASB" {
                    return Err(Error::malformed(
                        "extensible array super block",
                        sstart,
                        "no `EASB` signature",
                    ));
                }
                s.skip(2 + u64::from(self.sizes.offsets) + u64::from(self.offset_bytes))?;
                s.skip(block * u64::from(self.sizes.offsets))?;
                s.address()?
            };
            let Some(address) = address else {
                return Ok(None);
            };
            let mut d = self
                .sizes
                .cursor(self.bytes, address, "extensible array data block")?;
            let dstart = d.offset();
            if d.take(4)? != b"EADB" {
                return Err(Error::malformed(
                    "extensible array data block",
                    dstart,
                    "no `EADB` signature",
                ));
            }
            d.skip(2 + u64::from(self.sizes.offsets) + u64::from(self.offset_bytes))?;
            let elements = d.take(per * self.element)?;
            lookup3::verify(
                self.bytes,
                dstart,
                d.offset(),
                "extensible array data block",
            )?;
            let at = (within * self.element) as usize;
            return Ok(elements.get(at..at + self.element as usize));
        }
        Err(Error::malformed(
            "extensible array",
            0,
            format!("element {i} past every super block"),
        ))
    }
}
