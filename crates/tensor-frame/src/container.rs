//! A message as a [`TensorContainer`], and tensorkit's convention for the one-byte dtypes
//! Tensogram has no name for.
//!
//! Tensogram's dtypes stop at its own list ([`descriptor::DTYPES`](crate::descriptor::DTYPES)):
//! no bool, no float8. Such a tensor is stored as `uint8` — the same bytes — and its own
//! dtype is recorded under [`STORED_DTYPE`] in the object's `base` metadata entry, so
//! tensorkit reads it back as what it was while every Tensogram reader still reads the
//! bytes. Wider dtypes Tensogram lacks (the 4- and 6-bit floats) have no such form and are
//! refused by writers.

use crate::error::{Error, Result};
use crate::message::Message;
use crate::metadata::{Map, MetaValue};
use tensor_dtype::{Dtype, TensorContainer, TensorView};

/// The `base` key that records the dtype of a one-byte tensor stored as `uint8`.
pub const STORED_DTYPE: &str = "tensorkit_dtype";

/// The `base` keys the format keeps for itself: the object's name, [`STORED_DTYPE`] and
/// `_reserved_` (its format's `FormatInfo::reserved_keys`).
pub const RESERVED_KEYS: &[&str] = &["name", STORED_DTYPE, crate::metadata::RESERVED];

/// The dtype a tensor of `dtype` is stored as: itself when Tensogram has it, `uint8` for
/// the one-byte dtypes it lacks (recorded with [`record_dtype`]), `None` when it has no
/// Tensogram form at all.
#[must_use]
pub fn storage_dtype(dtype: Dtype) -> Option<Dtype> {
    if crate::descriptor::DTYPES.contains(&dtype) {
        Some(dtype)
    } else if dtype.byte_width() == 1 && !dtype.is_packed() {
        Some(Dtype::Uint8)
    } else {
        None
    }
}

/// Records `dtype` in an object's `base` entry when it is stored as another dtype.
pub fn record_dtype(entry: &mut Map, dtype: Dtype) {
    if storage_dtype(dtype) != Some(dtype) {
        entry.insert(STORED_DTYPE.into(), MetaValue::from(dtype.name()));
    }
}

/// The dtype an object was written from: what [`STORED_DTYPE`] in its `base` entry names,
/// when that is a dtype stored as `stored`; otherwise `stored` itself.
#[must_use]
pub fn original_dtype(base: Option<&Map>, stored: Dtype) -> Dtype {
    base.and_then(|b| b.get(STORED_DTYPE)?.as_text()?.parse::<Dtype>().ok())
        .filter(|&d| d != stored && storage_dtype(d) == Some(stored))
        .unwrap_or(stored)
}

/// An object's attributes as readers present them: its `base` entry less the keys the
/// format keeps for itself (`name`, [`STORED_DTYPE`], `_reserved_`).
#[must_use]
pub fn attributes(base: Map) -> Vec<(String, tensor_core::cbor::Value)> {
    base.into_iter()
        .filter(|(k, _)| !RESERVED_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k, tensor_core::cbor::Value::from(&v)))
        .collect()
}

impl Message<'_> {
    /// Object `i`'s `base` metadata entry, when the metadata decodes and has one.
    fn base_entry(&self, i: usize) -> Option<&Map> {
        self.metadata().ok()?.base.get(i)
    }

    /// Every object's dtype (as written, see [`original_dtype`]) and shape, read from the
    /// object frames on first use and kept.
    fn layouts(&self) -> Result<&[(Dtype, Vec<u64>)]> {
        if let Some(l) = self.layouts.get() {
            return Ok(l);
        }
        let mut all = Vec::with_capacity(Message::len(self));
        for i in 0..Message::len(self) {
            let o = self.object(i)?;
            let d = o.descriptor();
            all.push((original_dtype(self.base_entry(i), d.dtype), d.shape.clone()));
        }
        Ok(self.layouts.get_or_init(|| all))
    }
}

impl<'a> TensorContainer<'a> for Message<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        Message::len(self)
    }

    /// The `name` in the object's `base` metadata entry.
    fn name(&self, i: usize) -> Option<&str> {
        self.base_entry(i)?.get("name")?.as_text()
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        Ok(self.layouts()?[i].0)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.layouts()?[i].1)
    }

    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        let o = self.object(i)?;
        Ok(o.view_as(original_dtype(self.base_entry(i), o.descriptor().dtype)))
    }

    /// Decoded with the message's limits, NaN and ±Inf restored from their masks; the
    /// object's hash is checked when it has one, unless the message was opened not to.
    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        let o = self.object(i)?;
        let opts = crate::DecodeOptions {
            verify_hash: self.verifies() && o.stored_hash().is_some(),
            native_byte_order: true,
            restore_non_finite: true,
        };
        o.decode_into(dst, opts, self.limits())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_byte_dtypes_tensogram_lacks_are_stored_as_uint8_and_read_back() {
        assert_eq!(storage_dtype(Dtype::Float32), Some(Dtype::Float32));
        assert_eq!(storage_dtype(Dtype::Bool), Some(Dtype::Uint8));
        assert_eq!(storage_dtype(Dtype::Float8E4m3), Some(Dtype::Uint8));
        assert_eq!(storage_dtype(Dtype::Float4E2m1), None);
        let mut entry = Map::new();
        record_dtype(&mut entry, Dtype::Float32);
        assert!(entry.is_empty(), "a dtype Tensogram has is not recorded");
        record_dtype(&mut entry, Dtype::Bool);
        assert_eq!(original_dtype(Some(&entry), Dtype::Uint8), Dtype::Bool);
        // The record only applies to the storage it names.
        assert_eq!(original_dtype(Some(&entry), Dtype::Int8), Dtype::Int8);
        assert_eq!(original_dtype(None, Dtype::Uint8), Dtype::Uint8);
        entry.insert(STORED_DTYPE.into(), MetaValue::from("float64"));
        assert_eq!(original_dtype(Some(&entry), Dtype::Uint8), Dtype::Uint8);
    }
}
