//! Writes a classic file streamed: the header, then each variable's data as its caller
//! hands it over, a record variable's records each put in its place in the records. Memory
//! stays within what the caller hands over at once, whatever the file's size.
//!
//! The layout is netCDF-C's with its default alignment: the data right after the header,
//! each variable's data padded to 4 bytes with its fill value, a file with one record
//! variable packing its records unpadded (and ending with its last slab, unpadded).

use super::layout::Layout;
use super::tags::{ABSENT, NC_ATTRIBUTE, NC_DIMENSION, NC_VARIABLE};
use super::version::Version;
use crate::attribute::Attribute;
use crate::error::{Error, Result};
use crate::model::Definition;
use crate::types::NcType;
use std::io::{Seek, SeekFrom, Write};

/// What was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// The version chosen.
    pub version: Version,
    /// The file's length.
    pub len: u64,
}

/// Writes `def` (its unlimited dimension's length the number of records) to `out` as a
/// classic file of `version`; when `None`, of the version `def.format` names if it holds
/// the data, else of the first that does (CDF-1, then CDF-2 for offsets past 2 GiB, then
/// CDF-5 for its types and sizes). `data` is called
/// once for each variable, in order, with a sink taking the variable's elements in C order,
/// big-endian (a record variable's records one after another); it must write exactly the
/// variable's bytes.
pub fn write<W: Write + Seek + ?Sized>(
    out: &mut W,
    def: &Definition,
    version: Option<Version>,
    data: &mut dyn FnMut(usize, &mut dyn Write) -> Result<()>,
) -> Result<Written> {
    check(def)?;
    let layout = Layout::of(def)?;
    let least = least_version(def, &layout)?;
    let version = match version {
        Some(v) if v < least => {
            return Err(Error::CannotWrite(format!(
                "these variables need {least} at least, not {v}"
            )));
        }
        Some(v) => v,
        None => def
            .format
            .as_deref()
            .and_then(Version::from_data_model)
            .filter(|&v| v >= least)
            .unwrap_or(least),
    };
    let begins = place(def, &layout, version)?;
    let numrecs = def
        .dimensions
        .iter()
        .find(|d| d.unlimited)
        .map_or(0, |d| d.len);
    let header = encode_header(def, &layout, version, numrecs, &begins.begin)?;
    debug_assert_eq!(header.len() as u64, begins.header_len);
    let io = |e| tensor_core::Error::io("writing NetCDF", e);
    out.write_all(&header).map_err(io)?;
    let mut end = begins.header_len;
    for (i, v) in def.variables.iter().enumerate() {
        let records = if layout.record[i] { numrecs } else { 1 };
        let mut sink = Slabs {
            out: &mut *out,
            begin: begins.begin[i],
            slab: layout.slab[i],
            padded: layout.padded[i],
            recsize: layout.recsize,
            total: layout.slab[i]
                .checked_mul(records)
                .ok_or(tensor_core::Error::Overflow {
                    what: "NetCDF variable size",
                })?,
            at: 0,
            fill: v.fill_be(),
            // One record variable alone: its slabs are packed, unpadded, and the file ends
            // with its last one.
            pad: !layout.record[i] || layout.recsize != layout.slab[i],
        };
        if sink.total == 0 {
            continue;
        }
        data(i, &mut sink)?;
        if sink.at != sink.total {
            return Err(Error::CannotWrite(format!(
                "variable {:?}: {} bytes were given for its {}",
                v.name, sink.at, sink.total
            )));
        }
        let padded = if sink.pad {
            layout.padded[i]
        } else {
            layout.slab[i]
        };
        end = end.max(begins.begin[i] + (records - 1) * layout.recsize + padded);
    }
    out.seek(SeekFrom::Start(end)).map_err(io)?;
    Ok(Written { version, len: end })
}

/// Refuses what no classic file can say: repeated or empty names, dimension ids out of
/// range, an unlimited dimension that is not a variable's first, a fixed dimension of
/// length 0 (0 is how a classic file marks the unlimited one), strings.
fn check(def: &Definition) -> Result<()> {
    let bad = |what: String| Err(Error::CannotWrite(what));
    let mut unlimited = 0;
    for (i, d) in def.dimensions.iter().enumerate() {
        if d.name.is_empty() || def.dimensions[..i].iter().any(|e| e.name == d.name) {
            return bad(format!(
                "dimension {i}: an empty or repeated name {:?}",
                d.name
            ));
        }
        if d.unlimited {
            unlimited += 1;
        } else if d.len == 0 {
            return bad(format!(
                "dimension {:?} of length 0 (a classic file's only dimension of length 0 is its unlimited one)",
                d.name
            ));
        }
    }
    if unlimited > 1 {
        return bad("more than one unlimited dimension (a classic file has one)".into());
    }
    check_attributes(&def.attributes, "the file")?;
    for (i, v) in def.variables.iter().enumerate() {
        if v.name.is_empty() || def.variables[..i].iter().any(|w| w.name == v.name) {
            return bad(format!(
                "variable {i}: an empty or repeated name {:?}",
                v.name
            ));
        }
        if v.name.contains('/') {
            return bad(format!(
                "variable {:?}: a name with a `/` (a NetCDF-4 group's variable; NetCDF-3 has no groups)",
                v.name
            ));
        }
        if v.nc_type == NcType::String {
            return bad(format!(
                "variable {:?} of strings (a classic file holds char arrays)",
                v.name
            ));
        }
        for (k, &d) in v.dims.iter().enumerate() {
            let Some(dim) = def.dimensions.get(d) else {
                return bad(format!(
                    "variable {:?}: dimension id {d} is no dimension",
                    v.name
                ));
            };
            if dim.unlimited && k != 0 {
                return bad(format!(
                    "variable {:?}: the unlimited dimension {:?} must be its first",
                    v.name, dim.name
                ));
            }
        }
        check_attributes(&v.attributes, &format!("variable {:?}", v.name))?;
    }
    Ok(())
}

fn check_attributes(attributes: &[Attribute], of: &str) -> Result<()> {
    for (i, a) in attributes.iter().enumerate() {
        if a.name.is_empty() || attributes[..i].iter().any(|b| b.name == a.name) {
            return Err(Error::CannotWrite(format!(
                "{of}: an empty or repeated attribute name {:?}",
                a.name
            )));
        }
    }
    Ok(())
}

/// The first version that holds `def`: CDF-5 for the unsigned and 64-bit types and for
/// counts or slabs past 32 bits, CDF-2 when data would start past CDF-1's 2 GiB offsets.
fn least_version(def: &Definition, layout: &Layout) -> Result<Version> {
    let types = def
        .variables
        .iter()
        .map(|v| v.nc_type)
        .chain(def.attributes.iter().map(|a| a.values.nc_type()))
        .chain(
            def.variables
                .iter()
                .flat_map(|v| v.attributes.iter().map(|a| a.values.nc_type())),
        );
    let mut wide = false;
    for t in types {
        if !t.in_classic(5) {
            return Err(Error::CannotWrite(format!(
                "{t} values (a classic file holds char text)"
            )));
        }
        wide |= !t.in_classic(2);
    }
    let big = u64::from(u32::MAX) - 3;
    wide |= def
        .dimensions
        .iter()
        .any(|d| d.len > u64::from(i32::MAX as u32))
        || layout.padded.iter().any(|&p| p > big)
        || layout.recsize > big;
    if wide {
        return Ok(Version::Cdf5);
    }
    let far = place(def, layout, Version::Cdf1)?;
    let last = far.begin.iter().copied().max().unwrap_or(0);
    Ok(if last > u64::from(i32::MAX as u32) {
        Version::Cdf2
    } else {
        Version::Cdf1
    })
}

/// Where the header ends and each variable's data begins.
struct Placed {
    header_len: u64,
    begin: Vec<u64>,
}

/// Places the data: fixed-size variables in order after the header, then the records.
fn place(def: &Definition, layout: &Layout, version: Version) -> Result<Placed> {
    let header_len = header_len(def, version)?;
    let overflow = || tensor_core::Error::Overflow {
        what: "NetCDF file size",
    };
    let mut begin = vec![0; def.variables.len()];
    let mut at = header_len;
    for i in (0..def.variables.len()).filter(|&i| !layout.record[i]) {
        begin[i] = at;
        at = at.checked_add(layout.padded[i]).ok_or_else(overflow)?;
    }
    let single = layout.record.iter().filter(|&&r| r).count() == 1;
    for i in (0..def.variables.len()).filter(|&i| layout.record[i]) {
        begin[i] = at;
        let step = if single {
            layout.slab[i]
        } else {
            layout.padded[i]
        };
        at = at.checked_add(step).ok_or_else(overflow)?;
    }
    Ok(Placed { header_len, begin })
}

/// The header's length for `version` (the same whatever the offsets).
fn header_len(def: &Definition, version: Version) -> Result<u64> {
    let layout = Layout::of(def)?;
    let zeros = vec![0; def.variables.len()];
    Ok(encode_header(def, &layout, version, 0, &zeros)?.len() as u64)
}

/// The header's bytes.
fn encode_header(
    def: &Definition,
    layout: &Layout,
    version: Version,
    numrecs: u64,
    begin: &[u64],
) -> Result<Vec<u8>> {
    let mut h = Header {
        out: b"CDF".to_vec(),
        version,
    };
    h.out.push(version.number());
    h.non_neg(numrecs, "record count")?;
    h.list(NC_DIMENSION, def.dimensions.len())?;
    for d in &def.dimensions {
        h.name(&d.name)?;
        h.non_neg(if d.unlimited { 0 } else { d.len }, "dimension length")?;
    }
    h.attributes(&def.attributes)?;
    h.list(NC_VARIABLE, def.variables.len())?;
    for (i, v) in def.variables.iter().enumerate() {
        h.name(&v.name)?;
        h.non_neg(v.dims.len() as u64, "rank")?;
        for &d in &v.dims {
            h.non_neg(d as u64, "dimension id")?;
        }
        h.attributes(&v.attributes)?;
        h.out.extend_from_slice(&v.nc_type.code().to_be_bytes());
        let vsize = match version {
            Version::Cdf5 => layout.padded[i],
            _ => layout.padded[i].min(u64::from(u32::MAX)),
        };
        h.non_neg(vsize, "variable size")?;
        if version == Version::Cdf1 {
            let b = u32::try_from(begin[i]).map_err(|_| {
                Error::CannotWrite(format!(
                    "variable {:?} begins past CDF-1's 4 GiB offsets: write CDF-2",
                    v.name
                ))
            })?;
            h.out.extend_from_slice(&b.to_be_bytes());
        } else {
            h.out.extend_from_slice(&begin[i].to_be_bytes());
        }
    }
    Ok(h.out)
}

/// A header being encoded.
struct Header {
    out: Vec<u8>,
    version: Version,
}

impl Header {
    fn non_neg(&mut self, n: u64, what: &str) -> Result<()> {
        if self.version == Version::Cdf5 {
            self.out.extend_from_slice(&n.to_be_bytes());
        } else {
            let n = u32::try_from(n).map_err(|_| {
                Error::CannotWrite(format!(
                    "{what} {n} does not fit {} (write CDF-5)",
                    self.version
                ))
            })?;
            self.out.extend_from_slice(&n.to_be_bytes());
        }
        Ok(())
    }

    fn list(&mut self, tag: u32, n: usize) -> Result<()> {
        let tag = if n == 0 { ABSENT } else { tag };
        self.out.extend_from_slice(&tag.to_be_bytes());
        self.non_neg(n as u64, "list length")
    }

    fn padded(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        let pad = (4 - bytes.len() % 4) % 4;
        self.out.extend_from_slice(&[0; 3][..pad]);
    }

    fn name(&mut self, name: &str) -> Result<()> {
        self.non_neg(name.len() as u64, "name length")?;
        self.padded(name.as_bytes());
        Ok(())
    }

    fn attributes(&mut self, attributes: &[Attribute]) -> Result<()> {
        self.list(NC_ATTRIBUTE, attributes.len())?;
        for a in attributes {
            self.name(&a.name)?;
            self.out
                .extend_from_slice(&a.values.nc_type().code().to_be_bytes());
            self.non_neg(a.values.len() as u64, "attribute length")?;
            let bytes = a.values.to_be_bytes()?;
            self.padded(&bytes);
        }
        Ok(())
    }
}

/// The sink a variable's data is written through: it puts each slab where it belongs and
/// pads it.
struct Slabs<'w, W: Write + Seek + ?Sized> {
    out: &'w mut W,
    begin: u64,
    slab: u64,
    padded: u64,
    recsize: u64,
    total: u64,
    at: u64,
    fill: Vec<u8>,
    pad: bool,
}

impl<W: Write + Seek + ?Sized> Write for Slabs<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.at >= self.total && !buf.is_empty() {
            return Err(std::io::Error::other(format!(
                "more than the variable's {} bytes",
                self.total
            )));
        }
        let record = self.at / self.slab;
        let within = self.at % self.slab;
        if within == 0 {
            self.out
                .seek(SeekFrom::Start(self.begin + record * self.recsize))?;
        }
        let n = buf.len().min((self.slab - within) as usize);
        self.out.write_all(&buf[..n])?;
        self.at += n as u64;
        if self.pad && self.at.is_multiple_of(self.slab) {
            let pad = self.padded - self.slab;
            let fill: Vec<u8> = self
                .fill
                .iter()
                .copied()
                .cycle()
                .take(pad as usize)
                .collect();
            self.out.write_all(&fill)?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
