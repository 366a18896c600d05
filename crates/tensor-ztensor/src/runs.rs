//! Reading a tensor's elements in bounded runs instead of whole.

use crate::error::{Class, Error, Result};
use std::io::Read;

/// Hands `sink` the `expected` bytes `src` yields, in runs of at most `run` bytes, and fails
/// when the stream ends early or holds more; `what` names the tensor in errors. `check` sees
/// every run (for digests over the decoded bytes).
pub(crate) fn stream_exact(
    src: &mut dyn Read,
    expected: u64,
    run: usize,
    what: &str,
    check: &mut dyn FnMut(&[u8]),
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let bad = |m: String| Error::format(Class::DecompressionError, format!("{what}: {m}"));
    let mut buf = vec![
        0u8;
        run.clamp(1, 1 << 24)
            .min(usize::try_from(expected).unwrap_or(usize::MAX))
            .max(1)
    ];
    let mut left = expected;
    while left > 0 {
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        src.read_exact(&mut buf[..n]).map_err(|e| {
            bad(format!(
                "the data ends after {} of {expected} bytes ({e})",
                expected - left
            ))
        })?;
        check(&buf[..n]);
        sink(&buf[..n])?;
        left -= n as u64;
    }
    let mut probe = [0u8; 1];
    match src.read(&mut probe) {
        Ok(0) => Ok(()),
        Ok(_) => Err(bad(format!("the data holds more than {expected} bytes"))),
        Err(e) => Err(bad(e.to_string())),
    }
}
