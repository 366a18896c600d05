//! Where the streaming writers get each object's bytes: whole, or a raw object's elements
//! in runs.

use crate::error::Result;
use std::borrow::Cow;

/// One object's bytes for [`write_streamed`](super::write_streamed).
#[derive(Clone, Debug)]
pub enum ObjectBytes<'d> {
    /// The elements, run through the descriptor's pipeline.
    Raw(Cow<'d, [u8]>),
    /// The payload, already encoded: the descriptor carries every parameter its pipeline
    /// needs (as for [`serialize_pre_encoded`](super::serialize_pre_encoded)); it is framed and hashed as it is.
    PreEncoded(Cow<'d, [u8]>),
}

/// Where [`write_from`](super::write_from) gets each object's bytes.
pub trait ObjectSource<'d> {
    /// Object `i`'s bytes, whole.
    fn bytes(&mut self, i: usize) -> Result<ObjectBytes<'d>>;

    /// Whether object `i`'s elements can be handed over in runs by [`runs`](Self::runs)
    /// rather than whole (for a raw object, which is then never whole in memory).
    fn streams(&self, i: usize) -> bool {
        let _ = i;
        false
    }

    /// Hands object `i`'s elements to `sink` in runs of whole elements, in order: the bytes
    /// [`bytes`](Self::bytes) gives as [`ObjectBytes::Raw`], a run at a time. Asked only
    /// where [`streams`](Self::streams) says so.
    fn runs(&mut self, i: usize, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        match self.bytes(i)? {
            ObjectBytes::Raw(b) | ObjectBytes::PreEncoded(b) => sink(&b),
        }
    }
}

/// A closure as an [`ObjectSource`] that gives each object whole ([`write_streamed`](super::write_streamed)).
pub(super) struct Whole<'f, 'd>(pub(super) &'f mut dyn FnMut(usize) -> Result<ObjectBytes<'d>>);

impl<'d> ObjectSource<'d> for Whole<'_, 'd> {
    fn bytes(&mut self, i: usize) -> Result<ObjectBytes<'d>> {
        (self.0)(i)
    }
}
