//! Tensors grouped into messages (`--split-by`), as tensogram's `convert-netcdf` groups a
//! file's variables: all in one message (`file`, the default), one message per tensor
//! (`variable`), or one per record of the unlimited dimension (`record`: each record
//! variable's record with the variables that have no record dimension, in every message).
//! Each group is written as a message of its own, one after the other in the same file, by
//! a format that offers it ([`WriteChoice::Messages`](tensor_dtype::WriteChoice)).

use crate::error::{Error, Result};
use crate::model::{NamedTensor, TensorSet};

/// How tensors are grouped into messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitBy {
    /// Every tensor in one message.
    #[default]
    File,
    /// One message per tensor.
    Variable,
    /// One message per record of the unlimited dimension (a set read from NetCDF, or
    /// carrying its structure): each record variable's record, without that dimension,
    /// with every variable that has none.
    Record,
}

impl SplitBy {
    /// Its name, as `--split-by` takes it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SplitBy::File => "file",
            SplitBy::Variable => "variable",
            SplitBy::Record => "record",
        }
    }
}

impl std::str::FromStr for SplitBy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        [SplitBy::File, SplitBy::Variable, SplitBy::Record]
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| Error::UnknownTarget {
                what: format!("--split-by {s:?} (one of file, variable, record)"),
            })
    }
}

/// Calls `write` with each group of `set` as `by` groups it, in order; `set` itself for
/// [`SplitBy::File`].
pub(crate) fn each_group(
    set: &TensorSet<'_>,
    by: SplitBy,
    write: &mut dyn FnMut(&TensorSet<'_>) -> Result<()>,
) -> Result<()> {
    // A group: its tensors, with the set's metadata.
    fn group<'g>(set: &TensorSet<'g>, tensors: Vec<NamedTensor<'g>>) -> TensorSet<'g> {
        TensorSet {
            format: set.format,
            metadata: set.metadata.clone(),
            metadata_types: set.metadata_types.clone(),
            tensors,
            limits: set.limits,
            mapped: set.mapped.clone(),
            not_read: set.not_read.clone(),
        }
    }
    match by {
        // A set of no tensors is one message of none, whatever the split: a file of no
        // message would be an empty file no reader identifies.
        SplitBy::File | SplitBy::Variable if set.tensors.is_empty() => write(set),
        SplitBy::File => write(set),
        SplitBy::Variable => set
            .tensors
            .iter()
            .try_for_each(|t| write(&group(set, vec![t.clone()]))),
        SplitBy::Record => records(set, &mut |tensors| write(&group(set, tensors))),
    }
}

/// Each record's group of `set`'s tensors.
#[cfg(feature = "netcdf")]
fn records(
    set: &TensorSet<'_>,
    write: &mut dyn FnMut(Vec<NamedTensor<'_>>) -> Result<()>,
) -> Result<()> {
    crate::formats::netcdf::each_record(set, write)
}

#[cfg(not(feature = "netcdf"))]
fn records(_: &TensorSet<'_>, _: &mut dyn FnMut(Vec<NamedTensor<'_>>) -> Result<()>) -> Result<()> {
    Err(Error::UnknownTarget {
        what: "--split-by record: records are NetCDF's, and this build reads no NetCDF".into(),
    })
}
