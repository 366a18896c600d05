//! Reading an object's headers in: the format's own walk, pointer by pointer, each range
//! widened by the read-ahead; and the helpers it shares with opening.

use super::header::{self, Parts};
use super::store::{Object, RemoteOptions};
use crate::error::{Error, Result};
use crate::format::Format;
use std::ops::Range;
use std::path::Path;
use tensor_core::ReadOptions;

/// Fetches into `parts` what `format`'s header walk asks for, each range widened by the
/// read-ahead, until it asks for nothing more.
pub(super) async fn walk_headers(
    object: &Object,
    parts: &mut Parts,
    path: &Path,
    format: Format,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<()> {
    let adapter = format.adapter();
    let ahead = header_read_ahead(format, remote);
    loop {
        let need: Vec<Range<u64>> = adapter
            .header_ranges(path, parts, &options.limits)?
            .into_iter()
            .map(|r| header::widen(r, object.len(), ahead))
            .collect();
        if need.is_empty() {
            return Ok(());
        }
        fetch_into(object, parts, &need).await?;
    }
}

/// The stand-in is as long as the server says the object is (16 TiB, a lie, is more than a
/// file system holds).
pub(super) fn image_error(url: &str, len: u64, e: &Error) -> Error {
    Error::Remote {
        url: url.to_owned(),
        what: format!("the server says the object is {len} bytes long: {e}"),
    }
}

/// How far a header walk reads past each range it asks for: the format's own read-ahead
/// where its headers are small beside its data (never more than the caller's), else the
/// caller's.
pub(super) fn header_read_ahead(format: Format, remote: &RemoteOptions) -> u64 {
    format
        .info()
        .header_read_ahead
        .map_or(remote.read_ahead, |a| a.min(remote.read_ahead))
}

/// Fetches `need` (merged and concurrently, [`Object::get_many`]) into `parts`.
pub(super) async fn fetch_into(
    object: &Object,
    parts: &mut Parts,
    need: &[Range<u64>],
) -> Result<()> {
    for (r, b) in need.iter().zip(object.get_many(need).await?) {
        parts.add(r.start, b);
    }
    Ok(())
}
