//! PyTorch checkpoints, through tensor-pytorch (see docs/formats/pytorch.md): read only,
//! never run.

use crate::adapter::{Adapter, Checked};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::TensorSet;
use std::borrow::Cow;
use std::path::Path;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo};
use tensor_pytorch::{Checkpoint, PytorchFormat};

/// PyTorch checkpoints, as the front door reads them.
pub(crate) struct Pytorch;

/// The registry's entry.
pub(crate) static ADAPTER: Pytorch = Pytorch;

impl Adapter for Pytorch {
    fn info(&self) -> &'static FormatInfo {
        &PytorchFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        PytorchFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        read(path, bytes, options)
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        PytorchFormat::header_ranges(held, limits).map_err(wrap(path))
    }

    fn verify_checksums(&self, path: &Path, bytes: &[u8]) -> Result<Checked> {
        Ok(Checked {
            verified: tensor_pytorch::verify(bytes, &Limits::default()).map_err(wrap(path))?,
            tolerated: Vec::new(),
        })
    }
}

/// The crate's errors with the file they concern.
fn wrap(path: &Path) -> impl Fn(tensor_pytorch::Error) -> Error + '_ {
    move |e| match e {
        tensor_pytorch::Error::Core(c) => c.into(),
        other => Error::format(path, PytorchFormat::INFO.id, other),
    }
}

/// Reads every tensor of a checkpoint: views of the file's own bytes where its storages are
/// stored as they are, copies where an archive deflated them.
fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let ckpt = Checkpoint::open(bytes, options).map_err(wrap(path))?;
    let mut set = TensorSet::new(Format::PYTORCH, options.limits);
    for t in &ckpt.tensors {
        match ckpt.storage(&t.storage) {
            Some(Cow::Borrowed(b)) => set.push_view(
                &t.name,
                tensor_pytorch::view_over(t, b, ckpt.byte_order).map_err(wrap(path))?,
            ),
            _ => set.push_owned(&t.name, ckpt.view_of(t).map_err(wrap(path))?.to_tensor()),
        }
    }
    if !ckpt.metadata.is_empty() {
        set.metadata = Some(ckpt.metadata);
        set.metadata_types = ckpt.metadata_types;
    }
    Ok(set)
}
