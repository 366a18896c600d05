//! `tensorkit convert IN OUT [--to FORMAT]`.

use crate::error::{Error, Result};
use std::io::IsTerminal;
use std::path::Path;
use tensor_core::Limits;
use tensorkit::{Format, TensorSet};

/// Conversions of more tensor bytes than this show a progress bar.
pub const PROGRESS_THRESHOLD: u64 = 64 << 20;

/// What a conversion did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The shard set's index, when a shard set was written.
    pub index: Option<std::path::PathBuf>,
    /// The format read.
    pub from: Format,
    /// The format written.
    pub to: Format,
    /// Tensors written.
    pub tensors: usize,
    /// Bytes written.
    pub bytes: u64,
    /// What the target could not hold and was left out.
    pub dropped: Vec<String>,
}

/// The output format: `--to` if given, otherwise from the output file's extension.
pub fn target(output: &Path, to: Option<&str>) -> Result<Format> {
    let ids = || {
        Format::writable()
            .iter()
            .map(|f| f.id())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match to {
        Some(id) => Format::from_id(id).ok_or_else(|| Error::UnknownTarget {
            what: format!(
                "--to {id:?} is not a format tensorkit writes (one of: {})",
                ids()
            ),
        }),
        None => Format::from_extension(output).ok_or_else(|| Error::UnknownTarget {
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
    let total: u64 = set.tensors().map(|t| t.byte_len()).sum();
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

/// Saves `set` to `output` with `options` (the library's [`tensorkit::save_set`]), with a
/// progress bar following the bytes written when `progress` asks for one and one is shown
/// ([`progress_bar`]; not for shard sets). Returns what the target left out.
pub(crate) fn save_with_progress(
    set: &TensorSet<'_>,
    output: &Path,
    mut options: tensorkit::WriteOptions,
    progress: bool,
) -> Result<Vec<String>> {
    let bar = progress_bar(set, output, progress && options.max_shard_size.is_none());
    options.progress = bar
        .clone()
        .map(|bar| tensorkit::Progress::new(move |n| bar.set_position(n)));
    let dropped = tensorkit::save_set(output, set, &options)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(dropped)
}

/// The size of `file` in bytes.
fn size_of(file: &Path) -> Result<u64> {
    Ok(std::fs::metadata(file)
        .map_err(|e| tensor_core::Error::io(format!("reading the size of {}", file.display()), e))?
        .len())
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
    if let Some(summary) = grib_to_grib(input, output, args, limits, durability)? {
        return Ok(summary);
    }
    let target = target(output, args.to.as_deref())?;
    let mut options = args.write_options(target, durability)?;
    options.max_shard_size = max_shard_size;
    let opened = crate::open(input, limits)?;
    let set = opened.tensor_set();
    let dropped = save_with_progress(set, output, options, progress)?;
    let (index, bytes) = if max_shard_size.is_some() {
        let index = tensorkit::shards::index_path(output, target);
        let mut bytes = 0;
        for shard in tensorkit::shards::Index::read(&index, limits)?.files() {
            bytes += size_of(&shard)?;
        }
        (Some(index), bytes)
    } else {
        (None, size_of(output)?)
    };
    Ok(Summary {
        index,
        from: set.format(),
        to: target,
        tensors: set.len(),
        bytes,
        dropped,
    })
}

/// GRIB into GRIB with `--pipeline`: every field packed again as it says (`simple:16`,
/// `ccsds`, `ieee`...), every other section kept byte for byte, messages of several fields
/// kept whole; `None` when either end is not GRIB or no packing is given (then the
/// library's writer writes each field as a message of its own, as from any format).
fn grib_to_grib(
    input: &Path,
    output: &Path,
    args: &crate::cli::Target,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<Option<Summary>> {
    let Some(spec) = args.pipeline.as_deref() else {
        return Ok(None);
    };
    // A target that cannot be told is the general path's error to report.
    let to_grib = target(output, args.to.as_deref()).is_ok_and(|f| f == Format::GRIB);
    if !to_grib || !is_grib(input)? {
        return Ok(None);
    }
    let (fields, bytes) = tensorkit::repack_grib(input, output, spec, limits, durability)?;
    Ok(Some(Summary {
        index: None,
        from: Format::GRIB,
        to: Format::GRIB,
        tensors: fields,
        bytes,
        dropped: Vec::new(),
    }))
}

/// Whether the file at `input` begins as GRIB does.
fn is_grib(input: &Path) -> Result<bool> {
    use std::io::Read;
    let mut head = Vec::with_capacity(16);
    std::fs::File::open(input)
        .and_then(|f| f.take(16).read_to_end(&mut head))
        .map_err(|e| tensor_core::Error::io(format!("reading {}", input.display()), e))?;
    Ok(<tensorkit::grib::GribFormat as tensorkit::dtype::Format>::recognise(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_comes_from_to_or_the_extension() {
        assert_eq!(target(Path::new("a.bt"), None).unwrap(), Format::BINTENSORS);
        assert_eq!(
            target(Path::new("a.safetensors"), None).unwrap(),
            Format::SAFETENSORS
        );
        assert_eq!(
            target(Path::new("a.bin"), Some("bintensors-legacy")).unwrap(),
            Format::BINTENSORS_LEGACY
        );
        assert!(
            target(Path::new("a.bin"), None)
                .unwrap_err()
                .to_string()
                .contains("--to")
        );
        assert!(
            target(Path::new("a.bt"), Some("pickle"))
                .unwrap_err()
                .to_string()
                .contains("safetensors, bintensors")
        );
    }
}
