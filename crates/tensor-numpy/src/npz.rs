//! `.npz` files: zip archives of `.npy` files, one per array, named `<name>.npy`.

use crate::error::{Error, Result};
use crate::npy::{Npy, element_bytes, header_bytes};
use std::borrow::Cow;
use std::io::{Seek, Write};
use tensor_core::Limits;
use tensor_dtype::Dtype;
use tensor_zip::Archive;

/// One array of an archive: its name (the entry's, less `.npy`) and its `.npy` bytes,
/// borrowed from the archive when stored (as `numpy.savez` stores them), inflated when
/// deflated (`numpy.savez_compressed`).
#[derive(Clone, Debug)]
pub struct Member<'a> {
    /// The array's name.
    pub name: String,
    /// The `.npy` file's bytes.
    pub bytes: Cow<'a, [u8]>,
}

impl Member<'_> {
    /// The member's `.npy` file read.
    pub fn npy(&self, limits: &Limits) -> Result<Npy<'_>> {
        Npy::open(&self.bytes, limits).map_err(|e| match e {
            Error::Header { reason, .. } => Error::Header {
                at: format!(" of array {:?}", self.name),
                reason,
            },
            other => other,
        })
    }
}

/// An archive's members that hold arrays, and the names of those that hold none a tensor
/// can (object arrays, strings), with why.
pub type Members<'a> = (Vec<Member<'a>>, Vec<(String, String)>);

/// Reads every member of an `.npz` archive: stored ones borrowed, deflated ones inflated
/// within `limits` and checked against their CRC-32; their headers read. A member of a type
/// no tensor holds is named with the reason, the others still read.
pub fn open<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Members<'a>> {
    let archive = Archive::open(bytes, limits)?;
    limits.check_tensor_count(archive.entries().len() as u64)?;
    let mut inflated = 0u64;
    let (mut members, mut left_out) = (Vec::new(), Vec::new());
    for e in archive.entries() {
        let name = e.name.strip_suffix(".npy").unwrap_or(&e.name).to_owned();
        let data = archive.read(e, limits)?;
        if let Cow::Owned(v) = &data {
            inflated = inflated.saturating_add(v.len() as u64);
            limits.check_total_bytes(inflated)?;
        }
        let member = Member { name, bytes: data };
        match member.npy(limits) {
            Ok(_) => members.push(member),
            Err(Error::Unsupported(why)) => left_out.push((member.name, why)),
            Err(e) => return Err(e),
        }
    }
    Ok((members, left_out))
}

/// Checks every member's CRC-32; returns how many.
pub fn verify(bytes: &[u8], limits: &Limits) -> Result<usize> {
    Ok(Archive::open(bytes, limits)?.verify_all(limits)?)
}

/// Writes arrays to an `.npz` archive as `numpy.savez` does: each a stored `<name>.npy`
/// entry, its elements streamed.
pub struct NpzWriter<W: Write + Seek> {
    zip: tensor_zip::Writer<W>,
}

impl<W: Write + Seek> NpzWriter<W> {
    /// A writer at `out`'s current position.
    pub fn new(out: W) -> Result<Self> {
        Ok(NpzWriter {
            zip: tensor_zip::Writer::new(out)?,
        })
    }

    /// Adds the array `name` of `dtype` and `shape`; `body` writes its elements, little-endian
    /// in C order (4- and 6-bit floats a byte each).
    pub fn array(
        &mut self,
        name: &str,
        dtype: Dtype,
        shape: &[u64],
        body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let header = header_bytes(dtype, shape, name)?;
        let size = header.len() as u64 + element_bytes(dtype, shape)?;
        self.zip.stored(&format!("{name}.npy"), size, |out| {
            out.write_all(&header)?;
            body(out)
        })?;
        Ok(())
    }

    /// Writes the archive's directory; returns the output.
    pub fn finish(self) -> Result<W> {
        Ok(self.zip.finish()?)
    }
}
