//! The registry of formats: every [`Adapter`] the front door knows — the built-in ones, each
//! behind its feature, and any registered from outside ([`register`]) — and the one place a
//! file's format is recognised from its content, never from its name.
// With some formats left out of the build, parts only the others use go unused.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

use crate::adapter::Adapter;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::TensorSet;
use std::path::Path;
use std::sync::{LazyLock, PoisonError, RwLock};
use tensor_core::ReadOptions;

/// The shortest prefix that any built-in format can be recognised from.
const MIN_DETECT_BYTES: usize = 9;

/// One format's entry: its handle and its adapter.
#[derive(Clone, Copy)]
struct Entry {
    format: Format,
    adapter: &'static dyn Adapter,
    /// When its recognition is tried: formats told by a magic number first, then those
    /// registered from outside, then safetensors (a length and a brace), then — after the
    /// well-known formats tensorkit does not read ([`crate::foreign`]) — BinTensors (a
    /// length and a 0 or 1).
    tier: Tier,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    Magic,
    Registered,
    Prefixed,
    Weak,
}

impl Entry {
    fn new(adapter: &'static dyn Adapter, tier: Tier) -> Self {
        Entry {
            format: Format::of(adapter.info()),
            adapter,
            tier,
        }
    }
}

/// Every format, the generations of one format oldest first: the built-in ones, then those
/// registered, in the order they were.
static REGISTRY: LazyLock<RwLock<Vec<Entry>>> = LazyLock::new(|| RwLock::new(built_in()));

/// The formats this build of tensorkit was compiled with.
#[cfg_attr(not(feature = "full"), allow(unused_mut))]
#[allow(
    clippy::vec_init_then_push,
    reason = "each format is added behind its own feature"
)]
fn built_in() -> Vec<Entry> {
    let mut all: Vec<Entry> = Vec::new();
    #[cfg(feature = "safetensors")]
    all.push(Entry::new(
        &crate::formats::safetensors::ADAPTER,
        Tier::Prefixed,
    ));
    // A protobuf's first fields, weaker than a magic number: after safetensors' length and
    // brace, before the formats tensorkit does not read are named.
    #[cfg(feature = "onnx")]
    all.push(Entry::new(&crate::formats::onnx::ADAPTER, Tier::Prefixed));
    #[cfg(feature = "bintensors")]
    all.extend(
        crate::formats::bintensors::ADAPTERS
            .iter()
            .map(|a| Entry::new(a, Tier::Weak)),
    );
    #[cfg(feature = "ztensor")]
    all.extend(
        crate::formats::ztensor::ADAPTERS
            .iter()
            .map(|a| Entry::new(a, Tier::Magic)),
    );
    #[cfg(feature = "frame")]
    all.push(Entry::new(&crate::formats::tensogram::ADAPTER, Tier::Magic));
    #[cfg(feature = "grib")]
    all.push(Entry::new(&crate::formats::grib::ADAPTER, Tier::Magic));
    #[cfg(feature = "gguf")]
    all.push(Entry::new(&crate::formats::gguf::ADAPTER, Tier::Magic));
    #[cfg(feature = "netcdf")]
    all.push(Entry::new(&crate::formats::netcdf::ADAPTER, Tier::Magic));
    // After NetCDF-4: an HDF5 file that follows netCDF's conventions is NetCDF-4's.
    #[cfg(feature = "hdf5")]
    all.push(Entry::new(&crate::formats::hdf5::HDF5, Tier::Magic));
    #[cfg(feature = "hdf5")]
    all.push(Entry::new(&crate::formats::hdf5::KERAS, Tier::Magic));
    #[cfg(feature = "pytorch")]
    all.push(Entry::new(&crate::formats::pytorch::ADAPTER, Tier::Magic));
    #[cfg(feature = "numpy")]
    all.push(Entry::new(&crate::formats::numpy::NPY, Tier::Magic));
    #[cfg(feature = "numpy")]
    all.push(Entry::new(&crate::formats::numpy::NPZ, Tier::Magic));
    all
}

/// Runs `f` over the registry's entries, read-locked. `f` runs no adapter's code: an adapter
/// registered from outside may itself ask the registry.
fn with_entries<T>(f: impl FnOnce(&[Entry]) -> T) -> T {
    f(&REGISTRY.read().unwrap_or_else(PoisonError::into_inner))
}

/// Adds a format defined outside tensorkit to the registry, as image-rs's hooks add
/// decoders: from then on [`open`](crate::open) recognises its files (after the built-in
/// formats with a magic number, before BinTensors, whose recognition is the weakest),
/// [`save`](crate::save) writes it when asked by id or extension, and validation and
/// conversion treat it as any other format. Returns its handle. An id already taken is
/// refused.
pub fn register(adapter: &'static dyn Adapter) -> Result<Format> {
    let mut all = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    let entry = Entry::new(adapter, Tier::Registered);
    if all.iter().any(|e| e.format == entry.format) {
        return Err(Error::UnknownTarget {
            what: format!(
                "a format with id {:?} is registered already",
                entry.format.id()
            ),
        });
    }
    all.push(entry);
    Ok(entry.format)
}

impl Format {
    /// The format's adapter: what the front door does with it.
    #[must_use]
    pub fn adapter(self) -> &'static dyn Adapter {
        with_entries(|all| {
            all.iter()
                .find(|e| e.format == self)
                .map_or(&Unregistered as &'static dyn Adapter, |e| e.adapter)
        })
    }

    /// Every format the registry holds, the generations of one format oldest first.
    #[must_use]
    pub fn all() -> Vec<Format> {
        with_entries(|all| all.iter().map(|e| e.format).collect())
    }

    /// Every format the registry writes.
    #[must_use]
    pub fn writable() -> Vec<Format> {
        Format::all()
            .into_iter()
            .filter(|f| f.info().writes)
            .collect()
    }

    /// Every format the registry writes any tensor to, with no keys of its own
    /// ([`FormatInfo::any_tensor`](tensor_dtype::FormatInfo)): all writable ones but GRIB and
    /// `.npy` (one array a file).
    #[must_use]
    pub fn writable_any() -> Vec<Format> {
        Format::writable()
            .into_iter()
            .filter(|f| f.info().any_tensor)
            .collect()
    }

    /// The writable format called `id` (as `inspect --json` reports it): what `--to` and
    /// `WriteOptions` name.
    #[must_use]
    pub fn from_id(id: &str) -> Option<Self> {
        Format::writable().into_iter().find(|f| f.id() == id)
    }

    /// The format a file name's extension suggests, for choosing an output format: the
    /// writable format listing it, the newest generation of a format first (`.zt` is zTensor
    /// 2, `.bt` the released BinTensors layout).
    #[must_use]
    pub fn from_extension(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Format::all()
            .into_iter()
            .rev()
            .find(|f| f.info().writes && f.info().extensions.contains(&ext.as_str()))
    }

    /// Nothing when the format's writer offers `choice`; otherwise the error that says
    /// which formats do.
    pub fn offers(self, choice: tensor_dtype::WriteChoice) -> Result<()> {
        if self.info().offers(choice) {
            return Ok(());
        }
        let those: Vec<&str> = Format::writable()
            .into_iter()
            .filter(|f| f.info().offers(choice))
            .map(Format::id)
            .collect();
        Err(Error::UnknownTarget {
            what: format!(
                "{} applies to {} output, not {}",
                choice.describe(),
                those.join(" and "),
                self.id()
            ),
        })
    }
}

/// What a handle made by [`Format::of`] for a format the registry does not hold does: it
/// recognises nothing and reads nothing.
struct Unregistered;

impl Adapter for Unregistered {
    fn info(&self) -> &'static tensor_dtype::FormatInfo {
        &UNREGISTERED
    }

    fn recognise(&self, _: &[u8]) -> bool {
        false
    }

    fn read<'a>(&self, path: &Path, _: &'a [u8], _: &ReadOptions) -> Result<TensorSet<'a>> {
        Err(Error::UnknownFormat {
            path: path.to_path_buf(),
            reason: "its format is not registered".into(),
            too_short: false,
        })
    }
}

static UNREGISTERED: tensor_dtype::FormatInfo = tensor_dtype::FormatInfo {
    id: "unregistered",
    name: "a format not registered",
    extensions: &[""],
    writes: false,
    reserved_keys: &[],
    write_choices: &[],
    header_read_ahead: None,
    header_reserve: 0,
    holds_attributes: false,
    unique_names: true,
    checks: tensor_dtype::Checks::None,
    header_first: false,
    any_tensor: true,
};

/// Recognises the format of `bytes` (the whole file, or at least its first bytes). A
/// well-known format tensorkit does not read ([`crate::foreign`]) is named in the error; it is
/// looked for before the weakest recognitions (BinTensors: a length and a 0 or 1), which such
/// files' first bytes often pass.
pub(crate) fn detect(path: &Path, bytes: &[u8]) -> Result<Format> {
    // A copy: recognition runs the adapters' code, outside the lock.
    let all = with_entries(<[Entry]>::to_vec);
    let recognised = |tier: Tier| {
        all.iter()
            .find(|e| e.tier == tier && e.adapter.recognise(bytes))
            .map(|e| e.format)
    };
    if let Some(f) = [Tier::Magic, Tier::Registered, Tier::Prefixed]
        .into_iter()
        .find_map(recognised)
    {
        return Ok(f);
    }
    if let Some(what) = crate::foreign::identify(bytes) {
        return Err(Error::UnknownFormat {
            path: path.to_path_buf(),
            reason: format!("it looks like {what}"),
            too_short: false,
        });
    }
    if let Some(f) = recognised(Tier::Weak) {
        return Ok(f);
    }
    let shown: String = bytes
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    Err(Error::UnknownFormat {
        path: path.to_path_buf(),
        reason: if bytes.len() < MIN_DETECT_BYTES {
            format!(
                "the file is {} bytes long, shorter than any supported header",
                bytes.len()
            )
        } else {
            format!("it starts with {shown}")
        },
        too_short: bytes.len() < MIN_DETECT_BYTES,
    })
}
