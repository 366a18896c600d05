//! Writing fields again from what a format keeps of them (`write::field`): each field of
//! every GRIB 2 file ecCodes wrote, from its sections 1 to 5 and its decoded values, is the
//! message it came from byte for byte where the packing has an encoder here (simple, CCSDS,
//! IEEE, complex); any other packing is written as simple packing with a note, its values the same.

use libtest_mimic::{Failed, Trial};
use std::path::Path;
use tensor_core::Limits;
use tensor_grib::Grib;
use tensor_grib::write::field;

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
        } else if !exact {
            crate::ensure(w.note.is_some(), || {
                format!("field {i}: {} written with no note", f.packing.name())
            })?;
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let dir = tensor_testkit::reference("grib");
    let mut files: Vec<_> = [dir.clone(), dir.join("samples")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("reference files"))
        .map(|e| e.expect("entry").path())
        .filter(|p| std::fs::read(p).is_ok_and(|b| b.len() > 8 && &b[..4] == b"GRIB" && b[7] == 2))
        .collect();
    files.sort();
    files
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
