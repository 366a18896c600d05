//! The `unsafe` check: `unsafe` code lives only in the modules that map memory or call
//! foreign code, each block says why it is sound, and every other crate forbids it.
//!
//! - A crate whose modules are listed in [`ALLOWED`] denies `unsafe_code` at its root
//!   (`#![deny(unsafe_code)]`), so that only an `#[allow(unsafe_code)]` in one of those
//!   modules lets any through; every other crate forbids it (`#![forbid(unsafe_code)]`).
//! - `allow(unsafe_code)` appears in no file outside [`ALLOWED`].
//! - Every `unsafe` block and `unsafe impl` has a `// SAFETY:` comment on one of the eight
//!   lines above it (declarations of foreign functions and `unsafe extern` function
//!   signatures are not blocks; the blocks inside them carry their own).

use std::path::{Path, PathBuf};

/// The modules that may hold `unsafe` code, and why (ARCHITECTURE.md says the same).
const ALLOWED: &[(&str, &str)] = &[
    ("crates/tensor-core/src/source.rs", "memory-mapping files"),
    (
        "crates/tensor-core/src/buffer.rs",
        "anonymous mappings and huge-page advice",
    ),
    ("crates/tensor-pipeline/src/zfp.rs", "zfp's C library"),
    ("crates/tensor-pipeline/src/sz3.rs", "SZ3's C++ library"),
    (
        "crates/tensorkit-py/src/buffer.rs",
        "the Python buffer protocol",
    ),
    ("crates/tensorkit-py/src/dlpack.rs", "DLPack capsules"),
];

/// How far above an `unsafe` block its `// SAFETY:` comment may start.
const SAFETY_WINDOW: usize = 8;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The line's code: string literals blanked and a trailing `//` comment cut (a rough cut,
/// line by line: enough to find keywords).
fn code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    out.push('"');
                }
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push('"');
        } else if c == '/' && chars.peek() == Some(&'/') {
            break;
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether the code opens an `unsafe` block or implementation.
fn opens_unsafe(code: &str) -> bool {
    let mut rest = code;
    while let Some(at) = rest.find("unsafe") {
        let before = rest[..at].chars().next_back();
        let after = rest[at + "unsafe".len()..].trim_start();
        let word_start = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if word_start && (after.starts_with('{') || after.starts_with("impl")) {
            return true;
        }
        rest = &rest[at + "unsafe".len()..];
    }
    false
}

/// Every rule the sources break, one line each, for the workspace at `root`.
pub(crate) fn violations(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    for dir in ["crates", "xtask"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let allowed = ALLOWED.iter().any(|(f, _)| *f == rel);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let c = code(line);
            let c = c.as_str();
            if c.contains("allow(unsafe_code)") && !allowed {
                out.push(format!(
                    "{rel}:{}: allow(unsafe_code) outside the listed modules",
                    i + 1
                ));
            }
            if opens_unsafe(c) {
                let from = i.saturating_sub(SAFETY_WINDOW);
                if !lines[from..i].iter().any(|l| l.contains("SAFETY:")) {
                    out.push(format!(
                        "{rel}:{}: an unsafe block without a `// SAFETY:` comment",
                        i + 1
                    ));
                }
                if !allowed {
                    out.push(format!(
                        "{rel}:{}: unsafe code outside the listed modules",
                        i + 1
                    ));
                }
            }
        }
        // Each crate root: forbid, or deny where the crate has a listed module.
        let is_root = rel.ends_with("/src/lib.rs") || rel.ends_with("/src/main.rs");
        if is_root {
            let krate = rel.split("/src/").next().unwrap_or("");
            let has_listed = ALLOWED
                .iter()
                .any(|(f, _)| f.starts_with(&format!("{krate}/src/")));
            let want = if has_listed {
                "#![deny(unsafe_code)]"
            } else {
                "#![forbid(unsafe_code)]"
            };
            if !text.contains(want) {
                out.push(format!("{rel}: the crate root lacks {want}"));
            }
        }
    }
    for (f, why) in ALLOWED {
        if !root.join(f).exists() {
            out.push(format!("{f} (for {why}) is listed but missing"));
        }
    }
    out
}

/// `cargo xtask unsafe`.
pub(crate) fn run(root: &Path) -> Result<String, String> {
    let v = violations(root);
    if v.is_empty() {
        Ok(format!(
            "unsafe: only in {} listed modules, every block with a SAFETY comment; every other crate forbids it",
            ALLOWED.len()
        ))
    } else {
        Err(format!("unsafe code out of place:\n  {}", v.join("\n  ")))
    }
}

#[cfg(test)]
mod tests {
    use super::{code, opens_unsafe};

    #[test]
    fn blocks_and_impls_open_unsafe_code_but_signatures_do_not() {
        assert!(opens_unsafe("let m = unsafe { map(f) };"));
        assert!(opens_unsafe("unsafe impl Send for X {}"));
        assert!(opens_unsafe("    unsafe {"));
        assert!(!opens_unsafe("unsafe extern \"C\" fn delete(p: *mut T) {"));
        assert!(!opens_unsafe(
            "deleter: Option<unsafe extern \"C\" fn(*mut T)>,"
        ));
        assert!(!opens_unsafe("#![forbid(unsafe_code)]"));
        assert!(!opens_unsafe("let not_unsafe = 1;"));
        assert!(!opens_unsafe(&code("assert!(opens_unsafe(\"unsafe {\"));")));
        assert!(opens_unsafe(&code("let x = unsafe { f() }; // \"quoted\"")));
    }

    #[test]
    fn this_workspace_keeps_the_rules() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        assert_eq!(super::violations(root), Vec::<String>::new());
    }
}
