//! BinTensors, through tensor-bintensors (see docs/formats/bintensors.md).

use crate::adapter::{Adapter, EditedHeader, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use tensor_bintensors::{BinTensors, BintensorsFormat, Layout};
use tensor_core::atomic::WriteSeek;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo};

/// BinTensors in one header layout, as the front door reads and writes it (reading tells
/// the layouts apart by themselves).
pub(crate) struct Bintensors(Layout);

/// The registry's entries: the pre-release layout, then the released one.
pub(crate) static ADAPTERS: [Bintensors; 2] =
    [Bintensors(Layout::Legacy), Bintensors(Layout::Release)];

/// What a file in `layout` is.
fn info(layout: Layout) -> &'static FormatInfo {
    match layout {
        Layout::Release => &BintensorsFormat::INFO,
        Layout::Legacy => &BintensorsFormat::LEGACY,
    }
}

impl Adapter for Bintensors {
    fn info(&self) -> &'static FormatInfo {
        info(self.0)
    }

    fn recognise(&self, head: &[u8]) -> bool {
        BintensorsFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        read(path, bytes, options)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        path: &Path,
        _: &Writing<'_>,
    ) -> Result<Vec<String>> {
        write(set, out, path, self.0)?;
        Ok(Vec::new())
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        BintensorsFormat::header_ranges(held, limits).map_err(wrap(path, self.0))
    }

    #[cfg(feature = "remote")]
    fn open_header<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
        _: &dyn Fn(std::ops::Range<u64>) -> bool,
    ) -> Result<crate::adapter::Opening<'a>> {
        crate::adapter::listing::of_stored(bytes, options, |o| read(path, bytes, o))
    }

    fn header_for_edit(
        &self,
        bytes: &[u8],
        _: &TensorSet<'_>,
        new: &TensorSet<'_>,
        path: &Path,
    ) -> Result<Option<EditedHeader>> {
        header_for_edit(bytes, new, path)
    }
}

/// The crate's errors with the file they concern.
fn wrap(path: &Path, layout: Layout) -> impl Fn(tensor_bintensors::Error) -> Error + '_ {
    move |source| Error::format(path, info(layout).id, source)
}

fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let limits = &options.limits;
    let file = BinTensors::open_with(bytes, options).map_err(wrap(path, Layout::Release))?;
    let format = Format::of(info(file.layout()));
    let metadata = file.metadata().map(|m| {
        m.iter()
            .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
            .collect::<Map<_, _>>()
    });
    let tensors = file
        .tensors()
        .map(|t| NamedTensor::borrowed(t.name, t.view))
        .collect();
    Ok(TensorSet {
        format,
        metadata,
        metadata_types: std::collections::BTreeMap::new(),
        tensors,
        limits: *limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
}

/// The BinTensors writer's entries and the file's metadata.
type Described<'s> = (
    Vec<tensor_bintensors::Entry<'s>>,
    Option<BTreeMap<String, String>>,
);

/// The writer's entries for `set`'s tensors, called `names`, and its metadata as BinTensors
/// holds it (strings; `format` names the layout in errors).
fn described<'s>(
    set: &'s TensorSet<'_>,
    names: &'s [String],
    format: &'static str,
) -> Result<Described<'s>> {
    let entries = names
        .iter()
        .zip(&set.tensors)
        .map(|(n, t)| tensor_bintensors::Entry {
            name: n,
            dtype: t.dtype(),
            shape: t.shape(),
        })
        .collect();
    let metadata =
        super::string_metadata(set, format)?.map(|m| m.into_iter().collect::<BTreeMap<_, _>>());
    Ok((entries, metadata))
}

fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    layout: Layout,
) -> Result<()> {
    let format = info(layout).id;
    let names = set.names();
    let (entries, metadata) = described(set, &names, format)?;
    // One tensor decoded at a time, when the writer reaches it; an error from our side
    // (decoding, or writing) is kept whole and returned as it is.
    let mut carried = super::Carried::default();
    let written =
        tensor_bintensors::write_streamed(out, &entries, metadata.as_ref(), layout, &mut |i, w| {
            set.tensors[i]
                .write_canonical(&set.limits, w)
                .map_err(|e| carried.keep(e, std::io::Error::other))
        });
    carried.finish(written, wrap(path, layout))?;
    Ok(())
}

/// The header an edit of a file in the released layout writes over the old one, padded to
/// its length, when it fits there and every tensor lies where the header will say (back to
/// back from the data section's start, in the set's order); `None` otherwise, and for the
/// pre-release layout: the file is then written anew, as the reference writes it.
fn header_for_edit(bytes: &[u8], set: &TensorSet<'_>, path: &Path) -> Result<Option<EditedHeader>> {
    let Some(data_start) = tensor_bintensors::data_start(bytes) else {
        return Ok(None);
    };
    let release = info(Layout::Release);
    if set.format.id() != release.id || !lies_back_to_back(bytes, data_start, set) {
        return Ok(None);
    }
    let names = set.names();
    let (entries, metadata) = described(set, &names, release.id)?;
    let header = tensor_bintensors::header_in_place(&entries, metadata.as_ref(), data_start)
        .map_err(wrap(path, Layout::Release))?;
    Ok(header.map(|h| EditedHeader::at_start(h, bytes.len() as u64)))
}

/// Whether `set`'s tensors are views of `bytes` laid back to back from `data_start`, in
/// order, to the end of the file: what a header written in place describes.
fn lies_back_to_back(bytes: &[u8], data_start: u64, set: &TensorSet<'_>) -> bool {
    let Ok(mut at) = usize::try_from(data_start) else {
        return false;
    };
    for t in &set.tensors {
        let crate::model::TensorData::View(view) = &t.data else {
            return false;
        };
        let buf = view.buffer();
        if tensor_core::source::offset_within(bytes, buf) != Some(at) {
            return false;
        }
        at += buf.len();
    }
    at == bytes.len()
}
