//! What the writer is asked to write: element types, attributes and their values, datasets
//! and the filters their chunks go through.

use crate::error::Result;
use std::io::Write;

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A little-endian integer of `size` bytes (1, 2, 4 or 8).
    Integer {
        /// Bytes per element.
        size: u8,
        /// Two's complement when `true`.
        signed: bool,
    },
    /// A little-endian IEEE float of `size` bytes (2, 4 or 8).
    Float {
        /// Bytes per element.
        size: u8,
    },
    /// A fixed-length, null-terminated string of `len` bytes (an empty one as 1 byte).
    Text {
        /// Bytes per element.
        len: u32,
        /// UTF-8 when `true`, else ASCII.
        utf8: bool,
    },
    /// A variable-length string.
    VlenText {
        /// UTF-8 when `true`, else ASCII.
        utf8: bool,
    },
    /// A variable-length list of object references (what dimension scales are attached
    /// with).
    References,
}

impl Type {
    /// Bytes per element as stored.
    #[must_use]
    pub fn size(&self) -> u32 {
        match *self {
            Type::Integer { size, .. } | Type::Float { size } => u32::from(size),
            Type::Text { len, .. } => len.max(1),
            Type::VlenText { .. } | Type::References => 16,
        }
    }
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Fixed-size elements, little-endian, one after another.
    Bytes(Vec<u8>),
    /// Strings, for [`Type::VlenText`].
    Strings(Vec<String>),
    /// Lists of datasets, for [`Type::References`].
    References(Vec<Vec<DatasetId>>),
}

/// A named attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub ty: Type,
    /// A scalar (one element, no dimension) when `true`, else a list.
    pub scalar: bool,
    /// Its elements.
    pub value: Value,
}

/// A dataset to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetSpec {
    /// Its element type ([`Type::Integer`], [`Type::Float`] or [`Type::Text`]).
    pub ty: Type,
    /// Its shape, outermost first.
    pub dims: Vec<u64>,
    /// Each dimension's maximum (`None`: unlimited); the shape when `None`.
    pub max: Option<Vec<Option<u64>>>,
    /// Its chunk shape; contiguous when `None` (then neither filters nor an unlimited
    /// dimension).
    pub chunks: Option<Vec<u64>>,
    /// The filters each chunk goes through.
    pub filters: Filters,
    /// Its fill value's bytes, when it has one.
    pub fill: Option<Vec<u8>>,
}

/// What hands a dataset's elements over: it writes them, C order, little-endian, into the
/// sink it is given.
pub type Data<'d> = &'d mut dyn FnMut(&mut dyn Write) -> Result<()>;

/// A dataset written, to refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DatasetId(pub(super) usize);

/// A group made, to put datasets, groups and attributes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupId(pub(super) usize);

/// The filters applied to each chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    /// HDF5's byte shuffle (filter 2): byte `b` of every element in the `b`-th plane.
    pub shuffle: bool,
    /// zlib at this level, 0 to 9 (filter 1).
    pub deflate: Option<u32>,
    /// A Fletcher-32 checksum after each chunk (filter 3).
    pub fletcher32: bool,
}

impl Filters {
    /// Whether any filter is on.
    #[must_use]
    pub fn any(&self) -> bool {
        self.shuffle || self.deflate.is_some() || self.fletcher32
    }

    /// The pipeline message's entries: `(filter id, client values)`.
    pub(super) fn entries(&self, width: u32) -> Vec<(u16, Vec<u32>)> {
        let mut out = Vec::new();
        if self.shuffle {
            out.push((2, vec![width]));
        }
        if let Some(level) = self.deflate {
            out.push((1, vec![level]));
        }
        if self.fletcher32 {
            out.push((3, Vec::new()));
        }
        out
    }
}
