//! (f) Remote reads: the 2000-tensor files of (a), served from 127.0.0.1 by the tests' HTTP
//! server set to add 20 ms to every request (a nearby object store's latency), read through
//! range requests — and, side by side, downloaded whole first, then read from the local
//! file, as users without remote reads do.

use crate::measure::{Scale, row, time};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;
use tensor_testkit::http::{Faults, Server};

/// What the server adds to every request.
const LATENCY: Duration = Duration::from_millis(20);

/// The tensor every "get one" case reads.
const ONE: &str = "layer.1000.weight";

const OURS: &str = "tensorkit (range requests)";
const PEER: &str = "download first";

/// The files (a) wrote, by format.
const FILES: [(&str, &str); 5] = [
    ("safetensors", "many.safetensors"),
    ("BinTensors", "many.bt"),
    ("zTensor 0.1", "many.zt"),
    ("zTensor 2", "many.zt2"),
    ("Tensogram", "many.tgm"),
];

/// What `tensorkit inspect` shows of every tensor: name, dtype, shape.
fn listing(file: &tensorkit::File) -> Vec<(String, tensorkit::Dtype, Vec<u64>)> {
    file.tensors()
        .map(|t| (t.name().into_owned(), t.dtype(), t.shape().to_vec()))
        .collect()
}

fn get_one(file: &tensorkit::File) -> tensorkit::Tensor {
    file.get(ONE)
        .expect("the tensor")
        .to_tensor()
        .expect("its elements")
}

/// Downloads `url` whole into `to` with one plain HTTP/1.1 GET, as `curl -o` would.
fn download(url: &str, to: &Path) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let conn = TcpStream::connect(host).expect("the server");
    let mut out = conn.try_clone().expect("the connection");
    write!(
        out,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request");
    let mut reader = BufReader::with_capacity(1 << 20, conn);
    let mut len = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("the response");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse::<u64>().ok();
        }
    }
    let len = len.expect("a Content-Length");
    let mut file = BufWriter::with_capacity(1 << 20, std::fs::File::create(to).expect("a file"));
    let copied = std::io::copy(&mut reader.take(len), &mut file).expect("the body");
    assert_eq!(copied, len, "the download was cut short");
    file.flush().expect("the file");
}

/// (f) Inspect and get one tensor of each 2000-tensor file from (a) over a 20 ms link:
/// through range requests, and by downloading the file first.
pub(crate) fn remote(scale: Scale, dir: &Path) -> Vec<Value> {
    let server = Server::start(dir);
    server.set_faults(Faults {
        delay: LATENCY,
        ..Faults::default()
    });
    let local = dir.join("downloaded");
    let mut rows = Vec::new();
    for (label, name) in FILES {
        let url = server.url(name);
        let file_bytes = std::fs::metadata(dir.join(name)).expect("(a)'s file").len();
        let want = listing(&tensorkit::open(dir.join(name)).expect("the local file"));
        let extra = |requests: u64, bytes: u64| json!({"file_bytes": file_bytes, "requests": requests, "bytes_received": bytes});
        // One run counted, for the requests and bytes each way takes.
        let counted = |f: &dyn Fn()| {
            server.reset();
            f();
            (server.requests(), server.bytes())
        };

        let inspect = || {
            let f = tensorkit::open(&url).expect("the remote file");
            assert_eq!(listing(&f), want, "{label}: the remote listing differs");
        };
        let (r, b) = counted(&inspect);
        rows.push(row(
            "f",
            &format!("inspect a 2000-tensor file, {label}"),
            OURS,
            &time(scale.runs, inspect),
            None,
            extra(r, b),
        ));
        let get = || get_one(&tensorkit::open(&url).expect("the remote file"));
        let (r, b) = counted(&|| {
            get();
        });
        rows.push(row(
            "f",
            &format!("get one tensor of a 2000-tensor file, {label}"),
            OURS,
            &time(scale.runs, get),
            None,
            extra(r, b),
        ));

        let inspect_downloaded = || {
            download(&url, &local);
            let f = tensorkit::open(&local).expect("the downloaded file");
            assert_eq!(listing(&f), want, "{label}: the downloaded listing differs");
        };
        let (r, b) = counted(&inspect_downloaded);
        rows.push(row(
            "f",
            &format!("inspect a 2000-tensor file, {label}"),
            PEER,
            &time(scale.runs, inspect_downloaded),
            None,
            extra(r, b),
        ));
        let get_downloaded = || {
            download(&url, &local);
            get_one(&tensorkit::open(&local).expect("the downloaded file"))
        };
        let (r, b) = counted(&|| {
            get_downloaded();
        });
        rows.push(row(
            "f",
            &format!("get one tensor of a 2000-tensor file, {label}"),
            PEER,
            &time(scale.runs, get_downloaded),
            None,
            extra(r, b),
        ));
    }
    let _ = std::fs::remove_file(&local);
    rows
}
