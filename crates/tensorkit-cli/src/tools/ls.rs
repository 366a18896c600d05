//! `ls`: one line per tensor, or the values of chosen keys; `-w` keeps the tensors whose
//! metadata matches.

use super::select::{self, Where};
use super::tensors::escape_field;
use crate::error::Result;
use crate::report;
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::Limits;

/// What `ls` prints, and of which tensors.
#[derive(Debug, Default)]
pub struct Listing<'a> {
    /// The `-w` clauses every tensor listed passes.
    pub clauses: &'a [Where],
    /// The `-p` keys: a table of their values instead of the tensors' layout.
    pub keys: &'a [String],
    /// One JSON array instead of lines.
    pub json: bool,
}

/// `ls`: one line per tensor — name (or `-`), dtype, shape, bytes, and where it sits — or,
/// with keys, a header line and then the name and each key's value (`-` where a tensor has
/// none), tab-separated.
pub fn ls(file: &Path, listing: &Listing<'_>, limits: &Limits) -> Result<String> {
    let opened = crate::open(file, limits)?;
    let mut out = String::new();
    let mut json = Vec::new();
    if !listing.keys.is_empty() && !listing.json {
        let _ = writeln!(out, "name\t{}", listing.keys.join("\t"));
    }
    for t in opened.tensors() {
        let lookup = |key: &str| super::get::tensor_value(&t, &opened, key);
        if !select::passes(listing.clauses, &lookup) {
            continue;
        }
        if listing.json {
            let mut row = serde_json::json!({
                "name": t.name(),
                "dtype": t.dtype().name(),
                "shape": t.shape(),
                "bytes": t.byte_len(),
                "location": t.location().iter().map(|(k, i)| ((*k).to_owned(), serde_json::json!(i))).collect::<serde_json::Map<_, _>>(),
            });
            if !listing.keys.is_empty() {
                row["keys"] = listing
                    .keys
                    .iter()
                    .map(|k| {
                        (
                            k.clone(),
                            lookup(k).map_or(serde_json::Value::Null, Into::into),
                        )
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into();
            }
            json.push(row);
            continue;
        }
        if listing.keys.is_empty() {
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
        } else {
            out.push_str(&escape_field(&t.name()));
            for k in listing.keys {
                let v = lookup(k).map_or_else(|| "-".to_owned(), |v| escape_field(&v));
                let _ = write!(out, "\t{v}");
            }
        }
        out.push('\n');
    }
    if listing.json {
        out = serde_json::to_string_pretty(&json).unwrap_or_default();
        out.push('\n');
    }
    Ok(out)
}
