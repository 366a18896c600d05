//! A GRIB file: its messages found and their fields listed, nothing decoded.

use crate::bits::be;
use crate::context::At;
use crate::error::Result;
use crate::field::Field;
use crate::{edition1, edition2};
use tensor_core::{Limits, ReadOptions};

/// A GRIB file's fields, listed from its sections; values are decoded on demand.
#[derive(Clone, Debug)]
pub struct Grib<'a> {
    bytes: &'a [u8],
    fields: Vec<Field>,
    /// Each field's name ([`crate::naming`]) and shape, for the format contract.
    pub(crate) names: Vec<String>,
    pub(crate) shapes: Vec<Vec<u64>>,
    pub(crate) limits: Limits,
}

impl<'a> Grib<'a> {
    /// Lists the fields of `bytes`, a whole GRIB file, with default options.
    pub fn open(bytes: &'a [u8]) -> Result<Self> {
        Self::open_with(bytes, &ReadOptions::default())
    }

    /// Lists the fields of `bytes`, a whole GRIB file: every message, one after another
    /// (zero bytes between them are skipped, as padding), within `options.limits` (the
    /// field count; decoding a field checks its size against them too).
    pub fn open_with(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        let limits = &options.limits;
        let mut fields = Vec::new();
        let mut pos = 0usize;
        let mut message = 0usize;
        while pos < bytes.len() {
            if bytes[pos] == 0 {
                pos += 1;
                continue;
            }
            let at = At {
                message,
                offset: pos as u64,
            };
            let rest = &bytes[pos..];
            if rest.len() < 4 || &rest[..4] != b"GRIB" {
                return Err(at.malformed(format!(
                    "bytes at offset {pos} are not a GRIB message (no 'GRIB' where one should start)"
                )));
            }
            let head = at.slice(rest, 0, 16.min(rest.len()).max(8), "section 0")?;
            let (len, edition) = match head[7] {
                1 => (be(&head[4..7]), 1u8),
                2 => {
                    let h = at.slice(rest, 0, 16, "section 0")?;
                    (be(&h[8..16]), 2u8)
                }
                e => return Err(at.unsupported(format!("GRIB edition {e}"))),
            };
            let min = if edition == 1 { 8 + 28 + 4 } else { 16 + 4 };
            if len < min as u64 {
                return Err(
                    at.malformed(format!("section 0 gives a message length of {len} bytes"))
                );
            }
            if len > rest.len() as u64 {
                return Err(at.truncated(
                    "the message",
                    format!(
                        "section 0 gives {len} bytes, {} remain in the file",
                        rest.len()
                    ),
                ));
            }
            let len = len as usize;
            let mut found = if edition == 1 {
                vec![edition1::field(bytes, pos, len, at)?]
            } else {
                edition2::fields(bytes, pos, len, at)?
            };
            for f in &mut found {
                f.length = len as u64;
            }
            fields.extend(found);
            limits.check_tensor_count(fields.len() as u64)?;
            pos += len;
            message += 1;
        }
        let names = crate::naming::names(&fields);
        let shapes = fields.iter().map(Field::shape).collect();
        Ok(Grib {
            bytes,
            fields,
            names,
            shapes,
            limits: *limits,
        })
    }

    /// The fields, in file order.
    #[must_use]
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The file's bytes.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Field `i`'s values, decoded into a new vector after checking its size against
    /// `limits` (see [`Field::decode_into`]).
    pub fn values(&self, i: usize, limits: &Limits) -> Result<Vec<f64>> {
        let f = &self.fields[i];
        f.check_decode(limits)?;
        let n = tensor_core::checked::to_usize(f.points, "GRIB points")?;
        let mut out = tensor_core::buffer::try_filled(n, 0f64, "GRIB values")?;
        f.decode_into(self.bytes, &mut out)?;
        Ok(out)
    }
}
