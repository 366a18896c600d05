//! The datatype message: what one element is. Integers and floats of either byte order,
//! fixed-length and variable-length strings, and references are told apart; the other
//! classes (compound, enum, array, opaque, bitfield, time) are named, to be refused by what
//! reads them.

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use tensor_core::ByteOrder;
use tensor_dtype::Dtype;

/// How a fixed-length string is padded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// Ends at the first NUL.
    NullTerminated,
    /// Padded with NULs.
    NullPadded,
    /// Padded with spaces.
    SpacePadded,
}

/// One element's type.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Datatype {
    /// An integer of `size` bytes.
    Integer {
        /// Bytes.
        size: u32,
        /// Signed (two's complement).
        signed: bool,
        /// Byte order.
        order: ByteOrder,
    },
    /// An IEEE float of `size` bytes.
    Float {
        /// Bytes.
        size: u32,
        /// Byte order.
        order: ByteOrder,
    },
    /// A fixed-length string of `size` bytes.
    String {
        /// Bytes.
        size: u32,
        /// Padding.
        padding: Padding,
        /// UTF-8 (else ASCII).
        utf8: bool,
    },
    /// A variable-length string: each element a global heap reference.
    VlenString {
        /// UTF-8 (else ASCII).
        utf8: bool,
    },
    /// An object or region reference.
    Reference {
        /// Bytes.
        size: u32,
    },
    /// A class this reader names but does not read.
    Other {
        /// The class number.
        class: u8,
        /// Bytes.
        size: u32,
    },
}

impl Datatype {
    /// The class's name, as HDF5 names it.
    #[must_use]
    pub fn class_name(&self) -> &'static str {
        match self {
            Datatype::Integer { .. } => "integer",
            Datatype::Float { .. } => "float",
            Datatype::String { .. } => "string",
            Datatype::VlenString { .. } => "variable-length string",
            Datatype::Reference { .. } => "reference",
            Datatype::Other { class, .. } => match class {
                2 => "time",
                4 => "bitfield",
                5 => "opaque",
                6 => "compound",
                8 => "enum",
                9 => "variable-length sequence",
                10 => "array",
                _ => "unknown class",
            },
        }
    }

    /// Bytes of one element as stored (a variable-length string's: its heap reference).
    #[must_use]
    pub fn size(&self) -> u32 {
        match self {
            Datatype::Integer { size, .. }
            | Datatype::Float { size, .. }
            | Datatype::String { size, .. }
            | Datatype::Reference { size }
            | Datatype::Other { size, .. } => *size,
            Datatype::VlenString { .. } => 16,
        }
    }

    /// The dtype and byte order numbers of this type are read as; `None` for the others.
    #[must_use]
    pub fn dtype(&self) -> Option<(Dtype, ByteOrder)> {
        match *self {
            Datatype::Integer {
                size,
                signed,
                order,
            } => Some((
                match (size, signed) {
                    (1, true) => Dtype::Int8,
                    (2, true) => Dtype::Int16,
                    (4, true) => Dtype::Int32,
                    (8, true) => Dtype::Int64,
                    (1, false) => Dtype::Uint8,
                    (2, false) => Dtype::Uint16,
                    (4, false) => Dtype::Uint32,
                    (8, false) => Dtype::Uint64,
                    _ => return None,
                },
                order,
            )),
            Datatype::Float { size, order } => Some((
                match size {
                    2 => Dtype::Float16,
                    4 => Dtype::Float32,
                    8 => Dtype::Float64,
                    _ => return None,
                },
                order,
            )),
            _ => None,
        }
    }

    /// Decodes a datatype from the message's bytes (or an attribute's), returning it and
    /// how many bytes it took.
    pub fn decode(data: &[u8], at: u64) -> Result<(Self, usize)> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets: 8,
            lengths: 8,
            what: "datatype message",
        };
        let head = c.u8()?;
        let (class, version) = (head & 0x0f, head >> 4);
        if !(1..=5).contains(&version) {
            return Err(Error::malformed(
                "datatype message",
                at,
                format!("version {version}"),
            ));
        }
        let bits = c.uint(3)?;
        let size = c.u32()?;
        // Every HDF5 type has at least one byte (the library refuses to make one of none).
        if size == 0 {
            return Err(Error::malformed(
                "datatype message",
                at,
                "an element of 0 bytes",
            ));
        }
        let order = if bits & 1 == 0 {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        let t = match class {
            0 => {
                c.skip(4)?;
                Datatype::Integer {
                    size,
                    signed: bits & 0x08 != 0,
                    order,
                }
            }
            1 => {
                if bits & 0x40 != 0 {
                    return Err(Error::Unsupported("VAX-ordered floats".into()));
                }
                c.skip(12)?;
                Datatype::Float { size, order }
            }
            3 => Datatype::String {
                size,
                padding: match bits & 0x0f {
                    0 => Padding::NullTerminated,
                    1 => Padding::NullPadded,
                    _ => Padding::SpacePadded,
                },
                utf8: (bits >> 4) & 0x0f == 1,
            },
            7 => Datatype::Reference { size },
            9 if bits & 0x0f == 1 => {
                // The base type (a one-byte character) follows.
                let (_, used) = Datatype::decode(&data[c.at..], at + c.offset())?;
                c.skip(used as u64)?;
                Datatype::VlenString {
                    utf8: (bits >> 8) & 0x0f == 1,
                }
            }
            2 | 4 | 5 | 6 | 8 | 9 | 10 => {
                // Their properties are not walked: the message's size bounds them.
                c.at = c.bytes.len();
                Datatype::Other { class, size }
            }
            other => {
                return Err(Error::malformed(
                    "datatype message",
                    at,
                    format!("class {other}"),
                ));
            }
        };
        Ok((t, c.at))
    }
}
