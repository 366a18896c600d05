//! `ls`: one line per tensor.

use super::tensors::escape_field;
use crate::error::Result;
use crate::report;
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::Limits;

/// `ls`: one line per tensor — name (or `-`), dtype, shape, bytes, and where it sits.
pub fn ls(file: &Path, limits: &Limits) -> Result<String> {
    let opened = crate::open(file, limits)?;
    let mut out = String::new();
    for t in opened.tensors() {
        let _ = write!(
            out,
            "{}\t{}\t{}\t{}",
            escape_field(&t.name()),
            t.dtype(),
            report::shape_text(t.shape()),
            t.byte_len()
        );
        for (key, index) in t.location() {
            let _ = write!(out, "\t{key}={index}");
        }
        out.push('\n');
    }
    Ok(out)
}
