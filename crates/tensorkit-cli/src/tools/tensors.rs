//! What several commands share: a tensor found by name or position, its elements one by
//! one, its digest, a name as one field of a line, and the output format a command writes.

use crate::error::{Error, Result};
use std::path::Path;
use tensorkit::{Format, TensorRef, TensorSet};

/// `name` as one field of a tab-separated line, as `ls` prints names: a backslash, tab,
/// newline or carriage return in it is escaped (`\\`, `\t`, `\n`, `\r`).
pub(super) fn escape_field(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            other => out.push(other),
        }
    }
    out
}

/// The tensor `key` names: its name, `tensor_<i>` for the i-th unnamed one, or `#<i>` for
/// the i-th in file order.
pub fn find<'f>(set: &'f TensorSet<'f>, key: &str, file: &Path) -> Result<TensorRef<'f>> {
    let by_name = set.tensors().find(|t| t.stored_name() == Some(key));
    let by_index = key
        .strip_prefix('#')
        .or_else(|| key.strip_prefix("tensor_"))
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|i| set.tensors().nth(i))
        .filter(|t| key.starts_with('#') || t.stored_name().is_none());
    if by_name.is_none()
        && let Some(e) = set.not_read_error(file, key)
    {
        return Err(e);
    }
    by_name.or(by_index).ok_or_else(|| Error::UnknownTarget {
        what: format!(
            "{}: no tensor {key:?} (names: {}; or #0 to #{})",
            file.display(),
            set.names()
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            set.len().saturating_sub(1)
        ),
    })
}

/// Tensor `t`'s elements in memory: its file's bytes where it stores them as they are
/// (checked against the file's checksum first), decoded into `held` otherwise.
pub(super) fn elements<'f>(
    t: TensorRef<'f>,
    held: &'f mut Option<tensorkit::Tensor>,
) -> Result<tensorkit::TensorView<'f>> {
    if let Ok(v) = t.view() {
        t.verify()?;
        return Ok(v);
    }
    Ok(held.insert(t.to_tensor()?).view())
}

/// SHA-256 of a tensor's little-endian elements, bools normalised to 0/1, streamed.
pub(super) fn digest(t: TensorRef<'_>) -> Result<[u8; 32]> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    t.write_canonical(&mut h)?;
    Ok(h.finalize().into())
}

/// The output format for `merge`/`split`: `--to`, else the output's extension, else (for
/// split) the input's format when it can be written, or the newest generation of it that
/// can (zTensor 1.x files split into zTensor 2).
pub(super) fn format_for(
    output: &Path,
    to: Option<&str>,
    fallback: Option<Format>,
) -> Result<Format> {
    match (to, Format::from_extension(output), fallback) {
        (None, None, Some(f)) if f.info().writes => Ok(f),
        (None, None, Some(f)) => {
            Format::from_extension(Path::new(&format!("file.{}", f.extension())))
                .map_or_else(|| crate::convert::target(output, to), Ok)
        }
        _ => crate::convert::target(output, to),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_names_keep_their_line_and_field() {
        assert_eq!(escape_field("a\tb\nc\\d\re"), "a\\tb\\nc\\\\d\\re");
        assert_eq!(escape_field("encoder.w"), "encoder.w");
    }
}
