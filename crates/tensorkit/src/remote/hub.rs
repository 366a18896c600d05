//! `hf://` paths: files of the Hugging Face Hub, as `huggingface_hub`'s file system names
//! them — `hf://<org>/<repo>[@<revision>]/<path>`, `hf://datasets/<org>/<repo>/...` and
//! `hf://spaces/...` for the other kinds of repository — resolved to the Hub's file URLs
//! (`<endpoint>/<org>/<repo>/resolve/<revision>/<path>`), read through the same range
//! requests as any `https://` object. The endpoint is `HF_ENDPOINT`'s, else
//! `https://huggingface.co`; the token `HF_TOKEN`'s, else the file the Hugging Face tools
//! keep it in (`HF_TOKEN_PATH`, else `$HF_HOME/token`, else `~/.cache/huggingface/token`),
//! sent as `Authorization: Bearer` to the endpoint only (a redirect to another host, as the
//! Hub's to its storage, goes without it).

use crate::error::{Error, Result};

/// The Hub's own address, when `HF_ENDPOINT` names no other.
const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// An `hf://` path resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The file's URL.
    pub url: String,
    /// The token to send, if any.
    pub token: Option<String>,
}

/// Whether `s` is an `hf://` path.
pub(crate) fn is_hub(s: &str) -> bool {
    s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("hf://"))
}

/// Characters a revision keeps in a URL path segment; the rest (`/` of `refs/pr/1`) are
/// percent-encoded, as the Hub expects.
fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("%{b:02X}"));
        }
    }
    out
}

/// `path` (`hf://org/repo@rev/dir/file`) resolved with the endpoint and token `env` gives
/// (`HF_ENDPOINT`, `HF_TOKEN`, `HF_TOKEN_PATH`, `HF_HOME`, `HOME`).
pub(crate) fn resolve_with(path: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Resolved> {
    let bad = |what: &str| Error::Remote {
        url: path.to_owned(),
        what: format!(
            "{what}: an hf:// path is hf://<org>/<repo>[@<revision>]/<path in the repo> (datasets/ or spaces/ first for those repositories)"
        ),
    };
    let rest = &path[5..];
    let (kind, rest) = match rest.split_once('/') {
        Some(("datasets", r)) => ("datasets/", r),
        Some(("spaces", r)) => ("spaces/", r),
        Some(("models", r)) => ("", r),
        _ => ("", rest),
    };
    let mut parts = rest.splitn(3, '/');
    let (Some(org), Some(repo_rev), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad("no repository and file"));
    };
    let (repo, revision) = match repo_rev.split_once('@') {
        Some((repo, rev)) => (repo, rev.to_owned()),
        None => (repo_rev, "main".to_owned()),
    };
    // A revision with slashes (`refs/pr/1`, `refs/convert/parquet`) runs on past the
    // repository's segment.
    let (revision, file) = if revision == "refs" {
        let mut segments = file.splitn(3, '/');
        match (segments.next(), segments.next(), segments.next()) {
            (Some(a), Some(b), Some(f)) => (format!("refs/{a}/{b}"), f.to_owned()),
            _ => return Err(bad("a refs/ revision without its name")),
        }
    } else {
        (revision, file.to_owned())
    };
    for (what, part) in [
        ("organisation", org),
        ("repository", repo),
        ("revision", revision.as_str()),
    ] {
        if part.is_empty() || part == "." || part == ".." {
            return Err(bad(&format!("an empty or dotted {what}")));
        }
    }
    if file.is_empty()
        || file
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err(bad("an empty or dotted path in the repository"));
    }
    let endpoint = env("HF_ENDPOINT")
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.into());
    let url = format!(
        "{}/{kind}{org}/{repo}/resolve/{}/{file}",
        endpoint.trim_end_matches('/'),
        encode_segment(&revision)
    );
    Ok(Resolved {
        url,
        token: token(env),
    })
}

/// `path` resolved with the process's environment.
pub(crate) fn resolve(path: &str) -> Result<Resolved> {
    resolve_with(path, &|k| std::env::var(k).ok())
}

/// The token: `HF_TOKEN`, else the token file's first line.
fn token(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(t) = env("HF_TOKEN")
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
    {
        return Some(t);
    }
    let file = env("HF_TOKEN_PATH").or_else(|| {
        let home =
            env("HF_HOME").or_else(|| env("HOME").map(|h| format!("{h}/.cache/huggingface")))?;
        Some(format!("{home}/token"))
    })?;
    // A token file is a line; anything larger is not one (read no more than a page).
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut std::io::Read::take(std::fs::File::open(file).ok()?, 4096),
        &mut text,
    )
    .ok()?;
    text.lines()
        .next()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn paths_resolve_to_the_hubs_file_urls() {
        let e = env(&[("HF_TOKEN", "hf_abc")]);
        let r = resolve_with("hf://org/model/model.safetensors", &e).unwrap();
        assert_eq!(
            r.url,
            "https://huggingface.co/org/model/resolve/main/model.safetensors"
        );
        assert_eq!(r.token.as_deref(), Some("hf_abc"));
        let r = resolve_with("hf://org/model@v1.0/sub/dir/w.bin", &e).unwrap();
        assert_eq!(
            r.url,
            "https://huggingface.co/org/model/resolve/v1.0/sub/dir/w.bin"
        );
        let r = resolve_with("hf://datasets/org/data/x.nc", &e).unwrap();
        assert_eq!(
            r.url,
            "https://huggingface.co/datasets/org/data/resolve/main/x.nc"
        );
        let r = resolve_with("hf://org/model@refs/pr/3/model.safetensors", &e).unwrap();
        assert_eq!(
            r.url,
            "https://huggingface.co/org/model/resolve/refs%2Fpr%2F3/model.safetensors"
        );
        let e = env(&[("HF_ENDPOINT", "http://127.0.0.1:9/")]);
        let r = resolve_with("hf://a/b/c", &e).unwrap();
        assert_eq!(
            (r.url.as_str(), r.token),
            ("http://127.0.0.1:9/a/b/resolve/main/c", None)
        );
        for bad in [
            "hf://org",
            "hf://org/repo",
            "hf://org/repo/",
            "hf://org/../x",
            "hf://org/repo/a/../b",
        ] {
            assert!(resolve_with(bad, &e).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_token_file_is_read_when_no_variable_names_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "hf_fromfile\n").unwrap();
        let home = dir.path().to_string_lossy().into_owned();
        let pairs = [("HF_HOME", home.as_str())];
        let e = env(&pairs);
        assert_eq!(
            resolve_with("hf://a/b/c", &e).unwrap().token.as_deref(),
            Some("hf_fromfile")
        );
        let none: [(&str, &str); 0] = [];
        let e = env(&none);
        assert_eq!(resolve_with("hf://a/b/c", &e).unwrap().token, None);
    }
}
