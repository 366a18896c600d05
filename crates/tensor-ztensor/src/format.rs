//! zTensor as the format contract describes it: one [`Format`] per generation a user
//! tells apart, each generation's reader a [`TensorContainer`], and where each keeps the
//! index or manifest a reader needs first.

use crate::container::{Container, FOOTER_V2, Generation, MAGIC_V1, MAGIC_V2};
use crate::error::{Error, Result};
use crate::read::Decoded;
use crate::v0_1::{self, ZTensor};
use std::borrow::Cow;
use std::ops::Range;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::format::starts_like;
use tensor_dtype::{Dtype, Format, FormatInfo, TensorContainer, TensorView};

/// zTensor 0.1 (`ZTEN0001`).
#[derive(Clone, Copy, Debug)]
pub struct Ztensor01Format;

/// zTensor 1.x (`ZTEN1000`): read only.
#[derive(Clone, Copy, Debug)]
pub struct Ztensor1Format;

/// zTensor 2, the current container.
#[derive(Clone, Copy, Debug)]
pub struct Ztensor2Format;

/// The generation `head`, a file's first bytes, announces — a magic cut short after its
/// first 4 bytes counts, so that the generation's reader reports the file as truncated.
#[must_use]
pub fn recognise(head: &[u8]) -> Option<Generation> {
    [
        (v0_1::MAGIC_V0_1, Generation::V0_1),
        (MAGIC_V1, Generation::V1),
        (MAGIC_V2, Generation::V2),
    ]
    .into_iter()
    .find(|(m, _)| starts_like(head, m))
    .map(|(_, g)| g)
    .map(|g| {
        // A magic cut short is the same 4 bytes (`ZTEN`) for every generation: the oldest
        // reader reports it, as the reference's dispatch does.
        if head.len() < 8 { Generation::V0_1 } else { g }
    })
}

impl Format for Ztensor01Format {
    const INFO: FormatInfo = FormatInfo {
        id: "ztensor-0.1",
        name: "zTensor 0.1",
        extensions: &["zt", "ztensor"],
        writes: true,
        reserved_keys: &v0_1::RESERVED_KEYS,
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: true,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = ZTensor<'a>;

    fn recognise(head: &[u8]) -> bool {
        recognise(head) == Some(Generation::V0_1)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<ZTensor<'a>> {
        ZTensor::open_with(bytes, options)
    }

    /// The index's length in the last 8 bytes, the index before it.
    fn header_ranges(held: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
        let len = held.len();
        let tail = len.saturating_sub(8);
        Ok(match held.u64_le(tail) {
            None => held.want(tail..len),
            Some(n) => {
                limits.check_header_bytes(n)?;
                held.want(tail.saturating_sub(n)..len)
            }
        })
    }
}

impl Format for Ztensor1Format {
    const INFO: FormatInfo = FormatInfo {
        id: "ztensor-1",
        name: "zTensor 1.x",
        extensions: &["zt", "ztensor"],
        writes: false,
        reserved_keys: &[],
        write_choices: &[],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: true,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = Container<'a>;

    fn recognise(head: &[u8]) -> bool {
        recognise(head) == Some(Generation::V1)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Container<'a>> {
        Container::open_with(bytes, options)
    }

    /// The manifest's length before the trailing magic (1.1 and later) or at the very
    /// end, the manifest before it.
    fn header_ranges(held: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
        let len = held.len();
        let tail = len.saturating_sub(16)..len;
        let Some(t) = held.slice(tail.clone()) else {
            return Ok(held.want(tail));
        };
        let at = if t.len() == 16 && t[8..] == MAGIC_V1[..] {
            len - 16
        } else {
            len.saturating_sub(8)
        };
        let n = held.u64_le(at).unwrap_or(0);
        limits.check_header_bytes(n)?;
        Ok(held.want(at.saturating_sub(n)..len))
    }
}

impl Format for Ztensor2Format {
    const INFO: FormatInfo = FormatInfo {
        id: "ztensor-2",
        name: "zTensor 2",
        extensions: &["zt", "ztensor"],
        writes: true,
        reserved_keys: &[],
        write_choices: &[tensor_dtype::WriteChoice::Alignment],
        header_read_ahead: None,
        header_reserve: 0,
        holds_attributes: true,
        unique_names: true,
        checks: tensor_dtype::Checks::Checksums,
        header_first: false,
        any_tensor: true,
    };
    type Error = Error;
    type Reader<'a> = Container<'a>;

    fn recognise(head: &[u8]) -> bool {
        recognise(head) == Some(Generation::V2)
    }

    fn open_with<'a>(bytes: &'a [u8], options: &ReadOptions) -> Result<Container<'a>> {
        Container::open_with(bytes, options)
    }

    /// The footer (its last 40 bytes) gives the manifest's offset and length.
    fn header_ranges(held: &dyn Held, limits: &Limits) -> Result<Vec<Range<u64>>> {
        let len = held.len();
        let footer = len.saturating_sub(FOOTER_V2 as u64);
        Ok(match (held.u64_le(footer), held.u64_le(footer + 8)) {
            (Some(at), Some(n)) => {
                limits.check_header_bytes(n)?;
                let mut r = held.want(at.min(len)..at.saturating_add(n).min(len));
                r.extend(held.want(footer..len));
                r
            }
            _ => held.want(footer..len),
        })
    }
}

/// A raw dense tensor's elements as a view borrowed from the file; `None` when reading it
/// gave a copy.
fn borrowed_view<'a>(d: &Decoded<'a>) -> Result<Option<TensorView<'a>>> {
    Ok(match &d.data {
        Cow::Borrowed(b) => Some(TensorView::new(b, d.dtype, &d.shape, d.byte_order)?),
        Cow::Owned(_) => None,
    })
}

impl<'a> TensorContainer<'a> for ZTensor<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.entries().len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.entries()[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        self.known_dtype(i)
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.entries()[i].shape)
    }

    /// Raw dense tensors only; reading one checks its checksum as the options say.
    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        let e = &self.entries()[i];
        if e.encoding != v0_1::Encoding::Raw || e.layout != v0_1::Layout::Dense {
            return Ok(None);
        }
        borrowed_view(&self.read(i)?)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        ZTensor::read_into(self, i, dst)
    }
}

impl<'a> TensorContainer<'a> for Container<'a> {
    type Error = Error;

    fn len(&self) -> usize {
        self.objects().len()
    }

    fn name(&self, i: usize) -> Option<&str> {
        Some(&self.objects()[i].name)
    }

    fn dtype(&self, i: usize) -> Result<Dtype> {
        self.objects()[i].dtype()
    }

    fn shape(&self, i: usize) -> Result<&[u64]> {
        Ok(&self.objects()[i].shape)
    }

    /// Raw dense tensors only; reading one checks its digest as the options say.
    fn view(&self, i: usize) -> Result<Option<TensorView<'a>>> {
        if !self.objects()[i].is_raw_dense() {
            return Ok(None);
        }
        borrowed_view(&self.read(i)?)
    }

    fn read_into(&self, i: usize, dst: &mut [u8]) -> Result<()> {
        Container::read_into(self, i, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_are_told_apart_and_a_cut_magic_goes_to_the_oldest_reader() {
        assert_eq!(recognise(b"ZTEN0001rest"), Some(Generation::V0_1));
        assert_eq!(recognise(b"ZTEN1000rest"), Some(Generation::V1));
        assert_eq!(recognise(&MAGIC_V2[..]), Some(Generation::V2));
        assert_eq!(recognise(b"ZTEN10"), Some(Generation::V0_1));
        assert_eq!(recognise(b"ZTE"), None);
        assert_eq!(recognise(b"TENSOGRM"), None);
    }

    #[test]
    fn the_v2_manifest_is_found_from_the_footer() {
        let t = tensor_dtype::Tensor::from_elements(&[3], &[1u8, 2, 3]).unwrap();
        let bytes = crate::v2::serialize([("t", t.view(), None)], None).unwrap();
        assert!(
            Ztensor2Format::header_ranges(&tensor_core::held::Whole(&bytes), &Limits::default())
                .unwrap()
                .is_empty()
        );
    }
}
