//! Damaged and hostile classic headers, built byte by byte: each is refused with the kind
//! its damage calls for, before anything is allocated for what it claims, and a file being
//! written as a stream is read with the records its length holds.

use libtest_mimic::{Failed, Trial};
use tensor_core::{ErrorKind, Kinded, Limits, ReadOptions};
use tensor_dtype::TensorContainer;
use tensor_netcdf::classic::Classic;

/// A CDF-1 header being built.
#[derive(Default)]
struct H(Vec<u8>);

impl H {
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    fn name(mut self, s: &[u8]) -> Self {
        self = self.u32(s.len() as u32);
        self.0.extend_from_slice(s);
        self.0.resize(self.0.len().next_multiple_of(4), 0);
        self
    }

    fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

/// A variable: name, dimension ids, type code, begin.
struct Var<'a>(&'a [u8], &'a [u32], u32, u32);

/// A CDF-1 file: `numrecs`, dimensions, no global attributes, variables (each with no
/// attributes and `vsize` 4), then `data` bytes of zeros after the header.
fn file(numrecs: u32, dims: &[(&[u8], u32)], vars: &[Var<'_>], data: usize) -> Vec<u8> {
    let mut h = H::default().bytes(b"CDF\x01").u32(numrecs);
    h = if dims.is_empty() {
        h.u32(0).u32(0)
    } else {
        h.u32(0x0A).u32(dims.len() as u32)
    };
    for (name, len) in dims {
        h = h.name(name).u32(*len);
    }
    h = h.u32(0).u32(0);
    h = if vars.is_empty() {
        h.u32(0).u32(0)
    } else {
        h.u32(0x0B).u32(vars.len() as u32)
    };
    for Var(name, ids, t, begin) in vars {
        h = h.name(name).u32(ids.len() as u32);
        for id in *ids {
            h = h.u32(*id);
        }
        h = h.u32(0).u32(0).u32(*t).u32(4).u32(*begin);
    }
    let mut out = h.0;
    out.resize(out.len() + data, 0);
    out
}

/// The length of `file`'s header with the same dimensions and variables.
fn header_len(dims: &[(&[u8], u32)], vars: &[Var<'_>]) -> u32 {
    file(0, dims, vars, 0).len() as u32
}

fn expect(what: &str, bytes: &[u8], options: &ReadOptions, kind: ErrorKind) -> Result<(), Failed> {
    match Classic::open_with(bytes, options) {
        Ok(_) => Err(format!("{what}: read as a sound file").into()),
        Err(e) if e.kind() == kind => Ok(()),
        Err(e) => Err(format!("{what}: {} ({e}), not {}", e.kind().as_str(), kind.as_str()).into()),
    }
}

fn cases() -> Result<(), Failed> {
    let o = ReadOptions::default();
    let x: &[(&[u8], u32)] = &[(b"x", 4)];
    let hl = header_len(x, &[Var(b"v", &[0], 4, 0)]);
    let sound = file(0, x, &[Var(b"v", &[0], 4, hl)], 16);
    Classic::open(&sound)?;

    expect(
        "an unknown version",
        b"CDF\x03\0\0\0\0",
        &o,
        ErrorKind::Unsupported,
    )?;
    expect(
        "no magic",
        b"XDF\x01\0\0\0\0\0\0\0\0",
        &o,
        ErrorKind::Malformed,
    )?;
    expect("the magic cut short", b"CD", &o, ErrorKind::Truncated)?;
    expect(
        "a huge dimension count",
        &H::default()
            .bytes(b"CDF\x01")
            .u32(0)
            .u32(0x0A)
            .u32(0x7FFF_FFFF)
            .0,
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "a huge name length",
        &H::default()
            .bytes(b"CDF\x01")
            .u32(0)
            .u32(0x0A)
            .u32(1)
            .u32(0xFFFF_FFF0)
            .0,
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "a variable tag where dimensions belong",
        &H::default().bytes(b"CDF\x01").u32(0).u32(0x0B).u32(1).0,
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "an absent list with a count",
        &H::default().bytes(b"CDF\x01").u32(0).u32(0).u32(3).0,
        &o,
        ErrorKind::Malformed,
    )?;
    let attr = |t: u32| {
        H::default()
            .bytes(b"CDF\x01")
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0x0C)
            .u32(1)
            .name(b"a")
            .u32(t)
            .u32(1)
            .bytes(&[0; 8])
            .u32(0)
            .u32(0)
            .0
    };
    Classic::open(&attr(4))?;
    expect("attribute type 13", &attr(13), &o, ErrorKind::Malformed)?;
    expect(
        "a ubyte attribute in CDF-1",
        &attr(7),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "a dimension id out of range",
        &file(0, x, &[Var(b"v", &[1], 4, hl)], 16),
        &o,
        ErrorKind::Malformed,
    )?;
    let tx: &[(&[u8], u32)] = &[(b"t", 0), (b"x", 4)];
    let hl2 = header_len(tx, &[Var(b"v", &[1, 0], 4, 0)]);
    expect(
        "the unlimited dimension second",
        &file(1, tx, &[Var(b"v", &[1, 0], 4, hl2)], 64),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "two unlimited dimensions",
        &file(0, &[(b"t", 0), (b"u", 0)], &[], 0),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "a repeated dimension name",
        &file(0, &[(b"x", 1), (b"x", 2)], &[], 0),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "data inside the header",
        &file(0, x, &[Var(b"v", &[0], 4, 8)], 16),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "data past the end",
        &file(0, x, &[Var(b"v", &[0], 4, hl)], 15),
        &o,
        ErrorKind::Truncated,
    )?;
    expect(
        "more records than the file holds",
        &file(0x7FFF_FFFE, tx, &[Var(b"v", &[0, 1], 4, hl2)], 64),
        &o,
        ErrorKind::Truncated,
    )?;
    let huge: &[(&[u8], u32)] = &[
        (b"a", 0x7FFF_FFFF),
        (b"b", 0x7FFF_FFFF),
        (b"c", 0x7FFF_FFFF),
    ];
    let hl3 = header_len(huge, &[Var(b"v", &[0, 1, 2], 6, 0)]);
    let e = Classic::open(&file(0, huge, &[Var(b"v", &[0, 1, 2], 6, hl3)], 8))
        .err()
        .ok_or("a variable of 2^93 doubles read as sound")?;
    if !matches!(e.kind(), ErrorKind::Malformed | ErrorKind::Truncated) {
        return Err(format!("a variable of 2^93 doubles: {e}").into());
    }
    expect(
        "a repeated variable name",
        &file(
            0,
            x,
            &[Var(b"v", &[0], 4, hl + 24), Var(b"v", &[0], 4, hl + 24)],
            64,
        ),
        &o,
        ErrorKind::Malformed,
    )?;
    expect(
        "a name that is not UTF-8",
        &file(0, &[(b"\xff\xfe", 1)], &[], 0),
        &o,
        ErrorKind::Malformed,
    )?;
    let many: Vec<(Vec<u8>, u32)> = (0..2000)
        .map(|i| (format!("d{i}").into_bytes(), 1))
        .collect();
    let many: Vec<(&[u8], u32)> = many.iter().map(|(n, l)| (n.as_slice(), *l)).collect();
    let long = file(0, &many, &[], 0);
    expect(
        "a header past the limit",
        &long,
        &ReadOptions::default().limits(Limits::default().with_max_header_bytes(4096)),
        ErrorKind::LimitExceeded,
    )?;
    Classic::open(&long)?;
    expect(
        "more variables than the limit",
        &sound,
        &ReadOptions::default().limits(Limits::default().with_max_tensor_count(0)),
        ErrorKind::LimitExceeded,
    )?;
    let mut hdf5 = tensor_netcdf::HDF5_SIGNATURE.to_vec();
    hdf5.resize(64, 0);
    // An HDF5 signature and nothing of a superblock: NetCDF-4 that is not one.
    match tensor_netcdf::Netcdf::open_with(&hdf5, &o) {
        Err(e) if e.kind() == ErrorKind::Malformed => {}
        other => return Err(format!("an HDF5 signature and zeros: {other:?}").into()),
    }
    let mut strict_vsize = sound.clone();
    let at = hl as usize - 8;
    strict_vsize[at..at + 4].copy_from_slice(&8u32.to_be_bytes());
    Classic::open(&strict_vsize)?;
    expect(
        "a vsize its shape does not give (strict)",
        &strict_vsize,
        &ReadOptions::default().strict(true),
        ErrorKind::Malformed,
    )?;
    Ok(())
}

/// A file being written as a stream (record count all ones) has the records its length
/// holds, whole ones only.
fn streaming() -> Result<(), Failed> {
    let path = tensor_testkit::testdata().join("netcdf/reference/records_classic.nc");
    let bytes = std::fs::read(path)?;
    let whole = Classic::open(&bytes)?;
    assert_eq!(whole.numrecs(), 5);
    let mut stream = bytes.clone();
    stream[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
    let f = Classic::open(&stream)?;
    if f.numrecs() != 5 {
        return Err(format!("{} records counted, not 5", f.numrecs()).into());
    }
    for i in 0..f.len() {
        if f.view(i)?.map(|v| v.to_le_bytes().into_owned())
            != whole.view(i)?.map(|v| v.to_le_bytes().into_owned())
        {
            return Err(format!("variable {i} differs").into());
        }
    }
    let recsize = f.layout().recsize as usize;
    let cut = &stream[..stream.len() - recsize];
    let f = Classic::open(cut)?;
    if f.numrecs() != 4 {
        return Err(format!("{} records in a file a record shorter, not 4", f.numrecs()).into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("damaged::every_damage_refused_with_its_kind", cases),
        Trial::test(
            "damaged::streaming_records_counted_from_the_length",
            streaming,
        ),
    ]
}
