//! `tensorkit edit`: the command line's edits ([`tensorkit::Edits`]) and its report.

use serde_json::Value as Json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tensorkit::edit::{Change, EditOptions, EditReport, Edits};
use tensorkit::{Error, Result};

/// What the command line asks for.
pub struct Request<'a> {
    /// `--set KEY[:TYPE]=VALUE`.
    pub set: &'a [String],
    /// `--delete KEY`.
    pub delete: &'a [String],
    /// `--rename OLD=NEW`.
    pub rename: &'a [String],
    /// `--attr TENSOR:KEY[:TYPE]=VALUE`.
    pub attr: &'a [String],
    /// `--from-json EDITS.json`.
    pub from_json: Option<&'a Path>,
}

fn bad(option: &str, text: &str, why: &str) -> Error {
    Error::Spec {
        path: PathBuf::from(option),
        message: format!("{text:?}: {why}"),
    }
}

/// `VALUE` of type `ty` (`str`, `int`, `float`, `bool`, `json`, or a GGUF type label,
/// whose values are given as JSON); returns the value and the type label to record.
fn typed(
    option: &str,
    text: &str,
    ty: Option<&str>,
    value: &str,
) -> Result<(Json, Option<String>)> {
    let json = |v: &str| {
        serde_json::from_str::<Json>(v)
            .map_err(|e| bad(option, text, &format!("VALUE is not JSON: {e}")))
    };
    Ok(match ty {
        None | Some("str") => (Json::String(value.to_owned()), None),
        Some("int") => {
            let n: i128 = value
                .parse()
                .map_err(|_| bad(option, text, "VALUE is not an integer"))?;
            let v = i64::try_from(n)
                .map(Json::from)
                .or_else(|_| u64::try_from(n).map(Json::from))
                .map_err(|_| bad(option, text, "VALUE does not fit 64 bits"))?;
            (v, None)
        }
        Some("float") => {
            let f: f64 = value
                .parse()
                .map_err(|_| bad(option, text, "VALUE is not a number"))?;
            (tensorkit::bytes::cbor::json::float_json(f), None)
        }
        Some("bool") => match value {
            "true" => (Json::Bool(true), None),
            "false" => (Json::Bool(false), None),
            _ => return Err(bad(option, text, "VALUE is true or false")),
        },
        Some("json") => (json(value)?, None),
        Some(label) if tensorkit::gguf::json::is_type_label(label) => {
            (json(value)?, Some(label.to_owned()))
        }
        Some(other) => {
            return Err(bad(
                option,
                text,
                &format!(
                    "unknown type {other:?} (str, int, float, bool, json, or a GGUF type such as UINT32)"
                ),
            ));
        }
    })
}

/// `LHS=VALUE` split at the first `=`.
fn assignment<'t>(option: &str, text: &'t str) -> Result<(&'t str, &'t str)> {
    text.split_once('=')
        .ok_or_else(|| bad(option, text, "expected NAME=VALUE"))
}

/// The edits the options ask for, after those of `--from-json`.
pub fn edits(request: &Request<'_>) -> Result<Edits> {
    let mut edits = match request.from_json {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                tensorkit::bytes::Error::io(format!("reading {}", path.display()), e)
            })?;
            let json: Json = serde_json::from_str(&text).map_err(|e| Error::Spec {
                path: path.to_path_buf(),
                message: format!("not JSON: {e}"),
            })?;
            Edits::from_json(&json, &path.display().to_string())?
        }
        None => Edits::default(),
    };
    for text in request.set {
        let (lhs, value) = assignment("--set", text)?;
        let (key, ty) = match lhs.rsplit_once(':') {
            Some((key, ty)) if is_type(ty) => (key, Some(ty)),
            _ => (lhs, None),
        };
        let (value, label) = typed("--set", text, ty, value)?;
        edits.set.push((key.to_owned(), value, label));
    }
    edits.delete.extend(request.delete.iter().cloned());
    for text in request.rename {
        let (from, to) = assignment("--rename", text)?;
        edits.rename.push((from.to_owned(), to.to_owned()));
    }
    for text in request.attr {
        let (lhs, value) = assignment("--attr", text)?;
        let (rest, ty) = match lhs.rsplit_once(':') {
            Some((rest, ty)) if is_type(ty) && rest.contains(':') => (rest, Some(ty)),
            _ => (lhs, None),
        };
        let (tensor, key) = rest
            .rsplit_once(':')
            .ok_or_else(|| bad("--attr", text, "expected TENSOR:KEY=VALUE"))?;
        let (value, _) = typed("--attr", text, ty, value)?;
        edits
            .attributes
            .push((tensor.to_owned(), key.to_owned(), value));
    }
    if edits.is_empty() {
        return Err(Error::Spec {
            path: PathBuf::from("edit"),
            message: "nothing to do: give --set, --delete, --rename, --attr or --from-json".into(),
        });
    }
    Ok(edits)
}

fn is_type(ty: &str) -> bool {
    matches!(ty, "str" | "int" | "float" | "bool" | "json")
        || tensorkit::gguf::json::is_type_label(ty)
}

/// Runs `tensorkit edit` and renders its report.
pub fn run(
    file: &Path,
    request: &Request<'_>,
    options: &EditOptions,
    json: bool,
) -> Result<String> {
    let edits = edits(request)?;
    let report = tensorkit::edit(file, &edits, options)?;
    Ok(if json {
        let mut s = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        s.push('\n');
        s
    } else {
        render(&report)
    })
}

/// The report as text: one line for the file, one per change.
#[must_use]
pub fn render(report: &EditReport) -> String {
    use tensorkit::edit::Method;
    let mut out = String::new();
    if report.recovered {
        out.push_str("finished an edit a killed process had left unfinished\n");
    }
    let n = report.changes.len();
    let how = match (report.method, report.dry_run) {
        (Method::Unchanged, _) => "nothing to change".to_owned(),
        (m, true) => format!(
            "{n} change{}, would be written {} (dry run: nothing written)",
            plural(n),
            describe(m)
        ),
        (m, false) => format!("{n} change{}, written {}", plural(n), describe(m)),
    };
    let _ = writeln!(
        out,
        "{} ({}): {how}",
        report.path.display(),
        report.format.id()
    );
    let was = |old: &Option<Json>| match old {
        Some(v) => format!("(was {v})"),
        None => "(new)".into(),
    };
    for c in &report.changes {
        let line = match c {
            Change::Set { key, old, new } => format!("  set     {key} = {new} {}", was(old)),
            Change::Deleted { key, old } => format!("  delete  {key} (was {old})"),
            Change::Renamed { from, to } => format!("  rename  {from} -> {to}"),
            Change::Attribute {
                tensor,
                key,
                old,
                new,
            } => format!("  attr    {tensor}:{key} = {new} {}", was(old)),
            _ => format!("  {c:?}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn describe(method: tensorkit::edit::Method) -> &'static str {
    use tensorkit::edit::Method;
    match method {
        Method::InPlace => "in place (the tensors' bytes untouched)",
        _ => "as a new copy renamed into place",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
