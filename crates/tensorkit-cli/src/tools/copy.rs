//! `copy`: the tensors (Tensogram: the messages) whose metadata matches `-w` clauses, into
//! one file, or split into files named by their keys (`out_[mars.param]_[mars.step].tgm`).
//!
//! Tensogram into Tensogram copies whole messages byte for byte, as tensogram's own `copy`
//! does: a message goes when one of its objects passes every clause (each object's keys are
//! its `base` entry, then the message's `_extra_`), and a template takes its values from the
//! first object that passes. Any other pair of formats copies tensors, through the writer of
//! the output's format. Every output is written whole and renamed into place.

use super::messages;
use super::select::{self, Where};
use super::tensors::format_for;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tensor_core::Limits;
use tensorkit::{Format, TensorSet};

/// What `copy` copies, and where.
#[derive(Debug)]
pub struct Copying<'a> {
    /// The output file, or a template with `[key]` in it.
    pub output: &'a str,
    /// The clauses what is copied passes.
    pub clauses: &'a [Where],
    /// The output format and pipeline (a format other than the input's converts).
    pub target: &'a crate::cli::Target,
}

/// `copy`: see the module's documentation.
pub fn copy(
    input: &Path,
    copying: &Copying<'_>,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let template = select::is_template(copying.output);
    let opened = crate::open(input, limits)?;
    let source = opened.format();
    // A template's extension names the format as a file name's does.
    let target = format_for(
        Path::new(copying.output),
        copying.target.to.as_deref(),
        Some(source),
    )?;
    let keeps_pipeline = copying.target.pipeline.is_none();
    if source == Format::TENSOGRAM && target == Format::TENSOGRAM && keeps_pipeline {
        drop(opened);
        return copy_messages(input, copying, limits, durability);
    }
    let set = opened.tensor_set();
    let mut groups: BTreeMap<PathBuf, TensorSet<'_>> = BTreeMap::new();
    let mut order = Vec::new();
    for (t, name) in set.tensors().zip(set.names()) {
        let lookup = |k: &str| super::get::tensor_value(&t, &opened, k);
        if !select::passes(copying.clauses, &lookup) {
            continue;
        }
        let path = output_for(copying.output, template, &lookup)?;
        let group = groups.entry(path.clone()).or_insert_with(|| {
            order.push(path);
            let mut g = TensorSet::new(target, *limits);
            g.metadata_mut().clone_from(&set.metadata().cloned());
            g
        });
        if t.stored_name().is_none() && !target.info().unique_names {
            group.push_as_is(t);
        } else {
            group.push(t, name);
        }
    }
    let mut text = String::new();
    let mut copied = 0;
    for path in &order {
        let group = &groups[path];
        make_parent(path)?;
        let options = copying.target.write_options(target, durability)?;
        for note in crate::convert::save_with_progress(group, path, options, false)? {
            let _ = writeln!(text, "left out: {note}");
        }
        copied += group.len();
        let _ = writeln!(text, "{}\t{} tensors", path.display(), group.len());
    }
    let _ = writeln!(
        text,
        "copied {copied} of {} tensors into {} {} files",
        set.len(),
        order.len(),
        target.id()
    );
    Ok(text)
}

/// Tensogram into Tensogram: whole messages, byte for byte.
fn copy_messages(
    input: &Path,
    copying: &Copying<'_>,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let template = select::is_template(copying.output);
    let mapped = tensor_core::MmapSource::open(input)?;
    let messages = messages::open(input, &mapped, limits)?;
    let mut outputs: BTreeMap<PathBuf, Vec<&[u8]>> = BTreeMap::new();
    let mut order = Vec::new();
    for m in &messages {
        let meta = m.metadata().map_err(messages::wrap(input))?;
        let objects = m.len().max(1);
        let chosen = (0..objects).find_map(|j| {
            let lookup = |k: &str| meta.get(j, k).map(messages::text);
            select::passes(copying.clauses, &lookup)
                .then(|| output_for(copying.output, template, &lookup))
        });
        let Some(path) = chosen.transpose()? else {
            continue;
        };
        outputs
            .entry(path.clone())
            .or_insert_with(|| {
                order.push(path);
                Vec::new()
            })
            .push(m.bytes());
    }
    let mut out = String::new();
    let mut copied = 0;
    for path in &order {
        let parts = &outputs[path];
        make_parent(path)?;
        let mut f = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
        for p in parts {
            std::io::Write::write_all(&mut f, p)
                .map_err(|e| tensor_core::Error::io(format!("writing {}", path.display()), e))?;
        }
        f.commit()?;
        copied += parts.len();
        let _ = writeln!(out, "{}\t{} messages", path.display(), parts.len());
    }
    let _ = writeln!(
        out,
        "copied {copied} of {} messages into {} files",
        messages.len(),
        order.len()
    );
    Ok(out)
}

/// The file a unit goes to: the output, or the template filled in.
fn output_for(
    output: &str,
    template: bool,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf> {
    if template {
        select::expand(output, lookup)
    } else {
        Ok(PathBuf::from(output))
    }
}

/// Creates `path`'s directory when a template names one that is not there yet.
fn make_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => std::fs::create_dir_all(dir)
            .map_err(|e| {
                Error::from(tensor_core::Error::io(
                    format!("creating {}", dir.display()),
                    e,
                ))
            }),
        _ => Ok(()),
    }
}
