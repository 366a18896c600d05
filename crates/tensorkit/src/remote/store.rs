//! One remote object: where it is, how long, which version, and range reads of it through
//! `object_store`, counted.
//!
//! Every read names the version it expects (`If-Match` with the `ETag` of the first
//! response) and checks the length the server reports, so an object replaced between two
//! requests is an error, never a mix of two versions. Responses are checked to be exactly
//! the bytes asked for: `object_store` refuses a whole-object `200` answer to a range
//! request, and a body of another length is refused here.

use crate::error::{Error, Result};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as StorePath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreScheme};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Ranges closer than this are fetched as one request: one more round trip costs more than
/// this many bytes on any link worth reading from.
pub(crate) const MERGE_GAP: u64 = 64 << 10;

/// How many ranges are in flight at once.
const CONCURRENT_REQUESTS: usize = 8;

/// How to reach remote objects: the store's own configuration, time limits, retries and how
/// much of each end to read when opening.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// `object_store` configuration keys and values, applied over what the environment gives
    /// (`AWS_*`, `GOOGLE_*`, `AZURE_*`): e.g. `("aws_endpoint", "http://127.0.0.1:9000")`,
    /// `("aws_region", "eu-west-1")`, `("allow_http", "true")`.
    pub config: Vec<(String, String)>,
    /// The longest one request may take, body included (at most [`deadline`](Self::deadline)).
    pub timeout: Duration,
    /// The longest a request may wait for its next byte: a server that stops sending, or
    /// never answers, fails the request (which is then retried) after this long.
    pub stall_timeout: Duration,
    /// The longest one operation may take, every request and retry in it together: opening
    /// and listing an object, or one read of its bytes. A server that trickles its bytes
    /// stays within the other limits; this one ends it (the CLI's `--timeout`).
    pub deadline: Duration,
    /// The longest a connection may take to open.
    pub connect_timeout: Duration,
    /// How often a request that failed for a reason worth retrying (a 5xx answer, a
    /// dropped connection, a timeout) is tried again, with exponential back-off.
    pub retries: usize,
    /// The longest all tries of one request may take together.
    pub retry_timeout: Duration,
    /// Bytes read from each end of the object when it is opened: most formats' headers or
    /// footers fit, so that one or two requests find them.
    pub read_ahead: u64,
    /// Whether an object's headers are found through a sidecar beside it, where its format
    /// has one (GRIB: a wgrib2 `.idx` or an ECMWF `.index`, when one exists): every message's
    /// headers in one round, instead of one round trip per message (see
    /// `tensor_grib::sidecar`).
    pub grib_index: bool,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            config: Vec::new(),
            timeout: Duration::from_secs(30),
            stall_timeout: Duration::from_secs(20),
            deadline: Duration::from_mins(1),
            connect_timeout: Duration::from_secs(5),
            retries: 3,
            retry_timeout: Duration::from_mins(1),
            read_ahead: 64 << 10,
            grib_index: true,
        }
    }
}

/// The options this process reads URLs with when none are given.
static PROCESS_DEFAULTS: std::sync::RwLock<Option<RemoteOptions>> = std::sync::RwLock::new(None);

impl RemoteOptions {
    /// The options [`open`](crate::open), `validate` and `verify` read URLs with when none
    /// are given: [`Default`], or what [`set_process_defaults`](Self::set_process_defaults)
    /// last set.
    #[must_use]
    pub fn process_defaults() -> RemoteOptions {
        PROCESS_DEFAULTS
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }

    /// Sets [`process_defaults`](Self::process_defaults), for the rest of the process (the
    /// CLI's `--timeout`).
    pub fn set_process_defaults(options: RemoteOptions) {
        *PROCESS_DEFAULTS
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(options);
    }
}

/// Runs `f`, one operation on `url`, within `deadline`: past it, the operation is dropped
/// (its requests cancelled) and the error says how long it was given.
pub(crate) async fn within<T>(
    url: &str,
    deadline: Duration,
    doing: &str,
    f: impl Future<Output = Result<T>>,
) -> Result<T> {
    tokio::time::timeout(deadline, f).await.unwrap_or_else(|_| {
        Err(Error::Remote {
            url: url.to_owned(),
            what: format!(
                "{doing}: not done within {} (the deadline of one operation, retries \
                     included; --timeout or RemoteOptions::deadline raises it)",
                seconds(deadline)
            ),
        })
    })
}

/// A duration as people read it: `1.5 s`, `60 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

/// Requests made and bytes received, for `--verbose` and for tests.
#[derive(Debug, Default)]
pub struct Stats {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Stats {
    /// Requests made so far (retries inside one request not counted).
    #[must_use]
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes of object data received so far.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn count(&self, bytes: u64) {
        for s in [self, &PROCESS] {
            s.requests.fetch_add(1, Ordering::Relaxed);
            s.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    fn received(&self, bytes: u64) {
        for s in [self, &PROCESS] {
            s.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}

/// Every request this process made, whatever object and file it was for.
pub(crate) static PROCESS: Stats = Stats {
    requests: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
};

/// The runtime every blocking call runs its requests on: two workers, as many as the
/// machines this is built for have cores; requests wait on the network, not the CPU.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tensorkit-remote")
            .enable_all()
            .build()
            .expect("a tokio runtime starts (threads and an epoll instance)")
    })
}

/// Runs `f` to completion from synchronous code: on the library's runtime, or — when the
/// caller is itself inside a runtime, where blocking its thread on another runtime is
/// refused — on a scoped thread of its own.
pub(crate) fn block_on<F>(f: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_err() {
        return runtime().block_on(f);
    }
    std::thread::scope(|s| {
        s.spawn(|| runtime().block_on(f))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Whether `s` is a URL `open` reads remotely (`file://` included, which it maps).
#[must_use]
pub fn is_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    !rest.is_empty()
        && matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http"
                | "https"
                | "hf"
                | "s3"
                | "s3a"
                | "gs"
                | "az"
                | "adl"
                | "azure"
                | "abfs"
                | "abfss"
                | "file"
        )
}

/// One object, opened: its length and version are those of the first response.
#[derive(Debug)]
pub(crate) struct Object {
    store: Arc<dyn ObjectStore>,
    location: StorePath,
    url: String,
    len: u64,
    etag: Option<String>,
    stats: Arc<Stats>,
    deadline: Duration,
}

fn store_for(
    url: &url::Url,
    options: &RemoteOptions,
    bearer: Option<&str>,
) -> Result<(Arc<dyn ObjectStore>, StorePath)> {
    // rustls needs one crypto provider chosen for the process; ring is ours. Another one
    // installed first by the application is as good, so the result is not checked.
    static PROVIDER: OnceLock<()> = OnceLock::new();
    PROVIDER.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let bad = |what: String| Error::Remote {
        url: url.to_string(),
        what,
    };
    let (scheme, path) =
        ObjectStoreScheme::parse(url).map_err(|e| bad(format!("not an object URL: {e}")))?;
    let location = StorePath::parse(path).map_err(|e| bad(format!("not an object path: {e}")))?;
    let retry = object_store::RetryConfig {
        max_retries: options.retries,
        retry_timeout: options.retry_timeout,
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
    };
    // The time limits go in as configuration keys, after the environment's and before the
    // caller's: client settings the environment gives (a proxy, certificates) are kept, and
    // a caller's `timeout` key wins over `RemoteOptions::timeout`.
    let millis = |d: Duration| format!("{}ms", d.as_millis());
    let ours = [
        (
            "timeout".to_owned(),
            millis(options.timeout.min(options.deadline)),
        ),
        (
            "read_timeout".to_owned(),
            millis(options.stall_timeout.min(options.deadline)),
        ),
        (
            "connect_timeout".to_owned(),
            millis(options.connect_timeout),
        ),
        ("allow_http".to_owned(), "true".to_owned()),
    ];
    let config: Vec<(String, String)> = ours
        .into_iter()
        .chain(
            options
                .config
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.clone())),
        )
        .collect();
    // Every backend's builder takes the same two things — retries, and configuration keys
    // (a key its own key type does not know is ignored, as `object_store::parse_url_opts`
    // ignores it) — through methods of the same names.
    macro_rules! configured {
        ($builder:expr) => {{
            let mut b = $builder.with_retry(retry);
            for (k, v) in &config {
                if let Ok(key) = k.parse() {
                    b = b.with_config(key, v);
                }
            }
            b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        }};
    }
    let built = match scheme {
        // Any server: the bytes as stored, never a compressed body to inflate (without the
        // header, any encoding is acceptable). The cloud stores' clients keep the options
        // their environment gave; an encoded answer from them is refused by `check_encoding`.
        ObjectStoreScheme::Http => configured!(
            object_store::http::HttpBuilder::new()
                .with_url(&url[..url::Position::BeforePath])
                .with_client_options(client_options(bearer)?)
        ),
        ObjectStoreScheme::AmazonS3 => {
            configured!(object_store::aws::AmazonS3Builder::from_env().with_url(url.as_str()))
        }
        ObjectStoreScheme::GoogleCloudStorage => configured!(
            object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url.as_str())
        ),
        ObjectStoreScheme::MicrosoftAzure => configured!(
            object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url.as_str())
        ),
        other => {
            return Err(bad(format!("{other:?} URLs are not read remotely")));
        }
    };
    let store = built.map_err(|e| bad(format!("cannot reach the store: {e}")))?;
    Ok((store, location))
}

/// Client options that ask for the stored bytes (`Accept-Encoding: identity`), with
/// `Authorization: Bearer <token>` when a token is given (the Hub's: the HTTP client drops it
/// on a redirect to another host, as the Hub's redirects to its storage are).
fn client_options(bearer: Option<&str>) -> Result<object_store::ClientOptions> {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::ACCEPT_ENCODING,
        reqwest::header::HeaderValue::from_static("identity"),
    );
    if let Some(token) = bearer {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| Error::Remote {
                url: "hf://".into(),
                what: "the Hugging Face token holds characters no HTTP header may".into(),
            })?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    Ok(object_store::ClientOptions::new().with_default_headers(headers))
}

impl Object {
    /// Opens the object at `url` with one request, which reads its first
    /// `options.read_ahead` bytes and learns its length and version — and, with `tail`, a
    /// second one at the same time for its last `options.read_ahead` bytes (where footers
    /// and indexes are), so that both ends arrive in one round trip. Returns what was read,
    /// each part with its offset.
    pub(crate) async fn open(
        url: &str,
        options: &RemoteOptions,
        tail: bool,
    ) -> Result<(Arc<Object>, Vec<(u64, Bytes)>)> {
        // An `hf://` path is read at the Hub's file URL, with the user's token; the object
        // keeps the path it was asked by, for messages and its set's other members.
        let hub = if super::hub::is_hub(url) {
            Some(super::hub::resolve(url)?)
        } else {
            None
        };
        let target = hub.as_ref().map_or(url, |h| h.url.as_str());
        let parsed = url::Url::parse(target).map_err(|e| Error::Remote {
            url: url.to_owned(),
            what: format!("not a URL: {e}"),
        })?;
        let token = hub.as_ref().and_then(|h| h.token.as_deref());
        let (store, location) = store_for(&parsed, options, token)?;
        let ahead = options.read_ahead.max(64);
        let get = |range| {
            store.get_opts(
                &location,
                GetOptions {
                    range: Some(range),
                    ..GetOptions::default()
                },
            )
        };
        let (first, last) = if tail {
            let (first, last) = futures::join!(
                get(GetRange::Bounded(0..ahead)),
                get(GetRange::Suffix(ahead))
            );
            (first, Some(last))
        } else {
            (get(GetRange::Bounded(0..ahead)).await, None)
        };
        let first = first.map_err(|e| request_error(url, "reading the first bytes", &e))?;
        let object = Arc::new(Object {
            store: Arc::clone(&store),
            location: location.clone(),
            url: url.to_owned(),
            len: first.meta.size,
            etag: first.meta.e_tag.clone(),
            stats: Arc::new(Stats::default()),
            deadline: options.deadline,
        });
        let len = object.len;
        let mut parts = vec![(
            0,
            object
                .body(first, 0..ahead.min(len), "reading the first bytes")
                .await?,
        )];
        // The last bytes only save a round trip: a store that cannot serve a suffix range
        // (Azure, servers that ignore `bytes=-n`) costs that round trip, nothing more.
        if let Some(Ok(last)) = last {
            let start = len.saturating_sub(ahead);
            if let Ok(b) = object
                .body(last, start..len, "reading the last bytes")
                .await
            {
                parts.push((start, b));
            }
        }
        Ok((object, parts))
    }

    /// The object's URL.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The object's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The requests and bytes counted for this object.
    pub(crate) fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// Runs `f`, one operation on this object, within the object's deadline ([`within`]).
    pub(crate) async fn within<T>(
        &self,
        doing: &str,
        f: impl Future<Output = Result<T>>,
    ) -> Result<T> {
        within(&self.url, self.deadline, doing, f).await
    }

    fn error(&self, what: String) -> Error {
        Error::Remote {
            url: self.url.clone(),
            what,
        }
    }

    fn options(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: self.etag.clone(),
            ..GetOptions::default()
        }
    }

    /// Checks a response's metadata against the object's and reads its body, which must be
    /// exactly `range`.
    async fn body(
        &self,
        response: object_store::GetResult,
        range: Range<u64>,
        what: &str,
    ) -> Result<Bytes> {
        let mut bytes = bytes::BytesMut::new();
        self.body_exactly(response, &range, what, &mut |chunk| {
            bytes.extend_from_slice(chunk);
            Ok(())
        })
        .await?;
        Ok(bytes.freeze())
    }

    /// Hands the body of `response`, an answer for `range`, to `sink` as it arrives, after
    /// checking that it is this object's version and not encoded: exactly the range's bytes,
    /// refused as soon as it passes them (a longer body is never read whole).
    async fn body_exactly(
        &self,
        response: object_store::GetResult,
        range: &Range<u64>,
        what: &str,
        sink: &mut (dyn FnMut(&[u8]) -> Result<()> + Send),
    ) -> Result<()> {
        self.check_same(&response.meta)?;
        self.check_encoding(&response)?;
        self.stats.count(0);
        let want = range.end - range.start;
        match self.body_at_most(response, want, what, sink).await? {
            None => Err(self.error(format!(
                "asked for bytes {}..{} ({want} bytes), the server sent more",
                range.start, range.end
            ))),
            Some(got) if got != want => Err(self.error(format!(
                "asked for bytes {}..{} ({want} bytes), the server sent {got}",
                range.start, range.end
            ))),
            Some(_) => Ok(()),
        }
    }

    /// Hands `response`'s body to `sink` as it arrives, counting what is received: how many
    /// bytes it held, or `None` as soon as it passes `most` (the rest is not read).
    async fn body_at_most(
        &self,
        response: object_store::GetResult,
        most: u64,
        what: &str,
        sink: &mut (dyn FnMut(&[u8]) -> Result<()> + Send),
    ) -> Result<Option<u64>> {
        let mut body = response.into_stream();
        let mut got = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| request_error(&self.url, what, &e))?;
            self.stats.received(chunk.len() as u64);
            got += chunk.len() as u64;
            if got > most {
                return Ok(None);
            }
            sink(&chunk)?;
        }
        Ok(Some(got))
    }

    /// Refuses a body the server encoded (`Content-Encoding: gzip`, ...): the bytes asked
    /// for are the stored ones, and inflating what a server sends is unbounded work.
    fn check_encoding(&self, response: &object_store::GetResult) -> Result<()> {
        match response
            .attributes
            .get(&object_store::Attribute::ContentEncoding)
        {
            Some(e) if !e.trim().eq_ignore_ascii_case("identity") && !e.trim().is_empty() => {
                Err(self.error(format!(
                    "the server sent its bytes with Content-Encoding {:?}, though the stored \
                     bytes (identity) were asked for; tensorkit does not inflate what a \
                     server sends",
                    &**e
                )))
            }
            _ => Ok(()),
        }
    }

    fn check_same(&self, meta: &object_store::ObjectMeta) -> Result<()> {
        if meta.size != self.len {
            return Err(self.error(format!(
                "the object changed while being read: it was {} bytes long, now {}",
                self.len, meta.size
            )));
        }
        if self.etag.is_some() && meta.e_tag.is_some() && meta.e_tag != self.etag {
            return Err(self.error(format!(
                "the object changed while being read: ETag {} became {}",
                self.etag.as_deref().unwrap_or_default(),
                meta.e_tag.as_deref().unwrap_or_default()
            )));
        }
        Ok(())
    }

    /// The whole object named as this one with `suffix` appended (a sidecar, in the same
    /// store, read with the same credentials), when it exists and is at most `most` bytes
    /// long; `None` when it does not exist, is longer, or cannot be read: a sidecar only
    /// saves requests.
    pub(crate) async fn sibling(&self, suffix: &str, most: u64) -> Option<Bytes> {
        let location = object_store::path::Path::from(format!("{}{suffix}", self.location));
        let response = self
            .store
            .get_opts(
                &location,
                GetOptions {
                    range: Some(GetRange::Bounded(0..most.saturating_add(1))),
                    ..GetOptions::default()
                },
            )
            .await;
        self.stats.count(0);
        let response = response.ok()?;
        if response.meta.size > most || self.check_encoding(&response).is_err() {
            return None;
        }
        let mut bytes = bytes::BytesMut::new();
        let mut keep = |chunk: &[u8]| {
            bytes.extend_from_slice(chunk);
            Ok(())
        };
        self.body_at_most(response, most, "reading a sidecar", &mut keep)
            .await
            .ok()
            .flatten()?;
        Some(bytes.freeze())
    }

    /// The bytes at `range`, in one request.
    pub(crate) async fn get(&self, range: Range<u64>) -> Result<Bytes> {
        if range.start > range.end || range.end > self.len {
            return Err(self.error(format!(
                "bytes {}..{} lie outside the object's {} bytes",
                range.start, range.end, self.len
            )));
        }
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let what = format!("reading bytes {}..{}", range.start, range.end);
        let response = self
            .store
            .get_opts(&self.location, self.options(range.clone()))
            .await
            .map_err(|e| request_error(&self.url, &what, &e))?;
        self.body(response, range, &what).await
    }

    /// The bytes of every range of `ranges`, in their order: ranges closer than
    /// [`MERGE_GAP`] are fetched as one request, and requests run concurrently.
    pub(crate) async fn get_many(&self, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let merged = merge(ranges);
        let fetched: Vec<Bytes> = futures::stream::iter(merged.iter().cloned())
            .map(|r| self.get(r))
            .buffered(CONCURRENT_REQUESTS)
            .try_collect()
            .await?;
        Ok(ranges
            .iter()
            .map(|r| {
                if r.is_empty() {
                    return Bytes::new();
                }
                let i = merged
                    .iter()
                    .position(|m| m.start <= r.start && r.end <= m.end)
                    .expect("every range lies in a merged range");
                let start = usize::try_from(r.start - merged[i].start).unwrap_or(usize::MAX);
                let len = usize::try_from(r.end - r.start).unwrap_or(usize::MAX);
                fetched[i].slice(start..start + len)
            })
            .collect())
    }

    /// Hands the bytes at `range` to `sink` as they arrive, in one request: memory stays
    /// at the network's chunk size whatever the range's length.
    pub(crate) async fn stream(
        &self,
        range: Range<u64>,
        sink: &mut (dyn FnMut(&[u8]) -> Result<()> + Send),
    ) -> Result<()> {
        if range.is_empty() {
            return Ok(());
        }
        let what = format!("reading bytes {}..{}", range.start, range.end);
        let response = self
            .store
            .get_opts(&self.location, self.options(range.clone()))
            .await
            .map_err(|e| request_error(&self.url, &what, &e))?;
        self.body_exactly(response, &range, &what, sink).await
    }
}

impl Object {
    /// The bytes at `range` as they arrive, for synchronous code: one request, read on the
    /// library's runtime, at most a few chunks ahead of the caller (memory stays bounded
    /// whatever the range's length). Stopping early cancels the request.
    pub(crate) fn stream_blocking(
        self: &Arc<Self>,
        range: Range<u64>,
    ) -> impl Iterator<Item = Result<Bytes>> + use<> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Bytes>>(4);
        let object = Arc::clone(self);
        runtime().spawn(async move {
            let mut send = |chunk: &[u8]| {
                tx.send(Ok(Bytes::copy_from_slice(chunk)))
                    .map_err(|_| object.error("the reader stopped".into()))
            };
            let what = format!("reading bytes {}..{}", range.start, range.end);
            let streamed = object.stream(range, &mut send);
            if let Err(e) = object.within(&what, streamed).await {
                // The reader may be gone already; then nobody needs the error.
                let _ = tx.send(Err(e));
            }
        });
        rx.into_iter()
    }
}

/// `ranges` sorted and merged where they overlap or lie closer than [`MERGE_GAP`]; empty
/// ranges need no request and are left out.
pub(crate) fn merge(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(MERGE_GAP) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

/// An `object_store` error as ours: what was being done, and what the store said, in words
/// a user can act on.
fn request_error(url: &str, doing: &str, e: &object_store::Error) -> Error {
    let said = match e {
        object_store::Error::NotFound { .. } => "not found (404)".to_owned(),
        object_store::Error::Precondition { .. } => {
            "the object changed while being read (its ETag no longer matches)".to_owned()
        }
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => {
            format!("access refused: {e}")
        }
        other => {
            let mut text = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(s) = source {
                let next = s.to_string();
                if !text.contains(&next) {
                    text.push_str(": ");
                    text.push_str(&next);
                }
                source = s.source();
            }
            text
        }
    };
    Error::Remote {
        url: url.to_owned(),
        what: format!("{doing}: {said}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for url in [
            "https://example.org/x.tgm",
            "http://127.0.0.1:8080/a/b.safetensors",
            "s3://bucket/key.zt",
            "gs://bucket/key",
            "az://container/blob",
            "file:///tmp/x.bt",
        ] {
            assert!(is_url(url), "{url}");
        }
        for path in ["x.tgm", "/tmp/x.bt", "C:\\x.bt", "weird://x", "https://"] {
            assert!(!is_url(path), "{path}");
        }
    }

    #[test]
    fn neighbouring_ranges_merge_and_distant_ones_do_not() {
        let far = 10 * MERGE_GAP;
        assert_eq!(
            merge(&[100..200, 0..50, 250..300, far..far + 1]),
            vec![0..300, far..far + 1]
        );
        assert_eq!(merge(&[0..10, 5..8]), vec![0..10]);
        assert!(merge(&[5..5, 7..7]).is_empty());
    }
}
