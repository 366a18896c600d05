//! Tensogram's own checks: tensor-frame's levelled validation, every problem reported,
//! and `verify` as its checksum level (wire version 2 files migrated to version 3 first).

use crate::check::report::{Location, Problem, Validation, Verification};
use crate::error::{Error, Result};
use crate::format::Format;
use std::path::Path;
use tensor_core::{Kinded, Limits};
use tensor_dtype::{Checks, Level, Severity, ValidateOptions};

/// Every issue of a Tensogram validation report, as [`Validation::problems`] lists them.
fn tensogram_problems(r: &tensor_frame::Report) -> Vec<Problem> {
    r.issues
        .iter()
        .map(|i| Problem {
            severity: i.severity,
            kind: i.kind,
            code: i.code.to_owned(),
            location: Location {
                message: i.message,
                object: i.object,
                offset: i.offset,
            },
            message: i.detail.clone(),
        })
        .collect()
}

/// Validation of a Tensogram file, with the file migrated to wire version 3 when it holds
/// version 2 messages (returned, for callers that go on to read it).
pub(super) fn validate(
    map: &[u8],
    options: ValidateOptions,
    limits: &Limits,
) -> (Validation, Option<Vec<u8>>) {
    if !tensor_frame::v2::holds_v2(map) {
        let r = tensor_frame::validate(map, options, limits);
        let v = Validation {
            format: Some(Format::TENSOGRAM),
            tensors: r.objects,
            hashes_verified: r.hashes_verified,
            problems: tensogram_problems(&r),
        };
        return (v, None);
    }
    validate_v2(map, options, limits)
}

/// A Tensogram file holding wire version 2 messages: they are migrated to version 3 (every
/// version 2 hash checked), and the result validated as any version 3 file is. The report
/// says what was found: how many version 2 messages, and that tensogram 0.19 and later no
/// longer read them.
fn validate_v2(
    map: &[u8],
    options: ValidateOptions,
    limits: &Limits,
) -> (Validation, Option<Vec<u8>>) {
    match tensor_frame::v2::migrate(map, limits) {
        Err(e) => {
            let v = Validation {
                format: Some(Format::TENSOGRAM),
                tensors: 0,
                hashes_verified: 0,
                problems: vec![Problem {
                    severity: Severity::Error,
                    kind: e.kind(),
                    code: "wire_version_2".to_owned(),
                    location: Location::default(),
                    message: format!("wire version 2: {e}"),
                }],
            };
            (v, None)
        }
        Ok(m) => {
            let r = tensor_frame::validate(&m.bytes, options, limits);
            let mut problems = vec![Problem::warning(
                "wire_version_2",
                format!(
                    "{} of {} messages are wire version 2 (tensogram 0.14 to 0.16; tensogram 0.19 \
                     and later refuse them), {} objects, read as migrated to version 3 with \
                     every version 2 hash checked ({}); `tensorkit migrate` writes the version 3 \
                     file",
                    m.v2_messages,
                    m.v2_messages + m.v3_messages,
                    m.v2_objects,
                    m.hashes_verified
                ),
            )];
            problems.extend(
                m.notes
                    .iter()
                    .map(|n| Problem::warning("wire_version_2", n.clone())),
            );
            problems.extend(tensogram_problems(&r));
            let v = Validation {
                format: Some(Format::TENSOGRAM),
                tensors: r.objects,
                hashes_verified: m.hashes_verified,
                problems,
            };
            (v, Some(m.bytes))
        }
    }
}

/// `verify` of a Tensogram file: every hash checked at the checksum level of validation (a
/// version 2 file as migrated), then every tensor decoded by `decode_all` (which returns how
/// many there were).
pub(super) fn verify(
    file: &Path,
    map: &[u8],
    limits: &Limits,
    decode_all: impl Fn(&[u8]) -> Result<usize>,
) -> Result<Verification> {
    let (o, migrated) = validate(
        map,
        ValidateOptions {
            level: Level::Checksum,
            canonical: false,
        },
        limits,
    );
    let mut tensors_read = None;
    let problem = if let Some(p) = o.problems.iter().find(|p| p.is_error()) {
        Some(Error::VerifyFailed {
            path: file.to_path_buf(),
            kind: p.kind,
            detail: p.to_string(),
        })
    } else {
        // Every tensor decodes, hashes or not (a version 2 file as the validation
        // migrated it): data no hash covers must at least do that.
        tensors_read = Some(decode_all(migrated.as_deref().unwrap_or(map))?);
        (o.hashes_verified == 0).then(|| Error::NothingVerified {
            path: file.to_path_buf(),
            reason: "no frame carries a hash".to_owned(),
        })
    };
    Ok(Verification {
        format: Format::TENSOGRAM,
        checks: Checks::Hashes,
        verified: o.hashes_verified,
        tensors_read,
        problems: o.problems,
        problem,
    })
}
