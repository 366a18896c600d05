//! [`TgmFile`]: a `.tgm` file mapped from disk, its messages found once at open.

use super::decode::{Decode, decode_message, decoded_to_py, ranges_to_py};
use super::errors::tgm_err;
use super::messages::{describe_message, metadata_to_py};
use crate::handle::Handle;
use crate::results::{Array, TgmDescribed, TgmMessage};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::Arc;
use tensor_core::source::MmapSource;
use tensorkit::Limits;
use tensorkit::frame::{self};

/// A `.tgm` file mapped from disk, its messages found once at open.
#[pyclass(module = "tensorkit._tensorkit", name = "TgmFile", frozen)]
pub struct TgmFile {
    inner: Handle<frame::TgmFile<MmapSource>>,
    path: String,
}

impl TgmFile {
    fn file(&self) -> PyResult<Arc<frame::TgmFile<MmapSource>>> {
        self.inner.get()
    }

    /// The bytes of message `i`, or Python's `IndexError`.
    fn range(file: &frame::TgmFile<MmapSource>, i: usize) -> PyResult<std::ops::Range<usize>> {
        file.ranges().get(i).cloned().ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "message index {i} out of range for file with {} messages",
                file.len()
            ))
        })
    }
}

#[pymethods]
impl TgmFile {
    /// Maps the file at `path` and finds its messages.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = py
            .detach(|| frame::TgmFile::map(&path, &tensorkit::ReadOptions::default()))
            .map_err(tgm_err)?;
        Ok(TgmFile {
            inner: Handle::new(file),
            path: path.display().to_string(),
        })
    }

    /// Where the file was opened from.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.file()?.len())
    }

    /// `(offset, length)` of each message.
    fn ranges(&self) -> PyResult<Vec<(usize, usize)>> {
        Ok(self
            .file()?
            .ranges()
            .iter()
            .map(|r| (r.start, r.len()))
            .collect())
    }

    /// The bytes of message `i` (a copy).
    fn message<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        let bytes = file.bytes();
        Ok(PyBytes::new(py, &bytes[r]))
    }

    /// Decodes message `i` (every object, or object `index`) from the map.
    #[pyo3(signature = (i, *, index=None, verify_hash=false, native_byte_order=true, restore_non_finite=true, threads=0))]
    fn decode(
        &self,
        py: Python<'_>,
        i: usize,
        index: Option<usize>,
        verify_hash: bool,
        native_byte_order: bool,
        restore_non_finite: bool,
        threads: usize,
    ) -> PyResult<TgmMessage> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        let how = Decode::new(
            index,
            verify_hash,
            native_byte_order,
            restore_non_finite,
            threads,
        );
        let decoded = py
            .detach(|| decode_message(&file.bytes()[r], &Limits::default(), how))
            .map_err(tgm_err)?;
        decoded_to_py(py, decoded)
    }

    /// [`tgm_decode_range`] of message `i`, read from the mapped file.
    #[pyo3(signature = (i, index, ranges, *, native_byte_order=true, restore_non_finite=true))]
    fn decode_range(
        &self,
        py: Python<'_>,
        i: usize,
        index: usize,
        ranges: Vec<(u64, u64)>,
        native_byte_order: bool,
        restore_non_finite: bool,
    ) -> PyResult<Option<Vec<Array>>> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        ranges_to_py(
            py,
            &file.bytes()[r],
            index,
            &ranges,
            native_byte_order,
            restore_non_finite,
        )
    }

    /// Metadata and descriptors of message `i`, nothing decoded.
    fn describe(&self, py: Python<'_>, i: usize) -> PyResult<TgmDescribed> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        describe_message(py, &file.bytes()[r], &Limits::default())
    }

    /// Metadata of message `i`, nothing else read.
    fn metadata(&self, py: Python<'_>, i: usize) -> PyResult<Py<crate::results::TgmMetadata>> {
        let file = self.file()?;
        let r = Self::range(&file, i)?;
        metadata_to_py(py, &file.bytes()[r], &Limits::default())
    }

    /// Unmaps the file (decoded arrays stay valid: they own their bytes).
    fn close(&self) -> PyResult<()> {
        self.inner.close()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __repr__(&self) -> String {
        format!("TgmFile({:?})", self.path)
    }
}
