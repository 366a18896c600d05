//! Reading a tensor's elements in bounded runs instead of whole, and the one mapping of
//! decompression errors.

use crate::error::{Class, Error, Result};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::Dtype;
use tensor_pipeline::{Compression, Pipeline};

/// A zstd failure for `who` (a tensor or part): limits stay what they are, anything else is
/// a decompression error naming `who`.
pub(crate) fn decompression(who: &str, e: tensor_pipeline::Error) -> Error {
    match e {
        tensor_pipeline::Error::Core(c) => Error::Core(c),
        other => Error::format(Class::DecompressionError, format!("{who}: {other}")),
    }
}

/// Decodes the zstd data `stored` into exactly `expected` bytes, handed to `sink` in runs of
/// at most `run` bytes, through the pipeline's streamed decoder: memory stays within a run,
/// and the expansion limit, the exact size and trailing data are checked there. An error
/// from `sink` is returned as it is.
pub(crate) fn zstd_runs(
    stored: &[u8],
    expected: u64,
    limits: &Limits,
    run: usize,
    who: &str,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let zstd = Pipeline {
        compression: Compression::Zstd { level: 0 },
        ..Pipeline::NONE
    };
    let mut failed = None;
    let decoded = zstd.decode_chunks(
        stored,
        Dtype::Uint8,
        ByteOrder::Little,
        expected,
        limits,
        run,
        &mut |c| {
            sink(c).map_err(|e| {
                failed = Some(e);
                tensor_pipeline::Error::Corrupt {
                    codec: "sink",
                    reason: String::new(),
                }
            })
        },
    );
    if let Some(e) = failed {
        return Err(e);
    }
    decoded.map_err(|e| decompression(who, e))
}
