//! Integration tests of tensor-hdf5: one trial per file h5py and netCDF4-python wrote
//! (superblock version; every object h5py lists, by path, as a group or a dataset with its
//! shape, element type, layout, chunk shape and filters, and its attributes' names), dense
//! storage refused by name, every prefix of each file an error, and checksums that catch a
//! flipped byte.

mod weights;
mod written;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;
use std::path::Path;
use tensor_core::{ByteOrder, ErrorKind, Kinded, Limits};
use tensor_hdf5::message::{Layout, datatype::Datatype};
use tensor_hdf5::{Hdf5, Kind};

/// The numpy dtype string of an integer or float type (`<f8`, `>i4`, `|u1`).
fn numpy(t: &Datatype) -> Option<String> {
    let (code, size, order) = match *t {
        Datatype::Integer {
            size,
            signed,
            order,
        } => (if signed { 'i' } else { 'u' }, size, order),
        Datatype::Float { size, order } => ('f', size, order),
        _ => return None,
    };
    let o = if size == 1 {
        '|'
    } else if order == ByteOrder::Big {
        '>'
    } else {
        '<'
    };
    Some(format!("{o}{code}{size}"))
}

fn fixture(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let file = Hdf5::open(&bytes, Limits::default())?;
    if side["superblock_version"].as_u64() != Some(u64::from(file.superblock().version)) {
        return Err(format!("superblock version {}", file.superblock().version).into());
    }
    let objects = file.objects()?;
    let theirs = side["objects"].as_object().ok_or("sidecar objects")?;
    let mut ours: Vec<&str> = objects.iter().map(|o| o.path.as_str()).collect();
    ours.sort_unstable();
    let mut want: Vec<&str> = theirs.keys().map(String::as_str).collect();
    want.sort_unstable();
    if ours != want {
        return Err(format!("objects {ours:?}; h5py lists {want:?}").into());
    }
    for o in &objects {
        let t = &theirs[&o.path];
        let mut names: Vec<&str> = o.attributes.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        let mut want: Vec<&str> = t["attributes"]
            .as_object()
            .ok_or("attributes")?
            .keys()
            .map(String::as_str)
            .collect();
        want.sort_unstable();
        if names != want {
            return Err(format!("{}: attributes {names:?}; h5py reads {want:?}", o.path).into());
        }
        match (&o.kind, t["kind"].as_str()) {
            (Kind::Group, Some("group")) => {}
            (Kind::Dataset(d), Some("dataset")) => {
                if Json::from(d.dataspace.dims.clone()) != t["shape"] {
                    return Err(format!(
                        "{}: shape {:?}; h5py {}",
                        o.path, d.dataspace.dims, t["shape"]
                    )
                    .into());
                }
                if let Some(n) = numpy(&d.datatype)
                    && t["dtype"] != n.as_str()
                {
                    return Err(format!("{}: dtype {n}; h5py {}", o.path, t["dtype"]).into());
                }
                let (layout, chunks) = match &d.layout {
                    Layout::Compact(_) => ("compact", Json::Null),
                    Layout::Contiguous { .. } => ("contiguous", Json::Null),
                    Layout::Chunked { chunk, .. } => ("chunked", Json::from(chunk.clone())),
                };
                if t["layout"] != layout || t["chunks"] != chunks {
                    return Err(format!(
                        "{}: {layout} {chunks}; h5py {} {}",
                        o.path, t["layout"], t["chunks"]
                    )
                    .into());
                }
                if let Some(want) = t["sha256"].as_str() {
                    let n = usize::try_from(d.byte_len()?)?;
                    let mut out = vec![0u8; n];
                    file.read(d, &mut out)?;
                    if let Some((dtype, order)) = d.datatype.dtype() {
                        tensor_core::byte_order::convert_copy(
                            &out.clone(),
                            order,
                            &mut out,
                            ByteOrder::Little,
                            dtype.byte_width(),
                        )?;
                    }
                    if tensor_testkit::sha256_hex(&out) != want {
                        return Err(format!("{}: values differ from h5py's", o.path).into());
                    }
                }
                let has = |id| d.filters.iter().any(|f| f.id == id);
                if has(1) != (t["compression"] == "gzip")
                    || has(2) != (t["shuffle"] == true)
                    || has(3) != (t["fletcher32"] == true)
                {
                    return Err(format!("{}: filters {:?}; h5py {t}", o.path, d.filters).into());
                }
            }
            (k, want) => return Err(format!("{}: {k:?}; h5py says {want:?}", o.path).into()),
        }
    }
    Ok(())
}

/// Every prefix of a file, and the file with any one byte of its first kilobytes flipped,
/// is an error or an answer, never a panic; a flipped byte inside a checksummed superblock
/// is a checksum mismatch.
fn damaged(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    for n in (0..bytes.len()).step_by(7) {
        if let Ok(f) = Hdf5::open(&bytes[..n], Limits::default()) {
            let _ = f.objects();
        }
    }
    for i in 0..bytes.len().min(2048) {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        if let Ok(f) = Hdf5::open(&b, Limits::default()) {
            let _ = f.objects();
        }
    }
    if bytes[8] >= 2 {
        let mut b = bytes.clone();
        b[13] ^= 1; // the base address, covered by the superblock's checksum
        match Hdf5::open(&b, Limits::default()) {
            Err(e) if e.kind() == ErrorKind::ChecksumMismatch => {}
            other => return Err(format!("a flipped superblock byte: {other:?}").into()),
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let root = tensor_testkit::testdata().join("hdf5/reference");
    let mut files = tensor_testkit::files_with_extension(&root, "h5");
    files.extend(tensor_testkit::files_with_extension(&root, "nc"));
    assert!(files.len() >= 3, "the h5py and netCDF4 files are missing");
    let mut trials = Vec::new();
    for path in files {
        let stem = tensor_testkit::stem(&path);
        let p = path.clone();
        trials.push(Trial::test(format!("reference::{stem}"), move || {
            fixture(&p)
        }));
        trials.push(Trial::test(format!("damaged::{stem}"), move || {
            damaged(&path)
        }));
    }
    trials.extend(written::trials());
    trials.extend(weights::trials());
    libtest_mimic::run(&args, trials).exit();
}
