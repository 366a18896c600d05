//! NumPy's `.npy` (one array) and `.npz` (an archive of them), through tensor-numpy (see
//! docs/formats/numpy.md): read as views where they lie, written as numpy writes them.

use crate::adapter::{Adapter, Checked, Writing};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::TensorSet;
use std::borrow::Cow;
use std::path::Path;
use tensor_core::atomic::WriteSeek;
use tensor_core::{Held, Limits, ReadOptions};
use tensor_dtype::{Format as _, FormatInfo};
use tensor_numpy::{Npy, NpyFormat, NpzFormat, NpzWriter};

/// `.npy` files.
pub(crate) struct NpyAdapter;
/// `.npz` archives.
pub(crate) struct NpzAdapter;

/// The registry's entries.
pub(crate) static NPY: NpyAdapter = NpyAdapter;
pub(crate) static NPZ: NpzAdapter = NpzAdapter;

fn wrap<'p>(path: &'p Path, format: &'static str) -> impl Fn(tensor_numpy::Error) -> Error + 'p {
    move |e| match e {
        tensor_numpy::Error::Core(c) => c.into(),
        tensor_numpy::Error::CannotWrite(what) => Error::CannotRepresent { format, what },
        other => Error::format(path, format, other),
    }
}

/// Adds the array of `npy` to `set` as `name`: a view of `bytes`'s elements where they lie,
/// the elements packed into a tensor for the 4- and 6-bit floats `ml_dtypes` keeps a byte
/// each.
fn push<'a>(
    set: &mut TensorSet<'a>,
    name: &str,
    npy: &Npy<'a>,
    limits: &Limits,
) -> tensor_numpy::Result<()> {
    if let Some(numpy_type) = &npy.numpy_type {
        // A date or time span: its integers, NumPy's type kept beside them.
        set.metadata.get_or_insert_with(Default::default).insert(
            format!("{name}.numpy_dtype"),
            serde_json::Value::String(numpy_type.clone()),
        );
    }
    match npy.view()? {
        Some(view) => set.push_view(name, view),
        None => set.push_owned(name, npy.to_tensor(limits)?),
    }
    Ok(())
}

/// The note a write leaves when `set` has metadata and `what` holds none.
fn metadata_left_out(set: &TensorSet<'_>, what: &str) -> Vec<String> {
    if set.metadata.as_ref().is_some_and(|m| !m.is_empty()) {
        vec![format!("the metadata: {what} holds none")]
    } else {
        Vec::new()
    }
}

impl Adapter for NpyAdapter {
    fn info(&self) -> &'static FormatInfo {
        &NpyFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        NpyFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let w = wrap(path, NpyFormat::INFO.id);
        let npy = Npy::open(bytes, &options.limits).map_err(&w)?;
        let mut set = TensorSet::new(Format::NPY, options.limits);
        // A .npy file names nothing: the array takes the file's name, as numpy users name
        // the arrays they load.
        let name = path
            .file_stem()
            .map_or_else(|| "array".into(), |s| s.to_string_lossy().into_owned());
        push(&mut set, &name, &npy, &options.limits).map_err(&w)?;
        Ok(set)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        _: &Path,
        _: &Writing<'_>,
    ) -> Result<Vec<String>> {
        let [t] = set.tensors.as_slice() else {
            return Err(Error::CannotRepresent {
                format: NpyFormat::INFO.id,
                what: format!(
                    "{} arrays: a .npy file holds one (write .npz for several)",
                    set.len()
                ),
            });
        };
        let name = set.names().swap_remove(0);
        crate::npy::write_tensor(t, &name, &set.limits, out)?;
        Ok(metadata_left_out(set, "a .npy file"))
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        NpyFormat::header_ranges(held, limits).map_err(wrap(path, NpyFormat::INFO.id))
    }
}

impl Adapter for NpzAdapter {
    fn info(&self) -> &'static FormatInfo {
        &NpzFormat::INFO
    }

    fn recognise(&self, head: &[u8]) -> bool {
        NpzFormat::recognise(head)
    }

    fn read<'a>(
        &self,
        path: &Path,
        bytes: &'a [u8],
        options: &ReadOptions,
    ) -> Result<TensorSet<'a>> {
        let w = wrap(path, NpzFormat::INFO.id);
        let limits = &options.limits;
        let (members, left_out) = tensor_numpy::npz::open(bytes, limits).map_err(&w)?;
        let mut set = TensorSet::new(Format::NPZ, *limits);
        set.not_read = left_out
            .into_iter()
            .map(|(name, why)| crate::model::NotRead {
                name,
                why,
                strings: None,
            })
            .collect();
        for m in &members {
            if let Cow::Borrowed(b) = &m.bytes {
                let npy = Npy::open(b, limits).map_err(&w)?;
                push(&mut set, &m.name, &npy, limits).map_err(&w)?;
            } else {
                let t = m
                    .npy(limits)
                    .and_then(|n| n.to_tensor(limits))
                    .map_err(&w)?;
                set.push_owned(&m.name, t);
            }
        }
        Ok(set)
    }

    fn write(
        &self,
        set: &TensorSet<'_>,
        out: &mut dyn WriteSeek,
        path: &Path,
        _: &Writing<'_>,
    ) -> Result<Vec<String>> {
        let w = wrap(path, NpzFormat::INFO.id);
        let mut npz = NpzWriter::new(out).map_err(&w)?;
        for (name, t) in set.names().iter().zip(&set.tensors) {
            let mut carried = super::Carried::default();
            let added = npz.array(name, t.dtype(), t.shape(), |o| {
                crate::npy::write_elements(t, &set.limits, o)
                    .map_err(|e| carried.keep(e, std::io::Error::other))
            });
            carried.finish(added, &w)?;
        }
        npz.finish().map_err(&w)?;
        Ok(metadata_left_out(set, "an .npz archive"))
    }

    fn header_ranges(
        &self,
        path: &Path,
        held: &dyn Held,
        limits: &Limits,
    ) -> Result<Vec<std::ops::Range<u64>>> {
        NpzFormat::header_ranges(held, limits).map_err(wrap(path, NpzFormat::INFO.id))
    }

    fn verify_checksums(&self, path: &Path, bytes: &[u8]) -> Result<Checked> {
        Ok(Checked {
            verified: tensor_numpy::npz::verify(bytes, &Limits::default())
                .map_err(wrap(path, NpzFormat::INFO.id))?,
            tolerated: Vec::new(),
        })
    }
}
