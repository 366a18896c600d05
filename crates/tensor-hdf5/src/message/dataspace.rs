//! The dataspace message: a dataset's or attribute's shape (and maximum shape).

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// A shape: scalar (no dimensions), simple, or null (no elements at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataspace {
    /// The dimensions, slowest first; empty for a scalar.
    pub dims: Vec<u64>,
    /// The maximum dimensions (`u64::MAX`: unlimited), when stated.
    pub max: Option<Vec<u64>>,
    /// A null dataspace: no elements.
    pub null: bool,
}

impl Dataspace {
    /// How many elements (1 for a scalar, 0 for null), or an overflow error.
    pub fn elements(&self) -> Result<u64> {
        if self.null {
            return Ok(0);
        }
        Ok(self
            .dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or(tensor_core::Error::Overflow {
                what: "HDF5 dataspace elements",
            })?)
    }

    /// Decodes the message's bytes.
    pub fn decode(data: &[u8], at: u64, lengths: u8) -> Result<Self> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets: 8,
            lengths,
            what: "dataspace message",
        };
        let version = c.u8()?;
        let rank = c.u8()?;
        let flags = c.u8()?;
        let null = match version {
            1 => {
                c.skip(5)?;
                false
            }
            2 => c.u8()? == 2,
            v => {
                return Err(Error::malformed(
                    "dataspace message",
                    at,
                    format!("version {v}"),
                ));
            }
        };
        if rank > 32 {
            return Err(Error::malformed(
                "dataspace message",
                at,
                format!("{rank} dimensions (HDF5 has at most 32)"),
            ));
        }
        let mut dims = Vec::with_capacity(usize::from(rank));
        for _ in 0..rank {
            dims.push(c.length()?);
        }
        let max = if flags & 1 != 0 {
            let mut m = Vec::with_capacity(usize::from(rank));
            for _ in 0..rank {
                m.push(c.length()?);
            }
            Some(m)
        } else {
            None
        };
        Ok(Dataspace { dims, max, null })
    }
}
