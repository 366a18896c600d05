//! `reshuffle`: a Tensogram file's messages written again with their index and metadata up
//! front (a streamed message, whose index is in its footer, becomes one a reader lists from
//! its first bytes), optionally regrouped and reordered by metadata keys. Objects are framed
//! as they are: nothing is decoded or encoded again, and each stored hash is checked first.

use super::messages;
use crate::error::Result;
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::Limits;
use tensorkit::frame::{GlobalMetadata, Map, Message};

/// How `reshuffle` groups and orders.
#[derive(Debug, Default)]
pub struct Reshuffling<'a> {
    /// Objects with the same values for these keys go into one message (in the order each
    /// group first appears); none: each message stays one.
    pub group_by: &'a [String],
    /// Messages ordered by these keys' values (numbers by value, the rest as text; ties keep
    /// file order).
    pub sort_by: &'a [String],
}

/// One output message: objects as (message, object) pairs, or a message of no objects kept
/// as it is.
enum Out {
    Objects(Vec<(usize, usize)>),
    Empty(usize),
}

/// `reshuffle`: see the module's documentation.
pub fn reshuffle(
    input: &Path,
    output: &Path,
    how: &Reshuffling<'_>,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let mapped = tensor_core::MmapSource::open(input)?;
    let wrap = messages::wrap(input);
    let messages = messages::open(input, &mapped, limits)?;
    let metas: Vec<&GlobalMetadata> = messages
        .iter()
        .map(Message::metadata)
        .collect::<std::result::Result<_, _>>()
        .map_err(&wrap)?;
    let value = |(mi, j): (usize, usize), key: &str| metas[mi].get(j, key).map(messages::text);
    let values = |at: (usize, usize), keys: &[String]| -> Vec<Option<String>> {
        keys.iter().map(|k| value(at, k)).collect()
    };
    let mut outs: Vec<Out> = Vec::new();
    if how.group_by.is_empty() {
        for (mi, m) in messages.iter().enumerate() {
            outs.push(if m.is_empty() {
                Out::Empty(mi)
            } else {
                Out::Objects((0..m.len()).map(|j| (mi, j)).collect())
            });
        }
    } else {
        let mut keys: Vec<Vec<Option<String>>> = Vec::new();
        let mut groups: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut empty = Vec::new();
        for (mi, m) in messages.iter().enumerate() {
            if m.is_empty() {
                empty.push(Out::Empty(mi));
            }
            for j in 0..m.len() {
                let k = values((mi, j), how.group_by);
                if let Some(g) = keys.iter().position(|x| *x == k) {
                    groups[g].push((mi, j));
                } else {
                    keys.push(k);
                    groups.push(vec![(mi, j)]);
                }
            }
        }
        outs.extend(groups.into_iter().map(Out::Objects));
        outs.extend(empty);
    }
    if !how.sort_by.is_empty() {
        outs.sort_by(|a, b| {
            let key = |o: &Out| match o {
                Out::Objects(objects) => values(objects[0], how.sort_by),
                Out::Empty(mi) => values((*mi, 0), how.sort_by),
            };
            compare(&key(a), &key(b))
        });
    }
    let mut file = tensor_core::atomic::AtomicFile::create_with(output, durability)?;
    let mut objects_written = 0;
    for out in &outs {
        match out {
            Out::Empty(mi) => {
                std::io::Write::write_all(&mut file, messages[*mi].bytes()).map_err(|e| {
                    tensor_core::Error::io(format!("writing {}", output.display()), e)
                })?;
            }
            Out::Objects(objects) => {
                let meta = regrouped_metadata(objects, &metas);
                let parts: Vec<(&Message<'_>, usize)> =
                    objects.iter().map(|&(mi, j)| (&messages[mi], j)).collect();
                tensorkit::frame::regroup_to(&parts, &meta, &mut file).map_err(&wrap)?;
                objects_written += objects.len();
            }
        }
    }
    file.commit()?;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "reshuffled {} messages ({objects_written} objects) of {} into {} messages in {}",
        messages.len(),
        input.display(),
        outs.len(),
        output.display()
    );
    Ok(text)
}

/// The metadata of a message regrouped from `objects`: each object's `base` entry, and the
/// `_extra_` keys every contributing message gives the same value; a key they disagree on
/// moves into the `base` entries of the objects whose message has it (where those do not
/// name it already), so that every object's keys read as they did.
fn regrouped_metadata(objects: &[(usize, usize)], metas: &[&GlobalMetadata]) -> GlobalMetadata {
    let mut sources: Vec<usize> = objects.iter().map(|&(mi, _)| mi).collect();
    sources.dedup();
    let first = &metas[sources[0]].extra;
    let shared: Map = first
        .iter()
        .filter(|(k, v)| {
            sources
                .iter()
                .all(|&mi| metas[mi].extra.get(*k) == Some(*v))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let base = objects
        .iter()
        .map(|&(mi, j)| {
            let mut entry: Map = metas[mi].base.get(j).cloned().unwrap_or_default();
            for (k, v) in &metas[mi].extra {
                if !shared.contains_key(k) {
                    entry.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            entry
        })
        .collect();
    GlobalMetadata {
        base,
        extra: shared,
        ..GlobalMetadata::default()
    }
}

/// Orders key values: numbers by value, then text; a missing value last.
fn compare(left: &[Option<String>], right: &[Option<String>]) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for (one, other) in left.iter().zip(right) {
        let order = match (one, other) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(one), Some(other)) => match (one.parse::<f64>(), other.parse::<f64>()) {
                (Ok(a), Ok(b)) => a.total_cmp(&b),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => one.cmp(other),
            },
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}
