//! The filter pipeline message: the filters a chunked dataset's chunks went through
//! (deflate 1, shuffle 2, fletcher32 3, szip 4, nbit 5, scaleoffset 6, and registered ones).

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// One filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Its id.
    pub id: u16,
    /// Whether the chunk may skip it (bit 0 of its flags).
    pub optional: bool,
    /// Its parameters.
    pub values: Vec<u32>,
}

impl Filter {
    /// The filter's name, as HDF5 names its own.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self.id {
            1 => "deflate",
            2 => "shuffle",
            3 => "fletcher32",
            4 => "szip",
            5 => "nbit",
            6 => "scaleoffset",
            32001 => "blosc",
            32004 => "lz4",
            32015 => "zstd",
            _ => "a registered filter",
        }
    }

    /// Decodes the message's bytes.
    pub fn decode_all(data: &[u8], at: u64) -> Result<Vec<Filter>> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets: 8,
            lengths: 8,
            what: "filter pipeline message",
        };
        let version = c.u8()?;
        let count = c.u8()?;
        if version == 1 {
            c.skip(6)?;
        } else if version != 2 {
            return Err(Error::malformed(
                "filter pipeline message",
                at,
                format!("version {version}"),
            ));
        }
        let mut out = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let id = c.u16()?;
            let name_len = if version == 1 || id >= 256 {
                c.u16()?
            } else {
                0
            };
            let flags = c.u16()?;
            let n = c.u16()?;
            if name_len > 0 {
                let len = if version == 1 {
                    u64::from(name_len).div_ceil(8) * 8
                } else {
                    u64::from(name_len)
                };
                c.skip(len)?;
            }
            c.check_count(u64::from(n), 4)?;
            let mut values = Vec::with_capacity(usize::from(n));
            for _ in 0..n {
                values.push(c.u32()?);
            }
            if version == 1 && n % 2 == 1 {
                c.skip(4)?;
            }
            out.push(Filter {
                id,
                optional: flags & 1 != 0,
                values,
            });
        }
        Ok(out)
    }
}
