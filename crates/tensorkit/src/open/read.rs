//! Reading local files along the front door's path (see [`crate::open`]): the members of
//! the set a path names, each recognised once, upgraded and read through its adapter, then
//! joined. A shard set's unfinished edit is not finished here: the front door does that
//! first ([`crate::edit`]), and the editor reads through here.

use super::file::{Bytes, File, Parsed};
use crate::error::Result;
use crate::format::Format;
use crate::local::map_local;
use crate::shards::{Joining, join_as};
use std::path::{Path, PathBuf};
use tensor_core::ReadOptions;

/// Reads the local file at `path` — a shard index's set, a GGUF split set through any of its
/// shards, or a file alone — with `options`.
pub(crate) fn read_local(path: &Path, options: &ReadOptions) -> Result<File> {
    let (members, joining) = expand_local(path, options)?;
    let (paths, members): (Vec<PathBuf>, Vec<Member>) = members.into_iter().unzip();
    read_members(&paths, members, &joining, path.to_path_buf(), options)
}

/// One member of a set, its format recognised and its bytes in the wire version readers
/// read ([step 3](self)): what reading it needs.
pub(crate) struct Member {
    pub(crate) format: Format,
    pub(crate) bytes: Bytes,
}

impl Member {
    /// `bytes`, the file at `path`: recognised, and upgraded by its adapter when it holds an
    /// older wire version.
    pub(crate) fn new(path: &Path, bytes: Bytes, limits: &tensor_core::Limits) -> Result<Self> {
        let format = crate::registry::detect(path, &bytes)?;
        let bytes = match format.adapter().upgrade(path, &bytes, limits)? {
            Some(upgraded) => Bytes::Owned(upgraded.bytes),
            None => bytes,
        };
        Ok(Member { format, bytes })
    }
}

/// Steps 1 and 2 for a local `path` (a set edit left unfinished already finished): the files of the set it names (itself alone when it
/// names none), each mapped and recognised, and how they join.
fn expand_local(path: &Path, options: &ReadOptions) -> Result<(Vec<(PathBuf, Member)>, Joining)> {
    let limits = &options.limits;
    let member = |p: &Path| Member::new(p, Bytes::Mapped(map_local(p)?), limits);
    if crate::shards::is_index(path) {
        let index = crate::shards::Index::read(path, limits)?;
        let members = index
            .files()
            .into_iter()
            .map(|f| Ok((f.clone(), member(&f)?)))
            .collect::<Result<_>>()?;
        return Ok((members, Joining::Index(index)));
    }
    let first = member(path)?;
    let Some(paths) = first
        .format
        .adapter()
        .set_members(path, &first.bytes, options)?
    else {
        return Ok((vec![(path.to_path_buf(), first)], Joining::Files));
    };
    let format = first.format;
    let mut first = Some(first);
    let members = paths
        .into_iter()
        .map(|p| {
            let m = match first.take_if(|_| p == path) {
                Some(m) => m,
                None => member(&p)?,
            };
            Ok((p, m))
        })
        .collect::<Result<_>>()?;
    Ok((members, Joining::Format(format)))
}

/// Steps 3 and 4: every member read through its adapter (a set read from a mapped file names
/// its mapping, [`TensorSet::mapped`]), and the sets joined as `joining` says.
pub(crate) fn read_members(
    paths: &[PathBuf],
    members: Vec<Member>,
    joining: &Joining,
    opened: PathBuf,
    options: &ReadOptions,
) -> Result<File> {
    let formats: Vec<Format> = members.iter().map(|m| m.format).collect();
    let bytes: Vec<Bytes> = members.into_iter().map(|m| m.bytes).collect();
    let parsed = Parsed::try_new(bytes, |maps| {
        let sets = paths
            .iter()
            .zip(maps)
            .zip(&formats)
            .map(|((p, b), f)| {
                let mut set = f.adapter().read(p, b, options)?;
                if let Bytes::Mapped(m) = b {
                    set.mapped.push(m);
                }
                Ok(set)
            })
            .collect::<Result<Vec<_>>>()?;
        join_as(paths, sets, joining)
    })?;
    Ok(File::local(parsed, opened))
}
