//! Where the Tensogram writer gets each tensor's bytes: packed payloads as they are kept,
//! the rest as little-endian elements, a run at a time where the object is raw — checked
//! for what NaN/Inf masks would not give back.

use crate::error::Error;
use crate::formats::Carried;
use crate::model::TensorSet;
use std::borrow::Cow;
use tensor_dtype::Dtype;
use tensor_frame::{ObjectBytes, ObjectSource};

pub(super) struct Source<'a, 's> {
    /// The format's id, for errors.
    pub(super) format: &'static str,
    pub(super) set: &'a TensorSet<'s>,
    pub(super) names: &'a [String],
    /// Each tensor's packed payload, where it is kept packed.
    pub(super) kept: &'a [Option<Vec<u8>>],
    /// Each object's stored dtype.
    pub(super) dtypes: Vec<Dtype>,
    /// Whether non-finite values go into masks (`false`: kept as they are).
    pub(super) masked: bool,
    /// Whether a NaN's sign and payload must survive the masks (no `--canonical-nan`).
    pub(super) nan_bits: bool,
    /// The objects whose runs were all checked already (the writer asks for a raw object's
    /// runs twice: the second time they are the same bytes, checked once).
    pub(super) checked: Vec<bool>,
    pub(super) carried: Carried,
}

impl Source<'_, '_> {
    /// Masks give NaN and ±Inf back, but as the canonical quiet NaN, and a complex number
    /// with one non-finite part with both parts so (as tensogram does): what they would
    /// change is refused, not changed, unless canonical NaN was asked for. `bytes` are
    /// tensor `i`'s elements from element `from`.
    fn check_masking(&self, i: usize, bytes: &[u8], from: u64) -> crate::Result<()> {
        let dtype = self.dtypes[i];
        let changed = self
            .masked
            .then(|| {
                tensor_frame::masking_changes(
                    bytes,
                    dtype,
                    tensor_core::ByteOrder::Little,
                    self.nan_bits,
                )
            })
            .flatten();
        let Some(c) = changed else { return Ok(()) };
        let canonical = if c.nan_bits {
            "; --canonical-nan stores it as the quiet NaN"
        } else {
            ""
        };
        Err(Error::CannotRepresent {
            format: self.format,
            what: format!(
                "element {} of tensor {:?}, {} ({dtype}): tensogram's NaN/Inf masks would not \
                 give it back as it is (allowing tensorkit's extensions keeps it bit for bit, \
                 which tensogram's full validation flags{canonical})",
                from + c.element,
                self.names[i],
                c.what
            ),
        })
    }
}

impl<'a> ObjectSource<'a> for Source<'a, '_> {
    fn bytes(&mut self, i: usize) -> tensor_frame::Result<ObjectBytes<'a>> {
        let kept: &'a [Option<Vec<u8>>] = self.kept;
        if let Some(payload) = &kept[i] {
            return Ok(ObjectBytes::PreEncoded(Cow::Borrowed(payload)));
        }
        let set: &'a TensorSet<'_> = self.set;
        let bytes = set.tensors[i]
            .le_bytes(&set.limits)
            .and_then(|b| self.check_masking(i, &b, 0).map(|()| b))
            .map_err(|e| self.carried.keep(e, tensor_frame::Error::InvalidArgument))?;
        Ok(ObjectBytes::Raw(bytes))
    }

    /// Every tensor not kept packed: decoded (or read) a run at a time, never whole.
    fn streams(&self, i: usize) -> bool {
        self.kept[i].is_none()
    }

    fn runs(
        &mut self,
        i: usize,
        sink: &mut dyn FnMut(&[u8]) -> tensor_frame::Result<()>,
    ) -> tensor_frame::Result<()> {
        // The writer's own error goes back to it as it is; ours is carried past it.
        let mut theirs = None;
        let width = self.dtypes[i].byte_width().max(1) as u64;
        let mut from = 0u64;
        let check = !self.checked[i];
        let streamed = self.set.tensors[i].stream(&self.set.limits, &mut |run| {
            if check {
                self.check_masking(i, run, from / width)?;
            }
            from += run.len() as u64;
            sink(run).map_err(|e| {
                theirs = Some(e);
                Error::Core(tensor_core::Error::InvalidArgument(
                    "the Tensogram writer stopped".into(),
                ))
            })
        });
        match (theirs, streamed) {
            (Some(e), _) => Err(e),
            (None, Ok(())) => {
                self.checked[i] = true;
                Ok(())
            }
            (None, Err(e)) => Err(self.carried.keep(e, tensor_frame::Error::InvalidArgument)),
        }
    }
}
