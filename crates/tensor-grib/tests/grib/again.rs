//! Writing fields again from what a format keeps of them (`write::field`): each field of
//! every GRIB 2 file ecCodes wrote, from its sections 1 to 5 and its decoded values, is the
//! message it came from byte for byte where the packing has an encoder here (simple, CCSDS,
//! IEEE, complex), PNG with the same samples and parameters; any other packing is written as simple packing with a note, its values the same.

use libtest_mimic::{Failed, Trial};
use std::path::Path;
use tensor_core::Limits;
use tensor_grib::Grib;
use tensor_grib::write::{field, sections_from_keys};

fn written_again(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let grib = Grib::open(&bytes)?;
    for (i, f) in grib.fields().iter().enumerate() {
        let Some((discipline, sections)) = f.sections(&bytes) else {
            continue;
        };
        let values = grib.values(i, &Limits::default())?;
        let w = field(discipline, &sections, &values, None, &Limits::default())?;
        let back = Grib::open(&w.message)?;
        let again = back.values(0, &Limits::default())?;
        let same = values
            .iter()
            .zip(&again)
            .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        crate::ensure(same && again.len() == values.len(), || {
            format!("field {i}: the values changed")
        })?;
        let exact = matches!(
            f.packing,
            tensor_grib::Packing::Simple(_)
                | tensor_grib::Packing::Ccsds { .. }
                | tensor_grib::Packing::Ieee { .. }
                | tensor_grib::Packing::Complex(_)
        );
        let alone = grib
            .fields()
            .iter()
            .filter(|g| g.message == f.message)
            .count()
            == 1;
        if exact && alone {
            let start = usize::try_from(f.offset)?;
            let original = &bytes[start..start + usize::try_from(f.length)?];
            crate::ensure(w.message == original, || {
                format!(
                    "field {i} ({}): {} bytes written, {} in the file, first difference at {:?}",
                    f.packing.name(),
                    w.message.len(),
                    original.len(),
                    w.message.iter().zip(original).position(|(a, b)| a != b)
                )
            })?;
            crate::ensure(w.note.is_none(), || format!("field {i}: {:?}", w.note))?;
        } else if matches!(f.packing, tensor_grib::Packing::Png(_)) {
            // The same samples and parameters; the image compressed by the png crate.
            crate::ensure(w.note.is_none(), || format!("field {i}: {:?}", w.note))?;
            let s = back.fields()[0].packing.simple().copied();
            crate::ensure(
                back.fields()[0].packing.name() == "grid_png" && s == f.packing.simple().copied(),
                || format!("field {i}: PNG written as {:?}", back.fields()[0].packing),
            )?;
        } else if !exact {
            crate::ensure(w.note.is_some(), || {
                format!("field {i}: {} written with no note", f.packing.name())
            })?;
        }
    }
    Ok(())
}

/// Every GRIB 2 file among the reference files and samples.
fn grib2_files() -> Vec<std::path::PathBuf> {
    let dir = tensor_testkit::reference("grib");
    let mut files: Vec<_> = [dir.clone(), dir.join("samples")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("reference files"))
        .map(|e| e.expect("entry").path())
        .filter(|p| std::fs::read(p).is_ok_and(|b| b.len() > 8 && &b[..4] == b"GRIB" && b[7] == 2))
        .collect();
    files.sort();
    files
}

pub(crate) fn trials() -> Vec<Trial> {
    grib2_files()
        .into_iter()
        .map(|p| {
            let name = format!(
                "again::{}",
                p.file_name().and_then(|n| n.to_str()).unwrap_or("?")
            );
            Trial::test(name, move || written_again(&p))
        })
        .collect()
}

/// Each field on a grid the key writer covers, written from its keys alone: it reads back with
/// the same keys (bar the packing's) and values within half a packing step.
fn written_from_keys(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let grib = Grib::open(&bytes)?;
    let mut written = 0;
    for (i, f) in grib.fields().iter().enumerate() {
        let covered = f.edition == 2
            && [
                "regular_ll",
                "rotated_ll",
                "regular_gg",
                "reduced_gg",
                "lambert",
                "polar_stereographic",
                "mercator",
            ]
            .contains(&f.grid.grid_type.as_str());
        if !covered {
            continue;
        }
        let attributes = f.attributes();
        let keys = |name: &str| tensor_grib::attribute_key(&attributes, name);
        let values = grib.values(i, &Limits::default())?;
        let (discipline, sections, how) = sections_from_keys(&keys, values.len(), None)?;
        let w = field(
            discipline,
            &sections,
            &values,
            Some(how),
            &Limits::default(),
        )?;
        let back = Grib::open(&w.message)?;
        let mut again = back.fields()[0].attributes();
        let packing = ["packingType", "bitsPerValue", "numberOfMissing"];
        let mut want = attributes.clone();
        want.retain(|(k, _)| !packing.contains(&k.as_str()));
        again.retain(|(k, _)| !packing.contains(&k.as_str()));
        crate::ensure(want == again, || {
            let differ: Vec<String> = want
                .iter()
                .filter(|kv| !again.contains(kv))
                .map(|(k, v)| {
                    let got = again.iter().find(|(g, _)| g == k).map(|(_, v)| v);
                    format!("{k}: {v:?} became {got:?}")
                })
                .collect();
            format!("field {i}: {}", differ.join("; "))
        })?;
        let decoded = back.values(0, &Limits::default())?;
        crate::within_half_a_step(
            &values,
            &decoded,
            &back.fields()[0].packing,
            &format!("field {i}"),
        )?;
        written += 1;
    }
    crate::ensure(
        written > 0 || !path.to_string_lossy().contains("ll_sfc_grib2"),
        || "no field written".into(),
    )
}

pub(crate) fn key_trials() -> Vec<Trial> {
    grib2_files()
        .into_iter()
        .map(|p| {
            let name = format!(
                "keys::{}",
                p.file_name().and_then(|n| n.to_str()).unwrap_or("?")
            );
            Trial::test(name, move || written_from_keys(&p))
        })
        .collect()
}
