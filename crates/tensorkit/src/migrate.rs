//! Migrating old wire versions: Tensogram wire version 2 (tensogram 0.14 to 0.16), which
//! tensogram 0.19 and later no longer read, rewritten as version 3.

use crate::error::{Error, Result};
use crate::model::FormatId;
use std::io::Write as _;
use std::path::Path;
use tensor_core::Limits;

/// What [`migrate`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migrated {
    /// Version 2 messages rewritten as version 3.
    pub v2_messages: usize,
    /// Version 3 messages copied as they were.
    pub v3_messages: usize,
    /// Objects in the version 2 messages (their payloads moved untouched).
    pub objects: usize,
    /// Version 2 hashes checked on the way.
    pub hashes_verified: usize,
    /// Bytes written.
    pub bytes: u64,
    /// What the version 2 writer did that a conforming writer would not (read anyway).
    pub notes: Vec<String>,
}

/// Rewrites the Tensogram file `input` (a path or, with the `remote` feature, a URL) in wire
/// version 3 at `output`, atomically (committed with `durability`): every version 2 message
/// re-framed with its payloads, descriptors and metadata as they are (every version 2 hash checked
/// first; the values decode bit for bit as before), version 3 messages copied. A file with no
/// version 2 message is refused: there is nothing to migrate.
pub fn migrate(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    limits: &Limits,
    durability: tensor_core::atomic::Durability,
) -> Result<Migrated> {
    let (input, output) = (input.as_ref(), output.as_ref());
    let bytes = crate::check::whole_file(input, limits)?;
    if crate::formats::detect(input, &bytes)? != FormatId::Tensogram {
        return Err(Error::UnknownTarget {
            what: format!(
                "{}: only Tensogram files have older wire versions to migrate",
                input.display()
            ),
        });
    }
    if !tensor_frame::v2::holds_v2(&bytes) {
        return Err(Error::UnknownTarget {
            what: format!(
                "{}: every message is wire version 3 already; nothing to migrate",
                input.display()
            ),
        });
    }
    let m = tensor_frame::v2::migrate(&bytes, limits)
        .map_err(crate::formats::tensogram::wrap(input))?;
    let mut file = tensor_core::atomic::AtomicFile::create_with(output, durability)?;
    file.write_all(&m.bytes)
        .map_err(|e| tensor_core::Error::io(format!("writing {}", output.display()), e))?;
    file.commit()?;
    Ok(Migrated {
        v2_messages: m.v2_messages,
        v3_messages: m.v3_messages,
        objects: m.v2_objects,
        hashes_verified: m.hashes_verified,
        bytes: m.bytes.len() as u64,
        notes: m.notes,
    })
}
