//! `split`: one file into one file per tensor (with an index), or a GGUF split set.

use super::manifest::file_stem;
use super::tensors::{escape_field, format_for};
use crate::error::{Error, Result};
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::Limits;
use tensorkit::{Format, TensorSet};

/// `split --max-tensors N | --max-size BYTES`: a GGUF split set in `dir`, cut, named and
/// keyed as `gguf-split` does it, named after the input (`DIR/<stem>-00001-of-0000N.gguf`;
/// a shard's own suffix is dropped first).
pub fn split_gguf(
    input: &Path,
    dir: &Path,
    limit: tensorkit::gguf::split::Limit,
    args: &crate::cli::Target,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(input, limits)?;
    let set = opened.tensor_set();
    let target = format_for(Path::new(""), args.to.as_deref(), Some(set.format()))?;
    if target != Format::GGUF {
        return Err(Error::UnknownTarget {
            what: format!(
                "--max-tensors and --max-size cut GGUF split sets; this would write {} (give --to gguf, or use `convert --max-shard-size` for a Hugging Face shard set)",
                target.id()
            ),
        });
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| tensor_core::Error::io(format!("creating {}", dir.display()), e))?;
    let stem = match tensorkit::gguf::split::parse_shard_path(input) {
        Some((prefix, _, _)) => prefix.file_name().map(std::ffi::OsStr::to_owned),
        None => input.file_stem().map(std::ffi::OsStr::to_owned),
    }
    .unwrap_or_else(|| "model".into());
    let (set, kept) = args
        .write_options(target, durability)?
        .prepare(set, target)?;
    let (shards, left_out) =
        tensorkit::shards::write_gguf_split(&set, &dir.join(stem), limit, durability)?;
    let mut text = String::new();
    for note in kept.iter().chain(&left_out) {
        let _ = writeln!(text, "left out: {note}");
    }
    for s in &shards {
        let _ = writeln!(text, "{}", s.display());
    }
    let _ = writeln!(
        text,
        "split {} tensors into {} GGUF shards",
        set.len(),
        shards.len()
    );
    Ok(text)
}

/// `split`: one file per tensor in `dir`, named after the tensor.
pub fn split(
    input: &Path,
    dir: &Path,
    args: &crate::cli::Target,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(input, limits)?;
    let mut set = opened.tensor_set().clone();
    if args.duplicates == crate::cli::Duplicates::Suffix {
        set.disambiguate();
    }
    let target = format_for(Path::new(""), args.to.as_deref(), Some(set.format()))?;
    let options = args.write_options(target, durability)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| tensor_core::Error::io(format!("creating {}", dir.display()), e))?;
    // The index maps each name to its file: names must not repeat.
    set.check_unique_names(target.id())?;
    let names = set.names();
    let mut text = String::new();
    // Compared without case, for file systems that ignore it.
    let mut used = std::collections::HashSet::new();
    let mut weight_map = Vec::with_capacity(names.len());
    for (t, name) in set.tensors().zip(&names) {
        let stem = file_stem(name);
        let mut unique = stem.clone();
        let mut n = 1;
        while !used.insert(unique.to_lowercase()) {
            n += 1;
            unique = format!("{stem}~{n}");
        }
        let file = format!("{unique}.{}", target.extension());
        let path = dir.join(&file);
        weight_map.push((name.clone(), file));
        let mut single = TensorSet::new(target, *set.limits());
        *single.metadata_mut() = set.metadata().cloned();
        single.metadata_types_mut().clone_from(set.metadata_types());
        single.push(t, name.clone());
        tensorkit::save_set(&path, &single, &options)?;
        let _ = writeln!(text, "{}\t{}", escape_field(name), path.display());
    }
    // The Hugging Face index of the parts, named after the input: `tensorkit::open` reads
    // the parts through it as one set, and `merge DIR` puts them back in order.
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("split");
    let index =
        tensorkit::shards::index_path(&dir.join(format!("{stem}.{}", target.extension())), target);
    tensorkit::shards::write_index(&index, &set, weight_map, durability)?;
    let _ = writeln!(text, "{}", index.display());
    let _ = writeln!(
        text,
        "split {} tensors into {} ({})",
        set.len(),
        dir.display(),
        target.id()
    );
    Ok(text)
}
