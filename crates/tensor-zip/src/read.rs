//! Reading an archive: its end records, its central directory and each entry's local header,
//! every size checked against the archive and the limits before anything is allocated.

use crate::error::{Error, Result};
use std::borrow::Cow;
use std::collections::BTreeMap;
use tensor_core::{Limits, checked};

/// The end of central directory record's signature, `PK\x05\x06`.
const END: u32 = 0x0605_4b50;
/// The zip64 end of central directory locator's, `PK\x06\x07`.
const END64_LOCATOR: u32 = 0x0706_4b50;
/// The zip64 end of central directory record's, `PK\x06\x06`.
const END64: u32 = 0x0606_4b50;
/// A central directory entry's, `PK\x01\x02`.
const CENTRAL: u32 = 0x0201_4b50;
/// A local file header's, `PK\x03\x04`.
pub(crate) const LOCAL: u32 = 0x0403_4b50;
/// The fixed part of the records, in bytes.
const END_LEN: usize = 22;
const END64_LOCATOR_LEN: usize = 20;
const END64_LEN: u64 = 56;
const CENTRAL_LEN: u64 = 46;
const LOCAL_LEN: u64 = 30;
/// The extra field that holds zip64 sizes and offsets.
const ZIP64_EXTRA: u16 = 0x0001;

/// How an entry's bytes are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// As they are (method 0): handed out zero-copy.
    Stored,
    /// Raw deflate (method 8).
    Deflated,
}

/// One entry of the central directory, checked against its local header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name, as stored (`archive/data.pkl`).
    pub name: String,
    /// How its bytes are stored.
    pub method: Method,
    /// The CRC-32 of its uncompressed bytes, as recorded.
    pub crc32: u32,
    /// Its stored length in bytes.
    pub compressed_size: u64,
    /// Its uncompressed length in bytes.
    pub size: u64,
    /// Where its local header starts.
    pub header_offset: u64,
    /// Where its stored bytes start, after the local header.
    pub data_offset: u64,
}

/// A zip archive over its bytes (usually a mapped file), its entries in central directory
/// order.
#[derive(Clone, Debug)]
pub struct Archive<'a> {
    bytes: &'a [u8],
    entries: Vec<Entry>,
    by_name: BTreeMap<String, usize>,
}

/// A little-endian field reader over a record.
struct Fields<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Fields<'b> {
    fn new(bytes: &'b [u8]) -> Self {
        Fields { bytes, at: 0 }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        if let Some(b) = self.bytes.get(self.at..self.at + N) {
            out.copy_from_slice(b);
        }
        self.at += N;
        out
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

/// `len` bytes of `bytes` at `offset`, or a truncation error naming `what`.
fn slice<'b>(bytes: &'b [u8], offset: u64, len: u64, what: &'static str) -> Result<&'b [u8]> {
    Ok(&bytes[checked::range(offset, len, bytes.len() as u64, what)?])
}

/// Where the end of central directory record starts: the last signature within the 64 KiB
/// of comment the record allows whose comment ends at the end of the archive or before it.
fn find_end(bytes: &[u8]) -> Result<usize> {
    if bytes.len() < END_LEN {
        return Err(Error::malformed(
            "end of central directory",
            0,
            format!(
                "the archive is {} bytes, shorter than the {END_LEN}-byte record that ends every zip",
                bytes.len()
            ),
        ));
    }
    let last = bytes.len() - END_LEN;
    let first = last.saturating_sub(usize::from(u16::MAX));
    (first..=last)
        .rev()
        .find(|&at| {
            bytes[at..at + 4] == END.to_le_bytes() && {
                let comment = usize::from(u16::from_le_bytes([bytes[at + 20], bytes[at + 21]]));
                at + END_LEN + comment <= bytes.len()
            }
        })
        .ok_or_else(|| {
            Error::malformed(
                "end of central directory",
                last as u64,
                "no end of central directory record (PK\\x05\\x06) in the archive's last 64 KiB: not a zip archive, or one cut short",
            )
        })
}

/// The central directory's entry count, length and offset, from the end records.
struct Directory {
    count: u64,
    len: u64,
    offset: u64,
    /// Where the end records start: the central directory must end before.
    end: u64,
}

fn directory(bytes: &[u8]) -> Result<Directory> {
    let at = find_end(bytes)?;
    let mut f = Fields::new(&bytes[at + 4..]);
    let (disk, cd_disk, on_disk, count) = (f.u16(), f.u16(), f.u16(), f.u16());
    let (len, offset) = (f.u32(), f.u32());
    let located = at
        .checked_sub(END64_LOCATOR_LEN)
        .filter(|&l| bytes[l..l + 4] == END64_LOCATOR.to_le_bytes());
    let Some(locator) = located else {
        if disk != 0 || cd_disk != 0 || on_disk != count {
            return Err(Error::Unsupported {
                name: String::new(),
                what: "an archive split over several disks".into(),
            });
        }
        return Ok(Directory {
            count: count.into(),
            len: len.into(),
            offset: offset.into(),
            end: at as u64,
        });
    };
    let mut l = Fields::new(&bytes[locator + 4..]);
    let (_, end64, disks) = (l.u32(), l.u64(), l.u32());
    let record = slice(bytes, end64, END64_LEN, "zip64 end of central directory")?;
    let mut r = Fields::new(record);
    if r.u32() != END64 {
        return Err(Error::malformed(
            "zip64 end of central directory",
            end64,
            "the locator points at no zip64 end record (PK\\x06\\x06)",
        ));
    }
    let _ = (r.u64(), r.u16(), r.u16());
    let (disk, cd_disk, on_disk, count) = (r.u32(), r.u32(), r.u64(), r.u64());
    let (len, offset) = (r.u64(), r.u64());
    if disks > 1 || disk != 0 || cd_disk != 0 || on_disk != count {
        return Err(Error::Unsupported {
            name: String::new(),
            what: "an archive split over several disks".into(),
        });
    }
    if end64 >= locator as u64 {
        return Err(Error::malformed(
            "zip64 end of central directory",
            end64,
            "it lies after its own locator",
        ));
    }
    Ok(Directory {
        count,
        len,
        offset,
        end: end64,
    })
}

/// Whether `name` could climb out of a folder it were extracted into: absolute, with a
/// drive, a backslash or a `..` component. No reader of ours extracts, but no sound archive
/// holds one.
pub(crate) fn unsafe_name(name: &str) -> bool {
    name.is_empty()
        || name.starts_with('/')
        || name.contains('\\')
        || name.contains('\0')
        || name.as_bytes().get(1) == Some(&b':')
        || name.split('/').any(|part| part == "..")
}

/// A central directory entry's sizes and offset, widened from its zip64 extra field where
/// the 32-bit fields say 0xFFFFFFFF (in the order the format gives: size, compressed size,
/// local header offset).
fn widen(extra: &[u8], fields: [&mut u64; 3], at: u64) -> Result<()> {
    let mut rest = extra;
    while rest.len() >= 4 {
        let id = u16::from_le_bytes([rest[0], rest[1]]);
        let len = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
        let body = rest.get(4..4 + len).ok_or_else(|| {
            Error::malformed(
                "central directory entry",
                at,
                "an extra field runs past its entry",
            )
        })?;
        if id == ZIP64_EXTRA {
            let mut f = Fields::new(body);
            for field in fields {
                if *field == u64::from(u32::MAX) {
                    if f.at + 8 > body.len() {
                        return Err(Error::malformed(
                            "central directory entry",
                            at,
                            "its zip64 extra field is shorter than the sizes it stands for",
                        ));
                    }
                    *field = f.u64();
                }
            }
            return Ok(());
        }
        rest = &rest[4 + len..];
    }
    if fields.iter().any(|f| **f == u64::from(u32::MAX)) {
        return Err(Error::malformed(
            "central directory entry",
            at,
            "a size or offset of 0xFFFFFFFF without the zip64 extra field that holds it",
        ));
    }
    Ok(())
}

impl<'a> Archive<'a> {
    /// Reads the archive's directory: the end records (zip64 included), every central
    /// directory entry and the local header it points at. Refused: more entries than
    /// `limits.max_tensor_count`, a directory longer than `limits.max_header_bytes`,
    /// encrypted entries, methods other than stored and deflate, names that repeat or could
    /// climb out of a folder, local headers that disagree with the directory, and entries
    /// whose bytes overlap another's or the directory (the layout of overlapping zip bombs).
    pub fn open(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        let dir = directory(bytes)?;
        limits.check_header_bytes(dir.len)?;
        limits.check_tensor_count(dir.count)?;
        let cd_end = checked::add(dir.offset, dir.len, "central directory end")?;
        if cd_end > dir.end {
            return Err(Error::malformed(
                "central directory",
                dir.offset,
                format!(
                    "its {} bytes run past the end records at offset {}",
                    dir.len, dir.end
                ),
            ));
        }
        if dir.count > dir.len / CENTRAL_LEN {
            return Err(Error::malformed(
                "central directory",
                dir.offset,
                format!(
                    "{} entries cannot fit in its {} bytes ({CENTRAL_LEN} at least each)",
                    dir.count, dir.len
                ),
            ));
        }
        let cd = slice(bytes, dir.offset, dir.len, "central directory")?;
        let count = checked::to_usize(dir.count, "zip entry count")?;
        let mut entries = Vec::with_capacity(count);
        let mut by_name = BTreeMap::new();
        let mut at = 0u64;
        for _ in 0..count {
            let offset = dir.offset + at;
            let fixed = slice(cd, at, CENTRAL_LEN, "central directory entry")?;
            let mut f = Fields::new(fixed);
            if f.u32() != CENTRAL {
                return Err(Error::malformed(
                    "central directory entry",
                    offset,
                    "no entry signature (PK\\x01\\x02) where the directory says one is",
                ));
            }
            let (_, _, flags, method) = (f.u16(), f.u16(), f.u16(), f.u16());
            let _ = (f.u16(), f.u16());
            let crc32 = f.u32();
            let (mut compressed_size, mut size) = (u64::from(f.u32()), u64::from(f.u32()));
            let (name_len, extra_len, comment_len) = (f.u16(), f.u16(), f.u16());
            let _ = (f.u16(), f.u16(), f.u32());
            let mut header_offset = u64::from(f.u32());
            let name_at = at + CENTRAL_LEN;
            let raw = slice(
                cd,
                name_at,
                name_len.into(),
                "central directory entry's name",
            )?;
            let extra = slice(
                cd,
                name_at + u64::from(name_len),
                extra_len.into(),
                "central directory entry's extra field",
            )?;
            widen(
                extra,
                [&mut size, &mut compressed_size, &mut header_offset],
                offset,
            )?;
            at = name_at + u64::from(name_len) + u64::from(extra_len) + u64::from(comment_len);
            let name = std::str::from_utf8(raw)
                .map_err(|_| {
                    Error::malformed(
                        "central directory entry",
                        offset,
                        format!("its name {:?} is not UTF-8", String::from_utf8_lossy(raw)),
                    )
                })?
                .to_owned();
            if unsafe_name(&name) {
                return Err(Error::malformed(
                    "central directory entry",
                    offset,
                    format!("entry name {name:?} is absolute or climbs out of its folder"),
                ));
            }
            if flags & 1 != 0 {
                return Err(Error::Unsupported {
                    name,
                    what: "encryption".into(),
                });
            }
            let method = match method {
                0 => Method::Stored,
                8 => Method::Deflated,
                other => {
                    return Err(Error::Unsupported {
                        name,
                        what: format!("compression method {other}"),
                    });
                }
            };
            if method == Method::Stored && compressed_size != size {
                return Err(Error::malformed(
                    "central directory entry",
                    offset,
                    format!(
                        "stored entry {name:?} says {compressed_size} bytes stored for {size} bytes"
                    ),
                ));
            }
            let data_offset = local_header(bytes, header_offset, &name, method)?;
            let data_end = checked::add(data_offset, compressed_size, "zip entry end")?;
            if data_end > dir.offset {
                return Err(Error::malformed(
                    "central directory entry",
                    offset,
                    format!(
                        "entry {name:?}'s {compressed_size} bytes at offset {data_offset} run into the central directory at {}",
                        dir.offset
                    ),
                ));
            }
            if by_name.insert(name.clone(), entries.len()).is_some() {
                return Err(Error::malformed(
                    "central directory entry",
                    offset,
                    format!("entry name {name:?} appears twice"),
                ));
            }
            entries.push(Entry {
                name,
                method,
                crc32,
                compressed_size,
                size,
                header_offset,
                data_offset,
            });
        }
        no_overlaps(&entries)?;
        Ok(Archive {
            bytes,
            entries,
            by_name,
        })
    }

    /// The entries, in central directory order.
    #[must_use]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry called `name`.
    #[must_use]
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    /// The archive's bytes.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The stored bytes of `entry` as they lie in the archive (compressed, if it is), not
    /// verified.
    #[must_use]
    pub fn raw(&self, entry: &Entry) -> &'a [u8] {
        // Checked in `open`: the entry lies before the central directory.
        &self.bytes
            [entry.data_offset as usize..(entry.data_offset + entry.compressed_size) as usize]
    }

    /// The bytes of `entry`, uncompressed: borrowed from the archive when stored (not
    /// verified: [`verify`](Archive::verify) checks its CRC-32), or inflated within `limits`
    /// and checked against its CRC-32.
    pub fn read(&self, entry: &Entry, limits: &Limits) -> Result<Cow<'a, [u8]>> {
        match entry.method {
            Method::Stored => Ok(Cow::Borrowed(self.raw(entry))),
            Method::Deflated => {
                let out = self.inflate(entry, limits)?;
                check_crc(entry, &out)?;
                Ok(Cow::Owned(out))
            }
        }
    }

    /// The bytes of `entry`, uncompressed and checked against its CRC-32 however stored.
    pub fn read_verified(&self, entry: &Entry, limits: &Limits) -> Result<Cow<'a, [u8]>> {
        let bytes = self.read(entry, limits)?;
        if entry.method == Method::Stored {
            check_crc(entry, &bytes)?;
        }
        Ok(bytes)
    }

    /// Checks `entry`'s bytes against its CRC-32 (inflating them within `limits` when
    /// deflated).
    pub fn verify(&self, entry: &Entry, limits: &Limits) -> Result<()> {
        self.read_verified(entry, limits).map(drop)
    }

    /// Checks every entry against its CRC-32 (inflating deflated ones within `limits`);
    /// returns how many were checked.
    pub fn verify_all(&self, limits: &Limits) -> Result<usize> {
        for e in &self.entries {
            self.verify(e, limits)?;
        }
        Ok(self.entries.len())
    }

    fn inflate(&self, entry: &Entry, limits: &Limits) -> Result<Vec<u8>> {
        limits.check_total_bytes(entry.size)?;
        limits.check_expansion(entry.compressed_size, entry.size)?;
        let len = checked::to_usize(entry.size, "inflated zip entry")?;
        let mut out = tensor_core::buffer::try_filled(len, 0u8, "inflated zip entry")?;
        let mut z = flate2::Decompress::new(false);
        let status = z
            .decompress(self.raw(entry), &mut out, flate2::FlushDecompress::Finish)
            .map_err(|e| {
                Error::malformed(
                    "deflated entry",
                    entry.data_offset,
                    format!("{:?}: {e}", entry.name),
                )
            })?;
        if status != flate2::Status::StreamEnd || z.total_out() != entry.size {
            return Err(Error::malformed(
                "deflated entry",
                entry.data_offset,
                format!(
                    "{:?} inflates to {} bytes{} where the directory says {}",
                    entry.name,
                    z.total_out(),
                    if status == flate2::Status::StreamEnd {
                        ""
                    } else {
                        " or more"
                    },
                    entry.size
                ),
            ));
        }
        Ok(out)
    }
}

fn check_crc(entry: &Entry, bytes: &[u8]) -> Result<()> {
    let computed = crc32(bytes);
    if computed != entry.crc32 {
        return Err(Error::Checksum {
            name: entry.name.clone(),
            stored: entry.crc32,
            computed,
        });
    }
    Ok(())
}

/// The CRC-32 (ISO-HDLC, zip's) of `bytes`.
#[must_use]
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(bytes);
    c.sum()
}

/// Checks the local header at `offset` against the central directory's entry; returns where
/// the entry's bytes start.
fn local_header(bytes: &[u8], offset: u64, name: &str, method: Method) -> Result<u64> {
    let fixed = slice(bytes, offset, LOCAL_LEN, "local file header")?;
    let mut f = Fields::new(fixed);
    if f.u32() != LOCAL {
        return Err(Error::malformed(
            "local file header",
            offset,
            format!("entry {name:?}'s local header has no signature (PK\\x03\\x04)"),
        ));
    }
    let (_, flags, local_method) = (f.u16(), f.u16(), f.u16());
    let _ = (f.u16(), f.u16(), f.u32(), f.u32(), f.u32());
    let (name_len, extra_len) = (f.u16(), f.u16());
    let local_name = slice(
        bytes,
        offset + LOCAL_LEN,
        name_len.into(),
        "local file header's name",
    )?;
    if local_name != name.as_bytes() {
        return Err(Error::malformed(
            "local file header",
            offset,
            format!(
                "the central directory names the entry {name:?}, its local header {:?}",
                String::from_utf8_lossy(local_name)
            ),
        ));
    }
    let expected = match method {
        Method::Stored => 0,
        Method::Deflated => 8,
    };
    if local_method != expected || flags & 1 != 0 {
        return Err(Error::malformed(
            "local file header",
            offset,
            format!(
                "entry {name:?}'s local header gives another method or encryption than the directory"
            ),
        ));
    }
    checked::add(
        offset + LOCAL_LEN + u64::from(name_len),
        extra_len.into(),
        "zip entry data offset",
    )
    .map_err(Error::from)
}

/// The name of the first entry of an archive whose first bytes are `head`, as its local
/// header gives it: what tells one kind of zip archive from another (torch's
/// `<folder>/data.pkl`, numpy's `<name>.npy`, Keras' `metadata.json`). `None` when `head`
/// does not start with a local header holding a whole name.
#[must_use]
pub fn first_entry_name(head: &[u8]) -> Option<&[u8]> {
    if !head.starts_with(&LOCAL.to_le_bytes()) {
        return None;
    }
    let len = usize::from(u16::from_le_bytes([*head.get(26)?, *head.get(27)?]));
    head.get(30..30 + len)
}

/// Refuses entries whose header and bytes overlap another's.
fn no_overlaps(entries: &[Entry]) -> Result<()> {
    let mut spans: Vec<(u64, u64, &str)> = entries
        .iter()
        .map(|e| {
            (
                e.header_offset,
                e.data_offset + e.compressed_size,
                e.name.as_str(),
            )
        })
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        let ((_, end, a), (start, _, b)) = (pair[0], pair[1]);
        if start < end {
            return Err(Error::malformed(
                "central directory",
                start,
                format!("entries {a:?} and {b:?} overlap (the layout of a zip bomb)"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Writer;
    use proptest::prelude::*;

    fn written(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
        let mut w = Writer::new(std::io::Cursor::new(Vec::new())).unwrap();
        for (name, data) in entries {
            w.stored(name, data.len() as u64, |o| o.write_all(data))
                .unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    proptest! {
        #[test]
        fn what_is_written_reads_back(
            data in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12)
        ) {
            let entries: Vec<(String, Vec<u8>)> =
                data.into_iter().enumerate().map(|(i, d)| (format!("dir/e{i}.npy"), d)).collect();
            let bytes = written(&entries);
            let a = Archive::open(&bytes, &Limits::default()).unwrap();
            prop_assert_eq!(a.entries().len(), entries.len());
            for (name, data) in &entries {
                let e = a.find(name).unwrap();
                prop_assert_eq!(&*a.read_verified(e, &Limits::default()).unwrap(), data.as_slice());
                prop_assert_eq!(e.method, Method::Stored);
            }
        }

        #[test]
        fn any_bytes_are_read_or_refused(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(a) = Archive::open(&bytes, &Limits::default()) {
                for e in a.entries() {
                    let _ = a.read_verified(e, &Limits::default());
                }
            }
        }
    }

    #[test]
    fn names_the_reader_refuses_are_not_written() {
        for bad in ["", "/abs", "a/../b", "nul\0inside", "back\\slash", "c:/x"] {
            let mut w = Writer::new(std::io::Cursor::new(Vec::new())).unwrap();
            assert!(w.stored(bad, 1, |o| o.write_all(b"x")).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_changed_byte_fails_its_crc() {
        let mut bytes = written(&[("a".into(), b"hello".to_vec())]);
        let a = Archive::open(&bytes, &Limits::default()).unwrap();
        let at = a.find("a").unwrap().data_offset as usize;
        bytes[at] ^= 1;
        let a = Archive::open(&bytes, &Limits::default()).unwrap();
        let err = a
            .verify(a.find("a").unwrap(), &Limits::default())
            .unwrap_err();
        assert!(matches!(err, Error::Checksum { .. }), "{err}");
    }

    #[test]
    fn many_entries_take_the_zip64_end_records() {
        let entries: Vec<(String, Vec<u8>)> = (0..0x1_0001)
            .map(|i| (format!("{i}"), vec![i as u8]))
            .collect();
        let bytes = written(&entries);
        // The 16-bit count says 0xFFFF; the zip64 record holds the true one.
        let a = Archive::open(&bytes, &Limits::default()).unwrap();
        assert_eq!(a.entries().len(), 0x1_0001);
        assert_eq!(
            &*a.read(a.find("65536").unwrap(), &Limits::default())
                .unwrap(),
            &[0]
        );
        let few = Limits::default().with_max_tensor_count(1000);
        assert!(Archive::open(&bytes, &few).is_err());
    }

    #[test]
    fn zip64_extra_fields_widen_the_sizes_they_stand_for() {
        let mut extra = vec![0x01, 0x00, 16, 0];
        extra.extend_from_slice(&(5u64 << 32).to_le_bytes());
        extra.extend_from_slice(&(7u64 << 32).to_le_bytes());
        let (mut size, mut compressed, mut offset) = (u64::from(u32::MAX), u64::from(u32::MAX), 12);
        widen(&extra, [&mut size, &mut compressed, &mut offset], 0).unwrap();
        assert_eq!((size, compressed, offset), (5 << 32, 7 << 32, 12));
        let (mut size, mut c, mut o) = (u64::from(u32::MAX), 1, 2);
        assert!(widen(&[], [&mut size, &mut c, &mut o], 0).is_err());
    }

    #[test]
    fn deflated_entries_inflate_within_limits() {
        // Python's zipfile with ZIP_DEFLATED: one entry "z" of 1000 zeros.
        let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut z, &[0; 1000]).unwrap();
        let body = z.finish().unwrap();
        let mut zip = Vec::new();
        let crc = crc32(&[0; 1000]);
        let local = |zip: &mut Vec<u8>| {
            zip.extend_from_slice(&LOCAL.to_le_bytes());
            zip.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
            zip.extend_from_slice(&crc.to_le_bytes());
            zip.extend_from_slice(&(body.len() as u32).to_le_bytes());
            zip.extend_from_slice(&1000u32.to_le_bytes());
            zip.extend_from_slice(&[1, 0, 0, 0, b'z']);
        };
        local(&mut zip);
        zip.extend_from_slice(&body);
        let cd_at = zip.len() as u32;
        zip.extend_from_slice(&CENTRAL.to_le_bytes());
        zip.extend_from_slice(&[20, 0, 20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
        zip.extend_from_slice(&crc.to_le_bytes());
        zip.extend_from_slice(&(body.len() as u32).to_le_bytes());
        zip.extend_from_slice(&1000u32.to_le_bytes());
        zip.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'z']);
        let cd_len = zip.len() as u32 - cd_at;
        zip.extend_from_slice(&END.to_le_bytes());
        zip.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
        zip.extend_from_slice(&cd_len.to_le_bytes());
        zip.extend_from_slice(&cd_at.to_le_bytes());
        zip.extend_from_slice(&[0, 0]);
        let a = Archive::open(&zip, &Limits::default()).unwrap();
        let e = a.find("z").unwrap();
        assert_eq!(&*a.read(e, &Limits::default()).unwrap(), &[0; 1000][..]);
        let tight = Limits::default().with_max_total_bytes(999);
        assert!(a.read(e, &tight).is_err());
    }
}
