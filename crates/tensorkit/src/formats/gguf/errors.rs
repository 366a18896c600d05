//! The format's id, and its crate's errors with the file they concern.

use crate::error::Error;
use std::path::Path;

/// GGUF's id, as errors name the format.
pub(super) const FORMAT: &str = "gguf";

/// The crate's errors with the file they concern.
pub(super) fn wrap(path: &Path) -> impl Fn(tensor_gguf::Error) -> Error + '_ {
    move |source| Error::format(path, FORMAT, source)
}
