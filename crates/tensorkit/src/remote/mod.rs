//! Files that live elsewhere: `https://`, `s3://`, `gs://`, `az://` objects read through
//! range requests (`object_store`), `hf://` paths of the Hugging Face Hub (module `hub`)
//! read as their `https://` file URLs, and `file://` URLs, which are local files.
//!
//! Opening reads the object's header, index or footer in as few requests as its format
//! allows — the first [`RemoteOptions::read_ahead`] bytes, then whatever the format's own
//! pointers lead to, each request widened so that one round trip usually finds the next
//! structure too (module `header`). The listing is made by the format's own reader, run over a
//! stand-in for the object in which only those bytes are present (module `image`). A tensor's
//! bytes are fetched when its elements are asked for, in one request; reading tensors in
//! order fetches the next ones with it, neighbours merged into one request and the rest
//! concurrently. Elements stored as they are go straight to the caller; anything with a
//! checksum, hash or encoding goes through the format's reader again, over the header and
//! that tensor's bytes, so that what is checked and decoded remotely is exactly what is
//! checked and decoded locally.

mod header;
mod hub;
mod image;
mod object;
mod store;
mod walk;

pub use object::{Headers, RemoteObject};
pub(crate) use store::Object;
pub use store::{RemoteOptions, Stats, is_url};

use crate::adapter::listing::{Fetch, Listed, Listing, Opened as Opening};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Lazy, NamedTensor, TensorData, TensorSet};
use crate::shards::Joining;
use bytes::Bytes;
use header::Parts;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tensor_core::ReadOptions;
use tensor_dtype::{Tensor, TensorView};
use walk::{fetch_into, header_read_ahead, image_error, walk_headers};

/// Reading tensors in order fetches the ones after them with them: this many bytes at first,
/// twice as many each time the reading stays in order, up to [`WINDOW_BYTES`].
const FIRST_WINDOW_BYTES: u64 = 1 << 20;

/// The most bytes one in-order fetch reads ahead.
const WINDOW_BYTES: u64 = 32 << 20;

/// A tensor longer than this is streamed from the network in runs rather than fetched
/// whole, when the caller streams it.
const STREAM_ABOVE: u64 = 8 << 20;

/// One remote object, opened: listed, or — when the first reads held all of it — held
/// whole, to be read as local files are.
pub(crate) struct OpenedObject {
    pub(crate) object: Arc<Object>,
    pub(crate) listed: Option<TensorSet<'static>>,
    pub(crate) whole: Option<Bytes>,
    /// Its format.
    format: Format,
    /// The objects of the set it is one of, when its format's files name their set's other
    /// members ([`Adapter::set_members`](crate::adapter::Adapter::set_members)).
    members: Option<Vec<PathBuf>>,
}

/// A remote file opened: one object, or the members of a set (a shard index's shards, a GGUF
/// split set) and how they join.
pub(crate) struct Opened {
    pub(crate) joining: Joining,
    pub(crate) objects: Vec<OpenedObject>,
}

/// Opens the object at `url` and lists its tensors (a shard index opens its shards, all at
/// once), within `remote.deadline`.
pub(crate) async fn open(
    url: &str,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<Opened> {
    let opening = open_unbounded(url, options, remote);
    store::within(url, remote.deadline, "opening and listing", opening).await
}

async fn open_unbounded(
    url: &str,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<Opened> {
    if !crate::shards::is_index(Path::new(url)) {
        let first = open_one(url, options, remote).await?;
        let Some(members) = first.members.clone() else {
            return Ok(Opened {
                joining: Joining::Files,
                objects: vec![first],
            });
        };
        // A member of a set its format names: every member, the one opened kept.
        let format = first.format;
        let mut first = Some(first);
        let opening = members.iter().map(|m| {
            let held = first.take_if(|f| Path::new(f.object.url()) == m.as_path());
            let url = m.to_string_lossy().into_owned();
            async move {
                match held {
                    Some(f) => Ok(f),
                    None => open_one(&url, options, remote).await,
                }
            }
        });
        let objects = futures::future::try_join_all(opening).await?;
        return Ok(Opened {
            joining: Joining::Format(format),
            objects,
        });
    }
    let (object, mut read) = Object::open(url, remote, false).await?;
    options.limits.check_header_bytes(object.len())?;
    let head = read.swap_remove(0).1;
    let text = if head.len() as u64 == object.len() {
        head
    } else {
        object.get(0..object.len()).await?
    };
    let index = crate::shards::Index::parse(Path::new(url), &text, &options.limits)?;
    let urls: Vec<String> = index
        .files()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let objects =
        futures::future::try_join_all(urls.iter().map(|u| open_one(u, options, remote))).await?;
    Ok(Opened {
        joining: Joining::Index(index),
        objects,
    })
}

async fn open_one(
    url: &str,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<OpenedObject> {
    let path = PathBuf::from(url);
    let (object, read) = Object::open(url, remote, header::may_end_with_header(&path)).await?;
    let len = object.len();
    let head = &read[0].1;
    let format = crate::registry::detect(&path, head).map_err(|e| match e {
        Error::UnknownFormat {
            too_short: true, ..
        } if head.len() as u64 == len => header::too_short(url, len),
        other => other,
    })?;
    let mut parts = Parts::new(len, read);
    let adapter = format.adapter();
    if remote.grib_index && !parts.complete() && !adapter.sidecars().is_empty() {
        headers_from_sidecar(&object, &mut parts, format, options, remote).await?;
    }
    loop {
        walk_headers(&object, &mut parts, &path, format, options, remote).await?;
        if parts.complete() {
            let whole = parts.parts()[0].1.clone();
            return Ok(OpenedObject {
                members: adapter.set_members(&path, &whole, options)?,
                object,
                listed: None,
                whole: Some(whole),
                format,
            });
        }
        let image = image::Image::new(len, parts.parts()).map_err(|e| image_error(url, len, &e))?;
        let is_held = |r: Range<u64>| parts.missing(r).is_none();
        let mut opened = HeaderCell::try_new(image, |image| {
            adapter
                .open_header(&path, image.bytes(), options, &is_held)
                .map(|o| o.0)
        })?;
        let mut need = Vec::new();
        if let Some(listing) = opened.with_dependent_mut(|_, o| match o {
            Opening::Listed(listing, _) => Some(Listing {
                format: listing.format,
                metadata: listing.metadata.take(),
                metadata_types: std::mem::take(&mut listing.metadata_types),
                tensors: std::mem::take(&mut listing.tensors),
                not_read: std::mem::take(&mut listing.not_read),
            }),
            Opening::Needs(ranges) => {
                need = std::mem::take(ranges);
                None
            }
        }) {
            let members = adapter.set_members(&path, opened.borrow_owner().bytes(), options)?;
            return Ok(OpenedObject {
                listed: Some(remote_set(&object, opened, listing, &path, options)),
                object,
                whole: None,
                format,
                members,
            });
        }
        options
            .limits
            .check_header_bytes(need.iter().map(|r| r.end - r.start).sum())?;
        fetch_into(&object, &mut parts, &need).await?;
    }
}

/// Fetches every header a sidecar beside the object lists (a GRIB inventory, a `.idx` or
/// `.index`: [`Adapter::sidecars`](crate::adapter::Adapter::sidecars)), all at once: the walk
/// through the headers then finds them held, rather than taking a round trip per header.
/// Without a sidecar, or with one that does not read as one, nothing is fetched (and the
/// walk is as it was).
async fn headers_from_sidecar(
    object: &Object,
    parts: &mut Parts,
    format: Format,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<()> {
    let adapter = format.adapter();
    let most = options.limits.max_header_bytes;
    let found =
        futures::future::join_all(adapter.sidecars().iter().map(|s| object.sibling(s, most))).await;
    let ahead = header_read_ahead(format, remote);
    let Some(ranges) = found
        .iter()
        .flatten()
        .find_map(|text| adapter.header_ranges_from_sidecar(text, object.len(), ahead))
    else {
        return Ok(());
    };
    let need: Vec<Range<u64>> = ranges
        .into_iter()
        .filter_map(|r| parts.missing(r))
        .collect();
    options
        .limits
        .check_header_bytes(need.iter().map(|r| r.end - r.start).sum())?;
    fetch_into(object, parts, &need).await
}

self_cell::self_cell!(
    /// The stand-in holding a remote object's header, and the header parsed from it (kept
    /// to read every tensor by).
    struct HeaderCell {
        owner: image::Image,
        #[covariant]
        dependent: Opening,
    }
);

/// What every tensor of one object shares: the object, its header parsed, and the tensors
/// fetched ahead of being asked for.
struct Shared {
    object: Arc<Object>,
    header: HeaderCell,
    path: PathBuf,
    options: ReadOptions,
    spans: Vec<Range<u64>>,
    /// The orders readers follow (see [`Order`]); read-ahead follows the one being followed.
    orders: Vec<Order>,
    ahead: Mutex<Ahead>,
}

/// One order in which tensors may be read: the object's own (by offset), by name (how
/// writers that sort, such as zTensor 2's, ask for them), and by dtype then name
/// (safetensors' writer groups tensors by dtype).
struct Order {
    /// The tensors in this order.
    seq: Vec<usize>,
    /// Where each tensor is in `seq`.
    rank: Vec<usize>,
}

impl Order {
    fn new(len: usize, key: impl Fn(usize, usize) -> std::cmp::Ordering) -> Order {
        let mut seq: Vec<usize> = (0..len).collect();
        seq.sort_by(|&a, &b| key(a, b).then(a.cmp(&b)));
        let mut rank = vec![0; len];
        for (r, &i) in seq.iter().enumerate() {
            rank[i] = r;
        }
        Order { seq, rank }
    }
}

/// Tensors fetched ahead (and the one being read), the last one asked for, and the order
/// the reading follows.
#[derive(Default)]
struct Ahead {
    fetched: HashMap<usize, Bytes>,
    last: Option<usize>,
    /// Which of [`Shared::orders`] the reading follows.
    order: usize,
    /// Bytes the next in-order fetch reads ahead.
    window: u64,
}

fn remote_set(
    object: &Arc<Object>,
    header: HeaderCell,
    listing: Listing,
    path: &Path,
    options: &ReadOptions,
) -> TensorSet<'static> {
    let t = &listing.tensors;
    let spans: Vec<Range<u64>> = t.iter().map(|t| t.span.clone()).collect();
    let orders = vec![
        Order::new(t.len(), |a, b| spans[a].start.cmp(&spans[b].start)),
        Order::new(t.len(), |a, b| t[a].name.cmp(&t[b].name)),
        Order::new(t.len(), |a, b| {
            (t[a].dtype.name(), &t[a].name).cmp(&(t[b].dtype.name(), &t[b].name))
        }),
    ];
    let shared = Arc::new(Shared {
        object: Arc::clone(object),
        header,
        path: path.to_path_buf(),
        options: *options,
        spans,
        orders,
        ahead: Mutex::new(Ahead::default()),
    });
    let tensors = listing
        .tensors
        .into_iter()
        .enumerate()
        .map(|(i, t)| remote_tensor(&shared, i, t))
        .collect();
    TensorSet {
        format: listing.format,
        metadata: listing.metadata,
        metadata_types: listing.metadata_types,
        tensors,
        limits: options.limits,
        mapped: Vec::new(),
        not_read: listing.not_read,
    }
}

fn remote_tensor(shared: &Arc<Shared>, i: usize, t: Listed) -> NamedTensor<'static> {
    let (whole, runs) = (Arc::clone(shared), Arc::clone(shared));
    let (dtype, shape, fetch) = (t.dtype, t.shape.clone(), t.fetch);
    let shape2 = shape.clone();
    NamedTensor {
        name: t.name,
        data: TensorData::Encoded(Lazy {
            blocks: None,
            encoding: t.encoding.unwrap_or_else(|| REMOTE_RAW.to_owned()),
            dtype,
            shape: t.shape,
            decode: Arc::new(move |limits| match fetch {
                Fetch::Raw(order) => {
                    let bytes = whole.bytes(i, limits)?;
                    Ok(Tensor::new(Vec::from(bytes), dtype, &shape, order)?)
                }
                Fetch::Decode => whole.decode(i, limits, &mut |t| {
                    Ok(match t.load(limits)? {
                        crate::model::Loaded::View(v) => v.to_tensor(),
                        crate::model::Loaded::Owned(t) => t,
                    })
                }),
            }),
            stream: Arc::new(move |limits, run, sink| match fetch {
                Fetch::Raw(order) => runs.stream_raw(i, dtype, &shape2, order, limits, run, sink),
                Fetch::Decode => runs.decode(i, limits, &mut |t| t.stream(limits, sink)),
            }),
            packed: None,
            decode_into: None,
        }),
        location: t.location,
        attributes: t.attributes,
        check: None,
    }
}

/// What a remote tensor stored as it is reports as its encoding: its bytes are the
/// elements, but they are fetched when asked for, not viewed.
pub const REMOTE_RAW: &str = "raw, remote";

impl Shared {
    fn span(&self, i: usize) -> Range<u64> {
        self.spans[i].clone()
    }

    /// Tensor `i`'s bytes: fetched ahead, or now — with the tensors after it when the
    /// reading follows one of the [orders](Order) readers use.
    fn bytes(&self, i: usize, limits: &tensor_core::Limits) -> Result<Bytes> {
        let span = self.span(i);
        limits.check_total_bytes(span.end - span.start)?;
        let mut ahead = self
            .ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The order the reading follows: the one it followed, else the first in which this
        // tensor comes right after (or is) the last one read; none after a jump.
        let follows = |k: usize| {
            let rank = &self.orders[k].rank;
            match ahead.last {
                Some(l) => rank[i] == rank[l] || rank[i] == rank[l] + 1,
                None => rank[i] == 0,
            }
        };
        let order = std::iter::once(ahead.order)
            .chain(0..self.orders.len())
            .find(|&k| follows(k));
        if let Some(k) = order
            && k != ahead.order
        {
            ahead.fetched.clear();
            ahead.window = 0;
            ahead.order = k;
        }
        ahead.last = Some(i);
        let rank = &self.orders[ahead.order].rank;
        // What lies behind the reader is not kept (a writer may ask for the tensor it is on
        // twice: to size it, then to copy it); after a jump, what was fetched ahead is kept
        // only if the jump landed in it.
        ahead.fetched.retain(|&j, _| rank[j] >= rank[i]);
        if let Some(b) = ahead.fetched.get(&i) {
            return Ok(b.clone());
        }
        ahead.fetched.clear();
        // Read-ahead as the kernel does it for files: nothing for a jump, then a window that
        // doubles while the reading stays in order, up to WINDOW_BYTES.
        let mut wanted = vec![i];
        if order.is_some() {
            ahead.window = (ahead.window * 2).clamp(FIRST_WINDOW_BYTES, WINDOW_BYTES);
            let mut total = span.end - span.start;
            for &j in &self.orders[ahead.order].seq[rank[i] + 1..] {
                let s = &self.spans[j];
                total = total.saturating_add(s.end - s.start);
                if total > ahead.window {
                    break;
                }
                wanted.push(j);
            }
        } else {
            ahead.window = 0;
        }
        let ranges: Vec<Range<u64>> = wanted.iter().map(|&j| self.span(j)).collect();
        let what = format!("reading {} ranges of tensor bytes", ranges.len());
        let reading = self.object.get_many(&ranges);
        let got = store::block_on(self.object.within(&what, reading))?;
        for (j, b) in wanted.iter().zip(got) {
            ahead.fetched.insert(*j, b);
        }
        Ok(ahead.fetched.get(&i).cloned().unwrap_or_default())
    }

    /// Runs `f` on tensor `i` as the format's reader gives it from the tensor's own bytes,
    /// through the header parsed at open.
    fn decode<T>(
        &self,
        i: usize,
        limits: &tensor_core::Limits,
        f: &mut dyn FnMut(&NamedTensor<'_>) -> Result<T>,
    ) -> Result<T> {
        let bytes = self.bytes(i, limits)?;
        let options = ReadOptions {
            limits: *limits,
            ..self.options
        };
        let Opening::Listed(_, header) = self.header.borrow_dependent() else {
            unreachable!("a remote set is made from a listed header")
        };
        let t = header.read_in(&self.path, i, self.span(i), &bytes, &options)?;
        f(&t)
    }

    /// Hands tensor `i`'s elements, stored as they are, to `sink` in runs of whole elements
    /// of at most `run` bytes, little-endian: large tensors straight from the network.
    #[allow(clippy::too_many_arguments)]
    fn stream_raw(
        &self,
        i: usize,
        dtype: tensor_dtype::Dtype,
        shape: &[u64],
        order: tensor_core::ByteOrder,
        limits: &tensor_core::Limits,
        run: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let span = self.span(i);
        if span.end - span.start <= STREAM_ABOVE {
            let bytes = self.bytes(i, limits)?;
            let view = TensorView::new(&bytes, dtype, shape, order)?;
            return crate::model::stream_view(&view, sink);
        }
        let width = match dtype.byte_width() {
            0 => 3,
            w => w,
        };
        let run = (run / width).max(1) * width;
        let swap = (order == tensor_core::ByteOrder::Big).then(|| dtype.swap_width());
        let mut pending: Vec<u8> = Vec::with_capacity(run);
        let flush = |pending: &mut Vec<u8>, sink: &mut dyn FnMut(&[u8]) -> Result<()>| {
            if let Some(w) = swap.filter(|w| *w > 1) {
                tensor_core::byte_order::swap_in_place(pending, w)?;
            }
            sink(pending)?;
            pending.clear();
            Ok::<(), Error>(())
        };
        for chunk in self.object.stream_blocking(span) {
            let mut chunk = &chunk?[..];
            while !chunk.is_empty() {
                let take = (run - pending.len()).min(chunk.len());
                pending.extend_from_slice(&chunk[..take]);
                chunk = &chunk[take..];
                if pending.len() == run {
                    flush(&mut pending, sink)?;
                }
            }
        }
        if !pending.is_empty() {
            flush(&mut pending, sink)?;
        }
        Ok(())
    }
}

/// What reading a remote file has cost so far: requests made and object bytes received,
/// over every object it reads (a shard set's shards and index included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfer {
    /// Requests made (retries inside one request not counted).
    pub requests: u64,
    /// Bytes of the objects received.
    pub bytes: u64,
}

/// The requests and bytes of `objects`, added up.
pub(crate) fn totals(objects: &[Arc<Object>]) -> Transfer {
    objects.iter().fold(Transfer::default(), |t, o| Transfer {
        requests: t.requests + o.stats().requests(),
        bytes: t.bytes + o.stats().bytes(),
    })
}

/// What every remote read of this process has cost so far (for tools that report it, such
/// as the command line's `--verbose`).
#[must_use]
pub fn process_transfer() -> Transfer {
    Transfer {
        requests: store::PROCESS.requests(),
        bytes: store::PROCESS.bytes(),
    }
}

/// The whole object at `url` in a local temporary file (unnamed: nothing is left behind),
/// mapped: for checks that read every byte (`validate`, `verify`). Memory stays at the
/// network's chunk size; `limits` bounds the object's length.
pub(crate) fn download(url: &str, limits: &tensor_core::Limits) -> Result<tensor_core::MmapSource> {
    use std::io::Write;
    if let Some(path) = file_url_path(url) {
        return crate::local::map_local(&path?);
    }
    let remote = RemoteOptions::process_defaults();
    let opening = Object::open(url, &remote, false);
    let (object, _) = store::block_on(store::within(url, remote.deadline, "opening", opening))?;
    limits.check_total_bytes(object.len())?;
    let io = |e| tensor_core::Error::io(format!("downloading {url}"), e);
    let mut file = tempfile::tempfile().map_err(io)?;
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut file);
        for chunk in object.stream_blocking(0..object.len()) {
            out.write_all(&chunk?).map_err(io)?;
        }
        out.flush().map_err(io)?;
    }
    Ok(tensor_core::MmapSource::map(&file)?)
}

/// Opens `url` from synchronous code.
pub(crate) fn open_blocking(
    url: &str,
    options: &ReadOptions,
    remote: &RemoteOptions,
) -> Result<Opened> {
    store::block_on(open(url, options, remote))
}

/// The local path a `file://` URL names, when `url` is one.
pub(crate) fn file_url_path(url: &str) -> Option<Result<PathBuf>> {
    let rest = url.strip_prefix("file://")?;
    Some(
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .ok_or_else(|| Error::Remote {
                url: url.to_owned(),
                what: format!("{rest:?} is not an absolute local path"),
            }),
    )
}
