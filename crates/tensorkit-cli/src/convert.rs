//! `tensorkit convert IN OUT [--to FORMAT]`.

use crate::error::{Error, Result};
use crate::formats;
use crate::model::FormatId;
use std::path::Path;
use tensor_core::{Limits, MmapSource};

/// What a conversion did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The format read.
    pub from: FormatId,
    /// The format written.
    pub to: FormatId,
    /// Tensors written.
    pub tensors: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// The output format: `--to` if given, otherwise from the output file's extension.
pub fn target(output: &Path, to: Option<&str>) -> Result<FormatId> {
    let ids = || {
        FormatId::ALL
            .iter()
            .map(|f| f.id())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match to {
        Some(id) => FormatId::from_id(id).ok_or_else(|| Error::UnknownTarget {
            what: format!(
                "--to {id:?} is not a format tensorkit writes (one of: {})",
                ids()
            ),
        }),
        None => FormatId::from_extension(output).ok_or_else(|| Error::UnknownTarget {
            what: format!(
                "cannot tell the output format from {:?}; name it with --to (one of: {})",
                output.display().to_string(),
                ids()
            ),
        }),
    }
}

/// Converts `input` into `output`. The input is memory-mapped and every tensor streams from
/// the mapping to the output file, so memory stays bounded by the largest tensor that needs
/// a byte-order change (none, between little-endian formats).
pub fn run(input: &Path, output: &Path, to: Option<&str>) -> Result<Summary> {
    let target = target(output, to)?;
    let map = MmapSource::open(input)?;
    let set = formats::read(input, &map, &Limits::default())?;
    formats::write(target, &set, output)?;
    let bytes = std::fs::metadata(output)
        .map_err(|e| {
            tensor_core::Error::io(format!("reading the size of {}", output.display()), e)
        })?
        .len();
    Ok(Summary {
        from: set.format,
        to: target,
        tensors: set.tensors.len(),
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_comes_from_to_or_the_extension() {
        assert_eq!(
            target(Path::new("a.bt"), None).unwrap(),
            FormatId::Bintensors
        );
        assert_eq!(
            target(Path::new("a.safetensors"), None).unwrap(),
            FormatId::Safetensors
        );
        assert_eq!(
            target(Path::new("a.bin"), Some("bintensors-legacy")).unwrap(),
            FormatId::BintensorsLegacy
        );
        assert!(
            target(Path::new("a.bin"), None)
                .unwrap_err()
                .to_string()
                .contains("--to")
        );
        assert!(
            target(Path::new("a.bt"), Some("npy"))
                .unwrap_err()
                .to_string()
                .contains("safetensors, bintensors")
        );
    }
}
