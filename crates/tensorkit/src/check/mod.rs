//! Checking a file: `validate` (every problem it has, or none) and `verify` (every checksum
//! and hash it carries, and every tensor decoded).
//!
//! A format with levelled validation of its own (Tensogram) reports every problem it finds,
//! through its adapter ([`Adapter::validate`](crate::adapter::Adapter::validate)). Other
//! formats are read completely, every checksum their readers know verified, and report the
//! first problem (their readers stop there).

pub(crate) mod report;

use crate::error::{Error, Result};
use report::{Problem, Validation, Verification};
use std::path::Path;
use tensor_core::{Limits, MmapSource, ReadOptions};
use tensor_dtype::{Checks, ValidateOptions};

/// Validates `file`: `options` choose how deep Tensogram validation goes (other formats are
/// always read whole, every checksum verified). A problem with the file is part of the
/// result; only a file that cannot be read at all is an error.
pub fn validate(
    file: impl AsRef<Path>,
    options: ValidateOptions,
    limits: &Limits,
) -> Result<Validation> {
    let file = file.as_ref();
    let map = whole_file(file, limits)?;
    Ok(validate_bytes(file, &map, options, limits))
}

/// Every byte of `file`, mapped: a local file, or (feature `remote`) an object at a URL,
/// downloaded into an unnamed temporary file first.
pub(crate) fn whole_file(file: &Path, limits: &Limits) -> Result<MmapSource> {
    #[cfg(feature = "remote")]
    if let Some(url) = file.to_str().filter(|s| crate::remote::is_url(s)) {
        return crate::remote::download(url, limits);
    }
    let _ = limits;
    crate::local::map_local(file)
}

/// [`validate`] of `file`'s bytes, already mapped.
fn validate_bytes(
    file: &Path,
    map: &[u8],
    options: ValidateOptions,
    limits: &Limits,
) -> Validation {
    let format = crate::registry::detect(file, map);
    let detected = format.as_ref().ok().copied();
    if let Some(v) = detected.and_then(|f| f.adapter().validate(file, map, options, limits)) {
        return v;
    }
    let mut warnings = Vec::new();
    let checked = format.and_then(|f| {
        let set = f
            .adapter()
            .read(file, map, &ReadOptions::default().limits(*limits))?;
        // Every checksum and digest the format carries, not only those read.
        let checked = f.adapter().verify_checksums(file, map)?;
        warnings.extend(
            checked
                .tolerated
                .into_iter()
                .map(|w| Problem::warning("nonconforming", w)),
        );
        // Every tensor decodes (in bounded runs): data no checksum covers must at least do that.
        set.decode_every_tensor()?;
        Ok((f, set.tensors.len(), checked.verified))
    });
    match checked {
        Ok((f, tensors, hashes_verified)) => Validation {
            format: Some(f),
            tensors,
            hashes_verified,
            problems: warnings,
        },
        Err(e) => Validation {
            format: detected,
            tensors: 0,
            hashes_verified: 0,
            problems: vec![Problem::error(&e)],
        },
    }
}

/// `verify`: every checksum and hash the file carries, and every tensor decoded. A file
/// that carries nothing to verify is reported as such, never as verified.
pub fn verify(file: impl AsRef<Path>, limits: &Limits) -> Result<Verification> {
    let file = file.as_ref();
    let map = whole_file(file, limits)?;
    let format = crate::registry::detect(file, &map)?;
    let adapter = format.adapter();
    if let Some(v) = adapter.verify(file, &map, limits) {
        return v;
    }
    let checks = format.info().checks;
    let tensors_read = |bytes: &[u8]| -> Result<usize> {
        let set = adapter.read(file, bytes, &ReadOptions::default().limits(*limits))?;
        set.decode_every_tensor()?;
        Ok(set.tensors.len())
    };
    match adapter.verify_checksums(file, &map) {
        Ok(checked) => Ok(Verification {
            format,
            checks,
            verified: checked.verified,
            tensors_read: Some(tensors_read(&map)?),
            problems: Vec::new(),
            problem: (checked.verified == 0).then(|| Error::NothingVerified {
                path: file.to_path_buf(),
                reason: match checks {
                    Checks::None => "the format stores no checksums",
                    _ => "no tensor carries a checksum",
                }
                .to_owned(),
            }),
        }),
        Err(Error::Format { kind, source, .. }) => {
            let mismatch = Error::VerifyFailed {
                path: file.to_path_buf(),
                kind,
                detail: source.to_string(),
            };
            Ok(Verification {
                format,
                checks,
                verified: 0,
                tensors_read: None,
                problems: vec![Problem {
                    code: kind.as_str().to_owned(),
                    message: source.to_string(),
                    ..Problem::error(&mismatch)
                }],
                problem: Some(mismatch),
            })
        }
        Err(e) => Err(e),
    }
}
