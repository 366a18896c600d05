//! An HTTP/1.1 server on `127.0.0.1` for remote-read tests: it serves files from a folder
//! with `Range` (one range per request), `ETag` and `If-Match`, counts every request and
//! every body byte it sends, and misbehaves on request — 404s, 5xx answers, short bodies,
//! `Range` ignored, a version that changes, a delay per request, bodies trickled a byte at a
//! time, gzip bombs — so that each way a real server can fail is tried without the internet.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server misbehaves.
#[derive(Clone, Debug, Default, PartialEq)]
#[allow(clippy::struct_excessive_bools)] // One switch per way a server misbehaves.
pub struct Faults {
    /// Answer this many requests with `503` before answering properly.
    pub unavailable_first: u64,
    /// Answer every request with `500`.
    pub always_failing: bool,
    /// Send this many bytes fewer than the body promises, then close the connection.
    pub short_by: u64,
    /// Answer range requests with `200` and the whole file.
    pub ignore_range: bool,
    /// Answer suffix ranges (`bytes=-n`, the last n bytes) with `200` and the whole file,
    /// as some servers do (and Azure's blob store refuses them).
    pub no_suffix_ranges: bool,
    /// Wait this long before answering each request.
    pub delay: Duration,
    /// After this many requests, report another `ETag` (the object was replaced).
    pub new_version_after: Option<u64>,
    /// Send the body one byte at a time, this long apart.
    pub trickle: Option<Duration>,
    /// Send this many bytes more than the range asked for (the `Content-Length` says so).
    pub long_by: u64,
    /// Answer a range with a `Content-Range` that starts one byte later than asked.
    pub wrong_content_range: bool,
    /// Say in `Content-Range` that the object is this long.
    pub claimed_len: Option<u64>,
    /// Answer every request with `302 Found` and this `Location`.
    pub redirect_to: Option<String>,
    /// Answer `401 Unauthorized` unless the request carries `Authorization: Bearer` and this
    /// token (as the Hugging Face Hub answers for a gated or private repository).
    pub bearer: Option<String>,
    /// Answer with this `Content-Encoding` and a gzip stream that inflates to 4 GiB of
    /// zeros in place of the bytes asked for (the header promising that stream's length).
    pub content_encoding: Option<String>,
}

/// A gzip stream of 4 GiB of zeros, made once (about 4 MiB): one deflate block of 1 MiB of
/// zeros, flushed so that it stands alone, 4096 times, then an empty final block and the
/// trailer (the CRC of 4 GiB of zeros, combined from the block's, and the size mod 2³²).
fn gzip_bomb() -> &'static [u8] {
    static BOMB: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BOMB.get_or_init(|| {
        const BLOCK: usize = 1 << 20;
        const BLOCKS: usize = 4096;
        let zeros = vec![0u8; BLOCK];
        let mut z = flate2::Compress::new(flate2::Compression::best(), false);
        let mut block = Vec::with_capacity(BLOCK);
        z.compress_vec(&zeros, &mut block, flate2::FlushCompress::Full)
            .expect("compressing into memory");
        let mut crc = flate2::Crc::new();
        let mut one = flate2::Crc::new();
        one.update(&zeros);
        let mut bomb = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff".to_vec();
        for _ in 0..BLOCKS {
            bomb.extend_from_slice(&block);
            crc.combine(&one);
        }
        // A final, empty block with fixed Huffman codes.
        bomb.extend_from_slice(&[0x03, 0x00]);
        bomb.extend_from_slice(&crc.sum().to_le_bytes());
        bomb.extend_from_slice(&0u32.to_le_bytes());
        bomb
    })
}

struct State {
    root: PathBuf,
    faults: Mutex<Faults>,
    requests: AtomicU64,
    bytes: AtomicU64,
    log: Mutex<Vec<String>>,
    stop: AtomicBool,
}

/// A running server; it stops when dropped.
pub struct Server {
    state: Arc<State>,
    port: u16,
}

impl Server {
    /// Serves the files of `root` at `http://127.0.0.1:<port>/<name>`.
    ///
    /// # Panics
    /// When no port on the loopback interface can be bound.
    #[must_use]
    pub fn start(root: impl Into<PathBuf>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("a bound address").port();
        let state = Arc::new(State {
            root: root.into(),
            faults: Mutex::new(Faults::default()),
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            log: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&state);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(conn) = conn {
                    let s = Arc::clone(&s);
                    std::thread::spawn(move || serve(&s, conn));
                }
            }
        });
        Server { state, port }
    }

    /// The URL of `name`.
    #[must_use]
    pub fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    /// Misbehaves as `faults` says from now on.
    pub fn set_faults(&self, faults: Faults) {
        *self
            .state
            .faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = faults;
    }

    /// Requests answered so far.
    #[must_use]
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// Body bytes sent so far (a chunk counts as it starts being sent).
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.state.bytes.load(Ordering::SeqCst)
    }

    /// Every request line and range so far, for messages.
    #[must_use]
    pub fn log(&self) -> Vec<String> {
        self.state
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Forgets the counts.
    pub fn reset(&self) {
        self.state.requests.store(0, Ordering::SeqCst);
        self.state.bytes.store(0, Ordering::SeqCst);
        self.state
            .log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(s: &State, conn: TcpStream) {
    // Headers and body go out in separate writes: without this, Nagle's algorithm holds the
    // body back for the client's delayed acknowledgement (40 ms), as no real server does.
    let _ = conn.set_nodelay(true);
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end().to_owned();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let header = |k: &str| headers.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let n = s.requests.fetch_add(1, Ordering::SeqCst) + 1;
        let faults = s
            .faults
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        s.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(format!(
                "{} {} accept-encoding={} authorization={}",
                line.trim_end(),
                header("range").unwrap_or_default(),
                header("accept-encoding").unwrap_or_default(),
                header("authorization").map_or("none", |a| if a.starts_with("Bearer ") {
                    "bearer"
                } else {
                    "other"
                })
            ));
        std::thread::sleep(faults.delay);
        let mut parts = line.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let name = target
            .trim_start_matches('/')
            .split('?')
            .next()
            .unwrap_or("");
        if faults.always_failing || n <= faults.unavailable_first {
            let code = if faults.always_failing {
                "500 Internal Server Error"
            } else {
                "503 Service Unavailable"
            };
            if reply(&mut out, code, &[], b"try again").is_err() {
                return;
            }
            continue;
        }
        if let Some(token) = &faults.bearer
            && header("authorization").as_deref() != Some(format!("Bearer {token}").as_str())
        {
            if reply(&mut out, "401 Unauthorized", &[], b"a token is needed").is_err() {
                return;
            }
            continue;
        }
        if let Some(location) = &faults.redirect_to {
            if reply(&mut out, "302 Found", &[("Location", location)], b"").is_err() {
                return;
            }
            continue;
        }
        let path = s.root.join(name);
        let Ok(mut file) = std::fs::File::open(&path).and_then(|f| {
            if name.is_empty() || name.contains("..") || !f.metadata()?.is_file() {
                Err(std::io::Error::other("not served"))
            } else {
                Ok(f)
            }
        }) else {
            if reply(&mut out, "404 Not Found", &[], b"no such object").is_err() {
                return;
            }
            continue;
        };
        let len = file.metadata().map_or(0, |m| m.len());
        let version = match faults.new_version_after {
            Some(k) if n > k => 2,
            _ => 1,
        };
        let etag = format!("\"{len:x}-v{version}\"");
        if header("if-match").is_some_and(|m| m != etag && m != "*") {
            if reply(&mut out, "412 Precondition Failed", &[], b"").is_err() {
                return;
            }
            continue;
        }
        let range = header("range")
            .filter(|_| !faults.ignore_range)
            .filter(|r| !(faults.no_suffix_ranges && r.starts_with("bytes=-")))
            .and_then(|r| parse_range(&r, len));
        let (status, start, end) = match range {
            Some(Ok((a, b))) => ("206 Partial Content", a, b),
            Some(Err(())) => {
                let cr = format!("bytes */{len}");
                if reply(
                    &mut out,
                    "416 Range Not Satisfiable",
                    &[("Content-Range", &cr)],
                    b"",
                )
                .is_err()
                {
                    return;
                }
                continue;
            }
            None => ("200 OK", 0, len),
        };
        let shown = u64::from(faults.wrong_content_range);
        let total = faults.claimed_len.unwrap_or(len);
        let content_range = format!(
            "bytes {}-{}/{total}",
            start + shown,
            (end + shown).saturating_sub(1)
        );
        let mut extra: Vec<(&str, &str)> = vec![("ETag", &etag), ("Accept-Ranges", "bytes")];
        if status.starts_with("206") {
            extra.push(("Content-Range", &content_range));
        }
        if let Some(encoding) = &faults.content_encoding {
            extra.push(("Content-Encoding", encoding));
            let bomb = gzip_bomb();
            let head = head_of(status, &extra, bomb.len() as u64);
            if out.write_all(head.as_bytes()).is_err() {
                return;
            }
            s.bytes.fetch_add(bomb.len() as u64, Ordering::SeqCst);
            if method != "HEAD" && out.write_all(bomb).is_err() {
                return;
            }
            continue;
        }
        let body_len = end - start + faults.long_by;
        let head = head_of(status, &extra, body_len);
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        if method == "HEAD" {
            continue;
        }
        let send = body_len.saturating_sub(faults.short_by);
        if file.seek(SeekFrom::Start(start)).is_err() {
            return;
        }
        // Past the file's end (a longer body than asked), zeros.
        let mut left = send.min(len - start);
        let mut buf = vec![0u8; 1 << 16];
        while left > 0 {
            let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
            let Ok(got) = file.read(&mut buf[..want]) else {
                return;
            };
            if got == 0 {
                return;
            }
            // Counted before it is written: the client may have it (and the test read the
            // count) before `write_all` returns here.
            s.bytes.fetch_add(got as u64, Ordering::SeqCst);
            if let Some(gap) = faults.trickle {
                for b in &buf[..got] {
                    if s.stop.load(Ordering::Relaxed) || out.write_all(&[*b]).is_err() {
                        return;
                    }
                    std::thread::sleep(gap);
                }
            } else if out.write_all(&buf[..got]).is_err() {
                return;
            }
            left -= got as u64;
        }
        if faults.long_by > 0 {
            let extra = usize::try_from(send - (len - start).min(send)).unwrap_or(0);
            s.bytes.fetch_add(extra as u64, Ordering::SeqCst);
            if out.write_all(&vec![0u8; extra]).is_err() {
                return;
            }
        }
        if faults.short_by > 0 {
            // The promised length was not sent: the connection ends early.
            let _ = out.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}

fn head_of(status: &str, extra: &[(&str, &str)], body_len: u64) -> String {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {body_len}\r\n");
    for (k, v) in extra {
        let _ = write!(head, "{k}: {v}\r\n");
    }
    head.push_str("\r\n");
    head
}

fn reply(
    out: &mut TcpStream,
    status: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<()> {
    out.write_all(head_of(status, extra, body.len() as u64).as_bytes())?;
    out.write_all(body)
}

/// `bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `len` bytes: the half-open range,
/// or `Err` when it cannot be satisfied; `None` for anything else (answered whole).
fn parse_range(r: &str, len: u64) -> Option<Result<(u64, u64), ()>> {
    let spec = r.strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    Some(match (a.parse::<u64>().ok(), b.parse::<u64>().ok()) {
        (Some(a), _) if a >= len => Err(()),
        (Some(a), Some(b)) if b >= a => Ok((a, (b + 1).min(len))),
        (Some(a), None) if b.is_empty() => Ok((a, len)),
        (None, Some(n)) if a.is_empty() && n > 0 => Ok((len.saturating_sub(n), len)),
        _ => return None,
    })
}

/// A server process of a test's own (nginx, an S3 stand-in), stopped when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_gzip_bomb_inflates_to_4_gib_of_zeros() {
        use std::io::Read;
        let bomb = super::gzip_bomb();
        assert!(bomb.len() < 8 << 20, "{}", bomb.len());
        let mut inflated = 0u64;
        let mut d = flate2::read::GzDecoder::new(bomb);
        let mut buf = vec![0u8; 1 << 20];
        let zeros = vec![0u8; 1 << 20];
        loop {
            let n = d.read(&mut buf).expect("a valid gzip stream");
            if n == 0 {
                break;
            }
            assert!(buf[..n] == zeros[..n]);
            inflated += n as u64;
        }
        assert_eq!(inflated, 4 << 30);
    }
}
