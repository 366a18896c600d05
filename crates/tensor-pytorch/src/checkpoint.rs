//! A checkpoint's layouts: `torch.save`'s zip archive (since 1.6) and the legacy sequence
//! of pickles followed by raw storages. Both give the same [`Checkpoint`]: named tensors as
//! views of storages that are, wherever the file allows, its own bytes.

use crate::error::{Error, Result};
use crate::flatten::{Flat, flatten};
use crate::pickle::{self, Pickled, Storage, TorchDtype, Value};
use serde_json::{Map, Value as Json};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use tensor_core::{ByteOrder, Limits, ReadOptions, checked};
use tensor_dtype::{Dtype, TensorView};
use tensor_zip::Archive;

/// The legacy layout's first pickle: this magic number, `0x1950a86a20f9469cfc6c`.
const LEGACY_MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];
/// The legacy layout's protocol version.
const LEGACY_PROTOCOL: i64 = 1001;

/// Which layout a checkpoint was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `torch.save`'s zip archive; the folder its entries are in (`archive/`).
    Zip {
        /// The entries' folder, with its slash.
        folder: String,
    },
    /// The layout before torch 1.6: pickles, then storages.
    Legacy,
}

/// One tensor of a checkpoint: a view of a storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Its dotted name (`state_dict.fc.weight`).
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its strides in bytes.
    pub strides: Vec<i64>,
    /// Where it starts in its storage, in bytes.
    pub offset: u64,
    /// Its storage's key.
    pub storage: String,
}

/// A PyTorch checkpoint read: its tensors, its other values, and its storages' bytes.
#[derive(Debug)]
pub struct Checkpoint<'a> {
    /// Its tensors, in the order the pickled object gives them.
    pub tensors: Vec<TensorInfo>,
    /// Its values that are not tensors (an epoch, hyperparameters), by dotted name.
    pub metadata: Map<String, Json>,
    /// Each metadata value's Python type (`int`, `float`, `str`, `list`, `dict`).
    pub metadata_types: BTreeMap<String, String>,
    /// The byte order its storages were written in.
    pub byte_order: ByteOrder,
    /// The layout it was read from.
    pub layout: Layout,
    storages: HashMap<String, Cow<'a, [u8]>>,
}

impl<'a> Checkpoint<'a> {
    /// Reads a checkpoint of either layout from `bytes`, running its pickle on the
    /// restricted machine. Storages stored in the zip (as torch stores them) are borrowed.
    pub fn open(bytes: &'a [u8], options: &ReadOptions) -> Result<Self> {
        if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            zip(bytes, &options.limits)
        } else if bytes.starts_with(b"\x80") {
            legacy(bytes, &options.limits)
        } else if bytes.get(257..262) == Some(b"ustar".as_slice()) {
            Err(Error::Unsupported(
                "the tar layout of torch before 0.4".into(),
            ))
        } else {
            Err(Error::Layout(
                "neither a zip archive (torch.save since 1.6) nor a pickle (the legacy layout)"
                    .into(),
            ))
        }
    }

    /// The bytes of the storage `key`: borrowed from the file when stored as they are.
    #[must_use]
    pub fn storage(&self, key: &str) -> Option<&Cow<'a, [u8]>> {
        self.storages.get(key)
    }

    /// A view of tensor `t`'s elements in its storage.
    pub fn view_of(&self, t: &TensorInfo) -> Result<TensorView<'_>> {
        let bytes = self.storages.get(&t.storage).ok_or_else(|| {
            Error::Layout(format!("tensor {:?}: no storage {:?}", t.name, t.storage))
        })?;
        view_over(t, bytes, self.byte_order)
    }
}

/// A view of `t` over `storage`, its storage's bytes.
pub fn view_over<'s>(
    t: &TensorInfo,
    storage: &'s [u8],
    order: ByteOrder,
) -> Result<TensorView<'s>> {
    TensorView::strided(storage, t.dtype, &t.shape, &t.strides, t.offset, order).map_err(|e| {
        Error::Layout(format!(
            "tensor {:?} does not lie within its storage {:?}: {e}",
            t.name, t.storage
        ))
    })
}

/// The storages a pickle's persistent ids describe, by key.
#[derive(Default)]
struct Storages(HashMap<String, Rc<Storage>>);

impl Storages {
    fn load(&mut self, pid: &Value, offset: u64) -> Result<Value> {
        let s = pickle::storage_of(pid, offset)?;
        if let Some(known) = self.0.get(&s.key) {
            return Ok(Value::Storage(known.clone()));
        }
        let s = Rc::new(s);
        self.0.insert(s.key.clone(), s.clone());
        Ok(Value::Storage(s))
    }
}

/// A storage's length in bytes.
fn storage_bytes(s: &Storage) -> Result<u64> {
    let width = s.dtype.map_or(1, TorchDtype::width);
    checked::mul(s.numel, width, "storage bytes").map_err(Error::from)
}

/// Runs the pickle in `bytes`, collecting its storages.
fn run(bytes: &[u8], storages: &mut Storages) -> Result<(Pickled, usize)> {
    pickle::load(bytes, &mut |pid, at| storages.load(pid, at))
}

fn zip<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Checkpoint<'a>> {
    let archive = Archive::open(bytes, limits)?;
    let pkl = archive
        .entries()
        .iter()
        .find(|e| e.name.ends_with("data.pkl") && e.name.matches('/').count() <= 1)
        .ok_or_else(|| {
            Error::Layout("a zip archive with no data.pkl: not a torch.save checkpoint".into())
        })?;
    let folder = pkl.name[..pkl.name.len() - "data.pkl".len()].to_owned();
    limits.check_header_bytes(pkl.size)?;
    let pickle_bytes = archive.read_verified(pkl, limits)?;
    let mut storages = Storages::default();
    let (object, _) = run(&pickle_bytes, &mut storages)?;
    let byte_order = match archive.find(&format!("{folder}byteorder")) {
        None => ByteOrder::Little,
        Some(e) => match &*archive.read_verified(e, limits)? {
            b"little" => ByteOrder::Little,
            b"big" => ByteOrder::Big,
            other => {
                return Err(Error::Layout(format!(
                    "byteorder says {:?}, neither little nor big",
                    String::from_utf8_lossy(other)
                )));
            }
        },
    };
    let mut bytes_of = HashMap::new();
    for (key, s) in &storages.0 {
        let name = format!("{folder}data/{key}");
        let entry = archive.find(&name).ok_or_else(|| {
            Error::Layout(format!(
                "storage {key:?} has no entry {name:?} in the archive"
            ))
        })?;
        let needed = storage_bytes(s)?;
        if needed > entry.size {
            return Err(Error::Layout(format!(
                "storage {key:?} claims {needed} bytes ({} elements) where its entry holds {}",
                s.numel, entry.size
            )));
        }
        let data = match archive.read(entry, limits)? {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..needed as usize]),
            Cow::Owned(mut v) => {
                v.truncate(needed as usize);
                Cow::Owned(v)
            }
        };
        bytes_of.insert(key.clone(), data);
    }
    finish(
        &object.0,
        bytes_of,
        byte_order,
        Layout::Zip { folder },
        limits,
    )
}

fn legacy<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Checkpoint<'a>> {
    let mut at = 0usize;
    let mut storages = Storages::default();
    let next = |storages: &mut Storages, at: &mut usize| -> Result<Pickled> {
        let (v, used) = run(&bytes[*at..], storages).map_err(|e| shift(e, *at))?;
        *at += used;
        Ok(v)
    };
    let magic = next(&mut storages, &mut at)?;
    if !matches!(&magic.0, Value::Long(b) if **b == LEGACY_MAGIC) {
        return Err(Error::Layout(
            "a pickle that does not start with torch's magic number: not a PyTorch checkpoint"
                .into(),
        ));
    }
    let protocol = next(&mut storages, &mut at)?;
    if !matches!(protocol.0, Value::Int(LEGACY_PROTOCOL)) {
        return Err(Error::Unsupported(format!(
            "legacy protocol {:?} (1001 is read)",
            protocol.0
        )));
    }
    let info = next(&mut storages, &mut at)?;
    let little = match &info.0 {
        Value::Dict(d) => d
            .borrow()
            .items
            .iter()
            .find(|(k, _)| matches!(k, Value::Str(s) if &**s == "little_endian"))
            .is_none_or(|(_, v)| !matches!(v, Value::Bool(false))),
        _ => true,
    };
    let byte_order = if little {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };
    let object = next(&mut storages, &mut at)?;
    let keys = next(&mut storages, &mut at)?;
    let keys: Vec<String> = pickle::sequence(&keys.0)
        .ok_or_else(|| Error::Layout("the legacy layout's storage keys are not a list".into()))?
        .into_iter()
        .map(|k| match k {
            Value::Str(s) => Ok(s.to_string()),
            Value::Int(i) => Ok(i.to_string()),
            other => Err(Error::Layout(format!(
                "a storage key that is a {}",
                other.kind()
            ))),
        })
        .collect::<Result<_>>()?;
    let mut bytes_of: HashMap<String, Cow<'a, [u8]>> = HashMap::new();
    let mut offset = at as u64;
    for key in &keys {
        let s = storages.0.get(key).ok_or_else(|| {
            Error::Layout(format!("storage {key:?} is listed but no tensor uses it"))
        })?;
        let head = checked::range(offset, 8, bytes.len() as u64, "legacy storage length")?;
        let mut n = [0; 8];
        n.copy_from_slice(&bytes[head]);
        let numel = if little {
            u64::from_le_bytes(n)
        } else {
            u64::from_be_bytes(n)
        };
        let width = s.dtype.map_or(1, TorchDtype::width);
        let len = checked::mul(numel, width, "legacy storage bytes")?;
        let data = checked::range(offset + 8, len, bytes.len() as u64, "legacy storage")?;
        if numel < s.numel {
            return Err(Error::Layout(format!(
                "storage {key:?} claims {} elements where the file holds {numel}",
                s.numel
            )));
        }
        bytes_of.insert(key.clone(), Cow::Borrowed(&bytes[data.clone()]));
        offset = data.end as u64;
    }
    // Views of other storages (torch before 1.0).
    for s in storages.0.values() {
        if let Some((base, first, count)) = &s.view_of {
            let width = s.dtype.map_or(1, TorchDtype::width);
            let whole = bytes_of.get(base).ok_or_else(|| {
                Error::Layout(format!(
                    "storage {:?} views {base:?}, which the file does not hold",
                    s.key
                ))
            })?;
            let r = checked::range(
                checked::mul(*first, width, "storage view offset")?,
                checked::mul(*count, width, "storage view bytes")?,
                whole.len() as u64,
                "storage view",
            )?;
            let Cow::Borrowed(b) = whole else {
                unreachable!("legacy storages are borrowed")
            };
            bytes_of.insert(s.key.clone(), Cow::Borrowed(&b[r]));
        }
    }
    finish(&object.0, bytes_of, byte_order, Layout::Legacy, limits)
}

/// A pickle error of a pickle starting `by` bytes into the file, with file offsets.
fn shift(e: Error, by: usize) -> Error {
    match e {
        Error::Pickle { offset, reason } => Error::Pickle {
            offset: offset + by as u64,
            reason,
        },
        Error::Refused { offset, what } => Error::Refused {
            offset: offset + by as u64,
            what,
        },
        other => other,
    }
}

fn finish<'a>(
    object: &Value,
    storages: HashMap<String, Cow<'a, [u8]>>,
    byte_order: ByteOrder,
    layout: Layout,
    limits: &Limits,
) -> Result<Checkpoint<'a>> {
    let Flat {
        tensors,
        metadata,
        types,
        inline,
    } = flatten(object, limits.max_tensor_count)?;
    // NumPy arrays pickled in the object: storages of their own, in the checkpoint's byte
    // order.
    let mut storages = storages;
    for (key, data, dtype, order) in inline {
        let mut bytes = data.to_vec();
        if order != byte_order {
            tensor_core::byte_order::swap_in_place(&mut bytes, dtype.swap_width())?;
        }
        storages.insert(key, Cow::Owned(bytes));
    }
    let mut infos = Vec::with_capacity(tensors.len());
    let mut names = std::collections::HashSet::new();
    for found in tensors {
        let t = &found.tensor;
        let dtype = match t.dtype {
            TorchDtype::Known(d) => d,
            TorchDtype::Other(name) => {
                return Err(Error::Unsupported(format!(
                    "tensor {:?} of dtype torch.{name}",
                    found.name
                )));
            }
        };
        let width = dtype.byte_width() as u64;
        let strides = t
            .stride
            .iter()
            .map(|&s| {
                checked::mul(s, width, "tensor stride").and_then(|b| {
                    i64::try_from(b).map_err(|_| tensor_core::Error::Overflow {
                        what: "tensor stride",
                    })
                })
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let info = TensorInfo {
            offset: checked::mul(t.offset, width, "storage offset")?,
            name: found.name,
            dtype,
            shape: t.shape.clone(),
            strides,
            storage: t.storage.key.clone(),
        };
        if !names.insert(info.name.clone()) {
            return Err(Error::Layout(format!(
                "two tensors are named {:?}",
                info.name
            )));
        }
        let bytes = storages.get(&info.storage).ok_or_else(|| {
            Error::Layout(format!(
                "tensor {:?}: its storage {:?} is not in the file",
                info.name, info.storage
            ))
        })?;
        view_over(&info, bytes, byte_order)?;
        infos.push(info);
    }
    Ok(Checkpoint {
        tensors: infos,
        metadata,
        metadata_types: types,
        byte_order,
        layout,
        storages,
    })
}

/// Checks every entry of a zip checkpoint against its CRC-32; returns how many were checked
/// (none for the legacy layout, which carries no checksums).
pub fn verify(bytes: &[u8], limits: &Limits) -> Result<usize> {
    if !bytes.starts_with(b"PK") {
        return Ok(0);
    }
    Ok(Archive::open(bytes, limits)?.verify_all(limits)?)
}
