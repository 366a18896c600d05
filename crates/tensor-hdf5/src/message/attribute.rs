//! The attribute message: a named value stored in an object's header (compact storage).

use super::{Dataspace, Datatype};
use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// An attribute: its name, type, shape and raw elements (borrowed from the file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub datatype: Datatype,
    /// Its shape.
    pub dataspace: Dataspace,
    /// Its elements as stored (a variable-length string's are heap references).
    pub data: &'a [u8],
}

/// `n` rounded up to a multiple of 8 (version 1 pads each part so).
fn pad8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

impl<'a> Attribute<'a> {
    /// Decodes the message's bytes.
    pub fn decode(data: &'a [u8], at: u64, lengths: u8) -> Result<Self> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets: 8,
            lengths,
            what: "attribute message",
        };
        let version = c.u8()?;
        if !(1..=3).contains(&version) {
            return Err(Error::malformed(
                "attribute message",
                at,
                format!("version {version}"),
            ));
        }
        let flags = c.u8()?;
        if version >= 2 && flags & 0x03 != 0 {
            return Err(Error::Unsupported(
                "an attribute of a shared datatype or dataspace".into(),
            ));
        }
        let name_len = u64::from(c.u16()?);
        let type_len = u64::from(c.u16()?);
        let space_len = u64::from(c.u16()?);
        if version == 3 {
            c.skip(1)?;
        }
        let padded = |n: u64| if version == 1 { pad8(n) } else { n };
        let name_bytes = c.take(padded(name_len))?;
        let name = name_bytes[..name_len as usize]
            .split(|&b| b == 0)
            .next()
            .unwrap_or_default();
        let name = std::str::from_utf8(name)
            .map_err(|e| {
                Error::malformed(
                    "attribute message",
                    at,
                    format!("a name that is not UTF-8: {e}"),
                )
            })?
            .to_owned();
        let type_at = at + c.offset();
        let type_bytes = c.take(padded(type_len))?;
        let (datatype, _) = Datatype::decode(&type_bytes[..type_len as usize], type_at)?;
        let space_at = at + c.offset();
        let space_bytes = c.take(padded(space_len))?;
        let dataspace = Dataspace::decode(&space_bytes[..space_len as usize], space_at, lengths)?;
        let n = dataspace
            .elements()?
            .checked_mul(u64::from(datatype.size()))
            .ok_or(tensor_core::Error::Overflow {
                what: "HDF5 attribute size",
            })?;
        let data = c.take(n)?;
        Ok(Attribute {
            name,
            datatype,
            dataspace,
            data,
        })
    }
}
