//! [`ReadOptions`]: how every format crate's reader opens a file — one set of options,
//! the same fields everywhere.

use crate::Limits;

/// When a reader checks the checksums and hashes a file carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verify {
    /// Each tensor's checksum or hash before its elements are handed out (decoded or
    /// copied), and the structures read at open; not for a zero-copy view.
    #[default]
    OnRead,
    /// Every checksum as the file is opened, as well as on read.
    OnOpen,
    /// Never: the bytes are used as they are.
    Never,
}

impl Verify {
    /// Whether anything is checked at all.
    #[must_use]
    pub fn any(self) -> bool {
        self != Verify::Never
    }

    /// [`OnRead`](Verify::OnRead) when `on`, [`Never`](Verify::Never) otherwise.
    #[must_use]
    pub fn from_bool(on: bool) -> Self {
        if on { Verify::OnRead } else { Verify::Never }
    }
}

/// How to open a file, whatever its format.
///
/// ```
/// use tensor_core::{Limits, ReadOptions, Verify};
/// let options = ReadOptions::default().strict(true).verify(Verify::OnOpen);
/// assert_eq!(options.limits, Limits::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Resource limits: header and metadata sizes, tensor count, decoded bytes, expansion.
    pub limits: Limits,
    /// Refuse what a format's reference tolerates but no conforming writer produces (zTensor:
    /// a non-zero reserved footer field, non-zero padding; BinTensors: non-canonical varints,
    /// padding, unsorted keys, bool bytes other than 0 and 1). Formats whose references are
    /// strict either way (safetensors, Tensogram, GRIB) read the same with or without it.
    pub strict: bool,
    /// When checksums and hashes are checked.
    pub verify: Verify,
}

impl ReadOptions {
    /// These options with other limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// These options with strict checking on or off.
    #[must_use]
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// These options with another verification policy.
    #[must_use]
    pub fn verify(mut self, verify: Verify) -> Self {
        self.verify = verify;
        self
    }
}

/// Default options with these limits.
impl From<Limits> for ReadOptions {
    fn from(limits: Limits) -> Self {
        ReadOptions::default().limits(limits)
    }
}

/// Default options with these limits.
impl From<&Limits> for ReadOptions {
    fn from(limits: &Limits) -> Self {
        ReadOptions::default().limits(*limits)
    }
}
