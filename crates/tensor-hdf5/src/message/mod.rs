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

/// Message types.
pub mod kind {
    /// Dataspace.
    pub const DATASPACE: u16 = 0x1;
    /// Link info (new-style groups).
    pub const LINK_INFO: u16 = 0x2;
    /// Datatype.
    pub const DATATYPE: u16 = 0x3;
    /// Link.
    pub const LINK: u16 = 0x6;
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
