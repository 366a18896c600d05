//! The format-neutral view of a tensor file that every command works on.

use serde_json::{Map, Value};
use tensor_dtype::TensorView;

/// The formats the command reads and writes, by the ids `inspect --json` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatId {
    /// Hugging Face safetensors.
    Safetensors,
    /// BinTensors, the released header layout.
    Bintensors,
    /// BinTensors, the pre-release header layout.
    BintensorsLegacy,
}

impl FormatId {
    /// Every format, in the order the demo and listings show them.
    pub const ALL: [FormatId; 3] = [
        FormatId::Safetensors,
        FormatId::Bintensors,
        FormatId::BintensorsLegacy,
    ];

    /// The id used in JSON output and by `--to`.
    #[must_use]
    pub const fn id(self) -> &'static str {
        match self {
            FormatId::Safetensors => "safetensors",
            FormatId::Bintensors => "bintensors",
            FormatId::BintensorsLegacy => "bintensors-legacy",
        }
    }

    /// The usual file extension.
    #[must_use]
    pub const fn extension(self) -> &'static str {
        match self {
            FormatId::Safetensors => "safetensors",
            FormatId::Bintensors | FormatId::BintensorsLegacy => "bt",
        }
    }

    /// The format called `id` (as `inspect --json` reports it).
    #[must_use]
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.id() == id)
    }

    /// The format a file name's extension suggests, for choosing an output format.
    #[must_use]
    pub fn from_extension(path: &std::path::Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "safetensors" => Some(FormatId::Safetensors),
            "bt" | "bintensors" => Some(FormatId::Bintensors),
            _ => None,
        }
    }
}

/// One tensor of a file, borrowing its bytes from the file.
#[derive(Clone, Debug)]
pub struct NamedTensor<'a> {
    /// The tensor's name, for formats that name tensors.
    pub name: Option<String>,
    /// The elements.
    pub view: TensorView<'a>,
    /// Where it sits in formats with nested structure, e.g. `[("message", 0), ("object", 2)]`.
    pub location: Vec<(&'static str, u64)>,
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
