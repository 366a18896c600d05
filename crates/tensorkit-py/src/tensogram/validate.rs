//! Validation of a message or a file, as tensogram reports it.

use super::errors::tgm_err;
use crate::buffer::Borrowed;
use crate::errors::invalid;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use tensor_core::source::MmapSource;
use tensorkit::Limits;
use tensorkit::frame::validate::{Level, Report, Severity, ValidateOptions};
use tensorkit::frame::{self};

/// Which part of validation found an issue, in tensogram's words.
fn issue_level(code: &str) -> &'static str {
    match code {
        "metadata"
        | "metadata_cbor_non_canonical"
        | "descriptor_cbor_non_canonical"
        | "encoding"
        | "unsupported_codec" => "metadata",
        "hash_mismatch"
        | "missing_hash"
        | "no_hash_available"
        | "hash_frame_mismatch"
        | "hash_count_mismatch"
        | "unknown_hash_algorithm" => "integrity",
        "compression" | "nan_detected" | "inf_detected" => "fidelity",
        _ => "structure",
    }
}

/// A validation depth by tensogram's names: its `default` verifies hashes, and `checksum`
/// is the same depth with the warnings left out.
fn level(name: &str) -> PyResult<(Level, bool)> {
    Ok(match name {
        "quick" => (Level::Quick, false),
        "default" => (Level::Checksum, false),
        "checksum" => (Level::Checksum, true),
        "full" => (Level::Full, false),
        other => {
            return Err(invalid(format!(
                "unknown validation level: {other:?}, expected one of: quick, default, checksum, full"
            )));
        }
    })
}

/// A report as tensogram's dict: `issues`, `object_count`, `hash_verified`.
fn report_to_py<'py>(
    py: Python<'py>,
    report: &Report,
    level: Level,
    errors_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let issues = PyList::empty(py);
    // As tensogram: verified only when every hash checked out and nothing at all failed.
    let mut failed = false;
    for i in &report.issues {
        let is_error = i.severity == Severity::Error;
        failed |= is_error;
        if errors_only && !is_error {
            continue;
        }
        let d = PyDict::new(py);
        d.set_item("code", i.code)?;
        d.set_item("level", issue_level(i.code))?;
        d.set_item("severity", if is_error { "error" } else { "warning" })?;
        d.set_item("description", &i.detail)?;
        if let Some(o) = i.object {
            d.set_item("object_index", o)?;
        }
        if let Some(o) = i.offset {
            d.set_item("byte_offset", o)?;
        }
        issues.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("issues", issues)?;
    out.set_item("object_count", report.objects)?;
    out.set_item(
        "hash_verified",
        level >= Level::Checksum && report.hashes_verified > 0 && !failed,
    )?;
    Ok(out)
}

/// Validates one message buffer (tensogram's levels and report).
#[pyfunction]
#[pyo3(signature = (buf, level_name="default", canonical=false))]
pub(crate) fn tgm_validate<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    level_name: &str,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (level, errors_only) = level(level_name)?;
    let buf = Borrowed::get(buf, false, "the message")?;
    let bytes = buf.bytes();
    let opts = ValidateOptions { level, canonical };
    let report = py.detach(|| frame::validate(bytes, opts, &Limits::default()));
    report_to_py(py, &report, level, errors_only)
}

/// Validates every message of the file at `path`: bytes between messages as `file_issues`,
/// one report per message in `messages`.
#[pyfunction]
#[pyo3(signature = (path, level_name="default", canonical=false))]
pub(crate) fn tgm_validate_file<'py>(
    py: Python<'py>,
    path: PathBuf,
    level_name: &str,
    canonical: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let (level, errors_only) = level(level_name)?;
    let opts = ValidateOptions { level, canonical };
    let limits = Limits::default();
    let (gaps, reports, file_len) = py
        .detach(|| -> tensor_core::Result<_> {
            let source = MmapSource::open(&path)?;
            let buf: &[u8] = source.as_ref();
            let ranges = frame::scan(buf);
            let mut gaps = Vec::new();
            let mut pos = 0;
            // Each message, then an empty one at the end, so a gap before it is seen too.
            for r in ranges
                .iter()
                .cloned()
                .chain(std::iter::once(buf.len()..buf.len()))
            {
                if r.start > pos {
                    let why = frame::validate(&buf[pos..r.start], opts, &limits)
                        .issues
                        .first()
                        .map_or_else(String::new, |i| i.detail.clone());
                    gaps.push((pos, r.start - pos, why));
                }
                pos = r.end;
            }
            let reports: Vec<Report> = ranges
                .iter()
                .map(|r| frame::validate(&buf[r.clone()], opts, &limits))
                .collect();
            Ok((gaps, reports, buf.len()))
        })
        .map_err(tgm_err)?;
    let file_issues = PyList::empty(py);
    let last = gaps.len().saturating_sub(1);
    for (i, (offset, length, why)) in gaps.iter().enumerate() {
        let d = PyDict::new(py);
        d.set_item("byte_offset", offset)?;
        d.set_item("length", length)?;
        // Worded as tensogram words them (what its users match on), then why.
        let what = if reports.is_empty() {
            format!("{length} bytes with no valid messages")
        } else if i == last && offset + length == file_len {
            format!("{length} trailing bytes after last message at offset {offset}")
        } else {
            format!("{length} unrecognized bytes at offset {offset}")
        };
        d.set_item("description", format!("{what}: {why}"))?;
        file_issues.append(d)?;
    }
    let messages = PyList::empty(py);
    for r in &reports {
        messages.append(report_to_py(py, r, level, errors_only)?)?;
    }
    let out = PyDict::new(py);
    out.set_item("file_issues", file_issues)?;
    out.set_item("messages", messages)?;
    Ok(out)
}
