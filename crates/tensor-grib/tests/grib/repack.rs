//! Repacking: every GRIB 2 reference file packed again by tensor-grib's writer gives the bytes
//! ecCodes' `grib_set -r` writes for the same packing (`testdata/grib/reference/repack.json`,
//! made by `scripts/reference/grib_repack.py`), and what it writes decodes to the values the
//! packing allows.

use libtest_mimic::{Failed, Trial};
use tensor_core::Limits;
use tensor_grib::Grib;
use tensor_grib::write::{Repacking, repack};

/// The repackings a fixture's packing is made of, in turn (`ccsds:N`: CCSDS, then N bits).
fn steps(name: &str) -> Vec<Repacking> {
    match name.strip_prefix("ccsds:") {
        Some(_) => vec![Repacking::Ccsds { bits: None }, packing(name)],
        None => vec![packing(name)],
    }
}

fn packing(name: &str) -> Repacking {
    match name {
        "simple" => Repacking::Simple { bits: None },
        "ccsds" => Repacking::Ccsds { bits: None },
        ccsds if ccsds.starts_with("ccsds:") => Repacking::Ccsds {
            bits: Some(ccsds["ccsds:".len()..].parse().expect("ccsds:N")),
        },
        "ieee32" => Repacking::Ieee { bits: 32 },
        "ieee64" => Repacking::Ieee { bits: 64 },
        other => Repacking::Simple {
            bits: Some(
                other
                    .trim_start_matches("simple:")
                    .parse()
                    .expect("simple:N"),
            ),
        },
    }
}

fn same_as_eccodes(entry: &serde_json::Value) -> Result<(), Failed> {
    let file = entry["file"].as_str().ok_or("no file")?;
    let name = entry["packing"].as_str().ok_or("no packing")?;
    let bytes = std::fs::read(tensor_testkit::reference("grib").join(file))?;
    // `before`: what the last step repacked.
    let (mut before_bytes, mut ours) = (bytes.clone(), bytes);
    for how in steps(name) {
        before_bytes = ours;
        ours = repack(&before_bytes, how, &Limits::default())?;
    }
    let (sha, len) = (tensor_testkit::sha256_hex(&ours), ours.len() as u64);
    crate::ensure(
        entry["sha256"] == sha.as_str() && entry["length"] == len,
        || {
            format!(
                "{file} as {name}: {len} bytes, {sha}; ecCodes wrote {} bytes",
                entry["length"]
            )
        },
    )?;
    // It reads back: the same grid, every value within half a packing step of what it packed.
    let before = Grib::open(&before_bytes)?;
    let after = Grib::open(&ours)?;
    crate::ensure(before.fields().len() == after.fields().len(), || {
        "fields lost".into()
    })?;
    for i in 0..before.fields().len() {
        let (a, b) = (
            before.values(i, &Limits::default())?,
            after.values(i, &Limits::default())?,
        );
        crate::within_half_a_step(
            &a,
            &b,
            &after.fields()[i].packing,
            &format!("{file} as {name}, field {i}"),
        )?;
    }
    Ok(())
}

/// Complex packing at `bits` and spatial differencing of `order`: the bytes ecCodes'
/// binding writes when a program sets those keys and then the values
/// (`testdata/grib/reference/complex_pack.json`, from `scripts/reference/grib_complex.py`),
/// and every value back within half a packing step.
fn complex_as_eccodes(entry: &serde_json::Value) -> Result<(), Failed> {
    let file = entry["file"].as_str().ok_or("no file")?;
    let (order, bits) = (
        u8::try_from(entry["order"].as_u64().ok_or("no order")?)?,
        u32::try_from(entry["bits"].as_u64().ok_or("no bits")?)?,
    );
    let bytes = std::fs::read(tensor_testkit::reference("grib").join(file))?;
    let how = Repacking::Complex {
        bits: Some(bits),
        order,
    };
    let ours = repack(&bytes, how, &Limits::default())?;
    let (sha, len) = (tensor_testkit::sha256_hex(&ours), ours.len() as u64);
    crate::ensure(
        entry["sha256"] == sha.as_str() && entry["length"] == len,
        || {
            format!(
                "{file} as complex order {order} at {bits} bits: {len} bytes, {sha}; ecCodes wrote {} bytes",
                entry["length"]
            )
        },
    )?;
    let (before, after) = (Grib::open(&bytes)?, Grib::open(&ours)?);
    for i in 0..before.fields().len() {
        let (a, b) = (
            before.values(i, &Limits::default())?,
            after.values(i, &Limits::default())?,
        );
        let packing = &after.fields()[i].packing;
        crate::ensure(matches!(packing, tensor_grib::Packing::Complex(_)), || {
            format!("{file}, field {i}: written as {}", packing.name())
        })?;
        crate::within_half_a_step(&a, &b, packing, &format!("{file}, field {i}"))?;
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let path = tensor_testkit::reference("grib").join("complex_pack.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("complex_pack.json"))
            .expect("JSON");
    let complex = doc["packed"].as_array().expect("entries").iter().map(|e| {
        let entry = e.clone();
        let name = format!(
            "repack::{}::complex{}:{}",
            e["file"].as_str().unwrap_or("?"),
            e["order"].as_u64().unwrap_or(0) + 1,
            e["bits"].as_u64().unwrap_or(0)
        );
        Trial::test(name, move || complex_as_eccodes(&entry))
    });
    let mut all: Vec<Trial> = complex.collect();
    all.extend(simple_trials());
    all
}

fn simple_trials() -> Vec<Trial> {
    let path = tensor_testkit::reference("grib").join("repack.json");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("repack.json")).expect("JSON");
    doc["repacked"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let entry = e.clone();
            let name = format!(
                "repack::{}::{}",
                e["file"].as_str().unwrap_or("?"),
                e["packing"].as_str().unwrap_or("?")
            );
            Trial::test(name, move || same_as_eccodes(&entry))
        })
        .collect()
}
