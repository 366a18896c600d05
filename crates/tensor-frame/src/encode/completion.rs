//! The metadata a message is written with: the caller's, checked, with the library's
//! `_reserved_` entries added.

use crate::error::{Error, Result};
use crate::metadata::{GlobalMetadata, Map, RESERVED};
use crate::provenance::Provenance;
use tensor_descriptor::DataObjectDescriptor;

/// `_reserved_.tensor` for one object.
fn tensor_entry(d: &DataObjectDescriptor) -> crate::MetaValue {
    use crate::MetaValue as V;
    let uints = |v: &[u64]| V::Array(v.iter().map(|&x| V::from(x)).collect());
    V::Map(vec![(
        V::Text("tensor".into()),
        V::Map(vec![
            (V::Text("ndim".into()), V::from(d.ndim)),
            (V::Text("dtype".into()), V::Text(d.dtype.name().into())),
            (V::Text("shape".into()), uints(&d.shape)),
            (V::Text("strides".into()), uints(&d.strides)),
        ]),
    )])
}

/// Checks the caller's metadata: `_reserved_` belongs to the library, and `base` may not
/// name more objects than there are.
pub(crate) fn check_caller_metadata(meta: &GlobalMetadata, objects: Option<usize>) -> Result<()> {
    if !meta.reserved.is_empty() {
        return Err(Error::Metadata(
            "`_reserved_` is written by the library; remove it from the metadata".into(),
        ));
    }
    if let Some(i) = meta.base.iter().position(|m| m.contains_key(RESERVED)) {
        return Err(Error::Metadata(format!(
            "base[{i}] holds `_reserved_`, which is written by the library"
        )));
    }
    if let Some(n) = objects
        && meta.base.len() > n
    {
        return Err(Error::Metadata(format!(
            "`base` has {} entries but there are {n} objects",
            meta.base.len()
        )));
    }
    Ok(())
}

/// The complete metadata: the caller's, with `_reserved_.tensor` in each `base` entry and
/// the provenance at top level. With preceders, `base` entries keep only `_reserved_`.
pub(crate) fn complete_metadata(
    meta: &GlobalMetadata,
    descriptors: &[&DataObjectDescriptor],
    provenance: &Provenance,
    keep_base: bool,
) -> GlobalMetadata {
    let mut out = meta.clone();
    out.base.resize_with(descriptors.len(), Map::new);
    for (entry, d) in out.base.iter_mut().zip(descriptors) {
        if !keep_base {
            entry.clear();
        }
        entry.insert(RESERVED.into(), tensor_entry(d));
    }
    out.reserved = provenance.to_map();
    out
}
