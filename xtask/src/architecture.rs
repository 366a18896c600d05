//! ARCHITECTURE.md's per-format table stays true: every path it names exists, and every
//! format crate and facade adapter has a row.

use std::path::Path;

const START: &str = "<!-- xtask:format-table -->";
const END: &str = "<!-- /xtask:format-table -->";

/// The crates of ours that are not a format's: a crate named `tensor-*` otherwise belongs to
/// a format and must appear in the table.
const NOT_A_FORMAT: &[&str] = &["tensor-core", "tensor-dtype", "tensor-testkit"];

/// Where the table and the tree disagree. `crates` are the workspace's crates, `adapters` the
/// facade's adapter files (`crates/tensorkit/src/formats/<name>.rs`, `mod.rs` left out), and
/// `exists` says whether a path relative to the repository root exists.
pub(crate) fn mismatches(
    text: &str,
    crates: &[&str],
    adapters: &[String],
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let Some(table) = text
        .split_once(START)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(table, _)| table)
    else {
        return vec![format!(
            "ARCHITECTURE.md: no table between {START} and {END}"
        )];
    };
    // Every `code span` holding a `/` is a path.
    let paths: Vec<&str> = table
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains('/'))
        .collect();
    let mut out: Vec<String> = paths
        .iter()
        .filter(|p| !exists(p))
        .map(|p| format!("ARCHITECTURE.md: the format table names {p}, which does not exist"))
        .collect();
    let named = |path: String, what: &str| {
        (!paths.contains(&path.as_str()))
            .then(|| format!("ARCHITECTURE.md: the format table has no row with {what} {path}"))
    };
    out.extend(
        crates
            .iter()
            .filter(|c| c.starts_with("tensor-") && !NOT_A_FORMAT.contains(c))
            .filter_map(|c| named(format!("crates/{c}"), "the crate")),
    );
    out.extend(
        adapters
            .iter()
            .filter_map(|a| named(a.clone(), "the adapter")),
    );
    out
}

/// [`mismatches`] of the repository at `root`.
pub(crate) fn check(root: &Path, crates: &[&str]) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .map_err(|e| format!("reading ARCHITECTURE.md: {e}"))?;
    let dir = root.join("crates/tensorkit/src/formats");
    let mut adapters: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "rs") && n != "mod.rs")
        .map(|n| format!("crates/tensorkit/src/formats/{n}"))
        .collect();
    adapters.sort();
    Ok(mismatches(&text, crates, &adapters, |p| {
        root.join(p).exists()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "intro\n<!-- xtask:format-table -->\n| f | crate | adapter |\n|---|---|---|\n| x | `crates/tensor-x` | `crates/tensorkit/src/formats/x.rs` |\n<!-- /xtask:format-table -->\n";

    #[test]
    fn a_true_table_passes() {
        let adapters = ["crates/tensorkit/src/formats/x.rs".to_owned()];
        let crates = ["tensor-core", "tensor-x", "tensorkit"];
        assert!(mismatches(TABLE, &crates, &adapters, |_| true).is_empty());
    }

    #[test]
    fn missing_paths_rows_and_markers_are_named() {
        let adapters = [
            "crates/tensorkit/src/formats/x.rs".to_owned(),
            "crates/tensorkit/src/formats/y.rs".to_owned(),
        ];
        let crates = ["tensor-x", "tensor-y", "tensor-testkit"];
        let found = mismatches(TABLE, &crates, &adapters, |p| p != "crates/tensor-x");
        assert_eq!(
            found,
            [
                "ARCHITECTURE.md: the format table names crates/tensor-x, which does not exist",
                "ARCHITECTURE.md: the format table has no row with the crate crates/tensor-y",
                "ARCHITECTURE.md: the format table has no row with the adapter crates/tensorkit/src/formats/y.rs",
            ]
        );
        assert_eq!(
            mismatches("no table", &crates, &adapters, |_| true).len(),
            1
        );
    }
}
