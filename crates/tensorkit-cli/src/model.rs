//! The format-neutral view of a tensor file that every command works on.

use serde_json::{Map, Value};
use tensor_dtype::{Tensor, TensorView};

/// The formats the command reads and writes, by the ids `inspect --json` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatId {
    /// Hugging Face safetensors.
    Safetensors,
    /// BinTensors, the released header layout.
    Bintensors,
    /// BinTensors, the pre-release header layout.
    BintensorsLegacy,
    /// zTensor 0.1 (`ZTEN0001`).
    Ztensor01,
    /// zTensor 1.x (`ZTEN1000`); read only.
    Ztensor1,
    /// zTensor 2, the current container.
    Ztensor2,
    /// Tensogram v3 (`.tgm`): messages of objects.
    Tensogram,
}

impl FormatId {
    /// Every format the command writes, in the order the demo shows them.
    pub const WRITABLE: [FormatId; 6] = [
        FormatId::Safetensors,
        FormatId::Bintensors,
        FormatId::BintensorsLegacy,
        FormatId::Ztensor01,
        FormatId::Ztensor2,
        FormatId::Tensogram,
    ];

    /// Every format the command reads.
    pub const ALL: [FormatId; 7] = [
        FormatId::Safetensors,
        FormatId::Bintensors,
        FormatId::BintensorsLegacy,
        FormatId::Ztensor01,
        FormatId::Ztensor1,
        FormatId::Ztensor2,
        FormatId::Tensogram,
    ];

    /// The id used in JSON output and by `--to`.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            FormatId::Safetensors => "safetensors",
            FormatId::Bintensors => "bintensors",
            FormatId::BintensorsLegacy => "bintensors-legacy",
            FormatId::Ztensor01 => "ztensor-0.1",
            FormatId::Ztensor1 => "ztensor-1",
            FormatId::Ztensor2 => "ztensor-2",
            FormatId::Tensogram => "tensogram",
        }
    }

    /// The usual file extension.
    #[must_use]
    pub const fn extension(self) -> &'static str {
        match self {
            FormatId::Safetensors => "safetensors",
            FormatId::Bintensors | FormatId::BintensorsLegacy => "bt",
            FormatId::Ztensor01 | FormatId::Ztensor1 | FormatId::Ztensor2 => "zt",
            FormatId::Tensogram => "tgm",
        }
    }

    /// The writable format called `id` (as `inspect --json` reports it).
    #[must_use]
    pub fn from_id(id: &str) -> Option<Self> {
        Self::WRITABLE.into_iter().find(|f| f.id() == id)
    }

    /// The format a file name's extension suggests, for choosing an output format.
    #[must_use]
    pub fn from_extension(path: &std::path::Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "safetensors" => Some(FormatId::Safetensors),
            "bt" | "bintensors" => Some(FormatId::Bintensors),
            "zt" | "ztensor" => Some(FormatId::Ztensor01),
            "tgm" => Some(FormatId::Tensogram),
            _ => None,
        }
    }
}

/// A tensor's elements: borrowed from the file when they are stored as they are, owned when
/// they had to be decoded (decompressed, or expanded from a sparse form).
#[derive(Clone, Debug)]
pub enum TensorData<'a> {
    /// Borrowed from the file.
    View(TensorView<'a>),
    /// Decoded into memory.
    Owned(Tensor),
}

/// One tensor of a file.
#[derive(Clone, Debug)]
pub struct NamedTensor<'a> {
    /// The tensor's name, for formats that name tensors.
    pub name: Option<String>,
    /// The elements.
    pub data: TensorData<'a>,
    /// Where it sits in formats with nested structure, e.g. `[("message", 0), ("object", 2)]`.
    pub location: Vec<(&'static str, u64)>,
    /// Per-tensor metadata, for formats that store it (e.g. zTensor custom keys).
    pub attributes: Vec<(String, tensor_core::cbor::Value)>,
}

impl<'a> NamedTensor<'a> {
    /// A named tensor borrowing `view`, with no location or attributes.
    #[must_use]
    pub fn borrowed(name: impl Into<String>, view: TensorView<'a>) -> Self {
        NamedTensor {
            name: Some(name.into()),
            data: TensorData::View(view),
            location: Vec::new(),
            attributes: Vec::new(),
        }
    }

    /// A view of the elements.
    #[must_use]
    pub fn view(&self) -> TensorView<'_> {
        match &self.data {
            TensorData::View(v) => v.clone(),
            TensorData::Owned(t) => t.view(),
        }
    }
}

/// The contents of one file: its format, file-level metadata and tensors in stored order.
#[derive(Clone, Debug)]
pub struct TensorSet<'a> {
    /// The format the file was read as.
    pub format: FormatId,
    /// File-level metadata, when the format stores any.
    pub metadata: Option<Map<String, Value>>,
    /// The tensors, in the order the file stores them.
    pub tensors: Vec<NamedTensor<'a>>,
}

impl TensorSet<'_> {
    /// Every tensor's name, with `tensor_<i>` for tensors that have none (formats that
    /// require names get these when writing).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.tensors
            .iter()
            .enumerate()
            .map(|(i, t)| t.name.clone().unwrap_or_else(|| format!("tensor_{i}")))
            .collect()
    }
}
