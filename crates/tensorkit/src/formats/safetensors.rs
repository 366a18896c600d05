//! safetensors, through tensor-safetensors (see docs/formats/safetensors.md).

use crate::adapter::{Adapter, EditedHeader, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{NamedTensor, TensorSet};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tensor_core::atomic::WriteSeek;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo};
use tensor_safetensors::{Entry, SafeTensors, SafetensorsFormat};

const FORMAT: &str = SafetensorsFormat::INFO.id;

/// safetensors, as the front door reads and writes it.
pub(crate) struct Safetensors;

/// The registry's entry.
pub(crate) static ADAPTER: Safetensors = Safetensors;

impl Adapter for Safetensors {
    fn info(&self) -> &'static FormatInfo {
        &SafetensorsFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        SafetensorsFormat::recognise(head)
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
        writing: &Writing<'_>,
    ) -> Result<Vec<String>> {
        write(set, out, path, writing.header_reserve)
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        SafetensorsFormat::header_ranges(held, limits).map_err(wrap(path))
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
fn wrap(path: &Path) -> impl Fn(tensor_safetensors::Error) -> Error + '_ {
    move |e| match e {
        tensor_safetensors::Error::Core(c) => c.into(),
        tensor_safetensors::Error::Dtype(d) => d.into(),
        tensor_safetensors::Error::Unwritable(what) => Error::CannotRepresent {
            format: FORMAT,
            what,
        },
        other => Error::format(path, FORMAT, other),
    }
}

/// Reads a whole safetensors file, borrowing tensor data from `bytes`.
fn read<'a>(path: &Path, bytes: &'a [u8], options: &ReadOptions) -> Result<TensorSet<'a>> {
    let limits = &options.limits;
    let file = SafeTensors::open_with(bytes, options).map_err(wrap(path))?;
    Ok(TensorSet {
        format: Format::SAFETENSORS,
        metadata: file
            .metadata
            .map(|m| m.into_iter().map(|(k, v)| (k, Value::String(v))).collect()),
        metadata_types: std::collections::BTreeMap::new(),
        tensors: file
            .tensors
            .into_iter()
            .map(|t| NamedTensor::borrowed(t.name, t.view))
            .collect(),
        limits: *limits,
        mapped: Vec::new(),
        not_read: Vec::new(),
    })
}

/// The tensors and the string metadata a header describes.
type Described<'s> = (Vec<Entry<'s>>, Option<BTreeMap<String, String>>);

/// What a safetensors header says of `set`: each tensor (named `names[i]`) and the metadata,
/// whose values must be strings.
fn described<'s>(set: &'s TensorSet<'_>, names: &'s [String]) -> Result<Described<'s>> {
    let entries = names
        .iter()
        .zip(&set.tensors)
        .map(|(name, t)| Entry {
            name,
            dtype: t.dtype(),
            shape: t.shape(),
        })
        .collect();
    let metadata = super::string_metadata(set, FORMAT)?.map(|m| m.into_iter().collect());
    Ok((entries, metadata))
}

/// Writes `set` as safetensors to `out`, one tensor at a time. Metadata values must be
/// strings; unnamed tensors are called `tensor_<i>`.
fn write(
    set: &TensorSet<'_>,
    out: &mut dyn std::io::Write,
    path: &Path,
    header_reserve: u64,
) -> Result<Vec<String>> {
    let header_reserve = tensor_core::checked::to_usize(header_reserve, "header reserve")?;
    let mut notes = Vec::new();
    let once;
    let set = match shared_written_once(set) {
        Some(s) => {
            let left = set.len() - s.len();
            notes.push(format!(
                "{left} tensor{} sharing another's bytes (tied weights) written once, each named in the metadata with the name written, as safetensors' save_model does",
                if left == 1 { "" } else { "s" }
            ));
            once = s;
            &once
        }
        None => set,
    };
    let names = set.names();
    let (entries, metadata) = described(set, &names)?;
    // The tensors are decoded (if need be) and streamed as the writer asks for them; an
    // error of ours is kept whole and handed back after the writer stops.
    let mut carried = super::Carried::default();
    let written = tensor_safetensors::write_streamed(
        out,
        &entries,
        metadata.as_ref(),
        header_reserve,
        &mut |i, w| {
            set.tensors[i]
                .write_canonical(&set.limits, w)
                .map_err(|e| carried.keep(e, std::io::Error::other))
        },
    );
    carried.finish(written, wrap(path))?;
    Ok(notes)
}

/// `set` with each tensor that views exactly the bytes another views (a PyTorch checkpoint's
/// tied weights share one storage) left out, as safetensors' `save_model` leaves them out: of
/// each such group the first name in sorted order is written, and every other name is
/// recorded in the metadata as `{name: kept}` unless the metadata has that key already.
/// `None` when no two tensors share their bytes. Views of different parts of one storage
/// (a row, a transpose) are written each in full: `save_model` would drop them, and their
/// elements with them.
fn shared_written_once<'s>(set: &TensorSet<'s>) -> Option<TensorSet<'s>> {
    use std::collections::HashMap;
    let mut groups: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, t) in set.tensors.iter().enumerate() {
        if let crate::model::TensorData::View(v) = &t.data
            && v.byte_len() > 0
        {
            let key = (
                v.buffer().as_ptr() as usize,
                v.buffer().len(),
                v.offset(),
                v.strides().to_vec(),
                v.shape().to_vec(),
                v.dtype(),
                v.byte_order(),
            );
            groups.entry(key).or_default().push(i);
        }
    }
    let names = set.names();
    let mut dropped = Vec::new();
    for members in groups.values().filter(|m| m.len() > 1) {
        let kept = *members.iter().min_by_key(|&&i| &names[i])?;
        dropped.extend(members.iter().filter(|&&i| i != kept).map(|&i| (i, kept)));
    }
    if dropped.is_empty() {
        return None;
    }
    dropped.sort_unstable();
    let mut once = set.clone();
    let metadata = once.metadata.get_or_insert_with(Default::default);
    for &(i, kept) in &dropped {
        metadata
            .entry(names[i].clone())
            .or_insert_with(|| Value::String(names[kept].clone()));
    }
    for &(i, _) in dropped.iter().rev() {
        once.tensors.remove(i);
    }
    Some(once)
}

/// The header an edit writes over the header of the safetensors file `bytes` (which `set`
/// was read from, in stored order, then given new names and metadata): in its place when it
/// fits (`InPlace`), or for a copy of the file whose data section follows it as it is.
fn header_for_edit(bytes: &[u8], set: &TensorSet<'_>, path: &Path) -> Result<Option<EditedHeader>> {
    let Some(old_len) = tensor_safetensors::data_start(bytes).and_then(|n| usize::try_from(n).ok())
    else {
        return Ok(None);
    };
    let names = set.names();
    let (entries, metadata) = described(set, &names)?;
    let in_place = tensor_safetensors::header_in_place(&entries, metadata.as_ref(), old_len)
        .map_err(wrap(path))?;
    Ok(Some(match in_place {
        Some(header) => EditedHeader::at_start(header, bytes.len() as u64),
        None => EditedHeader::Moved {
            header: tensor_safetensors::header_moved(&entries, metadata.as_ref(), old_len as u64)
                .map_err(wrap(path))?,
            data_start: old_len as u64,
        },
    }))
}
