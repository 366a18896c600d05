//! [`RemoteObject`]: one remote object read by byte ranges, from synchronous code, for
//! callers that walk a format's messages themselves (tensogram's `TensogramFile` over a URL)
//! rather than list its tensors: its length, any ranges of its bytes, and its headers as its
//! format's own walk finds them ([`Headers`]).

use super::header::Parts;
use super::image::Image;
use super::store::{self, Object, RemoteOptions};
use super::walk::{image_error, walk_headers};
use crate::error::Result;
use crate::format::Format;
use bytes::Bytes;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use tensor_core::ReadOptions;

/// One remote object, opened: one request has read its first bytes and learnt its length.
/// Every later read is checked against that length and the object's version (a changed
/// object is an error, not a mix of two versions).
pub struct RemoteObject {
    object: Arc<Object>,
    /// What opening read, kept for the header walk.
    first: Vec<(u64, Bytes)>,
    remote: RemoteOptions,
}

impl std::fmt::Debug for RemoteObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteObject")
            .field("url", &self.object.url())
            .field("len", &self.object.len())
            .finish_non_exhaustive()
    }
}

impl RemoteObject {
    /// Opens the object at `url` (one request, within `remote.deadline`).
    ///
    /// # Errors
    /// [`Error::Remote`](crate::Error::Remote) when `url` is not one, the store cannot be
    /// reached or the object does not exist.
    pub fn open(url: &str, remote: &RemoteOptions) -> Result<Self> {
        let opening = Object::open(url, remote, false);
        let (object, first) =
            store::block_on(store::within(url, remote.deadline, "opening", opening))?;
        Ok(RemoteObject {
            object,
            first,
            remote: remote.clone(),
        })
    }

    /// The URL it was opened from.
    #[must_use]
    pub fn url(&self) -> &str {
        self.object.url()
    }

    /// Its length, in bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.object.len()
    }

    /// Whether it is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes at `range`, in one request.
    ///
    /// # Errors
    /// A range beyond the object, a failed request, or an object that changed since it was
    /// opened.
    pub fn read(&self, range: Range<u64>) -> Result<Bytes> {
        let what = format!("reading bytes {}..{}", range.start, range.end);
        store::block_on(self.object.within(&what, self.object.get(range)))
    }

    /// The bytes of each of `ranges`, in their order: neighbours fetched as one request,
    /// the requests concurrently.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_many(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        store::block_on(
            self.object
                .within("reading ranges", self.object.get_many(ranges)),
        )
    }

    /// Its headers as `format`'s walk finds them (what opening it through the front door
    /// fetches before listing): read in as few round trips as the walk allows, within
    /// `options.limits`' header bound.
    ///
    /// # Errors
    /// What the walk reports of the bytes it reads, or a failed request.
    pub fn headers(&self, format: Format, options: &ReadOptions) -> Result<Headers> {
        let mut parts = Parts::new(self.len(), self.first.clone());
        let path = Path::new(self.url());
        let walking = async {
            walk_headers(
                &self.object,
                &mut parts,
                path,
                format,
                options,
                &self.remote,
            )
            .await
        };
        store::block_on(self.object.within("reading the headers", walking))?;
        let image = Image::new(self.len(), parts.parts())
            .map_err(|e| image_error(self.url(), self.len(), &e))?;
        Ok(Headers { image, parts })
    }
}

/// A remote object's headers: a stand-in as long as the object, holding the bytes read at
/// their offsets and zeros elsewhere (sparse: the holes take neither disk nor memory).
pub struct Headers {
    image: Image,
    parts: Parts,
}

impl Headers {
    /// The stand-in's bytes, as long as the object.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.image.bytes()
    }

    /// Whether every byte of `range` was read (the rest of the stand-in reads as zeros).
    #[must_use]
    pub fn holds(&self, range: Range<u64>) -> bool {
        self.parts.missing(range).is_none()
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Headers")
            .field("len", &self.bytes().len())
            .finish_non_exhaustive()
    }
}
