//! One trial per field of the files ecCodes wrote: values and keys as ecCodes gives them.

use crate::ensure;
use libtest_mimic::{Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tensor_core::Limits;
use tensor_grib::{Grib, Key};

pub(crate) fn dir() -> PathBuf {
    tensor_testkit::testdata().join("grib/reference")
}

/// Every GRIB fixture, with its sidecar.
pub(crate) fn files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("testdata/grib/reference")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "grib1" || e == "grib2" || e == "grib")
        })
        .collect();
    v.sort();
    v
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut out = Vec::new();
    for path in files() {
        let sidecar: Value =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("json")).unwrap())
                .unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, m) in sidecar["messages"].as_array().unwrap().iter().enumerate() {
            let (path, m) = (path.clone(), m.clone());
            out.push(Trial::test(format!("eccodes::{name}#{i}"), move || {
                check(&path, i, &m)
            }));
        }
    }
    out.push(Trial::test(
        "eccodes::names_carry_every_key",
        names_carry_every_key,
    ));
    out.push(Trial::test(
        "eccodes::every_sample_reads",
        every_sample_reads,
    ));
    out
}

/// ecCodes' own samples (`samples/`, what it builds every message from) read, each as the
/// grid type ecCodes names, with as many values as it counts: the grid checks refuse none
/// of what ecCodes writes.
fn every_sample_reads() -> Result<(), Failed> {
    let limits = Limits::default();
    let mut read = 0;
    for e in std::fs::read_dir(dir().join("samples"))? {
        let path = e?.path();
        if path.extension().and_then(|x| x.to_str()) != Some("grib") {
            continue;
        }
        let side: Value =
            serde_json::from_str(&std::fs::read_to_string(path.with_extension("json"))?)?;
        let bytes = std::fs::read(&path)?;
        let grib = Grib::open_with(&bytes, &limits.into())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let f = grib.fields().first().ok_or("no field")?;
        ensure(
            Some(f.grid.grid_type.as_str()) == side["gridType"].as_str(),
            || format!("{}: grid type {}", path.display(), f.grid.grid_type),
        )?;
        let values = grib
            .values(0, &limits)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        ensure(
            Some(values.len() as u64) == side["numberOfDataPoints"].as_u64(),
            || format!("{}: {} values", path.display(), values.len()),
        )?;
        read += 1;
    }
    ensure(read >= 15, || format!("only {read} samples"))
}

/// A field's name carries every key of its cube whatever else the file holds, so that the
/// same field is named alike in every file; a message number only tells apart fields that
/// share all of them.
fn names_carry_every_key() -> Result<(), Failed> {
    use tensor_dtype::TensorContainer as _;
    let bytes = std::fs::read(dir().join("mixed.grib"))?;
    let names = |b: &[u8]| -> Result<Vec<String>, Failed> {
        let g = Grib::open(b)?;
        Ok((0..g.len())
            .map(|i| g.name(i).unwrap_or_default().to_owned())
            .collect())
    };
    let one = names(&bytes)?;
    let want = [
        "2t_surface_0_step0_20070323T1200",
        "2t_heightAboveGround_2_step0_20070323T1200",
    ];
    ensure(one == want, || format!("{one:?}"))?;
    let twice = names(&[bytes.as_slice(), bytes.as_slice()].concat())?;
    let want: Vec<String> = (0..4).map(|m| format!("{}_m{m}", want[m % 2])).collect();
    ensure(twice == want, || format!("{twice:?}"))?;
    // Every field of every fixture: its own keys, the member where there is one.
    for path in files() {
        let b = std::fs::read(&path)?;
        let g = Grib::open(&b)?;
        for (i, f) in g.fields().iter().enumerate() {
            let name = g.name(i).unwrap_or_default();
            let short = f.ident.short_name();
            ensure(
                name.starts_with(&format!("{short}_{}_", f.ident.type_of_level))
                    && name.contains(&format!(
                        "_step{}_{}T",
                        f.ident.step_range, f.ident.data_date
                    )),
                || format!("{}#{i}: {name}", path.display()),
            )?;
        }
    }
    Ok(())
}

fn key<'a>(keys: &'a [(&'static str, Key)], name: &str) -> Option<&'a Key> {
    keys.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
}

#[allow(clippy::many_single_char_names)]
fn check(path: &Path, i: usize, m: &Value) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let grib = Grib::open_with(&bytes, &tensor_core::ReadOptions::default())?;
    let f = &grib.fields()[i];
    let values = grib.values(i, &Limits::default())?;

    // Bit for bit: the SHA-256 of ecCodes' values with missing points as NaN…
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let sha = tensor_testkit::sha256_hex(&le);
    // …and each value against ecCodes' own, to say where they differ.
    let all = std::fs::read(path.with_extension("values"))?;
    let before: u64 = grib.fields()[..i].iter().map(|f| f.points).sum();
    let theirs: Vec<f64> = all[before as usize * 8..][..values.len() * 8]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let missing = m["missing_value"].as_f64().unwrap();
    let bitmap = m["bitmap"].as_bool().unwrap();
    for (j, (a, b)) in values.iter().zip(&theirs).enumerate() {
        let same = if bitmap && *b == missing {
            a.is_nan()
        } else {
            a.to_bits() == b.to_bits()
        };
        ensure(same, || format!("point {j}: {a:e} here, ecCodes {b:e}"))?;
    }
    ensure(sha == m["sha256_nan"].as_str().unwrap(), || {
        "SHA-256 differs".into()
    })?;

    let shape: Vec<u64> = m["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    ensure(f.shape() == shape, || {
        format!("shape {:?}, ecCodes {shape:?}", f.shape())
    })?;
    ensure(f.has_bitmap() == bitmap, || "bitmap".into())?;

    let keys = f.keys();
    for (k, want) in m["keys"].as_object().unwrap() {
        let Some(got) = key(&keys, k) else {
            // Keys we do not give (edition-specific codes of the other edition, `name`
            // spelled differently) are not compared.
            continue;
        };
        let same = match (got, want) {
            (Key::Int(a), Value::Number(b)) => b.as_i64() == Some(*a),
            (Key::Float(a), Value::Number(b)) => (a - b.as_f64().unwrap()).abs() < 1e-9,
            (Key::Text(a), Value::String(b)) => a == b,
            (Key::Int(a), Value::String(b)) => a.to_string() == *b,
            _ => false,
        };
        ensure(same, || format!("key {k}: {got:?} here, ecCodes {want}"))?;
    }
    let mars: Vec<(&str, String)> = f.ident.mars();
    for (k, want) in m["mars"].as_object().unwrap() {
        let got = mars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        ensure(got == want.as_str(), || {
            format!("mars.{k}: {got:?} here, ecCodes {want}")
        })?;
    }
    ensure(mars.len() == m["mars"].as_object().unwrap().len(), || {
        format!("mars keys {mars:?}, ecCodes {}", m["mars"])
    })?;
    Ok(())
}
