//! The header messages a reader of groups, attributes and datasets needs, each decoded from
//! its bytes: dataspaces, datatypes, links, attributes, layouts, filter pipelines, symbol
//! tables, and the link and attribute info of dense storage.

pub mod attribute;
pub mod dataspace;
pub mod datatype;
pub mod layout;
pub mod link;
pub mod pipeline;

pub use attribute::Attribute;
pub use dataspace::Dataspace;
pub use datatype::Datatype;
pub use layout::Layout;
pub use link::{Link, Target};
pub use pipeline::Filter;

/// A dataset's fill value (the fill value message, or its old form), when one is defined:
/// one element's bytes, in the dataset's byte order.
pub fn fill_value(kind: u16, data: &[u8], at: u64) -> crate::Result<Option<&[u8]>> {
    let mut c = crate::cursor::Cursor {
        bytes: data,
        at: 0,
        offsets: 8,
        lengths: 8,
        what: "fill value message",
    };
    let defined = match kind {
        kind::FILL_OLD => true,
        _ => match c.u8()? {
            1 | 2 => {
                c.skip(2)?;
                let defined = c.u8()? == 1;
                // Version 1 always stores a size (and a value when it is not zero).
                defined || data[0] == 1
            }
            3 => c.u8()? & 0x20 != 0,
            v => {
                return Err(crate::Error::malformed(
                    "fill value message",
                    at,
                    format!("version {v}"),
                ));
            }
        },
    };
    if !defined {
        return Ok(None);
    }
    let size = c.u32()?;
    let value = c.take(u64::from(size))?;
    Ok((!value.is_empty()).then_some(value))
}

/// Message types.
pub mod kind {
    /// Dataspace.
    pub const DATASPACE: u16 = 0x1;
    /// Link info (new-style groups).
    pub const LINK_INFO: u16 = 0x2;
    /// Datatype.
    pub const DATATYPE: u16 = 0x3;
    /// Fill value (old form).
    pub const FILL_OLD: u16 = 0x4;
    /// Fill value.
    pub const FILL: u16 = 0x5;
    /// Link.
    pub const LINK: u16 = 0x6;
    /// Group info (new-style groups).
    pub const GROUP_INFO: u16 = 0xA;
    /// Data layout.
    pub const LAYOUT: u16 = 0x8;
    /// Filter pipeline.
    pub const PIPELINE: u16 = 0xB;
    /// Attribute.
    pub const ATTRIBUTE: u16 = 0xC;
    /// Symbol table (old-style groups).
    pub const SYMBOL_TABLE: u16 = 0x11;
    /// Attribute info (dense attribute storage).
    pub const ATTRIBUTE_INFO: u16 = 0x15;
}
