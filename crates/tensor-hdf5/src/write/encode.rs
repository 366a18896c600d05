//! The bytes of each structure the writer puts in a file: the superblock (version 2), object
//! headers (version 2) and the messages in them, laid out as the HDF5 format specification
//! and the HDF5 library (as netCDF-C drives it) lay them out. Everything little-endian, with
//! 8-byte offsets and lengths.

use super::spec::{Attribute, Type, Value};
use crate::lookup3;

/// An address no structure is at yet (HDF5's "undefined address").
pub(super) const UNDEFINED: u64 = u64::MAX;

/// The superblock's length (version 2, 8-byte offsets and lengths).
pub(super) const SUPERBLOCK_LEN: u64 = 48;

/// Appends `v` little-endian.
pub(super) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` little-endian.
pub(super) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` little-endian.
pub(super) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends the lookup3 checksum of everything in `out` from `start`.
pub(super) fn put_checksum(out: &mut Vec<u8>, start: usize) {
    let sum = lookup3::hash(&out[start..], 0);
    put_u32(out, sum);
}

/// A version 2 superblock: the root group's object header at `root`, the file `eof` long.
pub(super) fn superblock(root: u64, eof: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(SUPERBLOCK_LEN as usize);
    out.extend_from_slice(crate::SIGNATURE);
    out.extend_from_slice(&[2, 8, 8, 0]);
    put_u64(&mut out, 0); // base address
    put_u64(&mut out, UNDEFINED); // no superblock extension
    put_u64(&mut out, eof);
    put_u64(&mut out, root);
    put_checksum(&mut out, 0);
    out
}

/// The datatype message of `ty`.
pub(super) fn datatype(ty: Type) -> Vec<u8> {
    let mut out = Vec::with_capacity(24);
    match ty {
        Type::Integer { size, signed } => {
            // Class 0, version 1; little-endian, zero padding, signed as asked.
            out.extend_from_slice(&[0x10, if signed { 0x08 } else { 0 }, 0, 0]);
            put_u32(&mut out, u32::from(size));
            put_u16(&mut out, 0);
            put_u16(&mut out, u16::from(size) * 8);
        }
        Type::Float { size } => {
            // (sign bit, exponent position, exponent bits, mantissa bits, bias)
            let (sign, exp_at, exp_bits, mantissa, bias): (u8, u8, u8, u8, u32) = match size {
                2 => (15, 10, 5, 10, 15),
                4 => (31, 23, 8, 23, 127),
                _ => (63, 52, 11, 52, 1023),
            };
            // Class 1, version 1; little-endian, implied leading mantissa bit.
            out.extend_from_slice(&[0x11, 0x20, sign, 0]);
            put_u32(&mut out, u32::from(size));
            put_u16(&mut out, 0);
            put_u16(&mut out, u16::from(size) * 8);
            out.extend_from_slice(&[exp_at, exp_bits, 0, mantissa]);
            put_u32(&mut out, bias);
        }
        Type::Text { len, utf8 } => {
            // Class 3, version 1; null-terminated.
            out.extend_from_slice(&[0x13, u8::from(utf8) << 4, 0, 0]);
            put_u32(&mut out, len.max(1));
        }
        Type::VlenText { utf8 } => {
            // Class 9, version 1: a string, null-terminated, of 1-byte characters.
            out.extend_from_slice(&[0x19, 0x01, u8::from(utf8), 0]);
            put_u32(&mut out, 16);
            out.extend_from_slice(&[0x13, u8::from(utf8) << 4, 0, 0]);
            put_u32(&mut out, 1);
        }
        Type::References => {
            // Class 9, version 1: a sequence of object references (class 7).
            out.extend_from_slice(&[0x19, 0, 0, 0]);
            put_u32(&mut out, 16);
            out.extend_from_slice(&[0x17, 0, 0, 0]);
            put_u32(&mut out, 8);
        }
    }
    out
}

/// A dataspace message (version 2): a scalar when `dims` is `None`, else simple, with
/// maxima (`None`: unlimited) when given.
pub(super) fn dataspace(dims: Option<&[u64]>, max: Option<&[Option<u64>]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 16 * dims.map_or(0, <[u64]>::len));
    let dims = dims.unwrap_or(&[]);
    let kind = u8::from(!dims.is_empty());
    let rank = u8::try_from(dims.len()).unwrap_or(u8::MAX);
    out.extend_from_slice(&[2, rank, u8::from(max.is_some()), kind]);
    for &d in dims {
        put_u64(&mut out, d);
    }
    for m in max.unwrap_or(&[]) {
        put_u64(&mut out, m.unwrap_or(UNDEFINED));
    }
    out
}

/// A fill value message (version 3): space allocated late (contiguous) or incrementally
/// (chunked), the fill written where one is set, `value` the fill when one is.
pub(super) fn fill_value(chunked: bool, value: Option<&[u8]>) -> Vec<u8> {
    let alloc = if chunked { 3 } else { 2 };
    let mut flags = alloc | (2 << 2);
    if value.is_some() {
        flags |= 0x20;
    }
    let mut out = vec![3, flags];
    if let Some(v) = value {
        put_u32(&mut out, u32::try_from(v.len()).unwrap_or(u32::MAX));
        out.extend_from_slice(v);
    }
    out
}

/// A contiguous data layout message (version 3).
pub(super) fn contiguous(address: u64, size: u64) -> Vec<u8> {
    let mut out = vec![3, 1];
    put_u64(&mut out, address);
    put_u64(&mut out, size);
    out
}

/// A chunked data layout message (version 3): chunks of `chunk` elements of `width` bytes,
/// indexed by the version 1 B-tree at `btree`.
pub(super) fn chunked(btree: u64, chunk: &[u64], width: u32) -> Vec<u8> {
    let rank = u8::try_from(chunk.len() + 1).unwrap_or(u8::MAX);
    let mut out = vec![3, 2, rank];
    put_u64(&mut out, btree);
    for &c in chunk {
        put_u32(&mut out, u32::try_from(c).unwrap_or(u32::MAX));
    }
    put_u32(&mut out, width);
    out
}

/// A filter pipeline message (version 2): `(id, client values)` in the order applied, each
/// optional as netCDF-C marks them.
pub(super) fn pipeline(filters: &[(u16, Vec<u32>)]) -> Vec<u8> {
    let mut out = vec![2, u8::try_from(filters.len()).unwrap_or(u8::MAX)];
    for (id, values) in filters {
        put_u16(&mut out, *id);
        put_u16(&mut out, 1);
        put_u16(&mut out, u16::try_from(values.len()).unwrap_or(u16::MAX));
        for &v in values {
            put_u32(&mut out, v);
        }
    }
    out
}

/// A link message (version 1): a hard link named `name` to the object header at `target`,
/// created `order`-th.
pub(super) fn link(name: &str, target: u64, order: u64) -> Vec<u8> {
    let utf8 = !name.is_ascii();
    let long = name.len() > usize::from(u8::MAX);
    // Name length in 1 or 2 bytes; creation order present; character set present for UTF-8.
    let flags = u8::from(long) | 0x04 | if utf8 { 0x10 } else { 0 };
    let mut out = vec![1, flags];
    put_u64(&mut out, order);
    if utf8 {
        out.push(1);
    }
    if long {
        put_u16(&mut out, u16::try_from(name.len()).unwrap_or(u16::MAX));
    } else {
        out.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
    }
    out.extend_from_slice(name.as_bytes());
    put_u64(&mut out, target);
    out
}

/// A link info message (version 0): creation order tracked and indexed, every link in the
/// header (no heap, no index yet), `count` links created.
pub(super) fn link_info(count: u64) -> Vec<u8> {
    let mut out = vec![0, 0x03];
    put_u64(&mut out, count);
    for _ in 0..3 {
        put_u64(&mut out, UNDEFINED);
    }
    out
}

/// A group info message (version 0, defaults).
pub(super) fn group_info() -> Vec<u8> {
    vec![0, 0]
}

/// An attribute info message (version 0): creation order tracked and indexed, every
/// attribute in the header, `count` created.
pub(super) fn attribute_info(count: u16) -> Vec<u8> {
    let mut out = vec![0, 0x03];
    put_u16(&mut out, count);
    for _ in 0..3 {
        put_u64(&mut out, UNDEFINED);
    }
    out
}

/// An attribute message (version 3) whose value's bytes are `data` (vlen elements already
/// pointing at their heap objects).
pub(super) fn attribute(a: &Attribute, data: &[u8]) -> Vec<u8> {
    let datatype = datatype(a.ty);
    let count = match &a.value {
        Value::Bytes(b) => b.len() as u64 / u64::from(a.ty.size()).max(1),
        Value::Strings(s) => s.len() as u64,
        Value::References(r) => r.len() as u64,
    };
    // Empty text is one byte, its terminator, as netCDF-C stores it.
    let empty_text = matches!(a.ty, Type::Text { len: 0, .. });
    let dataspace = if a.scalar || empty_text {
        dataspace(None, None)
    } else {
        dataspace(Some(&[count]), None)
    };
    let utf8 = !a.name.is_ascii();
    let mut out = vec![3, 0];
    put_u16(
        &mut out,
        u16::try_from(a.name.len() + 1).unwrap_or(u16::MAX),
    );
    put_u16(&mut out, u16::try_from(datatype.len()).unwrap_or(u16::MAX));
    put_u16(&mut out, u16::try_from(dataspace.len()).unwrap_or(u16::MAX));
    out.push(u8::from(utf8));
    out.extend_from_slice(a.name.as_bytes());
    out.push(0);
    out.extend_from_slice(&datatype);
    out.extend_from_slice(&dataspace);
    if empty_text {
        out.push(0);
    } else {
        out.extend_from_slice(data);
    }
    out
}

/// A version 2 object header holding `messages` (`(type, flags, bytes)`, each at most
/// 65535 bytes), attribute creation order tracked and indexed (each message then carries
/// its creation order: attributes numbered from 0 in the order given).
pub(super) fn object_header(messages: &[(u16, u8, Vec<u8>)]) -> Vec<u8> {
    // Each message: type (1), size (2), flags (1), creation order (2).
    let body: usize = messages.iter().map(|(_, _, m)| 6 + m.len()).sum();
    let (size_flag, size_width) = match body {
        0..=0xff => (0, 1),
        0x100..=0xffff => (1, 2),
        _ => (2, 4),
    };
    let mut out = Vec::with_capacity(6 + size_width + body + 4);
    out.extend_from_slice(b"OHDR");
    out.push(2);
    out.push(size_flag | 0x04 | 0x08);
    out.extend_from_slice(&(body as u64).to_le_bytes()[..size_width]);
    let mut order = 0u16;
    for (kind, flags, m) in messages {
        out.push(u8::try_from(*kind).unwrap_or(u8::MAX));
        put_u16(&mut out, u16::try_from(m.len()).unwrap_or(u16::MAX));
        out.push(*flags);
        let this = if *kind == crate::message::kind::ATTRIBUTE {
            order += 1;
            order - 1
        } else {
            0
        };
        put_u16(&mut out, this);
        out.extend_from_slice(m);
    }
    put_checksum(&mut out, 0);
    out
}
