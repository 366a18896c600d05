//! The global heap (`GCOL` collections): where variable-length data lives — strings, and
//! the object references of a dimension list. An element of such data is a length, a
//! collection's address and an object's index.

use crate::cursor::{Cursor, Sizes};
use crate::error::{Error, Result};

/// The bytes of object `index` of the collection at `address`.
pub(crate) fn object(bytes: &[u8], sizes: Sizes, address: u64, index: u32) -> Result<&[u8]> {
    let mut c = sizes.cursor(bytes, address, "global heap collection")?;
    let start = c.offset();
    if c.take(4)? != b"GCOL" {
        return Err(Error::malformed(
            "global heap collection",
            start,
            "no `GCOL` signature",
        ));
    }
    c.skip(4)?;
    let size = c.length()?;
    let header = 8 + u64::from(sizes.lengths);
    let body_len = size.checked_sub(header).ok_or_else(|| {
        Error::malformed(
            "global heap collection",
            start,
            format!("{size} bytes, less than its header"),
        )
    })?;
    let body = c.take(body_len)?;
    let mut o = Cursor {
        bytes: body,
        at: 0,
        offsets: sizes.offsets,
        lengths: sizes.lengths,
        what: "global heap object",
    };
    while (o.bytes.len() - o.at) as u64 >= 8 + u64::from(sizes.lengths) {
        let i = o.u16()?;
        o.skip(6)?;
        let len = o.length()?;
        if i == 0 {
            // Free space: the rest of the collection.
            break;
        }
        let data = o.take(len)?;
        let pad = (8 - len % 8) % 8;
        o.skip(pad.min((o.bytes.len() - o.at) as u64))?;
        if u32::from(i) == index {
            return Ok(data);
        }
    }
    Err(Error::malformed(
        "global heap collection",
        start,
        format!("no object {index}"),
    ))
}

/// The data a variable-length element (length, collection address, object index) refers
/// to: `None` for an empty one.
pub(crate) fn element<'a>(
    bytes: &'a [u8],
    sizes: Sizes,
    element: &[u8],
) -> Result<Option<&'a [u8]>> {
    let mut e = Cursor {
        bytes: element,
        at: 0,
        offsets: sizes.offsets,
        lengths: sizes.lengths,
        what: "variable-length element",
    };
    let _count = e.u32()?;
    let Some(address) = e.address()? else {
        return Ok(None);
    };
    let index = e.u32()?;
    if index == 0 {
        return Ok(None);
    }
    object(bytes, sizes, address, index).map(Some)
}
