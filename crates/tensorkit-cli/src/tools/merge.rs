//! `merge`: every tensor of several files into one.

use super::manifest::{same_file_key, split_manifest};
use super::tensors::format_for;
use crate::cli::MergeStrategy;
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tensor_core::Limits;
use tensorkit::TensorSet;

/// `merge`: every tensor of every input into one file. Names must not repeat (an unnamed
/// Tensogram object stays unnamed where the output's format allows it); file metadata
/// is merged key by key, a key with two different values settled by `strategy`. With
/// `progress`, a bar follows the writing of large outputs on a terminal.
#[allow(clippy::too_many_arguments)]
pub fn merge(
    inputs: &[PathBuf],
    output: &Path,
    strategy: MergeStrategy,
    args: &crate::cli::Target,
    progress: bool,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let target = format_for(output, args.to.as_deref(), None)?;
    let options = args.write_options(target, durability)?;
    // A directory `split` wrote (or its index, or an older manifest) stands for its files,
    // in the original order, with the real names. A file named twice — `parts/*` names the
    // index and every part it lists — is one file, read once, under the index's name for it.
    let manifests: Vec<Option<Vec<(PathBuf, String)>>> = inputs
        .iter()
        .map(|i| split_manifest(i, limits))
        .collect::<Result<_>>()?;
    let listed: HashSet<PathBuf> = manifests
        .iter()
        .flatten()
        .flatten()
        .map(|(f, _)| same_file_key(f))
        .collect();
    let mut files: Vec<(PathBuf, Option<String>)> = Vec::new();
    let mut taken: HashSet<PathBuf> = HashSet::new();
    for (input, parts) in inputs.iter().zip(manifests) {
        let entries: Vec<(PathBuf, Option<String>)> = match parts {
            Some(parts) => parts.into_iter().map(|(f, n)| (f, Some(n))).collect(),
            None => vec![(input.clone(), None)],
        };
        for (f, n) in entries {
            let key = same_file_key(&f);
            // A part a manifest lists comes in where the manifest stands, under its name.
            let manifest_has_it = n.is_none() && listed.contains(&key);
            if !manifest_has_it && taken.insert(key) {
                files.push((f, n));
            }
        }
    }
    let inputs: Vec<PathBuf> = files.iter().map(|(f, _)| f.clone()).collect();
    let inputs = &inputs[..];
    let opened: Vec<tensorkit::File> = inputs
        .iter()
        .map(|p| crate::open(p, limits))
        .collect::<Result<_>>()?;
    let mut merged = TensorSet::new(target, *limits);
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    for ((path, file), (_, real_name)) in inputs.iter().zip(&opened).zip(&files) {
        let set = file.tensor_set();
        let mut names = set.names();
        if let (Some(real), [_]) = (real_name, &mut names[..]) {
            names[0].clone_from(real);
        }
        for (k, ty) in set.metadata_types() {
            merged
                .metadata_types_mut()
                .entry(k.clone())
                .or_insert_with(|| ty.clone());
        }
        if let Some(m) = set.metadata() {
            let into = merged
                .metadata_mut()
                .get_or_insert_with(serde_json::Map::new);
            for (k, v) in m.clone() {
                match (into.get(&k), strategy) {
                    (Some(old), MergeStrategy::Error) if *old != v => {
                        return Err(Error::UnknownTarget {
                            what: format!(
                                "cannot merge: metadata key {k:?} is {old} in one input and {v} in {} (--strategy first or last keeps one)",
                                path.display()
                            ),
                        });
                    }
                    (Some(_), MergeStrategy::First) => {}
                    _ => {
                        into.insert(k, v);
                    }
                }
            }
        }
        for (t, name) in set.tensors().zip(names) {
            // An unnamed object (Tensogram's, keyed by its metadata) stays unnamed where the
            // output's format allows it; a name may not repeat.
            let unnamed = t.stored_name().is_none() && !target.info().unique_names;
            if !unnamed && let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                return Err(Error::UnknownTarget {
                    what: format!(
                        "cannot merge: tensor {name:?} is in both {} and {}",
                        first.display(),
                        path.display()
                    ),
                });
            }
            if unnamed {
                merged.push_as_is(t);
            } else {
                seen.push((name.clone(), path.clone()));
                merged.push(t, name);
            }
        }
    }
    let dropped = crate::convert::save_with_progress(&merged, output, options, progress)?;
    let mut text = format!(
        "merged {} tensors from {} files into {} ({})\n",
        merged.len(),
        inputs.len(),
        output.display(),
        target.id()
    );
    for d in dropped {
        let _ = writeln!(text, "left out: {d}");
    }
    Ok(text)
}
