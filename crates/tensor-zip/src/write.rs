//! Writing an archive of stored entries, as Python's `zipfile` writes numpy's `.npz`: each
//! entry's local header, its bytes streamed while their CRC-32 is computed, the header's CRC
//! filled in after; then the central directory, with zip64 records where a size, an offset
//! or the count needs them.

use crate::error::{Error, Result};
use crate::read::LOCAL;
use std::io::{Seek, SeekFrom, Write};

/// What the directory records of an entry written.
struct Written {
    name: String,
    crc32: u32,
    size: u64,
    header_offset: u64,
    zip64: bool,
}

/// Writes entries, stored, to `out` (at its current position, taken as the archive's start).
pub struct Writer<W: Write + Seek> {
    out: W,
    start: u64,
    at: u64,
    written: Vec<Written>,
    names: std::collections::HashSet<String>,
}

/// "Version needed to extract": 2.0 (deflate and folders), 4.5 with zip64.
const VERSION: u16 = 20;
const VERSION_ZIP64: u16 = 45;
/// Flag bit 11: the name is UTF-8.
const UTF8: u16 = 1 << 11;
/// 1980-01-01 00:00, the earliest time a zip records: entries carry no time of ours, so that
/// the same tensors give the same bytes.
const DOS_DATE: u16 = (1 << 5) | 1;
const LIMIT32: u64 = 0xFFFF_FFFF;

impl<W: Write + Seek> Writer<W> {
    /// A writer at `out`'s current position.
    pub fn new(mut out: W) -> Result<Self> {
        let start = out
            .stream_position()
            .map_err(io("finding where the zip starts"))?;
        Ok(Writer {
            out,
            start,
            at: 0,
            written: Vec::new(),
            names: std::collections::HashSet::new(),
        })
    }

    /// Adds an entry called `name` of `size` bytes, stored; `body` writes exactly those
    /// bytes to the writer it is given, which computes their CRC-32 as they go.
    pub fn stored(
        &mut self,
        name: &str,
        size: u64,
        body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        if crate::read::unsafe_name(name) {
            // What is written must read back, and the reader refuses such names.
            return Err(Error::Unsupported {
                name: name.into(),
                what: "an entry name that is empty, absolute, holds a NUL or a backslash, or climbs out of its folder".into(),
            });
        }
        if !self.names.insert(name.to_owned()) {
            return Err(Error::Unsupported {
                name: name.into(),
                what: "a second entry of the same name".into(),
            });
        }
        let name_len = u16::try_from(name.len()).map_err(|_| Error::Unsupported {
            name: name.into(),
            what: "a name over 65535 bytes".into(),
        })?;
        let header_offset = self.at;
        // Python's zipfile decides on zip64 before writing: sizes over 2 GiB minus a margin
        // it keeps for itself. Here the size is known, so only what needs it has it.
        let zip64 = size >= LIMIT32;
        let mut header = Vec::with_capacity(30 + name.len() + 20);
        header.extend_from_slice(&LOCAL.to_le_bytes());
        header.extend_from_slice(&(if zip64 { VERSION_ZIP64 } else { VERSION }).to_le_bytes());
        header.extend_from_slice(&UTF8.to_le_bytes());
        header.extend_from_slice(&0u16.to_le_bytes()); // stored
        header.extend_from_slice(&0u16.to_le_bytes()); // time
        header.extend_from_slice(&DOS_DATE.to_le_bytes());
        let crc_at = header.len() as u64;
        header.extend_from_slice(&0u32.to_le_bytes()); // CRC-32, filled in after
        let small = if zip64 { u32::MAX } else { size as u32 };
        header.extend_from_slice(&small.to_le_bytes());
        header.extend_from_slice(&small.to_le_bytes());
        header.extend_from_slice(&name_len.to_le_bytes());
        header.extend_from_slice(&(if zip64 { 20u16 } else { 0 }).to_le_bytes());
        header.extend_from_slice(name.as_bytes());
        if zip64 {
            header.extend_from_slice(&1u16.to_le_bytes());
            header.extend_from_slice(&16u16.to_le_bytes());
            header.extend_from_slice(&size.to_le_bytes());
            header.extend_from_slice(&size.to_le_bytes());
        }
        self.put(&header)?;
        let mut hashing = Hashing {
            out: &mut self.out,
            crc: flate2::Crc::new(),
            len: 0,
        };
        body(&mut hashing).map_err(io("writing a zip entry"))?;
        let (crc32, len) = (hashing.crc.sum(), hashing.len);
        if len != size {
            return Err(Error::Unsupported {
                name: name.into(),
                what: format!("an entry said to be {size} bytes whose writer wrote {len}"),
            });
        }
        self.at += len;
        let end = self.start + self.at;
        self.out
            .seek(SeekFrom::Start(self.start + header_offset + crc_at))
            .and_then(|_| self.out.write_all(&crc32.to_le_bytes()))
            .and_then(|()| self.out.seek(SeekFrom::Start(end)).map(drop))
            .map_err(io("filling in a zip entry's CRC-32"))?;
        self.written.push(Written {
            name: name.into(),
            crc32,
            size,
            header_offset,
            zip64,
        });
        Ok(())
    }

    /// Writes the central directory and the end records; returns the output.
    pub fn finish(mut self) -> Result<W> {
        let cd_offset = self.at;
        let mut cd = Vec::new();
        for w in &self.written {
            let far = w.header_offset >= LIMIT32;
            let mut extra = Vec::new();
            if w.zip64 || far {
                extra.extend_from_slice(&1u16.to_le_bytes());
                let n = if w.zip64 { 16u16 } else { 0 } + if far { 8 } else { 0 };
                extra.extend_from_slice(&n.to_le_bytes());
                if w.zip64 {
                    extra.extend_from_slice(&w.size.to_le_bytes());
                    extra.extend_from_slice(&w.size.to_le_bytes());
                }
                if far {
                    extra.extend_from_slice(&w.header_offset.to_le_bytes());
                }
            }
            let version = if w.zip64 || far {
                VERSION_ZIP64
            } else {
                VERSION
            };
            cd.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            cd.extend_from_slice(&version.to_le_bytes()); // made by (MS-DOS)
            cd.extend_from_slice(&version.to_le_bytes());
            cd.extend_from_slice(&UTF8.to_le_bytes());
            cd.extend_from_slice(&0u16.to_le_bytes());
            cd.extend_from_slice(&0u16.to_le_bytes());
            cd.extend_from_slice(&DOS_DATE.to_le_bytes());
            cd.extend_from_slice(&w.crc32.to_le_bytes());
            let small = if w.zip64 { u32::MAX } else { w.size as u32 };
            cd.extend_from_slice(&small.to_le_bytes());
            cd.extend_from_slice(&small.to_le_bytes());
            cd.extend_from_slice(&(w.name.len() as u16).to_le_bytes());
            cd.extend_from_slice(&(extra.len() as u16).to_le_bytes());
            cd.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
            cd.extend_from_slice(&(0o600u32 << 16).to_le_bytes()); // rw------- as Unix mode
            let offset = if far {
                u32::MAX
            } else {
                w.header_offset as u32
            };
            cd.extend_from_slice(&offset.to_le_bytes());
            cd.extend_from_slice(w.name.as_bytes());
            cd.extend_from_slice(&extra);
        }
        let count = self.written.len() as u64;
        let cd_len = cd.len() as u64;
        let zip64 = count >= 0xFFFF || cd_offset >= LIMIT32 || cd_len >= LIMIT32;
        if zip64 {
            let end64 = cd_offset + cd_len;
            cd.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
            cd.extend_from_slice(&44u64.to_le_bytes());
            cd.extend_from_slice(&VERSION_ZIP64.to_le_bytes());
            cd.extend_from_slice(&VERSION_ZIP64.to_le_bytes());
            cd.extend_from_slice(&[0; 8]);
            cd.extend_from_slice(&count.to_le_bytes());
            cd.extend_from_slice(&count.to_le_bytes());
            cd.extend_from_slice(&cd_len.to_le_bytes());
            cd.extend_from_slice(&cd_offset.to_le_bytes());
            cd.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            cd.extend_from_slice(&0u32.to_le_bytes());
            cd.extend_from_slice(&end64.to_le_bytes());
            cd.extend_from_slice(&1u32.to_le_bytes());
        }
        cd.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        cd.extend_from_slice(&[0; 4]);
        let short = |v: u64, max: u64| if zip64 { max } else { v };
        let n = short(count, 0xFFFF) as u16;
        cd.extend_from_slice(&n.to_le_bytes());
        cd.extend_from_slice(&n.to_le_bytes());
        cd.extend_from_slice(&(short(cd_len, LIMIT32) as u32).to_le_bytes());
        cd.extend_from_slice(&(short(cd_offset, LIMIT32) as u32).to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        self.put(&cd)?;
        self.out.flush().map_err(io("writing a zip archive"))?;
        Ok(self.out)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(io("writing a zip archive"))?;
        self.at += bytes.len() as u64;
        Ok(())
    }
}

/// A writer that passes bytes on while computing their CRC-32 and count.
struct Hashing<'w, W: Write> {
    out: &'w mut W,
    crc: flate2::Crc,
    len: u64,
}

impl<W: Write> Write for Hashing<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

fn io(context: &'static str) -> impl Fn(std::io::Error) -> Error {
    move |source| {
        Error::Core(tensor_core::Error::Io {
            context: context.into(),
            source,
        })
    }
}
