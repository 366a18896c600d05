//! Split sets as llama.cpp's `gguf-split` makes them: `name-00001-of-00003.gguf`, every
//! shard with `split.no` (`UINT16`, from 0), `split.count` (`UINT16`) and
//! `split.tensors.count` (`INT32`, the tensors of the whole set), the model's metadata in
//! the first shard only.

use crate::error::{Error, Result};
use crate::read::Header;
use crate::value::Value;
use std::path::{Path, PathBuf};

/// The shard's number, from 0.
pub const NO_KEY: &str = "split.no";
/// How many shards the set has.
pub const COUNT_KEY: &str = "split.count";
/// How many tensors the whole set has.
pub const TENSORS_COUNT_KEY: &str = "split.tensors.count";

/// The tensor count per shard `gguf-split` uses when told nothing.
pub const DEFAULT_MAX_TENSORS: usize = 128;

/// What a shard's header says of its set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, from 0.
    pub no: u64,
    /// How many shards the set has.
    pub count: u64,
    /// How many tensors the set has.
    pub tensors: u64,
}

impl Shard {
    /// The split keys of `header`; `None` when it has no `split.count` or one below 2 (a
    /// file on its own, or one `gguf-split --merge` wrote).
    pub fn of(header: &Header<'_>) -> Result<Option<Self>> {
        let number = |key: &str| -> Result<Option<u64>> {
            match header.get(key) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| Error::Split(format!("{key} is {v:?}, not a whole number"))),
            }
        };
        let Some(count) = number(COUNT_KEY)? else {
            return Ok(None);
        };
        if count < 2 {
            return Ok(None);
        }
        let no =
            number(NO_KEY)?.ok_or_else(|| Error::Split(format!("{COUNT_KEY} without {NO_KEY}")))?;
        let tensors = number(TENSORS_COUNT_KEY)?
            .ok_or_else(|| Error::Split(format!("{COUNT_KEY} without {TENSORS_COUNT_KEY}")))?;
        if no >= count {
            return Err(Error::Split(format!("{NO_KEY} is {no} of {count} shards")));
        }
        Ok(Some(Shard { no, count, tensors }))
    }
}

/// The path of shard `no` (from 0) of `count` for `prefix` (a path without `.gguf`):
/// `prefix-00001-of-00003.gguf`.
#[must_use]
pub fn shard_path(prefix: &Path, no: u64, count: u64) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!("-{:05}-of-{:05}.gguf", no + 1, count));
    PathBuf::from(name)
}

/// The prefix, number (from 0) and count a shard's file name gives, when it is named as
/// [`shard_path`] names shards.
#[must_use]
pub fn parse_shard_path(path: &Path) -> Option<(PathBuf, u64, u64)> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".gguf")?;
    // `-NNNNN-of-MMMMM` at the end; the numbers have at least five digits.
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() >= 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(no) || !digits(count) {
        return None;
    }
    let (no, count): (u64, u64) = (no.parse().ok()?, count.parse().ok()?);
    if no == 0 || no > count {
        return None;
    }
    Some((path.with_file_name(prefix), no - 1, count))
}

/// The names of every shard of the set `shard` (read from the file at `path`) belongs to, in
/// order, from `path`'s own name as gguf-split names shards (`NAME-00001-of-00003.gguf`):
/// the name and the shard's own numbers must agree. Nothing is looked for on disk: a remote
/// set's members are named the same way, beside it.
pub fn shard_names(path: &Path, shard: &Shard) -> Result<Vec<PathBuf>> {
    let (prefix, no, count) = parse_shard_path(path).ok_or_else(|| {
        Error::Split(format!(
            "{} says it is shard {} of {}, but is not named as gguf-split names shards (NAME-{:05}-of-{:05}.gguf)",
            path.display(),
            shard.no + 1,
            shard.count,
            shard.no + 1,
            shard.count
        ))
    })?;
    if (no, count) != (shard.no, shard.count) {
        return Err(Error::Split(format!(
            "{} is named shard {} of {} but says it is shard {} of {}",
            path.display(),
            no + 1,
            count,
            shard.no + 1,
            shard.count
        )));
    }
    let paths: Vec<PathBuf> = (0..count).map(|i| shard_path(&prefix, i, count)).collect();
    Ok(paths)
}

/// The shards of the set `path` (one of its shards, as `shard` says) belongs to, in order,
/// each checked to exist; an error names the missing ones, and any file beside them named
/// as a shard of the same prefix with another count (an extra shard).
pub fn shard_paths(path: &Path, shard: &Shard) -> Result<Vec<PathBuf>> {
    let paths = shard_names(path, shard)?;
    let prefix = parse_shard_path(path).map_or_else(PathBuf::new, |(prefix, _, _)| prefix);
    let missing: Vec<String> = paths
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Error::Split(format!(
            "missing shards: {}",
            missing.join(", ")
        )));
    }
    let dir = prefix
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut extra = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if let Some((other_prefix, _, _)) = parse_shard_path(&p) {
                let same_prefix = other_prefix.file_name() == prefix.file_name();
                if same_prefix && !paths.iter().any(|q| q.file_name() == p.file_name()) {
                    extra.push(p.display().to_string());
                }
            }
        }
    }
    if !extra.is_empty() {
        extra.sort();
        return Err(Error::Split(format!(
            "extra shards beside the {} of {}: {}",
            paths.len(),
            prefix.display(),
            extra.join(", ")
        )));
    }
    Ok(paths)
}

/// Checks that `shards` (each shard's split keys and tensor count, in path order) make one
/// whole set.
pub fn check_set(paths: &[PathBuf], shards: &[(Option<Shard>, u64)]) -> Result<()> {
    let count = shards.len() as u64;
    let mut total = 0u64;
    let mut declared = None;
    for (i, ((shard, tensors), path)) in shards.iter().zip(paths).enumerate() {
        let Some(s) = shard else {
            return Err(Error::Split(format!(
                "{} has no split keys",
                path.display()
            )));
        };
        if s.no != i as u64 || s.count != count {
            return Err(Error::Split(format!(
                "{} says it is shard {} of {}; it is shard {} of {count}",
                path.display(),
                s.no + 1,
                s.count,
                i + 1
            )));
        }
        if *declared.get_or_insert(s.tensors) != s.tensors {
            return Err(Error::Split(format!(
                "{} says the set has {} tensors; the first shard says {}",
                path.display(),
                s.tensors,
                declared.unwrap_or_default()
            )));
        }
        total += tensors;
    }
    if Some(total) != declared {
        return Err(Error::Split(format!(
            "the shards hold {total} tensors; they say the set has {}",
            declared.unwrap_or_default()
        )));
    }
    Ok(())
}

/// How to cut a set into shards: at most so many tensors, or so many bytes of tensor data
/// (each tensor counted padded to 32 bytes), per shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Tensors per shard.
    Tensors(usize),
    /// Bytes of tensor data per shard; a tensor bigger than that gets a shard of its own.
    Bytes(u64),
}

/// The tensors (by position, in order) of each shard, for tensors of `sizes` bytes, cut as
/// `gguf-split` cuts them.
#[must_use]
pub fn plan(sizes: &[u64], limit: Limit) -> Vec<std::ops::Range<usize>> {
    let mut shards = Vec::new();
    let mut start = 0;
    let mut bytes = 0u64;
    for (i, &size) in sizes.iter().enumerate() {
        let padded = size.div_ceil(32).saturating_mul(32);
        let cut = match limit {
            Limit::Tensors(n) => i > 0 && i % n.max(1) == 0,
            Limit::Bytes(max) => i > start && bytes.saturating_add(padded) > max,
        };
        if cut {
            shards.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes = bytes.saturating_add(padded);
    }
    if start < sizes.len() || shards.is_empty() {
        shards.push(start..sizes.len());
    }
    shards
}

/// The split keys of shard `no` of `count`, of a set of `tensors` tensors.
#[must_use]
pub fn keys(no: u64, count: u64, tensors: u64) -> [(&'static str, Value<'static>); 3] {
    [
        (NO_KEY, Value::U16(u16::try_from(no).unwrap_or(u16::MAX))),
        (
            COUNT_KEY,
            Value::U16(u16::try_from(count).unwrap_or(u16::MAX)),
        ),
        (
            TENSORS_COUNT_KEY,
            Value::I32(i32::try_from(tensors).unwrap_or(i32::MAX)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_round_trip() {
        let p = shard_path(Path::new("dir/model"), 1, 3);
        assert_eq!(p, Path::new("dir/model-00002-of-00003.gguf"));
        assert_eq!(
            parse_shard_path(&p),
            Some((PathBuf::from("dir/model"), 1, 3))
        );
        assert_eq!(parse_shard_path(Path::new("model-1-of-3.gguf")), None);
        assert_eq!(
            parse_shard_path(Path::new("model-00004-of-00003.gguf")),
            None
        );
    }

    #[test]
    fn plans_cut_as_gguf_split_cuts() {
        assert_eq!(plan(&[1; 7], Limit::Tensors(3)), vec![0..3, 3..6, 6..7]);
        assert_eq!(plan(&[1; 6], Limit::Tensors(3)), vec![0..3, 3..6]);
        // 32 + 64 fits 100; 32 more does not.
        assert_eq!(
            plan(&[10, 64, 20, 500, 1], Limit::Bytes(100)),
            vec![0..2, 2..3, 3..4, 4..5]
        );
        assert_eq!(plan(&[], Limit::Tensors(3)), vec![0..0]);
    }
}
