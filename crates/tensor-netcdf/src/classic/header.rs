//! The header of a classic file, parsed and checked: magic and version, the record count,
//! the dimensions, global attributes and variables, each variable's `vsize` and `begin`.
//! Every count is checked against the bytes the file can still hold before anything is
//! allocated for it.

use super::tags::{ABSENT, NC_ATTRIBUTE, NC_DIMENSION, NC_VARIABLE, STREAMING};
use super::version::Version;
use crate::attribute::{Attribute, Values};
use crate::error::{Error, Result};
use crate::model::{Definition, Dimension, Variable};
use crate::types::NcType;
use tensor_core::Limits;

/// A classic header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The version: CDF-1, CDF-2 or CDF-5.
    pub version: Version,
    /// The record count the header states; `None` for a file being written as a stream
    /// (`0xFFFFFFFF`), whose records are counted from its length.
    pub numrecs: Option<u64>,
    /// Dimensions (the unlimited one with length 0 until the records are counted),
    /// attributes and variables.
    pub definition: Definition,
    /// Each variable's `vsize` as stored.
    pub vsize: Vec<u64>,
    /// Each variable's `begin` as stored: where its data (its first record's) starts.
    pub begin: Vec<u64>,
    /// The header's length in bytes.
    pub len: u64,
}

/// Reads a header from `bytes`, the part of a file held (all of it, or a prefix of a
/// remote one). A read past `bytes` is a truncation; past `window` a limit error.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    version: Version,
    file_len: u64,
    window: u64,
}

impl<'a> Cursor<'a> {
    fn offset(&self) -> u64 {
        self.at as u64
    }

    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let at = self.offset();
        let end = at
            .checked_add(n)
            .ok_or(tensor_core::Error::Overflow { what })?;
        if end > self.window && self.window < self.file_len {
            return Err(tensor_core::Error::LimitExceeded {
                what: "NetCDF header bytes",
                requested: end,
                limit: self.window,
            }
            .into());
        }
        if end > self.bytes.len() as u64 {
            return Err(tensor_core::Error::Truncated {
                what,
                offset: at,
                needed: n,
                available: self
                    .file_len
                    .min(self.bytes.len() as u64)
                    .saturating_sub(at),
            }
            .into());
        }
        let s = &self.bytes[self.at..end as usize];
        self.at = end as usize;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    /// A `NON_NEG`: 4 bytes, or 8 in CDF-5.
    fn non_neg(&mut self, what: &'static str) -> Result<u64> {
        if self.version == Version::Cdf5 {
            self.u64(what)
        } else {
            self.u32(what).map(u64::from)
        }
    }

    /// An `OFFSET`: 4 bytes in CDF-1, 8 in the others.
    fn offset_field(&mut self, what: &'static str) -> Result<u64> {
        if self.version == Version::Cdf1 {
            self.u32(what).map(u64::from)
        } else {
            self.u64(what)
        }
    }

    /// Checks that `count` items of at least `min_bytes` each can follow, in the file and
    /// in the header window, before anything is allocated for them.
    fn check_count(&self, count: u64, min_bytes: u64, what: &'static str) -> Result<()> {
        let needed = count.saturating_mul(min_bytes);
        let at = self.offset();
        if at.saturating_add(needed) > self.window && self.window < self.file_len {
            return Err(tensor_core::Error::LimitExceeded {
                what: "NetCDF header bytes",
                requested: at.saturating_add(needed),
                limit: self.window,
            }
            .into());
        }
        if needed > self.file_len.saturating_sub(at) {
            return Err(Error::malformed(
                what,
                at,
                format!(
                    "{count} of them need at least {needed} bytes; the file has {} left",
                    self.file_len.saturating_sub(at)
                ),
            ));
        }
        Ok(())
    }

    /// Zero bytes up to the next multiple of 4.
    fn padding(&mut self, n: u64, what: &'static str) -> Result<()> {
        let pad = (4 - n % 4) % 4;
        self.take(pad, what).map(drop)
    }

    /// A `name`: its length, its UTF-8 bytes, padding.
    fn name(&mut self, what: &'static str) -> Result<String> {
        let at = self.offset();
        let n = self.non_neg(what)?;
        self.check_count(n, 1, what)?;
        let bytes = self.take(n, what)?;
        self.padding(n, what)?;
        let name = std::str::from_utf8(bytes)
            .map_err(|e| Error::malformed(what, at, format!("the name is not UTF-8: {e}")))?;
        if name.is_empty() {
            return Err(Error::malformed(what, at, "an empty name"));
        }
        Ok(name.to_owned())
    }

    /// A list's tag and count: `ABSENT` (both zero) is an empty list; otherwise the tag
    /// must be `tag`.
    fn list(&mut self, tag: u32, what: &'static str) -> Result<u64> {
        let at = self.offset();
        let found = self.u32(what)?;
        let n = self.non_neg(what)?;
        if found == ABSENT {
            if n != 0 {
                return Err(Error::malformed(
                    what,
                    at,
                    format!("an absent list with a count of {n}"),
                ));
            }
            return Ok(0);
        }
        if found != tag {
            return Err(Error::malformed(
                what,
                at,
                format!("tag {found:#010x} where {tag:#010x} or an absent list belongs"),
            ));
        }
        Ok(n)
    }

    fn nc_type(&mut self, what: &'static str) -> Result<NcType> {
        let at = self.offset();
        let code = self.u32(what)?;
        let t = NcType::from_code(code)
            .ok_or_else(|| Error::malformed(what, at, format!("type code {code} is no type")))?;
        if !t.in_classic(self.version.number()) {
            return Err(Error::malformed(
                what,
                at,
                format!("type {t} is not in a {} file", self.version),
            ));
        }
        Ok(t)
    }

    fn attributes(&mut self, of: &str) -> Result<Vec<Attribute>> {
        let n = self.list(NC_ATTRIBUTE, "attribute list")?;
        // A name (4 + 4 bytes at least), a type, a count.
        self.check_count(n, 16, "attribute list")?;
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let at = self.offset();
            let name = self.name("attribute name")?;
            let t = self.nc_type("attribute type")?;
            let count = self.non_neg("attribute length")?;
            let len = count
                .checked_mul(t.size())
                .ok_or(tensor_core::Error::Overflow {
                    what: "attribute length",
                })?;
            self.check_count(len, 1, "attribute values")?;
            let bytes = self.take(len, "attribute values")?;
            self.padding(len, "attribute padding")?;
            if out.iter().any(|a: &Attribute| a.name == name) {
                return Err(Error::malformed(
                    format!("attribute {name:?} of {of}"),
                    at,
                    "a second attribute of the same name",
                ));
            }
            out.push(Attribute {
                values: Values::from_be(t, bytes)?,
                name,
            });
        }
        Ok(out)
    }
}

/// Parses the header of a classic file from `bytes` (the whole file, or the prefix of a
/// `file_len`-byte file held so far), within `limits`.
pub fn parse(bytes: &[u8], file_len: u64, limits: &Limits) -> Result<Header> {
    let version = match bytes.get(..4) {
        Some([b'C', b'D', b'F', v]) => Version::from_byte(*v).ok_or_else(|| {
            Error::Unsupported(format!(
                "classic format version {v} is not one of NetCDF's (1, 2 and 5 are)"
            ))
        })?,
        _ if bytes.len() < 4 && b"CDF".starts_with(&bytes[..bytes.len().min(3)]) => {
            return Err(tensor_core::Error::Truncated {
                what: "NetCDF magic",
                offset: 0,
                needed: 4,
                available: bytes.len() as u64,
            }
            .into());
        }
        _ => {
            return Err(Error::BadMagic {
                found: bytes[..bytes.len().min(8)].to_vec(),
            });
        }
    };
    let mut c = Cursor {
        bytes,
        at: 4,
        version,
        file_len,
        window: limits.max_header_bytes,
    };
    let numrecs = c.non_neg("record count")?;
    let streaming = if version == Version::Cdf5 {
        u64::MAX
    } else {
        u64::from(STREAMING)
    };
    let numrecs = (numrecs != streaming).then_some(numrecs);

    let n = c.list(NC_DIMENSION, "dimension list")?;
    c.check_count(n, 12, "dimension list")?;
    let mut dimensions: Vec<Dimension> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let at = c.offset();
        let name = c.name("dimension name")?;
        let len = c.non_neg("dimension length")?;
        let unlimited = len == 0;
        if unlimited && dimensions.iter().any(|d| d.unlimited) {
            return Err(Error::malformed(
                format!("dimension {i} ({name:?})"),
                at,
                "a second unlimited dimension (a classic file has at most one)",
            ));
        }
        if dimensions.iter().any(|d| d.name == name) {
            return Err(Error::malformed(
                format!("dimension {i} ({name:?})"),
                at,
                "a second dimension of the same name",
            ));
        }
        dimensions.push(Dimension {
            name,
            len,
            unlimited,
        });
    }

    let attributes = c.attributes("the file")?;

    let n = c.list(NC_VARIABLE, "variable list")?;
    c.check_count(n, 28, "variable list")?;
    limits.check_tensor_count(n)?;
    let mut variables: Vec<Variable> = Vec::with_capacity(n as usize);
    let (mut vsize, mut begin) = (
        Vec::with_capacity(n as usize),
        Vec::with_capacity(n as usize),
    );
    for i in 0..n {
        let at = c.offset();
        let name = c.name("variable name")?;
        let what = || format!("variable {i} ({name:?})");
        let rank = c.non_neg("variable rank")?;
        let id_bytes = if version == Version::Cdf5 { 8 } else { 4 };
        c.check_count(rank, id_bytes, "variable dimension ids")?;
        let mut dims = Vec::with_capacity(rank as usize);
        for k in 0..rank {
            let id_at = c.offset();
            let id = c.non_neg("dimension id")?;
            let d = usize::try_from(id)
                .ok()
                .filter(|&d| d < dimensions.len())
                .ok_or_else(|| {
                    Error::malformed(
                        what(),
                        id_at,
                        format!(
                            "dimension id {id} where the file has {} dimensions",
                            dimensions.len()
                        ),
                    )
                })?;
            if dimensions[d].unlimited && k != 0 {
                return Err(Error::malformed(
                    what(),
                    id_at,
                    format!(
                        "the unlimited dimension {:?} is its dimension {k}, not its first",
                        dimensions[d].name
                    ),
                ));
            }
            dims.push(d);
        }
        let var_attributes = c.attributes(&what())?;
        let nc_type = c.nc_type("variable type")?;
        vsize.push(c.non_neg("variable size")?);
        begin.push(c.offset_field("variable begin")?);
        if variables.iter().any(|v| v.name == name) {
            return Err(Error::malformed(
                what(),
                at,
                "a second variable of the same name",
            ));
        }
        variables.push(Variable {
            name,
            dims,
            attributes: var_attributes,
            nc_type,
        });
    }
    Ok(Header {
        version,
        numrecs,
        definition: Definition {
            dimensions,
            attributes,
            variables,
            format: Some(version.data_model().to_owned()),
        },
        vsize,
        begin,
        len: c.offset(),
    })
}
