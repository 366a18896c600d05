//! `tensorkit validate FILE`: every problem a file has, or none.
//!
//! Tensogram files get tensor-frame's levelled validation, which reports every problem it
//! finds. Other formats are read completely, every checksum their readers know verified,
//! and report the first problem (their readers stop there).

use crate::cli::ValidateLevel;
use crate::error::Result;
use crate::formats;
use crate::model::FormatId;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::{Kinded, Limits, MmapSource};
use tensor_frame::{Level, Severity, ValidateOptions};

/// What validation found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The format, when it was recognised.
    pub format: Option<FormatId>,
    /// Tensors (objects) checked.
    pub tensors: usize,
    /// Hashes or checksums verified (Tensogram).
    pub hashes_verified: usize,
    /// `(severity, code, where, detail)` per problem; severity `error` or `warning`.
    pub problems: Vec<(&'static str, String, String, String)>,
}

impl Outcome {
    /// Whether any problem is an error.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.problems.iter().any(|p| p.0 == "error")
    }

    /// The outcome as text, one line per problem.
    #[must_use]
    pub fn text(&self, path: &Path) -> String {
        let format = self.format.map_or("unknown format", FormatId::id);
        let mut s = format!(
            "{}: {format}, {} tensors, {} hashes verified\n",
            path.display(),
            self.tensors,
            self.hashes_verified
        );
        for (severity, code, at, detail) in &self.problems {
            let _ = writeln!(s, "{severity}: {code}{at}: {detail}");
        }
        let errors = self.problems.iter().filter(|p| p.0 == "error").count();
        if errors == 0 {
            s.push_str("valid\n");
        } else {
            let _ = writeln!(s, "invalid: {errors} errors");
        }
        s
    }

    /// The outcome as JSON.
    #[must_use]
    pub fn json(&self) -> Value {
        json!({
            "format": self.format.map(FormatId::id),
            "valid": !self.failed(),
            "tensors": self.tensors,
            "hashes_verified": self.hashes_verified,
            "problems": self.problems.iter().map(|(s, c, a, d)| json!({"severity": s, "code": c, "where": a.trim_start_matches(" at "), "detail": d})).collect::<Vec<_>>(),
        })
    }
}

/// Verifies every checksum and digest of the zTensor file `file` mapped at `map`; returns how
/// many there were, and what the reader tolerated but a conforming writer never produces.
pub(crate) fn ztensor_checksums(file: &Path, map: &[u8]) -> Result<(usize, Vec<String>)> {
    tensor_ztensor::AnyZTensor::open(map)
        .and_then(|z| Ok((z.verify_all()?, z.warnings().to_vec())))
        .map_err(|source| crate::error::Error::Ztensor {
            path: file.to_path_buf(),
            source,
        })
}

/// Validates `file`.
pub fn run(file: &Path, level: ValidateLevel, canonical: bool, limits: &Limits) -> Result<Outcome> {
    let map = MmapSource::open(file)?;
    let limits = *limits;
    let format = formats::detect(file, &map);
    if let Ok(FormatId::Tensogram) = format {
        let opts = ValidateOptions {
            level: match level {
                ValidateLevel::Quick => Level::Quick,
                ValidateLevel::Default => Level::Default,
                ValidateLevel::Checksum => Level::Checksum,
                ValidateLevel::Full => Level::Full,
            },
            canonical,
        };
        let r = tensor_frame::validate(&map, opts, &limits);
        let problems = r
            .issues
            .iter()
            .map(|i| {
                let mut at = String::new();
                for (k, v) in [
                    ("message", i.message.map(|m| m as u64)),
                    ("object", i.object.map(|o| o as u64)),
                    ("byte", i.offset),
                ] {
                    if let Some(v) = v {
                        let _ = write!(at, " {k} {v}");
                    }
                }
                let at = if at.is_empty() {
                    at
                } else {
                    format!(" at{at}")
                };
                let severity = if i.severity == Severity::Error {
                    "error"
                } else {
                    "warning"
                };
                (severity, i.code.to_owned(), at, i.detail.clone())
            })
            .collect();
        return Ok(Outcome {
            format: Some(FormatId::Tensogram),
            tensors: r.objects,
            hashes_verified: r.hashes_verified,
            problems,
        });
    }
    let problem = |e: &crate::error::Error| {
        (
            "error",
            e.kind().as_str().to_owned(),
            String::new(),
            e.to_string(),
        )
    };
    let mut warnings = Vec::new();
    let checked = format.and_then(|f| {
        let set = formats::read(file, &map, &limits)?;
        // zTensor carries checksums and digests: verify every one, not only those read.
        let verified = match f {
            FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => {
                let (n, tolerated) = ztensor_checksums(file, &map)?;
                warnings.extend(
                    tolerated
                        .into_iter()
                        .map(|w| ("warning", "nonconforming".to_owned(), String::new(), w)),
                );
                n
            }
            _ => 0,
        };
        // Every tensor decodes (in bounded runs): data no checksum covers must at least do that.
        set.decode_every_tensor()?;
        Ok((f, set.tensors.len(), verified))
    });
    Ok(match checked {
        Ok((f, tensors, hashes_verified)) => Outcome {
            format: Some(f),
            tensors,
            hashes_verified,
            problems: warnings,
        },
        Err(e) => Outcome {
            format: formats::detect(file, &map).ok(),
            tensors: 0,
            hashes_verified: 0,
            problems: vec![problem(&e)],
        },
    })
}
