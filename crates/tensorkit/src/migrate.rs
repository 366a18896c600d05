//! Migrating old wire versions: Tensogram wire version 2 (tensogram 0.14 to 0.16), which
//! tensogram 0.19 and later no longer read, rewritten as version 3.

use crate::error::{Error, Result};
use std::io::Write as _;
use std::path::Path;
use tensor_core::Limits;

pub use crate::adapter::Migrated;

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
    let format = crate::registry::detect(input, &bytes)?;
    let Some(upgraded) = format.adapter().upgrade(input, &bytes, limits)? else {
        return Err(Error::UnknownTarget {
            what: format!(
                "{}: nothing to migrate: the {} file holds no older wire version",
                input.display(),
                format.info().name
            ),
        });
    };
    let mut file = tensor_core::atomic::AtomicFile::create_with(output, durability)?;
    file.write_all(&upgraded.bytes)
        .map_err(|e| tensor_core::Error::io(format!("writing {}", output.display()), e))?;
    file.commit()?;
    Ok(upgraded.report)
}
