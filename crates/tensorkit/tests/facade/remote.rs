//! Remote reads against servers started here, on 127.0.0.1: `tensor_testkit`'s counting server
//! (request and byte bounds, and every way a server can misbehave) and, when the machine has
//! it, nginx.
#![cfg(feature = "remote")]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tensor_testkit::http::{Faults, Server};
use tensorkit::remote::RemoteOptions;
use tensorkit::{Dtype, ErrorKind, Format, Kinded, ReadOptions, TensorView, WriteOptions};

const TENSORS: usize = 2000;
/// 2000 tensors of 32 × 1024 float32: 128 KiB each, 250 MiB in all.
const SHAPE: [u64; 2] = [32, 1024];
const TENSOR_BYTES: usize = 32 * 1024 * 4;

/// The elements of every tensor, each tensor's distinct.
fn elements() -> &'static [u8] {
    static DATA: OnceLock<Vec<u8>> = OnceLock::new();
    DATA.get_or_init(|| {
        (0..TENSORS * TENSOR_BYTES / 4)
            .flat_map(|i| (i as f32).to_le_bytes())
            .collect()
    })
}

fn name(i: usize) -> String {
    format!("layers.{i}.weight")
}

/// A 250 MiB file of 2000 tensors in `format`, in `dir`.
fn big_file(dir: &Path, format: Format) -> PathBuf {
    let path = dir.join(format!("big.{}", format.extension()));
    let data = elements();
    let tensors = (0..TENSORS).map(|i| {
        let bytes = &data[i * TENSOR_BYTES..(i + 1) * TENSOR_BYTES];
        (
            name(i),
            TensorView::new(bytes, Dtype::Float32, &SHAPE, tensorkit::ByteOrder::Little).unwrap(),
        )
    });
    tensorkit::save_tensors(&path, tensors, &WriteOptions::for_format(format)).unwrap();
    path
}

/// Listing takes at most 3 requests and under 1 % of the file; one tensor then takes one
/// more request and its own bytes plus at most 64 KiB; its values are the local file's.
fn bounded(format: Format) {
    let dir = tempfile::tempdir().unwrap();
    let path = big_file(dir.path(), format);
    let file_len = std::fs::metadata(&path).unwrap().len();
    let server = Server::start(dir.path());
    let url = server.url(path.file_name().unwrap().to_str().unwrap());

    let file = tensorkit::open(&url).unwrap();
    let (listed_requests, listed_bytes) = (server.requests(), server.bytes());
    assert_eq!(file.len(), TENSORS);
    assert_eq!(file.format(), format);
    let mut names: Vec<String> = file.tensors().map(|t| t.name().into_owned()).collect();
    names.sort();
    let mut want: Vec<String> = (0..TENSORS).map(name).collect();
    want.sort();
    assert_eq!(names, want);
    assert!(
        listed_requests <= 3,
        "{}: listing took {listed_requests} requests: {:?}",
        format.id(),
        server.log()
    );
    assert!(
        listed_bytes * 100 < file_len,
        "{}: listing read {listed_bytes} of {file_len} bytes",
        format.id()
    );
    let t = file.get(&name(1234)).unwrap();
    assert_eq!((t.dtype(), t.shape()), (Dtype::Float32, &SHAPE[..]));
    let got = t.to_tensor().unwrap();
    let want = &elements()[1234 * TENSOR_BYTES..1235 * TENSOR_BYTES];
    assert!(got.data() == want, "{}: tensor 1234 differs", format.id());
    let (get_requests, get_bytes) = (
        server.requests() - listed_requests,
        server.bytes() - listed_bytes,
    );
    assert_eq!(get_requests, 1, "{}: {:?}", format.id(), server.log());
    assert!(
        get_bytes <= TENSOR_BYTES as u64 + (64 << 10),
        "{}: one tensor read {get_bytes} bytes",
        format.id()
    );
    let transfer = file.transfer().unwrap();
    assert_eq!(transfer.requests, server.requests());
    assert_eq!(transfer.bytes, server.bytes());

    // Converting the whole file reads each byte about once in few requests, although the
    // safetensors writer asks for the tensors by name ("layers.10" before "layers.2"), not
    // in the file's order; the result is the local conversion's, byte for byte.
    let before = (server.requests(), server.bytes());
    let out = dir.path().join("remote.safetensors");
    let to_safetensors = tensorkit::WriteOptions::for_format(Format::SAFETENSORS);
    tensorkit::save(&out, &file, &to_safetensors).unwrap();
    let (requests, bytes) = (server.requests() - before.0, server.bytes() - before.1);
    assert!(
        requests <= 64 && bytes <= file_len + file_len / 50,
        "{}: converting took {requests} requests and {bytes} bytes for a {file_len}-byte file",
        format.id()
    );
    let local = dir.path().join("local.safetensors");
    tensorkit::save(&local, &tensorkit::open(&path).unwrap(), &to_safetensors).unwrap();
    assert!(
        same_bytes(&out, &local),
        "{}: the remote conversion differs from the local one",
        format.id()
    );
}

/// Whether two files hold the same bytes (compared in chunks).
fn same_bytes(one: &Path, other: &Path) -> bool {
    use std::io::Read;
    let mut files = [one, other].map(|p| std::fs::File::open(p).unwrap());
    let mut bufs = [vec![0u8; 1 << 20], vec![0u8; 1 << 20]];
    loop {
        let [first, second] = &mut files;
        let [mine, theirs] = &mut bufs;
        let got = first.read(mine).unwrap();
        if got == 0 {
            return second.read(theirs).unwrap() == 0;
        }
        if second.read_exact(&mut theirs[..got]).is_err() || mine[..got] != theirs[..got] {
            return false;
        }
    }
}

#[test]
fn safetensors_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::SAFETENSORS);
}

#[test]
fn bintensors_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::BINTENSORS);
}

#[test]
fn ztensor_0_1_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::ZTENSOR_0_1);
}

#[test]
fn ztensor_2_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::ZTENSOR_2);
}

#[test]
fn tensogram_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::TENSOGRAM);
}

#[test]
fn gguf_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::GGUF);
}

#[test]
fn netcdf_lists_and_gets_within_the_bounds() {
    let _running = crate::running();
    bounded(Format::NETCDF);
}

/// Every NetCDF file netCDF4-python wrote reads remotely as locally — NetCDF-3 record
/// variables viewed over their fetched records, booleans checked; NetCDF-4 listed from its
/// metadata, contiguous variables fetched alone, chunked ones decoded — with a read-ahead
/// small enough that the header takes more than one read, listing in at most three.
#[test]
fn netcdf_files_read_remotely_as_locally() {
    let _running = crate::running();
    for dir in ["netcdf/reference", "netcdf/reference4"] {
        netcdf_dir_remotely_as_locally(&tensor_testkit::testdata().join(dir));
    }
}

/// A NetCDF-4 file of 500 kB whose metadata comes first lists from its first bytes, and its
/// contiguous variable is fetched alone, in one request.
#[test]
fn a_netcdf4_file_lists_from_its_metadata_and_fetches_a_variable_alone() {
    let _running = crate::running();
    let root = tensor_testkit::testdata().join("hdf5/reference");
    let len = std::fs::metadata(root.join("netcdf4_remote.nc"))
        .unwrap()
        .len();
    let server = Server::start(&root);
    let file = tensorkit::open(server.url("netcdf4_remote.nc")).unwrap();
    let (requests, bytes) = (server.requests(), server.bytes());
    assert!(
        requests <= 3 && bytes * 4 < len,
        "listing: {requests} requests, {bytes} of {len} bytes: {:?}",
        server.log()
    );
    let local = tensorkit::open(root.join("netcdf4_remote.nc")).unwrap();
    let t = file.get("contiguous").unwrap().to_tensor().unwrap();
    assert_eq!(t, local.get("contiguous").unwrap().to_tensor().unwrap());
    assert_eq!(server.requests() - requests, 1, "{:?}", server.log());
    let c = file.get("chunked").unwrap().to_tensor().unwrap();
    assert_eq!(c, local.get("chunked").unwrap().to_tensor().unwrap());
}

fn netcdf_dir_remotely_as_locally(root: &std::path::Path) {
    let server = Server::start(root);
    let remote = RemoteOptions {
        read_ahead: 64,
        ..RemoteOptions::default()
    };
    for path in tensor_testkit::files_with_extension(root, "nc") {
        let name = path.file_name().unwrap().to_str().unwrap();
        let local = tensorkit::open(&path).unwrap();
        let before = server.requests();
        let remote = tensorkit::open_url_with(&server.url(name), &ReadOptions::default(), &remote)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            server.requests() - before <= 3,
            "{name}: {:?}",
            server.log()
        );
        assert_eq!(remote.metadata(), local.metadata(), "{name}");
        assert_eq!(remote.len(), local.len(), "{name}");
        for (a, b) in local.tensors().zip(remote.tensors()) {
            // Attributes compared as printed: they may hold NaN.
            assert_eq!(
                format!("{:?}", (a.name(), a.dtype(), a.shape(), a.attributes())),
                format!("{:?}", (b.name(), b.dtype(), b.shape(), b.attributes())),
                "{name}"
            );
            assert_eq!(
                a.to_tensor().unwrap(),
                b.to_tensor().unwrap(),
                "{name}: {}",
                a.name()
            );
        }
    }
}

/// A model whose header holds a large vocabulary (about 10 MB of metadata before the tensor
/// infos) still lists in at most three requests: each asks for four times what is held.
#[test]
fn a_gguf_header_of_megabytes_lists_in_three_requests() {
    use tensorkit::gguf::{Array, Value, ValueType, Writer};
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let tokens: Vec<Value<'static>> = (0..300_000)
        .map(|i| Value::String(format!("token-{i:08}-of-the-vocabulary").into()))
        .collect();
    let mut w = Writer::new();
    w.metadata("general.architecture", Value::String("llama".into()));
    w.metadata(
        "tokenizer.ggml.tokens",
        Value::Array(Array {
            item_type: ValueType::String,
            items: tokens,
        }),
    );
    let data = vec![0u8; 64 * 4];
    for i in 0..300 {
        w.dense(
            format!("blk.{i}.weight"),
            &[64],
            Dtype::Float32,
            data.as_slice(),
        )
        .unwrap();
    }
    let path = dir.path().join("vocab.gguf");
    std::fs::write(&path, w.to_vec().unwrap()).unwrap();
    let header_bytes = std::fs::metadata(&path).unwrap().len() - 300 * 256;
    assert!(header_bytes > 10_000_000, "{header_bytes}");
    let server = Server::start(dir.path());
    let file = tensorkit::open(server.url("vocab.gguf")).unwrap();
    assert_eq!(file.len(), 300);
    assert!(server.requests() <= 3, "{:?}", server.log());
}

/// Every GGUF file gguf-py wrote reads remotely as locally — quantized tensors dequantized
/// from their fetched blocks, a shard of a split set opening the whole set as a local shard
/// does — with a read-ahead small enough that the header takes more than one read, and
/// listing in at most three per file.
#[test]
fn gguf_files_read_remotely_as_locally() {
    let _running = crate::running();
    let root = tensor_testkit::testdata().join("gguf/reference");
    let server = Server::start(&root);
    let remote = RemoteOptions {
        read_ahead: 64,
        ..RemoteOptions::default()
    };
    for path in tensor_testkit::files_with_extension(&root, "gguf") {
        let name = path.file_name().unwrap().to_str().unwrap();
        let files = if name.starts_with("split-") { 3 } else { 1 };
        let local = tensorkit::open(&path).unwrap();
        let before = server.requests();
        let url = server.url(name);
        let remote = tensorkit::open_url_with(&url, &ReadOptions::default(), &remote)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            server.requests() - before <= 3 * files,
            "{name}: {:?}",
            server.log()
        );
        assert_eq!(remote.metadata(), local.metadata(), "{name}");
        assert_eq!(remote.len(), local.len(), "{name}");
        for (a, b) in local.tensors().zip(remote.tensors()) {
            assert_eq!(
                (a.name(), a.dtype(), a.shape(), a.encoding()),
                (b.name(), b.dtype(), b.shape(), b.encoding()),
                "{name}"
            );
            assert_eq!(
                a.to_tensor().unwrap(),
                b.to_tensor().unwrap(),
                "{name}: {}",
                a.name()
            );
        }
    }
}

/// Every conformance fixture reads remotely as it reads locally: names, dtypes, shapes and
/// every tensor's bytes (small files are held whole after the first read; the larger ones go
/// through the listing and per-tensor fetches).
#[test]
fn every_fixture_reads_remotely_as_locally() {
    let _running = crate::running();
    let root = tensor_testkit::testdata();
    let server = Server::start(&root);
    let mut files = Vec::new();
    for sub in ["safetensors", "bintensors", "ztensor", "tensogram"] {
        for ext in ["safetensors", "bt", "bintensors", "zt", "tgm"] {
            files.extend(tensor_testkit::files_with_extension(
                &tensor_testkit::conformance(sub),
                ext,
            ));
        }
    }
    assert!(files.len() > 20, "fixtures: {}", files.len());
    // A small read-ahead, so that most fixtures are listed rather than held whole.
    let remote = RemoteOptions {
        read_ahead: 256,
        ..RemoteOptions::default()
    };
    for path in files {
        let Ok(local) = tensorkit::open(&path) else {
            continue;
        };
        let rel = path.strip_prefix(&root).unwrap().to_str().unwrap();
        let url = server.url(rel);
        let remote = tensorkit::open_url_with(&url, &ReadOptions::default(), &remote)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(remote.len(), local.len(), "{rel}");
        for (a, b) in local.tensors().zip(remote.tensors()) {
            assert_eq!(a.name(), b.name(), "{rel}");
            assert_eq!((a.dtype(), a.shape()), (b.dtype(), b.shape()), "{rel}");
            match a.to_tensor() {
                Ok(ta) => {
                    let tb = b
                        .to_tensor()
                        .unwrap_or_else(|e| panic!("{rel} {}: {e}", a.name()));
                    assert!(ta.data() == tb.data(), "{rel} {}", a.name());
                    let mut streamed = vec![0u8; usize::try_from(b.byte_len()).unwrap()];
                    b.read_into(&mut streamed).unwrap();
                    assert!(streamed == ta.data(), "{rel} {} (streamed)", a.name());
                }
                Err(e) => {
                    let r = b.to_tensor().expect_err(rel);
                    assert_eq!(r.kind(), e.kind(), "{rel} {}: {r}", a.name());
                }
            }
        }
    }
}

/// A damaged tensor is found remotely as locally: the hash or checksum of the one tensor
/// fetched is checked.
#[test]
fn damage_in_one_tensor_is_found_when_it_is_fetched() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    for format in [Format::TENSOGRAM, Format::ZTENSOR_0_1, Format::ZTENSOR_2] {
        let path = dir.path().join(format!("damaged.{}", format.extension()));
        crate::damaged(&path, format);
        let server = Server::start(dir.path());
        let remote = RemoteOptions {
            read_ahead: 1024,
            ..RemoteOptions::default()
        };
        let url = server.url(path.file_name().unwrap().to_str().unwrap());
        let file = tensorkit::open_url_with(&url, &ReadOptions::default(), &remote).unwrap();
        assert!(
            file.get("t1").unwrap().to_tensor().is_ok(),
            "{}",
            format.id()
        );
        let e = file.get("t2").unwrap().to_tensor().unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::ChecksumMismatch,
            "{}: {e}",
            format.id()
        );
    }
}

/// A Tensogram message whose metadata does not give its objects' dtype and shape
/// (`_reserved_.tensor`, which some writers leave out) still lists remotely: the object
/// frames are fetched to read their descriptors, in one more round trip.
#[test]
fn a_tensogram_message_without_reserved_layouts_lists_from_its_frames() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.tgm");
    let data = elements();
    let tensors = (0..8).map(|i| {
        let v = TensorView::new(
            &data[i * 65536..(i + 1) * 65536],
            Dtype::Float32,
            &[128, 128],
            tensorkit::ByteOrder::Little,
        )
        .unwrap();
        (format!("t{i}"), v)
    });
    tensorkit::save_tensors(&path, tensors, &WriteOptions::for_format(Format::TENSOGRAM)).unwrap();
    // Rename the key in place (same length, the metadata frame's hash no longer checked):
    // the metadata now says nothing of the objects' layouts.
    let mut bytes = std::fs::read(&path).unwrap();
    let mut renamed = 0;
    while let Some(at) = bytes.windows(10).position(|w| w == b"_reserved_") {
        bytes[at..at + 10].copy_from_slice(b"_elsewise_");
        renamed += 1;
    }
    assert!(renamed >= 8, "{renamed}");
    std::fs::write(&path, &bytes).unwrap();
    let server = Server::start(dir.path());
    let url = server.url("plain.tgm");
    let unverified = ReadOptions {
        verify: tensorkit::Verify::Never,
        ..ReadOptions::default()
    };
    let remote = RemoteOptions {
        read_ahead: 1024,
        ..RemoteOptions::default()
    };
    let file = tensorkit::open_url_with(&url, &unverified, &remote).unwrap();
    let listed = server.requests();
    assert!(listed <= 5, "{:?}", server.log());
    let local = tensorkit::open_with(&path, &unverified).unwrap();
    assert_eq!(file.len(), 8);
    for (r, l) in file.tensors().zip(local.tensors()) {
        assert_eq!(
            (r.name(), r.dtype(), r.shape()),
            (l.name(), l.dtype(), l.shape())
        );
        assert_eq!(r.to_tensor().unwrap().data(), l.to_tensor().unwrap().data());
    }
}

/// A remote object read by ranges: its headers as the front door walks them (every
/// message's preamble held, the objects' frames not), and any ranges of its bytes.
#[test]
fn a_remote_object_gives_its_headers_and_any_ranges() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let path = big_file(dir.path(), Format::TENSOGRAM);
    let bytes = std::fs::read(&path).unwrap();
    let server = Server::start(dir.path());
    let url = server.url(path.file_name().unwrap().to_str().unwrap());
    let remote = RemoteOptions {
        read_ahead: 4096,
        ..RemoteOptions::default()
    };
    let object = tensorkit::remote::RemoteObject::open(&url, &remote).unwrap();
    assert_eq!(object.len(), bytes.len() as u64);
    assert_eq!(object.url(), url);
    let headers = object
        .headers(Format::TENSOGRAM, &ReadOptions::default())
        .unwrap();
    let fetched = server.bytes();
    assert!(
        fetched < bytes.len() as u64 / 10,
        "{fetched} of {}",
        bytes.len()
    );
    assert_eq!(headers.bytes().len(), bytes.len());
    assert!(headers.holds(0..24));
    assert_eq!(headers.bytes()[..24], bytes[..24]);
    assert!(!headers.holds(0..bytes.len() as u64));
    let mid = bytes.len() as u64 / 2;
    assert_eq!(
        &object.read(mid..mid + 100).unwrap()[..],
        &bytes[mid as usize..mid as usize + 100]
    );
    let many = object.read_many(&[0..8, mid..mid + 8, 16..24]).unwrap();
    assert!(many.iter().all(|b| b.len() == 8));
    assert_eq!(&many[2][..], &bytes[16..24]);
    let beyond = object.read(0..bytes.len() as u64 + 1).unwrap_err();
    assert!(
        beyond.to_string().contains("outside the object"),
        "{beyond}"
    );
}

fn small_file(dir: &Path) -> PathBuf {
    let path = dir.join("small.safetensors");
    let data: Vec<u8> = (0..1_000_000u32).flat_map(u32::to_le_bytes).collect();
    let v = TensorView::new(
        &data,
        Dtype::Uint32,
        &[1_000_000],
        tensorkit::ByteOrder::Little,
    )
    .unwrap();
    tensorkit::save_tensors(&path, [("x", v)], &WriteOptions::default()).unwrap();
    path
}

fn quick() -> RemoteOptions {
    RemoteOptions {
        timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
        retry_timeout: Duration::from_secs(10),
        read_ahead: 1024,
        ..RemoteOptions::default()
    }
}

fn open_quick(url: &str) -> tensorkit::Result<tensorkit::File> {
    tensorkit::open_url_with(url, &ReadOptions::default(), &quick())
}

/// Tensogram files of wire version 2 read remotely as locally, the version 2 message first
/// or after a version 3 one: the object is fetched whole once a version 2 preamble is seen,
/// and migrated.
#[test]
fn wire_version_2_files_read_remotely_as_locally() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let v2_dir = tensor_testkit::testdata().join("tensogram/reference/v2");
    let v3 = dir.path().join("v3.tgm");
    let data = elements();
    let big = TensorView::new(
        &data[..65536],
        Dtype::Float32,
        &[16384],
        tensorkit::ByteOrder::Little,
    )
    .unwrap();
    tensorkit::save_tensors(
        &v3,
        [("first", big)],
        &WriteOptions::for_format(Format::TENSOGRAM),
    )
    .unwrap();
    let mut names = Vec::new();
    for f in tensor_testkit::files_with_extension(&v2_dir, "tgm") {
        let stem = tensor_testkit::stem(&f);
        std::fs::copy(&f, dir.path().join(format!("{stem}.tgm"))).unwrap();
        let mut mixed = std::fs::read(&v3).unwrap();
        mixed.extend(std::fs::read(&f).unwrap());
        std::fs::write(dir.path().join(format!("mixed_{stem}.tgm")), mixed).unwrap();
        names.extend([format!("{stem}.tgm"), format!("mixed_{stem}.tgm")]);
    }
    assert!(names.len() >= 20);
    let server = Server::start(dir.path());
    for name in names {
        let remote = open_quick(&server.url(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let local = tensorkit::open(dir.path().join(&name)).unwrap();
        assert_eq!(remote.len(), local.len(), "{name}");
        for (r, l) in remote.tensors().zip(local.tensors()) {
            assert_eq!(r.name(), l.name(), "{name}");
            assert_eq!(
                r.to_tensor().unwrap().data(),
                l.to_tensor().unwrap().data(),
                "{name}: {}",
                r.name()
            );
        }
    }
}

#[test]
fn a_missing_object_is_a_clear_error() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let e = open_quick(&server.url("nothing.safetensors")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("not found"), "{e}");
    assert_eq!(server.requests(), 1, "a 404 is not retried");
}

#[test]
fn server_errors_are_retried_with_back_off_then_given_up() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    small_file(dir.path());
    let server = Server::start(dir.path());
    let url = server.url("small.safetensors");
    server.set_faults(Faults {
        unavailable_first: 2,
        ..Faults::default()
    });
    let file = open_quick(&url).unwrap();
    assert_eq!(file.len(), 1);
    assert!(server.requests() >= 3, "{:?}", server.log());

    server.reset();
    server.set_faults(Faults {
        always_failing: true,
        ..Faults::default()
    });
    let started = Instant::now();
    let e = open_quick(&url).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("500"), "{e}");
    assert_eq!(
        server.requests(),
        3,
        "one try and two retries: {:?}",
        server.log()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_short_response_is_an_error() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    small_file(dir.path());
    let server = Server::start(dir.path());
    let file = open_quick(&server.url("small.safetensors")).unwrap();
    server.set_faults(Faults {
        short_by: 1000,
        ..Faults::default()
    });
    let e = file.get("x").unwrap().to_tensor().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
}

#[test]
fn a_server_that_ignores_range_is_refused() {
    // Larger than the loopback socket buffers, so that what the server manages to send
    // before the refusal closes the connection is not the whole object.
    const LEN: u64 = 64 << 20;
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("large.safetensors"))
        .unwrap()
        .set_len(LEN)
        .unwrap();
    let server = Server::start(dir.path());
    server.set_faults(Faults {
        ignore_range: true,
        ..Faults::default()
    });
    let e = open_quick(&server.url("large.safetensors")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(
        e.to_string().to_lowercase().contains("range") || e.to_string().contains("partial"),
        "{e}"
    );
    // Refused without reading the whole object.
    assert!(server.bytes() < LEN, "{}", server.bytes());
}

/// A server that cannot serve the last bytes of an object on their own (`bytes=-n`) costs
/// the round trip that read saves, nothing more: the file still opens and reads.
#[test]
fn a_server_without_suffix_ranges_still_serves_the_file() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tail.zt");
    let data = elements();
    let tensors = (0..8).map(|i| {
        let v = TensorView::new(
            &data[i * 65536..(i + 1) * 65536],
            Dtype::Float32,
            &[16384],
            tensorkit::ByteOrder::Little,
        )
        .unwrap();
        (format!("t{i}"), v)
    });
    tensorkit::save_tensors(&path, tensors, &WriteOptions::for_format(Format::ZTENSOR_2)).unwrap();
    let server = Server::start(dir.path());
    server.set_faults(Faults {
        no_suffix_ranges: true,
        ..Faults::default()
    });
    let url = server.url(path.file_name().unwrap().to_str().unwrap());
    let remote = tensorkit::open_url_with(&url, &ReadOptions::default(), &quick()).unwrap();
    assert!(
        server.log().iter().any(|l| l.contains("bytes=-")),
        "{:?}",
        server.log()
    );
    let local = tensorkit::open(&path).unwrap();
    assert_eq!(remote.len(), local.len());
    for (r, l) in remote.tensors().zip(local.tensors()) {
        assert_eq!(r.to_tensor().unwrap().data(), l.to_tensor().unwrap().data());
    }
}

#[test]
fn an_object_replaced_while_being_read_is_an_error() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    small_file(dir.path());
    let server = Server::start(dir.path());
    let file = open_quick(&server.url("small.safetensors")).unwrap();
    server.set_faults(Faults {
        new_version_after: Some(0),
        ..Faults::default()
    });
    let e = file.get("x").unwrap().to_tensor().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("changed"), "{e}");
}

/// Opening the small file from a server misbehaving as `faults`, with `options`: the `io`
/// error it gives, and the URL; it must come within `limit`.
fn refused_within(
    faults: Faults,
    options: &RemoteOptions,
    limit: Duration,
) -> (tensorkit::Error, String) {
    let dir = tempfile::tempdir().unwrap();
    small_file(dir.path());
    let server = Server::start(dir.path());
    server.set_faults(faults);
    let url = server.url("small.safetensors");
    let started = Instant::now();
    let e = tensorkit::open_url_with(&url, &ReadOptions::default(), options).unwrap_err();
    assert!(started.elapsed() < limit, "{:?}: {e}", started.elapsed());
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    (e, url)
}

/// A server that sends its bytes one at a time, each well within every per-request limit,
/// is stopped by the operation's deadline: the error names the URL and the time given.
/// (The per-request limits are the defaults, 30 s a request and three retries: minutes.)
#[test]
fn a_trickling_server_is_stopped_by_the_deadline() {
    let _running = crate::running();
    let faults = Faults {
        trickle: Some(Duration::from_millis(100)),
        ..Faults::default()
    };
    let options = RemoteOptions {
        deadline: Duration::from_secs(2),
        ..RemoteOptions::default()
    };
    let (e, url) = refused_within(faults, &options, Duration::from_secs(5));
    let said = e.to_string();
    assert!(
        said.contains(&url) && said.contains("not done within 2 s"),
        "{said}"
    );
}

/// A server that stops sending fails the request after the stall timeout (then retried,
/// and given up), long before the request's own limit.
#[test]
fn a_stalled_server_is_given_up_after_the_stall_timeout() {
    let _running = crate::running();
    let faults = Faults {
        trickle: Some(Duration::from_secs(4)),
        ..Faults::default()
    };
    let options = RemoteOptions {
        stall_timeout: Duration::from_millis(400),
        retries: 1,
        ..RemoteOptions::default()
    };
    refused_within(faults, &options, Duration::from_secs(3));
}

/// Requests ask for the stored bytes (`Accept-Encoding: identity`), and a body the server
/// encoded anyway (a gzip stream that would inflate to 4 GiB) is refused without reading
/// it, naming the encoding.
#[test]
fn an_encoded_body_is_refused_unread() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    small_file(dir.path());
    let server = Server::start(dir.path());
    let url = server.url("small.safetensors");
    let file = open_quick(&url).unwrap();
    assert!(
        server
            .log()
            .iter()
            .all(|l| l.contains("accept-encoding=identity ")),
        "{:?}",
        server.log()
    );
    server.set_faults(Faults {
        content_encoding: Some("gzip".into()),
        ..Faults::default()
    });
    let started = Instant::now();
    let e = open_quick(&url).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("Content-Encoding \"gzip\""), "{e}");
    let e = file.get("x").unwrap().to_tensor().unwrap_err();
    assert!(e.to_string().contains("Content-Encoding"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// The other ways a server can lie about ranges and locations, each refused in bounded
/// time: a body longer than its range, a `Content-Range` other than the one asked for, a
/// length of 16 TiB claimed for a 4 MB object (the safetensors header then leaves most of
/// the object unaccounted for), a redirect to a local file, a redirect loop.
#[test]
fn lies_about_ranges_and_locations_are_refused() {
    let _running = crate::running();
    let cases = [
        (
            "a long body",
            Faults {
                long_by: 100,
                ..Faults::default()
            },
        ),
        (
            "another Content-Range",
            Faults {
                wrong_content_range: true,
                ..Faults::default()
            },
        ),
        (
            "16 TiB claimed",
            Faults {
                claimed_len: Some(16 << 40),
                ..Faults::default()
            },
        ),
        (
            "a redirect to a local file",
            Faults {
                redirect_to: Some("file:///etc/passwd".into()),
                ..Faults::default()
            },
        ),
        (
            "a redirect loop",
            Faults {
                redirect_to: Some("/small.safetensors".into()),
                ..Faults::default()
            },
        ),
    ];
    for (what, faults) in cases {
        let dir = tempfile::tempdir().unwrap();
        small_file(dir.path());
        let server = Server::start(dir.path());
        server.set_faults(faults);
        let started = Instant::now();
        let e = tensorkit::open_url_with(
            &server.url("small.safetensors"),
            &ReadOptions::default(),
            &quick(),
        )
        .and_then(|f| f.get("x").unwrap().to_tensor().map(|_| ()))
        .expect_err(what);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: {:?}",
            started.elapsed()
        );
        assert!(e.to_string().contains("small.safetensors"), "{what}: {e}");
        assert!(
            matches!(
                e.kind(),
                ErrorKind::Io
                    | ErrorKind::Malformed
                    | ErrorKind::Truncated
                    | ErrorKind::LimitExceeded
            ),
            "{what}: {e}"
        );
    }
}

#[test]
fn a_slow_server_times_out() {
    let _running = crate::running();
    let faults = Faults {
        delay: Duration::from_secs(5),
        ..Faults::default()
    };
    let options = RemoteOptions {
        timeout: Duration::from_millis(500),
        retries: 1,
        retry_timeout: Duration::from_secs(3),
        ..quick()
    };
    refused_within(faults, &options, Duration::from_secs(4));
}

/// A big tensor streamed from the network in runs: memory stays bounded (checked by the
/// number of bytes the sink holds at once), the bytes are the tensor's.
#[test]
fn a_large_tensor_streams_in_bounded_runs() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..8_000_000u32).flat_map(u32::to_be_bytes).collect();
    let path = dir.path().join("big.tgm");
    let v = TensorView::new(
        &data,
        Dtype::Uint32,
        &[8_000_000],
        tensorkit::ByteOrder::Big,
    )
    .unwrap();
    tensorkit::save_tensors(&path, [("x", v)], &WriteOptions::default()).unwrap();
    let sf = dir.path().join("big.safetensors");
    let local = tensorkit::open(&path).unwrap();
    tensorkit::save(&sf, &local, &WriteOptions::default()).unwrap();
    let server = Server::start(dir.path());
    let file = open_quick(&server.url("big.safetensors")).unwrap();
    let mut seen = 0usize;
    let mut largest = 0usize;
    let mut sum = 0u64;
    file.tensors()
        .next()
        .unwrap()
        .stream(&mut |c| {
            largest = largest.max(c.len());
            seen += c.len();
            sum += c
                .chunks(4)
                .map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap())))
                .sum::<u64>();
            Ok(())
        })
        .unwrap();
    assert_eq!(seen, 32_000_000);
    assert!(largest <= tensorkit::RUN_BYTES);
    assert_eq!(sum, (0..8_000_000u64).sum::<u64>());
}

/// A shard set's index and its shards, all remote.
#[test]
fn a_remote_shard_set_opens_as_one_file() {
    let _running = crate::running();
    let root = tensor_testkit::testdata().join("safetensors/reference/sharded");
    let server = Server::start(&root);
    let url = server.url("model.safetensors.index.json");
    let remote = tensorkit::open(&url).unwrap();
    let local = tensorkit::open(root.join("model.safetensors.index.json")).unwrap();
    let names = |f: &tensorkit::File| {
        f.tensors()
            .map(|t| t.name().into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&remote), names(&local));
    for (a, b) in local.tensors().zip(remote.tensors()) {
        assert!(a.to_tensor().unwrap().data() == b.to_tensor().unwrap().data());
    }
    assert_eq!(remote.metadata(), local.metadata());
}

/// nginx from the machine's packages serves ranges as real servers do (installed by
/// `.ci/run`; where it is missing the test says so and passes).
#[test]
fn nginx_serves_what_the_counting_server_serves() {
    let _running = crate::running();
    let Some(nginx) = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("SKIPPED: nginx is not installed on this machine (.ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    let path = big_file_small(&data_dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = dir.path().join("nginx.conf");
    let d = dir.path().display();
    std::fs::write(
        &conf,
        format!(
            // One process, no workers: killing it at the end leaves nothing behind (a worker
            // outliving its master would hold the test's output open).
            "daemon off; master_process off; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{}}\n\
             http {{ access_log off; client_body_temp_path {d}; proxy_temp_path {d};\n\
             fastcgi_temp_path {d}; uwsgi_temp_path {d}; scgi_temp_path {d};\n\
             server {{ listen 127.0.0.1:{port}; root {}; }} }}\n",
            data_dir.display()
        ),
    )
    .unwrap();
    let _nginx = tensor_testkit::http::KillOnDrop(
        std::process::Command::new(nginx)
            .args([
                "-c",
                conf.to_str().unwrap(),
                "-p",
                dir.path().to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nginx did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let local = tensorkit::open(&path).unwrap();
    let url = format!(
        "http://127.0.0.1:{port}/{}",
        path.file_name().unwrap().to_str().unwrap()
    );
    let file = tensorkit::open(&url).unwrap();
    assert_eq!(file.len(), local.len());
    for (a, b) in local.tensors().zip(file.tensors()) {
        assert!(a.to_tensor().unwrap().data() == b.to_tensor().unwrap().data());
    }
    let transfer = file.transfer().unwrap();
    // Read in order, the tensors come in a few merged requests, each byte about once.
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(
        transfer.bytes <= len + len / 10,
        "{transfer:?} for {len} bytes"
    );
    assert!(transfer.requests <= 6, "{transfer:?}");
}

/// A Tensogram file of 200 objects, 64 KiB each.
fn big_file_small(dir: &Path) -> PathBuf {
    let path = dir.join("fields.tgm");
    let data = elements();
    let tensors = (0..200).map(|i| {
        let bytes = &data[i * 65536..(i + 1) * 65536];
        (
            name(i),
            TensorView::new(
                bytes,
                Dtype::Float32,
                &[16384],
                tensorkit::ByteOrder::Little,
            )
            .unwrap(),
        )
    });
    tensorkit::save_tensors(&path, tensors, &WriteOptions::default()).unwrap();
    path
}

/// GRIB files ecCodes wrote read remotely as locally, with their keys: held whole (the
/// default read-ahead takes these small files in one request), and listed from their
/// messages' headers then fetched message by message (a read-ahead of 256 bytes).
#[test]
fn grib_reads_remotely_as_locally() {
    let _running = crate::running();
    let root = tensor_testkit::testdata().join("grib/reference");
    let server = Server::start(&root);
    let mut files = Vec::new();
    for ext in ["grib", "grib1", "grib2"] {
        files.extend(tensor_testkit::files_with_extension(&root, ext));
    }
    assert!(files.len() >= 8, "GRIB fixtures: {}", files.len());
    let small = RemoteOptions {
        read_ahead: 256,
        ..RemoteOptions::default()
    };
    for (path, options) in files
        .iter()
        .flat_map(|p| [(p, RemoteOptions::default()), (p, small.clone())])
    {
        let local = tensorkit::open(path).unwrap();
        let rel = path.file_name().unwrap().to_str().unwrap();
        let remote = tensorkit::open_url_with(&server.url(rel), &ReadOptions::default(), &options)
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(remote.format(), Format::GRIB, "{rel}");
        assert_eq!(remote.len(), local.len(), "{rel}");
        for (a, b) in local.tensors().zip(remote.tensors()) {
            assert_eq!((a.name(), a.shape()), (b.name(), b.shape()), "{rel}");
            assert_eq!(a.attributes(), b.attributes(), "{rel}");
            let ta = a.to_tensor().unwrap();
            assert!(
                ta.data() == b.to_tensor().unwrap().data(),
                "{rel} {}",
                a.name()
            );
            let mut streamed = vec![0u8; usize::try_from(b.byte_len()).unwrap()];
            b.read_into(&mut streamed).unwrap();
            assert!(streamed == ta.data(), "{rel} {} (streamed)", a.name());
        }
    }
}

/// A GRIB file of many messages lists from their headers alone: the data sections are not
/// read (walking the messages, a round trip each, or all at once from an inventory beside
/// the file), and a field's values then take one request of its message.
#[test]
fn a_grib_file_lists_from_its_headers_and_fetches_one_message_per_field() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    // 24 fields of 120 KB: their data sections lie further apart than requests merge.
    let messages: Vec<Vec<u8>> = (0..24u16)
        .map(|k| {
            let level = 1000 - 40 * u32::from(k);
            tensor_testkit::grib::simple_message(300, 200, level, 200.0 + f32::from(k))
        })
        .collect();
    let one = messages[0].clone();
    let path = dir.path().join("many.grib2");
    std::fs::write(&path, messages.concat()).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let server = Server::start(dir.path());
    // Every answer takes 100 ms, so that round trips show in the time taken.
    let delay = Duration::from_millis(100);
    server.set_faults(Faults {
        delay,
        ..Faults::default()
    });
    let options = RemoteOptions {
        read_ahead: 128,
        ..RemoteOptions::default()
    };
    let open = || {
        let start = Instant::now();
        let file =
            tensorkit::open_url_with(&server.url("many.grib2"), &ReadOptions::default(), &options)
                .unwrap();
        (file, start.elapsed())
    };
    let local = tensorkit::open(&path).unwrap();
    let (remote, walked) = open();
    assert_eq!(remote.len(), local.len());
    let listed = server.bytes();
    assert!(
        listed * 20 < len,
        "listing read {listed} of {len} bytes: {:?}",
        server.log()
    );
    // One round trip per message at least: each message's place comes from the one before.
    assert!(walked >= delay * 24, "{walked:?}");
    // With a wgrib2 inventory beside the file, every message's headers are asked for at
    // once: a few round trips, whatever the number of messages.
    let mut at = 0;
    let idx: String = messages
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let line = format!(
                "{}:{at}:d=2026112000:TMP:{} mb:anl:\n",
                k + 1,
                1000 - 40 * k
            );
            at += m.len();
            line
        })
        .collect();
    std::fs::write(dir.path().join("many.grib2.idx"), idx).unwrap();
    let before = server.bytes();
    let (indexed, took) = open();
    assert_eq!(indexed.len(), local.len());
    assert!(
        took * 2 < walked,
        "{took:?} with the inventory, {walked:?} without"
    );
    assert!((server.bytes() - before) * 20 < len);
    server.set_faults(Faults::default());
    let i = local.len() / 2;
    let (a, b) = (
        local.tensors().nth(i).unwrap(),
        indexed.tensors().nth(i).unwrap(),
    );
    assert_eq!((a.name(), a.attributes()), (b.name(), b.attributes()));
    let (requests, bytes) = (server.requests(), server.bytes());
    assert!(a.to_tensor().unwrap().data() == b.to_tensor().unwrap().data());
    assert_eq!(server.requests() - requests, 1, "{:?}", server.log());
    assert!(server.bytes() - bytes <= 2 * one.len() as u64);
}
