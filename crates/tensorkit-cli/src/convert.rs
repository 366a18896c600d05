//! `tensorkit convert IN OUT [--to FORMAT]`.

use crate::cli::Duplicates;
use crate::error::{Error, Result};
use crate::formats;
use crate::model::{FormatId, NamedTensor, TensorSet};
use crate::pipeline_spec::PipelineSpec;
use std::io::IsTerminal;
use std::path::Path;
use tensor_core::Limits;

/// Conversions of more tensor bytes than this show a progress bar.
pub const PROGRESS_THRESHOLD: u64 = 64 << 20;

/// What a conversion did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The shard set's index, when a shard set was written.
    pub index: Option<std::path::PathBuf>,
    /// The format read.
    pub from: FormatId,
    /// The format written.
    pub to: FormatId,
    /// Tensors written.
    pub tensors: usize,
    /// Bytes written.
    pub bytes: u64,
    /// What the target could not hold and was left out.
    pub dropped: Vec<String>,
}

/// The output format: `--to` if given, otherwise from the output file's extension.
pub fn target(output: &Path, to: Option<&str>) -> Result<FormatId> {
    let ids = || {
        FormatId::WRITABLE
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

/// A progress bar on standard error for writing `set` to `output`, when `enabled`, the
/// tensors total more than [`PROGRESS_THRESHOLD`] and standard error is a terminal.
fn progress_bar(
    set: &TensorSet<'_>,
    output: &Path,
    enabled: bool,
) -> Option<indicatif::ProgressBar> {
    let total: u64 = set.tensors.iter().map(NamedTensor::byte_len).sum();
    (enabled && total > PROGRESS_THRESHOLD && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} {bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(format!("writing {}", output.display()));
        bar
    })
}

/// Converts `input` into `output`. The input is memory-mapped: tensors stored as they are
/// go from the mapping straight to the output file; compressed or sparse ones are decoded
/// into memory first.
///
/// With `progress`, a bar on standard error follows the bytes written when the tensors
/// total more than [`PROGRESS_THRESHOLD`] and standard error is a terminal.
pub fn run(
    input: &Path,
    output: &Path,
    args: &crate::cli::Target,
    max_shard_size: Option<u64>,
    progress: bool,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<Summary> {
    let pipeline = &args.pipeline()?;
    let target = target(output, args.to.as_deref())?;
    let opened = crate::open(input, limits)?;
    let mut set = opened.tensor_set().clone();
    if args.duplicates == Duplicates::Suffix {
        set.disambiguate();
    }
    let (set, kept) = args.quantized(set, target)?;
    if let Some(max) = max_shard_size {
        let written = tensorkit::shards::write_sharded(
            target,
            &set,
            output,
            max,
            pipeline,
            args.layout(),
            durability,
        )?;
        let mut bytes = 0;
        for f in &written.shards {
            bytes += std::fs::metadata(f)
                .map_err(|e| {
                    tensor_core::Error::io(format!("reading the size of {}", f.display()), e)
                })?
                .len();
        }
        return Ok(Summary {
            index: Some(written.index),
            from: set.format,
            to: target,
            tensors: set.tensors.len(),
            bytes,
            dropped: kept.into_iter().chain(written.left_out).collect(),
        });
    }
    let mut dropped = kept;
    dropped.extend(write_output(
        target,
        &set,
        output,
        progress,
        pipeline,
        args.layout(),
        durability,
    )?);
    let bytes = std::fs::metadata(output)
        .map_err(|e| {
            tensor_core::Error::io(format!("reading the size of {}", output.display()), e)
        })?
        .len();
    Ok(Summary {
        index: None,
        from: set.format,
        to: target,
        tensors: set.tensors.len(),
        bytes,
        dropped,
    })
}

/// Writes `set` to `output` atomically, committed with `durability`, with a progress bar
/// when `progress` asks for one (`progress_bar`), counting the bytes through indicatif's
/// own writer wrapper.
pub(crate) fn write_output(
    target: FormatId,
    set: &TensorSet<'_>,
    output: &Path,
    progress: bool,
    pipeline: &PipelineSpec,
    layout: tensorkit::formats::Layout,
    durability: tensorkit::Durability,
) -> Result<Vec<String>> {
    let bar = progress_bar(set, output, progress);
    let mut file = tensor_core::atomic::AtomicFile::create_with(output, durability)?;
    let mut copying = file.copying_from(&set.mapped);
    let dropped = match &bar {
        Some(bar) => {
            let mut wrapped = bar.wrap_write(&mut copying);
            formats::write_into(target, set, output, &mut wrapped, pipeline, layout)?
        }
        None => formats::write_into(target, set, output, &mut copying, pipeline, layout)?,
    };
    file.commit()?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(dropped)
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
