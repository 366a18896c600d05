//! [`RemoteTgm`]: a `.tgm` file at a URL (`https://`, `s3://`, `gs://`, `az://`), read by
//! byte ranges: opening reads every message's preamble, header frames, postamble and footer
//! (the front door's header walk, as few round trips as the file's indexes allow); metadata
//! is then read from what is held, and an object is decoded from its own frame, fetched
//! alone. A whole message is fetched only when it is asked for whole.

use super::decode::{
    Decode, Decoded, Ranges, decode_frames, decode_message, decoded_ranges_to_py, decoded_to_py,
    ranges_of,
};
use super::errors::tgm_err;
use super::messages::{described_to_py, metadata_to_py};
use crate::errors::to_py;
use crate::handle::Handle;
use crate::results::{Array, TgmDescribed, TgmMessage};
use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ops::Range;
use std::sync::Arc;
use tensorkit::frame::{self, DecodeOptions, GlobalMetadata, Message, ObjectFrame};
use tensorkit::remote::{Headers, RemoteObject, RemoteOptions};
use tensorkit::{Format, Limits, ReadOptions};

/// An open remote file: the object, its headers, and where each message lies.
struct Remote {
    object: RemoteObject,
    headers: Headers,
    messages: Vec<Range<u64>>,
    limits: Limits,
}

/// What fails remotely: a request (the front door's error) or the bytes (Tensogram's).
enum Failed {
    Remote(tensorkit::Error),
    Tgm(frame::Error),
}

impl From<tensorkit::Error> for Failed {
    fn from(e: tensorkit::Error) -> Self {
        Failed::Remote(e)
    }
}

impl From<frame::Error> for Failed {
    fn from(e: frame::Error) -> Self {
        Failed::Tgm(e)
    }
}

fn to_python(e: Failed) -> PyErr {
    match e {
        Failed::Remote(e) => to_py(e),
        Failed::Tgm(e) => tgm_err(e),
    }
}

type Result<T> = std::result::Result<T, Failed>;

impl Remote {
    fn open(url: &str, remote: &RemoteOptions) -> Result<Remote> {
        let object = RemoteObject::open(url, remote)?;
        let options = ReadOptions::default();
        let headers = object.headers(Format::TENSOGRAM, &options)?;
        let messages = if object.is_empty() {
            Vec::new()
        } else {
            let bytes = headers.bytes();
            let start = bytes.as_ptr() as usize;
            frame::Messages::open_with(bytes, &options)?
                .messages()
                .iter()
                .map(|m| {
                    let at = (m.bytes().as_ptr() as usize - start) as u64;
                    at..at + m.bytes().len() as u64
                })
                .collect()
        };
        Ok(Remote {
            object,
            headers,
            messages,
            limits: options.limits,
        })
    }

    /// Where message `i` lies, or Python's `IndexError`.
    fn span(&self, i: usize) -> PyResult<Range<u64>> {
        self.messages.get(i).cloned().ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "message index {i} out of range for file with {} messages",
                self.messages.len()
            ))
        })
    }

    /// Message `i`'s bytes as held: every header, footer and index; its objects' frames may
    /// be holes.
    fn header_bytes(&self, i: usize) -> &[u8] {
        let r = &self.messages[i];
        &self.headers.bytes()[r.start as usize..r.end as usize]
    }

    /// Message `i` over the headers held.
    fn header(&self, i: usize) -> Result<Message<'_>> {
        Ok(Message::open_with(
            self.header_bytes(i),
            &(&self.limits).into(),
        )?)
    }

    /// `f` of object `j` of message `i`, for each `(i, j)` of `which`: each message's header
    /// parsed once, the frames not held fetched together (neighbours in one request, the rest
    /// concurrently) within the limits, and each object read from its own frame.
    fn each_object<T>(
        &self,
        which: &[(usize, usize)],
        f: impl Fn(&Message<'_>, ObjectFrame<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut headers: Vec<(usize, Message<'_>)> = Vec::new();
        let mut spans = Vec::with_capacity(which.len());
        for &(i, j) in which {
            let at = if let Some(at) = headers.iter().position(|(m, _)| *m == i) {
                at
            } else {
                headers.push((i, self.header(i)?));
                headers.len() - 1
            };
            let msg = &headers[at].1;
            if j >= msg.len() {
                return Err(frame::Error::ObjectIndex {
                    index: j,
                    count: msg.len(),
                }
                .into());
            }
            let (offset, length) = msg.object_span(j);
            let start = self.messages[i].start + offset;
            spans.push((at, j, start..start + length));
        }
        let missing: Vec<Range<u64>> = spans
            .iter()
            .map(|(_, _, r)| r.clone())
            .filter(|r| !self.headers.holds(r.clone()))
            .collect();
        let total: u64 = missing.iter().map(|r| r.end - r.start).sum();
        self.limits
            .check_total_bytes(total)
            .map_err(frame::Error::from)?;
        let mut fetched = self.object.read_many(&missing)?.into_iter();
        spans
            .into_iter()
            .map(|(at, j, r)| {
                let frame = if self.headers.holds(r.clone()) {
                    Bytes::copy_from_slice(&self.headers.bytes()[r.start as usize..r.end as usize])
                } else {
                    fetched.next().unwrap_or_default()
                };
                let msg = &headers[at].1;
                f(msg, msg.object_in(j, &frame)?)
            })
            .collect()
    }

    /// Message `i`'s bytes, fetched whole.
    fn whole(&self, i: usize) -> Result<Bytes> {
        let r = self.messages[i].clone();
        self.limits
            .check_total_bytes(r.end - r.start)
            .map_err(frame::Error::from)?;
        Ok(self.object.read(r)?)
    }

    /// Object `j` of each message of `which`, decoded from its frame alone.
    fn decode_each(&self, which: &[(usize, usize)], how: Decode) -> Result<Vec<Message3>> {
        self.each_object(which, |msg, o| {
            let decoded = decode_frames(&[o], self.limits, how)?;
            Ok((msg.preamble().version, msg.metadata()?.clone(), decoded))
        })
    }

    /// Ranges of object `j` of each message of `which`.
    fn ranges_each(
        &self,
        which: &[(usize, usize)],
        ranges: &[(u64, u64)],
        opts: DecodeOptions,
    ) -> Result<Vec<Ranges>> {
        self.each_object(which, |_, o| Ok(ranges_of(&o, ranges, opts, &self.limits)?))
    }
}

/// A decoded message before it is handed to Python: version, metadata, objects.
type Message3 = (u16, GlobalMetadata, Vec<Decoded>);

/// A `.tgm` file at a URL, read by byte ranges.
#[pyclass(module = "tensorkit._tensorkit", name = "RemoteTgm", frozen)]
pub struct RemoteTgm {
    inner: Handle<Remote>,
    url: String,
}

impl RemoteTgm {
    fn remote(&self) -> PyResult<Arc<Remote>> {
        self.inner.get()
    }
}

#[pymethods]
impl RemoteTgm {
    /// Opens the object at `url` and reads every message's headers. `storage_options` are
    /// the store's configuration keys (`object_store`'s: `allow_http`, `aws_region`, …).
    #[new]
    #[pyo3(signature = (url, storage_options=None))]
    fn new(
        py: Python<'_>,
        url: String,
        storage_options: Option<Vec<(String, String)>>,
    ) -> PyResult<Self> {
        let remote = RemoteOptions {
            config: storage_options.unwrap_or_default(),
            ..RemoteOptions::process_defaults()
        };
        let opened = py
            .detach(|| Remote::open(&url, &remote))
            .map_err(to_python)?;
        Ok(RemoteTgm {
            inner: Handle::new(opened),
            url,
        })
    }

    /// The URL it was opened from.
    #[getter]
    fn path(&self) -> &str {
        &self.url
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.remote()?.messages.len())
    }

    /// `(offset, length)` of each message.
    fn ranges(&self) -> PyResult<Vec<(u64, u64)>> {
        Ok(self
            .remote()?
            .messages
            .iter()
            .map(|r| (r.start, r.end - r.start))
            .collect())
    }

    /// The bytes of message `i`, fetched.
    fn message<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyBytes>> {
        let remote = self.remote()?;
        remote.span(i)?;
        let bytes = py.detach(|| remote.whole(i)).map_err(to_python)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Decodes message `i`: every object (the message fetched whole), or object `index`
    /// (its frame fetched alone, unless hashes are verified, which reads every frame).
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
        let remote = self.remote()?;
        remote.span(i)?;
        let how = Decode::new(
            index,
            verify_hash,
            native_byte_order,
            restore_non_finite,
            threads,
        );
        let decoded = py
            .detach(|| -> Result<Message3> {
                match index {
                    Some(j) if !verify_hash => {
                        Ok(remote.decode_each(&[(i, j)], how)?.swap_remove(0))
                    }
                    _ => Ok(decode_message(&remote.whole(i)?, &remote.limits, how)?),
                }
            })
            .map_err(to_python)?;
        decoded_to_py(py, decoded)
    }

    /// Object `index` of each message of `messages`, their frames fetched together.
    #[pyo3(signature = (messages, index, *, native_byte_order=true, restore_non_finite=true, threads=0))]
    fn decode_batch(
        &self,
        py: Python<'_>,
        messages: Vec<usize>,
        index: usize,
        native_byte_order: bool,
        restore_non_finite: bool,
        threads: usize,
    ) -> PyResult<Vec<TgmMessage>> {
        let remote = self.remote()?;
        for &i in &messages {
            remote.span(i)?;
        }
        let how = Decode::new(
            Some(index),
            false,
            native_byte_order,
            restore_non_finite,
            threads,
        );
        let which: Vec<(usize, usize)> = messages.iter().map(|&i| (i, index)).collect();
        let decoded = py
            .detach(|| remote.decode_each(&which, how))
            .map_err(to_python)?;
        decoded.into_iter().map(|d| decoded_to_py(py, d)).collect()
    }

    /// Elements of object `index` of message `i` (see `tgm_decode_range`), from its frame.
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
        Ok(self
            .decode_range_batch(
                py,
                vec![i],
                index,
                ranges,
                native_byte_order,
                restore_non_finite,
            )?
            .swap_remove(0))
    }

    /// [`decode_range`](Self::decode_range) of object `index` of each message of
    /// `messages`, their frames fetched together.
    #[pyo3(signature = (messages, index, ranges, *, native_byte_order=true, restore_non_finite=true))]
    fn decode_range_batch(
        &self,
        py: Python<'_>,
        messages: Vec<usize>,
        index: usize,
        ranges: Vec<(u64, u64)>,
        native_byte_order: bool,
        restore_non_finite: bool,
    ) -> PyResult<Vec<Option<Vec<Array>>>> {
        let remote = self.remote()?;
        for &i in &messages {
            remote.span(i)?;
        }
        let opts = DecodeOptions {
            native_byte_order,
            restore_non_finite,
            ..DecodeOptions::default()
        };
        let which: Vec<(usize, usize)> = messages.iter().map(|&i| (i, index)).collect();
        let decoded = py
            .detach(|| remote.ranges_each(&which, &ranges, opts))
            .map_err(to_python)?;
        decoded
            .into_iter()
            .map(|d| decoded_ranges_to_py(py, d))
            .collect()
    }

    /// Metadata and descriptors of message `i`: the metadata from the headers held, each
    /// descriptor from its object's frame (fetched together, when not held).
    fn describe(&self, py: Python<'_>, i: usize) -> PyResult<TgmDescribed> {
        let remote = self.remote()?;
        remote.span(i)?;
        let described = py
            .detach(|| -> Result<_> {
                let msg = remote.header(i)?;
                let which: Vec<(usize, usize)> = (0..msg.len()).map(|j| (i, j)).collect();
                let descriptors = remote.each_object(&which, |_, o| Ok(o.descriptor().clone()))?;
                Ok((msg.preamble().version, msg.metadata()?.clone(), descriptors))
            })
            .map_err(to_python)?;
        described_to_py(py, described)
    }

    /// Metadata of message `i`, from the headers held (nothing is fetched).
    fn metadata(&self, py: Python<'_>, i: usize) -> PyResult<Py<crate::results::TgmMetadata>> {
        let remote = self.remote()?;
        remote.span(i)?;
        metadata_to_py(py, remote.header_bytes(i), &remote.limits)
    }

    /// Lets go of the headers held.
    fn close(&self) -> PyResult<()> {
        self.inner.close()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    fn __repr__(&self) -> String {
        format!("RemoteTgm({:?})", self.url)
    }
}
