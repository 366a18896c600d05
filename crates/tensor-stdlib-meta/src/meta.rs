//! The meta data itself: a borrowing parser, an owned form, and the serializer.

use crate::enums::{IndexMode, Order, READONLY, StdlibDtype};
use crate::error::{Error, Result};
use tensor_core::{ByteOrder, Limits};

/// The largest dimension count stdlib's constructor accepts.
pub const MAX_DIMS: i64 = 32767;

/// Bytes of meta data for `ndims` dimensions and `nsubmodes` submodes: `33 + 16·N + M`.
#[must_use]
pub fn byte_length(ndims: u64, nsubmodes: u64) -> Option<u64> {
    ndims
        .checked_mul(16)?
        .checked_add(33)?
        .checked_add(nsubmodes)
}

/// Offsets of the fields that follow the shape and strides, for `ndims` dimensions.
struct Layout {
    shape: u64,
    strides: u64,
    offset: u64,
    order: u64,
    mode: u64,
    nsubmodes: u64,
    submodes: u64,
}

impl Layout {
    fn new(ndims: u64) -> Self {
        // ndims ≤ MAX_DIMS, so none of this can overflow.
        let strides = 11 + 8 * ndims;
        let offset = 11 + 16 * ndims;
        Layout {
            shape: 11,
            strides,
            offset,
            order: offset + 8,
            mode: offset + 9,
            nsubmodes: offset + 10,
            submodes: offset + 18,
        }
    }
}

fn int<const N: usize>(bytes: &[u8], at: u64, order: ByteOrder) -> [u8; N] {
    let at = at as usize;
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[at..at + N]);
    if !order.is_native() {
        a.reverse();
    }
    a
}

fn need(bytes: &[u8], end: u64, field: &'static str) -> Result<()> {
    if (bytes.len() as u64) < end {
        Err(Error::Truncated {
            field,
            needed_end: end,
            len: bytes.len() as u64,
        })
    } else {
        Ok(())
    }
}

/// Meta data parsed in place: the scalar fields decoded and checked, the shape, strides and
/// submodes left in the buffer and read on demand. Parsing allocates nothing.
#[derive(Clone, Copy, Debug)]
pub struct MetaDataRef<'a> {
    bytes: &'a [u8],
    byte_order: ByteOrder,
    dtype: StdlibDtype,
    ndims: u64,
    offset: u64,
    order: Order,
    mode: IndexMode,
    nsubmodes: u64,
    flags: i32,
}

impl<'a> MetaDataRef<'a> {
    /// Parses and validates `bytes` with default [`Limits`].
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &Limits::default())
    }

    /// Parses and validates `bytes`, which must hold exactly one meta data record.
    ///
    /// Every field is checked — endianness byte, dtype, dimension count, lengths, shape,
    /// offset, order, modes — and a buffer with bytes after the flags word is refused.
    pub fn open_with(bytes: &'a [u8], limits: &Limits) -> Result<Self> {
        limits.check_header_bytes(bytes.len() as u64)?;
        need(bytes, 1, "endianness")?;
        let byte_order = match bytes[0] {
            1 => ByteOrder::Little,
            0 => ByteOrder::Big,
            other => return Err(Error::InvalidEndianness(other)),
        };
        need(bytes, 3, "dtype")?;
        let raw_dtype = i16::from_ne_bytes(int(bytes, 1, byte_order));
        let dtype = StdlibDtype::from_enum(raw_dtype).ok_or(Error::UnknownDtype(raw_dtype))?;
        need(bytes, 11, "ndims")?;
        let raw_ndims = i64::from_ne_bytes(int(bytes, 3, byte_order));
        if !(0..=MAX_DIMS).contains(&raw_ndims) {
            return Err(Error::InvalidNdims(raw_ndims));
        }
        let ndims = raw_ndims as u64;
        limits.check_tensor_count(1)?;
        let at = Layout::new(ndims);
        need(
            bytes,
            at.submodes,
            "shape, strides, offset, order, mode and nsubmodes",
        )?;
        for axis in 0..ndims {
            let pos = at.shape + 8 * axis;
            let value = i64::from_ne_bytes(int(bytes, pos, byte_order));
            if value < 0 {
                return Err(Error::InvalidShape {
                    axis: axis as usize,
                    offset: pos,
                    value,
                });
            }
        }
        let raw_offset = i64::from_ne_bytes(int(bytes, at.offset, byte_order));
        if raw_offset < 0 {
            return Err(Error::InvalidOffset {
                offset: at.offset,
                value: raw_offset,
            });
        }
        let raw_order = bytes[at.order as usize] as i8;
        let order = Order::from_enum(raw_order).ok_or(Error::UnknownOrder {
            offset: at.order,
            value: raw_order,
        })?;
        let raw_mode = bytes[at.mode as usize] as i8;
        let mode = IndexMode::from_enum(raw_mode).ok_or(Error::UnknownIndexMode {
            field: "mode",
            offset: at.mode,
            value: raw_mode,
        })?;
        let raw_nsub = i64::from_ne_bytes(int(bytes, at.nsubmodes, byte_order));
        if raw_nsub < 0 {
            return Err(Error::InvalidNsubmodes(raw_nsub));
        }
        let nsubmodes = raw_nsub as u64;
        let total = byte_length(ndims, nsubmodes).ok_or(Error::InvalidNsubmodes(raw_nsub))?;
        need(bytes, total, "submodes and flags")?;
        if (bytes.len() as u64) > total {
            return Err(Error::TrailingBytes {
                end: total,
                extra: bytes.len() as u64 - total,
            });
        }
        for k in 0..nsubmodes {
            let pos = at.submodes + k;
            let value = bytes[pos as usize] as i8;
            if IndexMode::from_enum(value).is_none() {
                return Err(Error::UnknownIndexMode {
                    field: "submode",
                    offset: pos,
                    value,
                });
            }
        }
        let flags = i32::from_ne_bytes(int(bytes, at.submodes + nsubmodes, byte_order));
        Ok(MetaDataRef {
            bytes,
            byte_order,
            dtype,
            ndims,
            offset: raw_offset as u64,
            order,
            mode,
            nsubmodes,
            flags,
        })
    }

    /// The byte order of the wider fields (and of the data the meta data describes).
    #[must_use]
    pub fn byte_order(&self) -> ByteOrder {
        self.byte_order
    }

    /// The data type.
    #[must_use]
    pub fn dtype(&self) -> StdlibDtype {
        self.dtype
    }

    /// The number of dimensions.
    #[must_use]
    pub fn ndims(&self) -> usize {
        self.ndims as usize
    }

    /// The dimensions, read from the buffer.
    #[must_use]
    pub fn shape(&self) -> impl ExactSizeIterator<Item = u64> + 'a {
        let (bytes, order, base) = (self.bytes, self.byte_order, Layout::new(self.ndims).shape);
        (0..self.ndims as usize)
            .map(move |i| i64::from_ne_bytes(int(bytes, base + 8 * i as u64, order)) as u64)
    }

    /// The strides in bytes, read from the buffer.
    #[must_use]
    pub fn strides(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        let (bytes, order, base) = (self.bytes, self.byte_order, Layout::new(self.ndims).strides);
        (0..self.ndims as usize)
            .map(move |i| i64::from_ne_bytes(int(bytes, base + 8 * i as u64, order)))
    }

    /// The byte offset of the first element in the data buffer.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The declared order.
    #[must_use]
    pub fn order(&self) -> Order {
        self.order
    }

    /// The index mode for linear indexing.
    #[must_use]
    pub fn mode(&self) -> IndexMode {
        self.mode
    }

    /// The submodes, read from the buffer.
    #[must_use]
    pub fn submodes(&self) -> impl ExactSizeIterator<Item = IndexMode> + 'a {
        let (bytes, base) = (self.bytes, Layout::new(self.ndims).submodes);
        (0..self.nsubmodes as usize).map(move |k| {
            // Validated by parse.
            IndexMode::from_enum(bytes[base as usize + k] as i8).unwrap_or(IndexMode::Throw)
        })
    }

    /// The flags word.
    #[must_use]
    pub fn flags(&self) -> i32 {
        self.flags
    }

    /// Copies the fields out.
    #[must_use]
    pub fn to_owned(&self) -> MetaData {
        MetaData {
            byte_order: self.byte_order,
            dtype: self.dtype,
            shape: self.shape().collect(),
            strides: self.strides().collect(),
            offset: self.offset,
            order: self.order,
            mode: self.mode,
            submodes: self.submodes().collect(),
            flags: self.flags,
        }
    }
}

/// Owned meta data: everything an ndarray view needs except its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaData {
    /// Byte order of the serialized fields (and of the data).
    pub byte_order: ByteOrder,
    /// Data type.
    pub dtype: StdlibDtype,
    /// Dimensions.
    pub shape: Vec<u64>,
    /// Strides in bytes.
    pub strides: Vec<i64>,
    /// Byte offset of the first element.
    pub offset: u64,
    /// Declared order.
    pub order: Order,
    /// Index mode for linear indexing.
    pub mode: IndexMode,
    /// Index modes for subscripts, applied cyclically (`submodes[i % len]`).
    pub submodes: Vec<IndexMode>,
    /// Flags word; bit 2 (4) is READONLY.
    pub flags: i32,
}

impl MetaData {
    /// Whether the READONLY flag is set.
    #[must_use]
    pub fn is_readonly(&self) -> bool {
        self.flags & READONLY != 0
    }

    /// The serialized length.
    #[must_use]
    pub fn byte_length(&self) -> u64 {
        byte_length(self.shape.len() as u64, self.submodes.len() as u64).unwrap_or(u64::MAX)
    }

    /// Serializes in `self.byte_order`, byte for byte as @stdlib/ndarray does.
    ///
    /// Fails when the dimension count exceeds stdlib's maximum or shape and strides differ in
    /// length.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.byte_length() as usize);
        self.serialize_into(&mut out)?;
        #[cfg(feature = "paranoid")]
        {
            let back = MetaDataRef::open(&out)
                .map_err(|e| Error::SelfCheck(format!("the buffer does not parse: {e}")))?
                .to_owned();
            if &back != self {
                return Err(Error::SelfCheck(
                    "the buffer parses to other meta data".into(),
                ));
            }
        }
        Ok(out)
    }

    /// Appends the serialized bytes to `out`.
    pub fn serialize_into(&self, out: &mut Vec<u8>) -> Result<()> {
        let ndims = self.shape.len();
        if ndims as i64 > MAX_DIMS {
            return Err(Error::InvalidNdims(ndims as i64));
        }
        if self.strides.len() != ndims {
            return Err(Error::InvalidSubscripts(format!(
                "{} strides for {ndims} dimensions",
                self.strides.len()
            )));
        }
        let big = self.byte_order == ByteOrder::Big;
        macro_rules! put {
            ($v:expr) => {
                if big {
                    out.extend_from_slice(&$v.to_be_bytes())
                } else {
                    out.extend_from_slice(&$v.to_le_bytes())
                }
            };
        }
        out.push(u8::from(!big));
        put!(self.dtype.to_enum());
        put!(ndims as i64);
        for &d in &self.shape {
            put!(d as i64);
        }
        for &s in &self.strides {
            put!(s);
        }
        put!(self.offset as i64);
        out.push(self.order.to_enum() as u8);
        out.push(self.mode.to_enum() as u8);
        put!(self.submodes.len() as i64);
        out.extend(self.submodes.iter().map(|m| m.to_enum() as u8));
        put!(self.flags);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> MetaData {
        MetaData {
            byte_order: ByteOrder::Little,
            dtype: StdlibDtype::Float64,
            shape: vec![2, 3],
            strides: vec![24, 8],
            offset: 0,
            order: Order::RowMajor,
            mode: IndexMode::Throw,
            submodes: vec![IndexMode::Throw],
            flags: 0,
        }
    }

    #[test]
    fn serialize_matches_the_documented_layout() {
        let b = sample().serialize().unwrap();
        assert_eq!(b.len(), 66);
        assert_eq!(b[0], 1);
        assert_eq!(i16::from_le_bytes([b[1], b[2]]), 12);
        assert_eq!(b[19 + 32], 101);
        assert_eq!(MetaDataRef::open(&b).unwrap().to_owned(), sample());
        let mut be = sample();
        be.byte_order = ByteOrder::Big;
        let bb = be.serialize().unwrap();
        assert_eq!(bb[0], 0);
        assert_eq!(MetaDataRef::open(&bb).unwrap().to_owned(), be);
    }

    #[test]
    fn parsing_borrows_and_checks_lengths_first() {
        let b = sample().serialize().unwrap();
        let r = MetaDataRef::open(&b).unwrap();
        assert_eq!(r.shape().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(r.strides().collect::<Vec<_>>(), vec![24, 8]);
        for cut in 0..b.len() {
            assert!(MetaDataRef::open(&b[..cut]).is_err(), "{cut}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(matches!(
            MetaDataRef::open(&long),
            Err(Error::TrailingBytes { end: 66, extra: 1 })
        ));
        let tiny = Limits::default().with_max_header_bytes(10);
        assert!(MetaDataRef::open_with(&b, &tiny).is_err());
        assert_eq!(byte_length(u64::MAX, 0), None);
    }
}
