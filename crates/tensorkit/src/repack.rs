//! GRIB into GRIB: a file's fields packed again ([`repack_grib`]), through tensor-grib's
//! writer.

use crate::error::{Error, Result};
use crate::format::Format;
use std::path::Path;
use tensor_core::Limits;

/// GRIB into GRIB: every field of the file at `input` packed again as `packing` says (empty:
/// an error asking for one)
/// (`simple`, `simple:BITS`, `ccsds`, `ccsds:BITS`, `ieee`, `ieee64`:
/// [`tensor_grib::write::Repacking`]), every other section kept byte for byte, written to
/// `output` whole and renamed into place. Returns the fields and the bytes written.
///
/// # Errors
/// A packing GRIB has not, an input that is not GRIB 2 (another format is refused, naming
/// it: [`save`](crate::save) writes GRIB from other formats), values a packing cannot hold,
/// or a failed write.
pub fn repack_grib(
    input: &Path,
    output: &Path,
    packing: &str,
    limits: &Limits,
    durability: tensor_core::atomic::Durability,
) -> Result<(usize, u64)> {
    let map = crate::local::map_local(input)?;
    let from = crate::registry::detect(input, &map)?;
    if from != Format::GRIB {
        return Err(Error::UnknownTarget {
            what: format!(
                "{} is not GRIB: repack_grib packs GRIB files again; save writes GRIB from other formats",
                from.id()
            ),
        });
    }
    if packing.is_empty() {
        return Err(Error::UnknownTarget {
            what: "GRIB into GRIB packs the fields again: say how (simple, simple:BITS, ccsds, ccsds:BITS, ieee, ieee64)".into(),
        });
    }
    let wrap = |e: tensor_grib::Error| Error::format(input, Format::GRIB.id(), e);
    let how: tensor_grib::write::Repacking = packing.parse().map_err(wrap)?;
    let grib = tensor_grib::Grib::open(&map).map_err(wrap)?;
    let bytes = tensor_grib::write::repack_open(&grib, how, limits).map_err(wrap)?;
    let fields = grib.fields().len();
    let mut f = tensor_core::atomic::AtomicFile::create_with(output, durability)?;
    std::io::Write::write_all(&mut f, &bytes)
        .map_err(|e| tensor_core::Error::io(format!("writing {}", output.display()), e))?;
    f.commit()?;
    Ok((fields, bytes.len() as u64))
}
