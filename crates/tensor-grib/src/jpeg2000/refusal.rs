//! Why a codestream was not decoded here: every module of the decoder says it so.

use std::fmt;

/// Why a codestream was not decoded here.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A feature of the standard this decoder does not follow.
    Unsupported(String),
    /// The codestream breaks the standard.
    Malformed(String),
    /// A buffer for the samples could not be had: no other decoder would fare better.
    Failed(tensor_core::Error),
}

impl From<tensor_core::Error> for Refusal {
    fn from(e: tensor_core::Error) -> Self {
        Refusal::Failed(e)
    }
}

impl Refusal {
    pub(super) fn unsupported(what: impl Into<String>) -> Self {
        Refusal::Unsupported(what.into())
    }

    pub(super) fn malformed(what: impl Into<String>) -> Self {
        Refusal::Malformed(what.into())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unsupported(what) => write!(f, "unsupported: {what}"),
            Refusal::Malformed(what) => f.write_str(what),
            Refusal::Failed(e) => write!(f, "{e}"),
        }
    }
}
