//! The link message: a named member of a new-style group.

use crate::cursor::Cursor;
use crate::error::{Error, Result};

/// Where a link leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An object header in this file.
    Hard(u64),
    /// A path in this file.
    Soft(String),
    /// Another file.
    External,
}

/// A named link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Its name.
    pub name: String,
    /// Where it leads.
    pub target: Target,
    /// Its creation order, when the group tracks it.
    pub order: Option<u64>,
}

impl Link {
    /// Decodes the message's bytes.
    pub fn decode(data: &[u8], at: u64, offsets: u8) -> Result<Self> {
        let mut c = Cursor {
            bytes: data,
            at: 0,
            offsets,
            lengths: 8,
            what: "link message",
        };
        let version = c.u8()?;
        if version != 1 {
            return Err(Error::malformed(
                "link message",
                at,
                format!("version {version}"),
            ));
        }
        let flags = c.u8()?;
        let kind = if flags & 0x08 != 0 { c.u8()? } else { 0 };
        let order = if flags & 0x04 != 0 {
            Some(c.u64()?)
        } else {
            None
        };
        if flags & 0x10 != 0 {
            c.skip(1)?;
        }
        let len = c.uint(1 << (flags & 0x3))?;
        let name = std::str::from_utf8(c.take(len)?)
            .map_err(|e| {
                Error::malformed("link message", at, format!("a name that is not UTF-8: {e}"))
            })?
            .to_owned();
        let target = match kind {
            0 => Target::Hard(c.address()?.ok_or_else(|| {
                Error::malformed(
                    "link message",
                    at,
                    format!("link {name:?} to an undefined address"),
                )
            })?),
            1 => {
                let n = c.u16()?;
                Target::Soft(String::from_utf8_lossy(c.take(u64::from(n))?).into_owned())
            }
            64 => Target::External,
            k => {
                return Err(Error::malformed(
                    "link message",
                    at,
                    format!("link type {k}"),
                ));
            }
        };
        Ok(Link {
            name,
            target,
            order,
        })
    }
}
