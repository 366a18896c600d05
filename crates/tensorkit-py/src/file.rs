//! An open tensor file as the Python package sees it: names, descriptions, and each
//! tensor's bytes — zero-copy from the file where they are stored raw in the machine's byte
//! order, decoded otherwise. `tensorkit/_file.py` turns them into numpy arrays.

use crate::buffer::{Borrowed, Buffer};
use crate::errors::to_py;
use crate::handle::Handle;
use crate::results::{Array, Blocks, Placement};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use tensor_core::ByteOrder;
use tensor_core::buffer::LargeBuffer;
use tensor_dtype::Dtype;

/// What `File.describe` returns: what the file says about one tensor, without decoding it.
#[pyclass(module = "tensorkit._tensorkit", name = "TensorInfo", frozen, get_all)]
pub(crate) struct TensorInfo {
    /// The dtype's name (`float32`, `bfloat16`…).
    dtype: &'static str,
    /// The shape, slowest dimension first.
    shape: Vec<u64>,
    /// How the stored bytes are encoded; `None` when they are stored as they are.
    encoding: Option<String>,
    /// Where the tensor is, as the format locates it (`offset`, `message`, `object`…).
    location: Vec<(&'static str, u64)>,
    /// The tensor's attributes, as Python values (bytes stay bytes, NaN stays NaN).
    attributes: Py<PyDict>,
    /// The bytes of its decoded values.
    nbytes: u64,
    /// Whether `File.tensor` returns a view of the file's own bytes.
    zero_copy: bool,
}

/// An open tensor file of any format.
#[pyclass(module = "tensorkit._tensorkit", name = "File", frozen)]
pub struct File {
    inner: Handle<tensorkit::File>,
}

impl File {
    pub(crate) fn new(file: tensorkit::File) -> File {
        File {
            inner: Handle::new(file),
        }
    }

    /// The open file, or Python's error for an operation on a closed one.
    pub(crate) fn file(&self) -> PyResult<Arc<tensorkit::File>> {
        self.inner.get()
    }
}

/// Tensor `name` of `file`; a missing name is Python's `KeyError`, as a mapping's is.
fn lookup<'f>(file: &'f tensorkit::File, name: &str) -> PyResult<tensorkit::TensorRef<'f>> {
    file.get(name).map_err(|e| match e {
        tensorkit::Error::NoSuchTensor { .. } => PyKeyError::new_err(name.to_owned()),
        other => to_py(other),
    })
}

/// The tensors of `file` called `names` (every tensor when `None`), in that order; a
/// missing name is Python's `KeyError`.
fn named<'f>(
    file: &'f tensorkit::File,
    names: Option<&[String]>,
) -> PyResult<Vec<tensorkit::TensorRef<'f>>> {
    match names {
        Some(names) => names.iter().map(|n| lookup(file, n)).collect(),
        None => Ok(file.tensors().collect()),
    }
}

/// Unpacks the elements of a packed dtype one per byte: 0/1 for a bitmask, the element's
/// code for 4- and 6-bit floats (as `ml_dtypes` holds them).
pub(crate) fn unpack(dtype: Dtype, packed: &[u8], out: &mut [u8]) {
    for (i, e) in out.iter_mut().enumerate() {
        *e = tensor_dtype::minifloat::packed_code(dtype, packed, i).unwrap_or(0);
    }
}

/// Bytes numpy needs for `t`: its decoded size, or one byte per element for packed dtypes.
fn array_len(t: &tensorkit::TensorRef<'_>) -> tensorkit::Result<u64> {
    Ok(if t.dtype().is_packed() {
        tensor_dtype::shape::element_count(t.shape())?
    } else {
        t.byte_len()
    })
}

/// Decodes `t` into `out` (exactly [`array_len`] bytes), unpacking packed dtypes.
fn decode_into(
    t: &tensorkit::TensorRef<'_>,
    limits: &tensorkit::Limits,
    out: &mut [u8],
) -> tensorkit::Result<()> {
    if !t.dtype().is_packed() {
        // Stored elements are checked against their digest and copied on every core.
        return t.read_into(out);
    }
    let expected = array_len(t)?;
    if out.len() as u64 != expected {
        return Err(tensor_core::Error::InvalidArgument(format!(
            "tensor {:?} ({}) unpacks to {expected} bytes, one per element, not {}",
            t.name(),
            t.dtype(),
            out.len()
        ))
        .into());
    }
    limits.check_total_bytes(t.byte_len())?;
    let len = tensor_core::checked::to_usize(t.byte_len(), "a packed tensor")?;
    let mut packed = tensor_core::buffer::try_filled(len, 0u8, "a packed tensor")?;
    t.read_into(&mut packed)?;
    unpack(t.dtype(), &packed, out);
    Ok(())
}

/// Tensor `t` for numpy: `buffer` ([`buffer_of`]) with its dtype and shape, in the
/// machine's byte order.
fn array_of(py: Python<'_>, t: &tensorkit::TensorRef<'_>, buffer: Buffer) -> PyResult<Array> {
    Array::new(
        py,
        buffer,
        t.dtype().name(),
        t.shape().to_vec(),
        ByteOrder::NATIVE,
    )
}

/// Tensor `t` of `file` as numpy's bytes: a view of the file when it is stored as numpy
/// wants it, else a new buffer it is decoded into.
fn buffer_of(
    file: &Arc<tensorkit::File>,
    t: &tensorkit::TensorRef<'_>,
) -> tensorkit::Result<Buffer> {
    if let Some(bytes) = t.native_bytes() {
        return Ok(Buffer::in_file(Arc::clone(file), bytes));
    }
    let len = array_len(t)?;
    file.tensor_set().limits().check_total_bytes(len)?;
    let mut out = LargeBuffer::zeroed(tensor_core::checked::to_usize(len, "a tensor")?)?;
    decode_into(t, file.tensor_set().limits(), &mut out)?;
    Ok(Buffer::owned(out))
}

#[pymethods]
impl File {
    /// The format's id (`safetensors`, `tensogram`, `ztensor-2`...).
    #[getter]
    fn format(&self) -> PyResult<&'static str> {
        Ok(self.file()?.format().id())
    }

    /// Where the file was opened from.
    #[getter]
    fn path(&self) -> PyResult<String> {
        Ok(self.file()?.path().display().to_string())
    }

    /// For a file opened from a URL, `(requests, bytes)`: what reading it has cost so far;
    /// `None` for a local file.
    #[getter]
    fn transfer(&self) -> PyResult<Option<(u64, u64)>> {
        Ok(self.file()?.transfer().map(|t| (t.requests, t.bytes)))
    }

    /// What the file holds that no tensor can (a NetCDF-4 string, compound, enum or
    /// variable-length variable), left out of the tensors: `(name, why)` pairs. Asking for
    /// one by name raises `TensorkitError` of kind `unsupported`, saying why.
    #[getter]
    fn not_read(&self) -> PyResult<Vec<(String, String)>> {
        Ok(self
            .file()?
            .not_read()
            .iter()
            .map(|n| (n.name.clone(), n.why.clone()))
            .collect())
    }

    /// A string variable's `(shape, values)` (C order), or `None` for any other name.
    fn strings(&self, name: &str) -> PyResult<Option<(Vec<u64>, Vec<String>)>> {
        Ok(self
            .file()?
            .not_read()
            .iter()
            .find(|n| n.name == name)
            .and_then(|n| n.strings.clone()))
    }

    /// File-level metadata as a dict, or `None`.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let file = self.file()?;
        let Some(m) = file.metadata() else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        for (k, v) in m {
            dict.set_item(k, crate::cbor::json_to_py(py, v)?)?;
        }
        Ok(Some(dict))
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.file()?.len())
    }

    /// The tensor names, in the order the file stores them.
    fn keys(&self) -> PyResult<Vec<String>> {
        Ok(self
            .file()?
            .tensors()
            .map(|t| t.name().into_owned())
            .collect())
    }

    fn __contains__(&self, name: &str) -> PyResult<bool> {
        Ok(self.file()?.tensors().any(|t| t.name() == name))
    }

    /// What the file says about tensor `name`, without decoding it.
    fn describe(&self, py: Python<'_>, name: &str) -> PyResult<TensorInfo> {
        let file = self.file()?;
        let t = lookup(&file, name)?;
        let attributes = PyDict::new(py);
        for (k, v) in t.attributes() {
            attributes.set_item(k, crate::cbor::core_to_py(py, v)?)?;
        }
        Ok(TensorInfo {
            dtype: t.dtype().name(),
            shape: t.shape().to_vec(),
            encoding: t.encoding().map(str::to_owned),
            location: t.location().to_vec(),
            attributes: attributes.unbind(),
            nbytes: t.byte_len(),
            zero_copy: t.native_bytes().is_some(),
        })
    }

    /// The axes of tensor `name`'s grid, when its attributes describe a regular
    /// latitude/longitude grid its shape matches (`tensor_grib::regular_ll_axes`): for each
    /// dimension, its name as cfgrib gives it, its CF units and its values; `None` otherwise.
    #[allow(
        clippy::type_complexity,
        reason = "a tuple per axis, as Python takes it"
    )]
    fn grid_axes(
        &self,
        name: &str,
    ) -> PyResult<Option<[(&'static str, &'static str, Vec<f64>); 2]>> {
        let file = self.file()?;
        let t = lookup(&file, name)?;
        let [(lat, lat_units), (lon, lon_units)] = tensorkit::grib::LL_AXES;
        Ok(tensorkit::grib::regular_ll_axes(t.attributes(), t.shape())
            .map(|(lats, lons)| [(lat, lat_units, lats), (lon, lon_units, lons)]))
    }

    /// Tensor `name` for numpy: its dtype, its shape, and its bytes — a read-only view of
    /// the file when `describe` says zero-copy, else a writable buffer of decoded bytes (one
    /// per element for packed dtypes). Decoding runs without the GIL.
    fn tensor(&self, py: Python<'_>, name: &str) -> PyResult<Array> {
        let file = self.file()?;
        let t = lookup(&file, name)?;
        let buffer = py.detach(|| buffer_of(&file, &t)).map_err(to_py)?;
        array_of(py, &t, buffer)
    }

    /// Tensor `name`'s stored blocks (a GGUF quantized type): a read-only view of them,
    /// their ggml type, and their byte shape; `None` for a tensor stored otherwise.
    fn blocks(&self, py: Python<'_>, name: &str) -> PyResult<Option<Blocks>> {
        let file = self.file()?;
        let t = lookup(&file, name)?;
        let Some((ggml_type, stored, shape)) = t.blocks() else {
            return Ok(None);
        };
        Ok(Some(Blocks {
            data: Py::new(py, Buffer::in_file(Arc::clone(&file), stored))?,
            ggml_type: ggml_type.name,
            shape,
        }))
    }

    /// The tensors named (every tensor when `None`), each as `tensor` gives it, with its
    /// name: decoded side by side on `threads` threads (0: every core; 1: this thread),
    /// without the GIL. Their decoded bytes together must fit the file's memory limit.
    #[pyo3(signature = (names = None, threads = 0))]
    fn tensors(
        &self,
        py: Python<'_>,
        names: Option<Vec<String>>,
        threads: usize,
    ) -> PyResult<Vec<(String, Array)>> {
        let file = self.file()?;
        let refs = named(&file, names.as_deref())?;
        let buffers = py
            .detach(|| {
                let mut total = 0u64;
                for t in refs.iter().filter(|t| t.native_bytes().is_none()) {
                    total = tensor_core::checked::add(total, array_len(t)?, "the decoded tensors")?;
                }
                file.tensor_set().limits().check_total_bytes(total)?;
                crate::threads::map_each(&refs, threads, |t| buffer_of(&file, t))
            })
            .map_err(to_py::<tensorkit::Error>)?;
        refs.iter()
            .zip(buffers)
            .map(|(t, buffer)| Ok((t.name().into_owned(), array_of(py, t, buffer)?)))
            .collect()
    }

    /// Decodes tensor `name` into `out`, a writable C-contiguous byte buffer of exactly the
    /// tensor's size: one byte per element for packed dtypes, or with `packed` their packed
    /// bytes as stored (what torch's packed dtypes hold). Runs without the GIL.
    #[pyo3(signature = (name, out, packed = false))]
    fn read_into(
        &self,
        py: Python<'_>,
        name: &str,
        out: &Bound<'_, PyAny>,
        packed: bool,
    ) -> PyResult<()> {
        let file = self.file()?;
        let t = lookup(&file, name)?;
        let mut out = Borrowed::get(out, true, "the output array")?;
        let dst = out.bytes_mut();
        py.detach(|| {
            if packed {
                t.read_into(dst)
            } else {
                decode_into(&t, file.tensor_set().limits(), dst)
            }
        })
        .map_err(to_py)
    }

    /// Where each tensor named (every tensor when `None`) is stored, for loaders that read
    /// files themselves (`Placement`): `file` and `offset` `None` unless the bytes lie as
    /// the machine holds them (packed dtypes packed) in a local mapped file
    /// ([`tensorkit::TensorRef::stored_at`]).
    #[pyo3(signature = (names = None))]
    fn layout(&self, names: Option<Vec<String>>) -> PyResult<Vec<Placement>> {
        let file = self.file()?;
        let refs = named(&file, names.as_deref())?;
        Ok(refs
            .iter()
            .map(|t| {
                let at = t.stored_at();
                Placement {
                    name: t.name().into_owned(),
                    dtype: t.dtype().name(),
                    shape: t.shape().to_vec(),
                    nbytes: t.byte_len(),
                    file: at.map(|a| a.0),
                    offset: at.map(|a| a.1),
                }
            })
            .collect())
    }

    /// Fills `out` (a writable C-contiguous byte buffer) with the bytes at `offset` of mapped
    /// file number `file` (as `layout` numbers them), by positioned reads striped across
    /// `threads` threads (0: 8), without the GIL.
    #[pyo3(signature = (file_no, offset, out, threads = 0))]
    fn read_stored(
        &self,
        py: Python<'_>,
        file_no: usize,
        offset: u64,
        out: &Bound<'_, PyAny>,
        threads: usize,
    ) -> PyResult<()> {
        self.read_stored_many(py, vec![(file_no, offset, out.clone())], threads)
    }

    /// `read_stored` for many buffers at once: each `(file number, offset, buffer)` filled
    /// from its file, the reads of all of them striped across the same `threads` threads.
    /// The buffers must not overlap.
    #[pyo3(signature = (items, threads = 0))]
    fn read_stored_many(
        &self,
        py: Python<'_>,
        items: Vec<(usize, u64, Bound<'_, PyAny>)>,
        threads: usize,
    ) -> PyResult<()> {
        let file = self.file()?;
        let mut places = Vec::with_capacity(items.len());
        let mut borrowed = Vec::with_capacity(items.len());
        for (file_no, offset, out) in &items {
            places.push((*file_no, *offset));
            borrowed.push(Borrowed::get(out, true, "an output buffer")?);
        }
        let mut spans: Vec<(usize, usize)> = borrowed
            .iter()
            .map(|b| {
                let bytes = b.bytes();
                (bytes.as_ptr().addr(), bytes.len())
            })
            .filter(|&(_, len)| len > 0)
            .collect();
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
            return Err(crate::errors::invalid("the output buffers overlap"));
        }
        let outs: Vec<&mut [u8]> = borrowed.iter_mut().map(Borrowed::bytes_mut).collect();
        py.detach(|| {
            crate::threads::striped(outs, threads, |i, at, part| {
                let (file_no, offset) = places[i];
                file.read_stored(file_no, offset + at as u64, part)
            })
        })
        .map_err(to_py)
    }

    /// Hands the pages of the file's mappings this process has read back to the system: they
    /// stay in the page cache and no longer count toward the process's memory (what the
    /// xarray engine does after decoding each field).
    fn release_pages(&self, py: Python<'_>) -> PyResult<()> {
        let file = self.file()?;
        py.detach(|| file.release_pages());
        Ok(())
    }

    /// Asks the system to start reading `length` bytes at `offset` of mapped file number
    /// `file_no` into the page cache (hinted a read-ahead window at a time, in file order).
    /// With `background`, the hints are given from a thread of their own and this returns at
    /// once: a whole-file load over a mapping then finds most pages read before it touches
    /// them.
    #[pyo3(signature = (file_no, offset, length, background = false))]
    fn prefetch(
        &self,
        py: Python<'_>,
        file_no: usize,
        offset: u64,
        length: u64,
        background: bool,
    ) -> PyResult<()> {
        let file = self.file()?;
        if !background {
            return py
                .detach(|| file.prefetch(file_no, offset, length))
                .map_err(to_py);
        }
        file.prefetch(file_no, offset, 0).map_err(to_py)?; // a bad file number fails here
        std::thread::spawn(move || {
            // The file number was checked above; a hint refused changes nothing.
            let _ = file.prefetch(file_no, offset, length);
        });
        Ok(())
    }

    /// A writable buffer over a private copy-on-write mapping of mapped file number
    /// `file_no`: what torch tensors over a file's raw bytes are made from. Nothing is read
    /// until touched; nothing written reaches the file.
    fn private_map(&self, file_no: usize) -> PyResult<Buffer> {
        let file = self.file()?;
        Ok(Buffer::private(file.private_map(file_no).map_err(to_py)?))
    }

    /// Checks tensor `name` (every tensor when `None`) against the checksums or digests the
    /// file keeps for it, without the GIL: what a zero-copy array skips.
    #[pyo3(signature = (name = None))]
    fn verify(&self, py: Python<'_>, name: Option<&str>) -> PyResult<()> {
        let file = self.file()?;
        match name {
            Some(name) => {
                let t = lookup(&file, name)?;
                py.detach(|| t.verify()).map_err(to_py)
            }
            None => py.detach(|| file.verify()).map_err(to_py),
        }
    }

    /// Closes the file: its memory map is released once no array made from it remains.
    fn close(&self) -> PyResult<()> {
        self.inner.close()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }
}
