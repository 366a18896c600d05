//! No import circles: within each crate of the workspace, and within the Python package, no
//! module uses another that uses it back, directly or through others.
//!
//! A Rust module uses another when its code names a path into it — `crate::a::b::f`,
//! `super::g`, `self::c::h`, `use` groups included — resolved to the module that defines the
//! item: a name the crate root (or any module) re-exports with `pub use` counts as a use of
//! the module that defines it, and `mod x;` declarations count as nothing. Comments, strings
//! and the test module at the end of a file (`#[cfg(test)] mod tests`) are left out. A Python
//! module uses another when it imports it (`from . import x`, `from .x import y`,
//! `import tensorkit.x`), inside functions too (an import put off to run time is still a
//! circle), but not under `if TYPE_CHECKING:`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The uses between the modules of one crate or package.
#[derive(Default)]
struct Graph {
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    files: BTreeMap<Vec<String>, PathBuf>,
    /// For each use, the first path (or import) that made it: shown with
    /// `XTASK_CYCLE_EDGES=1`.
    why: BTreeMap<(Vec<String>, Vec<String>), String>,
}

impl Graph {
    /// Records that `from` uses `to` (a module's use of itself is none), with the first path
    /// or import that showed it.
    fn add_use(&mut self, from: &[String], to: Vec<String>, why: impl FnOnce() -> String) {
        let targets = self.edges.entry(from.to_vec()).or_default();
        if to != from {
            self.why
                .entry((from.to_vec(), to.clone()))
                .or_insert_with(why);
            targets.insert(to);
        }
    }
}

/// The circles not untied yet, each as the modules' files `check` names: one that is no
/// longer found fails the check too, so that this list only shrinks. None is left.
const KNOWN: &[(&str, &[&str])] = &[];

/// How many circles are [`KNOWN`] (not untied yet).
pub(crate) fn known() -> usize {
    KNOWN.len()
}

/// Every circle in the workspace's crates (`crates/*/src`, `xtask/src`) and the Python
/// package but those [`KNOWN`], as messages naming its modules' files; and every circle
/// [`KNOWN`] that is no longer there.
pub(crate) fn check(root: &Path) -> Result<Vec<String>, String> {
    let found = all_circles(root)?;
    let mut out = Vec::new();
    for (name, files, message) in &found {
        if !KNOWN.iter().any(|(n, f)| n == name && f == files) {
            out.push(message.clone());
        }
    }
    for (name, files) in KNOWN {
        if !found.iter().any(|(n, f, _)| n == name && f == files) {
            out.push(format!(
                "{name}: the known import circle of {} is no longer there: remove it from \
                 xtask's cycles::KNOWN",
                files.join(", ")
            ));
        }
    }
    Ok(out)
}

/// Every circle: its crate or package, its modules' files, and the message naming them.
fn all_circles(root: &Path) -> Result<Vec<(String, Vec<String>, String)>, String> {
    let mut out = Vec::new();
    let mut srcs: Vec<(String, PathBuf)> = std::fs::read_dir(root.join("crates"))
        .map_err(|e| format!("reading crates/: {e}"))?
        .filter_map(Result::ok)
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.path().join("src"),
            )
        })
        .filter(|(_, p)| p.is_dir())
        .collect();
    srcs.push(("xtask".into(), root.join("xtask/src")));
    srcs.sort();
    for (krate, src) in srcs {
        let graph = rust_graph(&src)?;
        out.extend(circles(&krate, &graph, root));
    }
    let py = root.join("crates/tensorkit-py/python/tensorkit");
    if py.is_dir() {
        out.extend(circles("tensorkit (Python)", &python_graph(&py)?, root));
    }
    Ok(out)
}

fn circles(name: &str, graph: &Graph, root: &Path) -> Vec<(String, Vec<String>, String)> {
    strongly_connected(&graph.edges)
        .into_iter()
        .map(|component| {
            let files: Vec<String> = component
                .iter()
                .map(|m| {
                    graph.files.get(m).map_or_else(
                        || m.join("::"),
                        |f| f.strip_prefix(root).unwrap_or(f).display().to_string(),
                    )
                })
                .collect();
            let mut message = format!("{name}: an import circle: {}", files.join(" <-> "));
            let named = (name.to_owned(), files.clone());
            if std::env::var_os("XTASK_CYCLE_EDGES").is_some() {
                for a in &component {
                    for b in graph.edges[a].iter().filter(|b| component.contains(b)) {
                        let why = graph
                            .why
                            .get(&(a.clone(), b.clone()))
                            .cloned()
                            .unwrap_or_default();
                        let _ = write!(
                            message,
                            "\n      {} -> {}: {why}",
                            a.join("::"),
                            b.join("::")
                        );
                    }
                }
            }
            (named.0, named.1, message)
        })
        .collect()
}

/// The components of more than one module in which every module reaches every other
/// (Tarjan's algorithm, iterative).
fn strongly_connected(
    edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> Vec<Vec<Vec<String>>> {
    let nodes: Vec<&Vec<String>> = edges.keys().collect();
    let index_of: BTreeMap<&Vec<String>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            edges[*n]
                .iter()
                .filter_map(|m| index_of.get(m).copied())
                .collect()
        })
        .collect();
    let n = nodes.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = succ[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    out.push(component);
                }
            }
        }
    }
    out.sort();
    out
}

// ---- Rust ----

/// The module path a source file of `src` defines (`a/b.rs` and `a/b/mod.rs`: `a::b`;
/// `lib.rs`: the root); `None` for binaries' roots and `bin/`.
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop()?;
    if parts.first().is_some_and(|p| p == "bin")
        || (parts.is_empty() && last == "main.rs" && src.join("lib.rs").exists())
    {
        return None;
    }
    let stem = last.strip_suffix(".rs")?;
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_owned());
    }
    Some(parts)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for e in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() {
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

fn rust_graph(src: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    let mut code: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut graph = Graph::default();
    for f in files {
        let Some(module) = module_of(src, &f) else {
            continue;
        };
        let text =
            std::fs::read_to_string(&f).map_err(|e| format!("reading {}: {e}", f.display()))?;
        code.insert(module.clone(), without_tests(&strip(&text)));
        graph.files.insert(module, f);
    }
    let modules: BTreeSet<Vec<String>> = code.keys().cloned().collect();
    // Each module's `pub use` names: the path (absolute) each re-exported name comes from.
    let mut reexports: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    let children = |module: &Vec<String>| -> BTreeSet<String> {
        modules
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().cloned())
            .collect()
    };
    // Names modules re-export from other crates (`pub use tensor_descriptor as descriptor`):
    // a path through them leaves the crate.
    let mut external: BTreeSet<(Vec<String>, String)> = BTreeSet::new();
    for (module, text) in &code {
        for name in external_reexports(text, &children(module)) {
            external.insert((module.clone(), name));
        }
    }
    for (module, text) in &code {
        for (inner, path, public) in paths(text, &children(module)) {
            if !public {
                continue;
            }
            let base = [module.clone(), inner].concat();
            if let Some(abs) = absolute(&base, &path)
                && let Some(name) = abs.last()
            {
                reexports.insert((base, name.clone()), abs.clone());
            }
        }
    }
    for (module, text) in &code {
        graph.edges.entry(module.clone()).or_default();
        for (inner, path, _) in paths(text, &children(module)) {
            let base = [module.clone(), inner].concat();
            let Some(abs) = absolute(&base, &path) else {
                continue;
            };
            if let Some(t) = defining_module(&abs, &modules, &reexports, &external) {
                graph.add_use(module, t, || path.join("::"));
            }
        }
    }
    Ok(graph)
}

/// `path` (its first segment `crate`, `super` or `self`) from module `base`, absolute.
fn absolute(base: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut at: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => base.to_vec(),
        "super" => base[..base.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some((s, r)) = rest.split_first().filter(|(s, _)| *s == "super") {
        let _ = s;
        at.pop()?;
        rest = r;
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The module that defines what `path` names: its longest prefix that is a module, or — when
/// the name after that prefix is a re-export there — the module the re-export comes from
/// (followed until it rests).
fn defining_module(
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<(Vec<String>, String), Vec<String>>,
    external: &BTreeSet<(Vec<String>, String)>,
) -> Option<Vec<String>> {
    let mut path = path.to_vec();
    for _ in 0..16 {
        let k = (0..=path.len())
            .rev()
            .find(|&k| modules.contains(&path[..k].to_vec()))?;
        let module = path[..k].to_vec();
        if path
            .get(k)
            .is_some_and(|name| external.contains(&(module.clone(), name.clone())))
        {
            return None;
        }
        match path
            .get(k)
            .and_then(|name| reexports.get(&(module.clone(), name.clone())))
        {
            Some(from) if *from != path[..=k] => {
                let mut next = from.clone();
                next.extend(path[k + 1..].iter().cloned());
                path = next;
            }
            _ => return Some(module),
        }
    }
    None
}

/// The paths `text` names that start with `crate`, `super` or `self`, or with one of the
/// module's `children` (a path relative to the module, as Rust 2018 reads it), `use` groups
/// expanded: each with the inline module it lies in (relative to the file's) and whether it
/// is a `pub use`.
fn paths(text: &str, children: &BTreeSet<String>) -> Vec<(Vec<String>, Vec<String>, bool)> {
    let tokens = tokenize(text);
    let mut out = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new(); // inline `mod name {` and its depth
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i].as_str();
        match t {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            "mod" if tokens.get(i + 2).is_some_and(|t| t == "{") => {
                inline.push((tokens[i + 1].clone(), depth));
            }
            _ => {}
        }
        let child = inline.is_empty() && children.contains(t);
        let starts = (matches!(t, "crate" | "super" | "self") || child)
            && tokens.get(i + 1).is_some_and(|t| t == "::")
            && !(i > 0 && (tokens[i - 1] == "::" || tokens[i - 1] == "."));
        if starts {
            let public = (i > 0 && tokens[i - 1] == "use")
                && tokens[..i - 1].iter().rev().take(5).any(|t| t == "pub");
            let here: Vec<String> = inline.iter().map(|(m, _)| m.clone()).collect();
            let prefix = if child {
                vec!["self".to_owned()]
            } else {
                Vec::new()
            };
            let (expanded, end) = expand(&tokens, i, prefix);
            for p in expanded {
                out.push((here.clone(), p, public));
            }
            i = end;
            continue;
        }
        i += 1;
    }
    out
}

/// The names `text`'s `pub use` items bring in from other crates (each path's last segment,
/// or its `as` name), the module's `children` and `crate`, `self`, `super` paths aside.
fn external_reexports(text: &str, children: &BTreeSet<String>) -> Vec<String> {
    let tokens = tokenize(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < tokens.len() {
        let first = tokens.get(i + 1).map_or("", String::as_str);
        let is_pub_use = tokens[i] == "use" && tokens[..i].iter().rev().take(5).any(|t| t == "pub");
        if !is_pub_use
            || matches!(first, "crate" | "self" | "super" | "::")
            || children.contains(first)
        {
            i += 1;
            continue;
        }
        let end = tokens[i..]
            .iter()
            .position(|t| t == ";")
            .map_or(tokens.len(), |e| i + e);
        for k in i + 1..end {
            let t = &tokens[k];
            let next = tokens.get(k + 1).map(String::as_str);
            if is_ident(t) && t != "as" && matches!(next, Some("," | "}" | ";")) {
                out.push(t.clone());
            }
        }
        i = end;
    }
    out
}

/// The paths a path starting at token `i` names (a `use` group expanded), and the token after.
fn expand(tokens: &[String], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    loop {
        let Some(t) = tokens.get(i) else {
            return (vec![path], i);
        };
        if t == "{" {
            let mut out = Vec::new();
            i += 1;
            loop {
                match tokens.get(i).map(String::as_str) {
                    None => return (out, i),
                    Some("}") => return (out, i + 1),
                    Some(",") => i += 1,
                    Some(_) => {
                        let (paths, end) = expand(tokens, i, path.clone());
                        out.extend(paths);
                        i = end;
                    }
                }
            }
        }
        if !is_ident(t) {
            return (vec![path], i);
        }
        if t != "self" || path.is_empty() {
            path.push(t.clone());
        }
        if tokens.get(i + 1).is_some_and(|t| t == "::") {
            i += 2;
        } else if tokens.get(i + 1).is_some_and(|t| t == "as") {
            // `as name` renames the last segment; the path is the same.
            return (vec![path], i + 3);
        } else {
            return (vec![path], i + 1);
        }
    }
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else if !c.is_whitespace() {
            out.push(c.to_string());
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

/// `text` with comments, string and char literals blanked out.
fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == '*' && b[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'); otherwise a lifetime.
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else {
                (b.get(i + 2) == Some(&'\'')).then_some(i + 2)
            };
            if let Some(j) = close {
                out.push_str("' '");
                i = j + 1;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `text` without its test module (`#[cfg(test)]` then `mod`, which clippy keeps last).
fn without_tests(text: &str) -> String {
    let mut at = 0;
    while let Some(k) = text[at..].find("#[cfg(") {
        let start = at + k;
        let rest = &text[start..];
        let attr_end = rest.find(']').map_or(rest.len(), |e| e + 1);
        let attr = &rest[..attr_end];
        let after = rest[attr_end..].trim_start();
        if attr.contains("test") && !attr.contains("not(test") && after.starts_with("mod ") {
            return text[..start].to_owned();
        }
        at = start + attr_end;
    }
    text.to_owned()
}

// ---- Python ----

fn python_graph(package: &Path) -> Result<Graph, String> {
    let mut files = Vec::new();
    python_files(package, &mut files)?;
    let mut graph = Graph::default();
    let module_of = |f: &Path| -> Vec<String> {
        let rel = f.strip_prefix(package).unwrap_or(f);
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let last = parts.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".pyi").trim_end_matches(".py");
        if stem != "__init__" {
            parts.push(stem.to_owned());
        }
        parts
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    let packages: BTreeSet<Vec<String>> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "__init__.py"))
        .map(|f| module_of(f))
        .collect();
    for f in &files {
        let module = module_of(f);
        let is_package = packages.contains(&module);
        let text =
            std::fs::read_to_string(f).map_err(|e| format!("reading {}: {e}", f.display()))?;
        graph.edges.entry(module.clone()).or_default();
        for (level, from, names) in python_imports(&text) {
            // The package the import is relative to: `from .` is the module's own package.
            let mut base = if level == 0 {
                Vec::new()
            } else {
                let mut b = module.clone();
                if !is_package {
                    b.pop();
                }
                for _ in 1..level {
                    b.pop();
                }
                b
            };
            if level == 0 {
                match from.split_first() {
                    Some((top, rest)) if top == "tensorkit" => base.extend(rest.iter().cloned()),
                    _ => continue,
                }
            } else {
                base.extend(from.iter().cloned());
            }
            // Names that are modules are used themselves; any other name is an attribute of
            // the module imported from (its longest prefix that is a module).
            let mut only_modules = !names.is_empty();
            for name in &names {
                let sub = [base.clone(), vec![name.clone()]].concat();
                if modules.contains(&sub) {
                    let why = format!("import {}", sub.join("."));
                    graph.add_use(&module, sub, || why);
                } else {
                    only_modules = false;
                }
            }
            if !only_modules
                && let Some(k) = (0..=base.len())
                    .rev()
                    .find(|&k| modules.contains(&base[..k]))
            {
                let why = || format!("from {} import {}", base.join("."), names.join(", "));
                graph.add_use(&module, base[..k].to_vec(), why);
            }
        }
        graph.files.insert(module, f.clone());
    }
    Ok(graph)
}

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for e in std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_dir() && p.join("__init__.py").exists() {
            python_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "py" || x == "pyi")
            && !(p.extension().is_some_and(|x| x == "pyi") && p.with_extension("py").exists())
        {
            // A stub alone stands for a native module (`_tensorkit`): a module of its own.
            out.push(p);
        }
    }
    Ok(())
}

/// The imports of a Python module's text: (dots of a relative import, the module path after
/// them, the names imported from it), with those under `if TYPE_CHECKING:` left out and
/// docstrings and comments ignored. `import tensorkit.a.b` is `(0, [tensorkit, a], [b])`.
fn python_imports(text: &str) -> Vec<(usize, Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut skip_deeper_than: Option<usize> = None;
    let mut in_string: Option<&str> = None;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        i += 1;
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if let Some(q) = in_string {
            if trimmed.contains(q) {
                in_string = None;
            }
            continue;
        }
        for q in ["\"\"\"", "'''"] {
            if trimmed.starts_with(q) && trimmed.matches(q).count() == 1 {
                in_string = Some(q);
            }
        }
        if in_string.is_some() || trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if let Some(d) = skip_deeper_than {
            if indent > d {
                continue;
            }
            skip_deeper_than = None;
        }
        if trimmed.starts_with("if TYPE_CHECKING") || trimmed.starts_with("if typing.TYPE_CHECKING")
        {
            skip_deeper_than = Some(indent);
            continue;
        }
        // One statement, its parenthesised continuation lines joined.
        let mut statement = trimmed.split('#').next().unwrap_or("").to_owned();
        if statement.contains('(') && !statement.contains(')') {
            while i < lines.len() {
                let more = lines[i].split('#').next().unwrap_or("");
                i += 1;
                statement.push(' ');
                statement.push_str(more.trim());
                if more.contains(')') {
                    break;
                }
            }
        }
        let statement = statement.replace(['(', ')'], " ");
        let words: Vec<&str> = statement.split_whitespace().collect();
        match words.as_slice() {
            ["from", module, "import", names @ ..] => {
                let level = module.chars().take_while(|&c| c == '.').count();
                let path: Vec<String> = module[level..]
                    .split('.')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                let names: Vec<String> = names
                    .join(" ")
                    .split(',')
                    .filter_map(|n| n.split_whitespace().next())
                    .map(str::to_owned)
                    .collect();
                out.push((level, path, names));
            }
            ["import", modules @ ..] => {
                for m in modules.join(" ").split(',') {
                    let name = m.split_whitespace().next().unwrap_or("");
                    let mut path: Vec<String> = name.split('.').map(str::to_owned).collect();
                    let last = path.pop().unwrap_or_default();
                    out.push((0, path, vec![last]));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(vec![(*a).to_owned()])
                .or_default()
                .insert(vec![(*b).to_owned()]);
            g.entry(vec![(*b).to_owned()]).or_default();
        }
        g
    }

    #[test]
    fn circles_are_found_and_chains_are_not() {
        let g = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]);
        let found = strongly_connected(&g);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 3);
        assert!(strongly_connected(&graph(&[("a", "b"), ("b", "c")])).is_empty());
    }

    #[test]
    fn rust_paths_resolve_through_groups_supers_and_reexports() {
        let text = strip(
            "use crate::a::{b::f, c};\n// crate::x::y in a comment\nfn g() { super::h(); let s = \"crate::q\"; }\npub use self::inner::Thing;\n",
        );
        let kids: BTreeSet<String> = ["inner".to_owned()].into_iter().collect();
        let found: Vec<Vec<String>> = paths(&text, &kids).into_iter().map(|(_, p, _)| p).collect();
        let want: Vec<Vec<String>> = [
            vec!["crate", "a", "b", "f"],
            vec!["crate", "a", "c"],
            vec!["super", "h"],
            vec!["self", "inner", "Thing"],
        ]
        .iter()
        .map(|p| p.iter().map(|s| (*s).to_owned()).collect())
        .collect();
        assert_eq!(found, want);
        let modules: BTreeSet<Vec<String>> =
            [vec![], vec!["a".to_owned()], vec!["error".to_owned()]]
                .into_iter()
                .collect();
        let mut reexports = BTreeMap::new();
        reexports.insert(
            (vec![], "Error".to_owned()),
            vec!["error".to_owned(), "Error".to_owned()],
        );
        let external: BTreeSet<(Vec<String>, String)> =
            [(vec![], "descriptor".to_owned())].into_iter().collect();
        let at = |p: &[&str]| {
            defining_module(
                &p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
                &modules,
                &reexports,
                &external,
            )
        };
        assert_eq!(at(&["descriptor", "DTYPES"]), None);
        assert_eq!(
            external_reexports(
                "pub use tensor_descriptor as descriptor;\npub use other::{A, B as C};\n",
                &BTreeSet::new()
            ),
            ["descriptor", "A", "C"]
        );
        assert_eq!(at(&["Error"]), Some(vec!["error".to_owned()]));
        assert_eq!(at(&["a", "f"]), Some(vec!["a".to_owned()]));
        assert_eq!(at(&["other"]), Some(vec![]));
        assert_eq!(
            absolute(
                &["x".to_owned(), "y".to_owned()],
                &["super".to_owned(), "super".to_owned(), "z".to_owned()]
            ),
            Some(vec!["z".to_owned()])
        );
    }

    #[test]
    fn test_modules_are_left_out() {
        let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n";
        assert_eq!(without_tests(text), "use crate::a;\n");
        let kept = "#[cfg(not(test))]\nmod real { use crate::b; }\n";
        assert_eq!(without_tests(kept), kept);
    }

    #[test]
    fn python_imports_lazy_ones_too_but_not_typing_ones() {
        let text = "from . import _a, _b as b\nfrom ._c import (\n    x,\n    y,\n)\nimport tensorkit.torch\nif TYPE_CHECKING:\n    from ._file import File\n\ndef f():\n    from ._tensor import Tensor\n\"\"\"from ._doc import x\"\"\"\n";
        let got = python_imports(text);
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<String>>();
        assert_eq!(
            got,
            vec![
                (1, vec![], s(&["_a", "_b"])),
                (1, s(&["_c"]), s(&["x", "y"])),
                (0, s(&["tensorkit"]), s(&["torch"])),
                (1, s(&["_tensor"]), s(&["Tensor"])),
            ]
        );
    }
}
