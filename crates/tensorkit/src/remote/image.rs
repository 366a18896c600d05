//! A stand-in for a remote object: a file of the object's length holding the bytes read so
//! far at their offsets, everything else a hole that reads as zeros, mapped read-only.
//!
//! Format readers take a whole file's bytes; this lets them run unchanged over an object of
//! any size of which only the header, or the header and one tensor, has been fetched. The
//! file is an unnamed temporary file (nothing is left behind), sparse (holes take neither
//! disk nor memory), written once before it is mapped and never after.

use crate::error::Result;
use bytes::Bytes;
use tensor_core::MmapSource;

/// One stand-in, alive while its bytes are read.
pub(crate) struct Image {
    map: Option<MmapSource>,
}

impl Image {
    /// A stand-in of `len` bytes holding `parts` at their offsets.
    pub(crate) fn new(len: u64, parts: &[(u64, Bytes)]) -> Result<Self> {
        use std::io::{Seek, SeekFrom, Write};
        if len == 0 {
            return Ok(Image { map: None });
        }
        let io = |doing: &str, e| {
            tensor_core::Error::io(format!("{doing} a remote object's stand-in"), e)
        };
        let mut file = tempfile::tempfile().map_err(|e| io("creating", e))?;
        file.set_len(len).map_err(|e| io("sizing", e))?;
        for (at, bytes) in parts {
            file.seek(SeekFrom::Start(*at))
                .map_err(|e| io("writing", e))?;
            file.write_all(bytes).map_err(|e| io("writing", e))?;
        }
        Ok(Image {
            map: Some(MmapSource::map(&file)?),
        })
    }

    /// The stand-in's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or_default()
    }
}
