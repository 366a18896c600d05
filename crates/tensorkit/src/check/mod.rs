//! Checking a file: `validate` (every problem it has, or none) and `verify` (every checksum
//! and hash it carries, and every tensor decoded).
//!
//! Tensogram files get tensor-frame's levelled validation, which reports every problem it
//! finds. Other formats are read completely, every checksum their readers know verified,
//! and report the first problem (their readers stop there).

use crate::error::{Error, Result};
use crate::formats;
use crate::model::FormatId;
use serde_json::{Value, json};
use std::path::Path;
use tensor_core::{ErrorKind, Kinded, Limits, MmapSource};
pub use tensor_frame::{Level, Severity, ValidateOptions};

/// Where in a file a problem is; every part that is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// The message's index in the file (Tensogram).
    pub message: Option<usize>,
    /// The object's index in its message (Tensogram).
    pub object: Option<usize>,
    /// The byte offset in the file.
    pub offset: Option<u64>,
}

impl std::fmt::Display for Location {
    /// `message 0 object 1 byte 512`, with the parts that are known; empty when none is.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut sep = "";
        for (k, v) in [
            ("message", self.message.map(|m| m as u64)),
            ("object", self.object.map(|o| o as u64)),
            ("byte", self.offset),
        ] {
            if let Some(v) = v {
                write!(f, "{sep}{k} {v}")?;
                sep = " ";
            }
        }
        Ok(())
    }
}

/// One problem validation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// An error (the file is broken) or a warning (legal but questionable).
    pub severity: Severity,
    /// What kind of error it is, as every tensorkit error says it.
    pub kind: ErrorKind,
    /// A stable code: the error kind, or Tensogram's own (`hash_mismatch`,
    /// `non_zero_padding`, `wire_version_2`…).
    pub code: String,
    /// Where it is.
    pub location: Location,
    /// What is wrong, in words.
    pub message: String,
}

impl Problem {
    /// An error, as `e` says it, at no particular place.
    fn error(e: &Error) -> Self {
        Problem {
            severity: Severity::Error,
            kind: e.kind(),
            code: e.kind().as_str().to_owned(),
            location: Location::default(),
            message: e.to_string(),
        }
    }

    /// A warning with `code`, at no particular place.
    fn warning(code: &str, message: String) -> Self {
        Problem {
            severity: Severity::Warning,
            kind: ErrorKind::Malformed,
            code: code.to_owned(),
            location: Location::default(),
            message,
        }
    }

    /// Whether it is an error.
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `error` or `warning`.
    #[must_use]
    pub fn severity_name(&self) -> &'static str {
        if self.is_error() { "error" } else { "warning" }
    }
}

impl std::fmt::Display for Problem {
    /// `code at WHERE: message`, or `code: message` where nothing says where.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.location.to_string();
        if at.is_empty() {
            write!(f, "{}: {}", self.code, self.message)
        } else {
            write!(f, "{} at {at}: {}", self.code, self.message)
        }
    }
}

/// What validation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validation {
    /// The format, when it was recognised.
    pub format: Option<FormatId>,
    /// Tensors (objects) checked.
    pub tensors: usize,
    /// Hashes or checksums verified (Tensogram).
    pub hashes_verified: usize,
    /// Every problem found, in file order.
    pub problems: Vec<Problem>,
}

impl Validation {
    /// Whether any problem is an error.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.problems.iter().any(Problem::is_error)
    }

    /// The report as data: what `tensorkit validate --json` prints and Python's
    /// `tensorkit.validate` returns, one shape for both.
    #[must_use]
    pub fn to_json(&self) -> Value {
        json!({
            "format": self.format.map(FormatId::id),
            "valid": !self.failed(),
            "tensors": self.tensors,
            "hashes_verified": self.hashes_verified,
            "problems": self.problems.iter().map(|p| json!({
                "severity": p.severity_name(),
                "kind": p.kind.as_str(),
                "code": p.code,
                "where": p.location.to_string(),
                "detail": p.message,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Verifies every checksum and digest of the zTensor file `file` mapped at `map`; returns how
/// many there were, and what the reader tolerated but a conforming writer never produces.
fn ztensor_checksums(file: &Path, map: &[u8]) -> Result<(usize, Vec<String>)> {
    tensor_ztensor::AnyZTensor::open(map)
        .and_then(|z| Ok((z.verify_all()?, z.warnings())))
        .map_err(|source| Error::Ztensor {
            path: file.to_path_buf(),
            source,
        })
}

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
    crate::open::map_local(file)
}

/// [`validate`] of `file`'s bytes, already mapped.
fn validate_bytes(
    file: &Path,
    map: &[u8],
    options: ValidateOptions,
    limits: &Limits,
) -> Validation {
    let limits = *limits;
    let format = formats::detect(file, map);
    let detected = format.as_ref().ok().copied();
    if let Ok(FormatId::Tensogram) = format {
        return validate_tensogram(map, options, &limits).0;
    }
    let mut warnings = Vec::new();
    let checked = format.and_then(|f| {
        let set = formats::read(file, map, &limits)?;
        // zTensor carries checksums and digests: verify every one, not only those read.
        let verified = match f {
            FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
                let (n, tolerated) = ztensor_checksums(file, map)?;
                warnings.extend(
                    tolerated
                        .into_iter()
                        .map(|w| Problem::warning("nonconforming", w)),
                );
                n
            }
            _ => 0,
        };
        // Every tensor decodes (in bounded runs): data no checksum covers must at least do that.
        set.decode_every_tensor()?;
        Ok((f, set.tensors.len(), verified))
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

/// [`validate_bytes`] of a Tensogram file, with the file migrated to wire version 3 when it
/// holds version 2 messages (returned, for callers that go on to read it).
fn validate_tensogram(
    map: &[u8],
    options: ValidateOptions,
    limits: &Limits,
) -> (Validation, Option<Vec<u8>>) {
    if !tensor_frame::v2::holds_v2(map) {
        let r = tensor_frame::validate(map, options, limits);
        let v = Validation {
            format: Some(FormatId::Tensogram),
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
                format: Some(FormatId::Tensogram),
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
                format: Some(FormatId::Tensogram),
                tensors: r.objects,
                hashes_verified: m.hashes_verified,
                problems,
            };
            (v, Some(m.bytes))
        }
    }
}

/// What a format carries for `verify` to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Checks {
    /// Hashes of its frames and objects (Tensogram).
    Hashes,
    /// Checksums and digests of its tensors (zTensor).
    Checksums,
    /// Nothing: the format stores no checksums (safetensors, BinTensors, GRIB, GGUF).
    None,
}

/// What `verify` found.
#[derive(Debug)]
pub struct Verification {
    /// The file's format.
    pub format: FormatId,
    /// What the format carries to check.
    pub checks: Checks,
    /// How many of them were verified (0 for [`Checks::None`]).
    pub verified: usize,
    /// Tensors decoded whole; `None` when a mismatch stopped the check before decoding.
    pub tensors_read: Option<usize>,
    /// What the check found on its way: every problem Tensogram's checksum-level validation
    /// reports (warnings included), the checksum mismatch of a zTensor file.
    pub problems: Vec<Problem>,
    /// Why the check did not pass: a mismatch ([`Error::VerifyFailed`]) or nothing to
    /// verify ([`Error::NothingVerified`]); `None` when every checksum matched.
    pub problem: Option<Error>,
}

/// Decodes every tensor of `file` in bounded runs, discarding the values: the data that
/// checksums do not cover must at least decode.
fn read_every_tensor(file: &Path, map: &[u8], limits: &Limits) -> Result<usize> {
    let set = formats::read(file, map, limits)?;
    set.decode_every_tensor()?;
    Ok(set.tensors.len())
}

/// `verify`: every checksum and hash the file carries, and every tensor decoded. A file
/// that carries nothing to verify is reported as such, never as verified.
pub fn verify(file: impl AsRef<Path>, limits: &Limits) -> Result<Verification> {
    let file = file.as_ref();
    let map = whole_file(file, limits)?;
    let format = formats::detect(file, &map)?;
    let nothing = |reason: &str| {
        Some(Error::NothingVerified {
            path: file.to_path_buf(),
            reason: reason.to_owned(),
        })
    };
    match format {
        FormatId::Tensogram => {
            let (o, migrated) = validate_tensogram(
                &map,
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
                tensors_read = Some(read_every_tensor(
                    file,
                    migrated.as_deref().unwrap_or(&map),
                    limits,
                )?);
                (o.hashes_verified == 0)
                    .then(|| nothing("no frame carries a hash"))
                    .flatten()
            };
            Ok(Verification {
                format,
                checks: Checks::Hashes,
                verified: o.hashes_verified,
                tensors_read,
                problems: o.problems,
                problem,
            })
        }
        FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
            match ztensor_checksums(file, &map) {
                Ok((n, _)) => Ok(Verification {
                    format,
                    checks: Checks::Checksums,
                    verified: n,
                    tensors_read: Some(read_every_tensor(file, &map, limits)?),
                    problems: Vec::new(),
                    problem: (n == 0)
                        .then(|| nothing("no tensor carries a checksum"))
                        .flatten(),
                }),
                Err(Error::Ztensor { source, .. }) => {
                    let mismatch = Error::VerifyFailed {
                        path: file.to_path_buf(),
                        kind: source.kind(),
                        detail: source.to_string(),
                    };
                    Ok(Verification {
                        format,
                        checks: Checks::Checksums,
                        verified: 0,
                        tensors_read: None,
                        problems: vec![Problem {
                            code: source.kind().as_str().to_owned(),
                            message: source.to_string(),
                            ..Problem::error(&mismatch)
                        }],
                        problem: Some(mismatch),
                    })
                }
                Err(e) => Err(e),
            }
        }
        FormatId::Safetensors
        | FormatId::Bintensors
        | FormatId::BintensorsLegacy
        | FormatId::Grib
        | FormatId::Gguf => {
            // No checksums to check: reading every tensor is the only check there is.
            Ok(Verification {
                format,
                checks: Checks::None,
                verified: 0,
                tensors_read: Some(read_every_tensor(file, &map, limits)?),
                problems: Vec::new(),
                problem: nothing("the format stores no checksums"),
            })
        }
    }
}
