//! Protobuf's wire format, as far as reading needs: fields of a message as (number, value),
//! varints of at most ten bytes, lengths checked against what the message holds.

use crate::error::{Error, Result};

/// One field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'b> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1: eight bytes.
    Fixed64(u64),
    /// Wire type 2: a message, a string, bytes or a packed repeated field; with its offset
    /// in the file.
    Bytes(&'b [u8], u64),
    /// Wire type 5: four bytes.
    Fixed32(u32),
}

/// The fields of a message, in the order they are stored.
pub struct Fields<'b> {
    bytes: &'b [u8],
    at: usize,
    /// Where `bytes` starts in the file, for errors.
    base: u64,
    what: &'static str,
}

impl<'b> Fields<'b> {
    /// The fields of `bytes`, a message of kind `what` starting `base` bytes into the file.
    #[must_use]
    pub fn new(bytes: &'b [u8], base: u64, what: &'static str) -> Self {
        Fields {
            bytes,
            at: 0,
            base,
            what,
        }
    }

    fn err(&self, reason: impl Into<String>) -> Error {
        Error::Malformed {
            what: self.what.into(),
            offset: self.base + self.at as u64,
            reason: reason.into(),
        }
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.at) else {
                return Err(self.err("a varint runs past the end of its message"));
            };
            self.at += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("a varint longer than ten bytes"))
    }

    fn take(&mut self, n: u64) -> Result<&'b [u8]> {
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(self.err(format!(
                "a field of {n} bytes where its message has {left} left"
            )));
        }
        let start = self.at;
        self.at += n as usize;
        Ok(&self.bytes[start..self.at])
    }

    /// The next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'b>)>> {
        if self.at >= self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number =
            u32::try_from(key >> 3).map_err(|_| self.err("a field number beyond 32 bits"))?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Value::Fixed64(u64::from_le_bytes([
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                ]))
            }
            2 => {
                let n = self.varint()?;
                let offset = self.base + self.at as u64;
                Value::Bytes(self.take(n)?, offset)
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            t => return Err(self.err(format!("wire type {t} (groups are not used by ONNX)"))),
        };
        Ok(Some((number, value)))
    }
}

/// The varints of a packed repeated field (or of one unpacked value).
pub fn varints(v: Value<'_>, what: &'static str) -> Result<Vec<u64>> {
    match v {
        Value::Varint(x) => Ok(vec![x]),
        Value::Bytes(b, offset) => {
            let mut f = Fields::new(b, offset, what);
            let mut out = Vec::new();
            while f.at < b.len() {
                out.push(f.varint()?);
            }
            Ok(out)
        }
        _ => Err(Error::Malformed {
            what: what.into(),
            offset: 0,
            reason: "a repeated integer field of fixed width".into(),
        }),
    }
}

/// The fixed-width little-endian words of a packed repeated field (or one unpacked value),
/// `width` bytes each.
pub fn fixed(v: Value<'_>, width: usize, what: &'static str) -> Result<Vec<u8>> {
    match (v, width) {
        (Value::Fixed32(x), 4) => Ok(x.to_le_bytes().to_vec()),
        (Value::Fixed64(x), 8) => Ok(x.to_le_bytes().to_vec()),
        (Value::Bytes(b, _), _) if b.len() % width == 0 => Ok(b.to_vec()),
        (_, _) => Err(Error::Malformed {
            what: what.into(),
            offset: 0,
            reason: format!("a repeated field of {width}-byte values of another length or width"),
        }),
    }
}
