//! `get`: one tensor's values, as text or a NumPy file.

use super::select::{self, Where};
use super::tensors::{elements, find};
use crate::error::{Error, Result};
use crate::report;
use std::path::Path;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::scalar::{self, Scalar};
use tensorkit::TensorRef;

/// One value as text: narrow floats in their own shortest form (a float32 0.1 prints as
/// `0.1`, not as its float64 widening), everything else as in JSON output.
fn scalar_text(s: Scalar, dtype: tensor_dtype::Dtype) -> String {
    use tensor_dtype::Dtype;
    let narrow = matches!(
        dtype,
        Dtype::Float32 | Dtype::Complex64 | Dtype::Float16 | Dtype::Bfloat16
    );
    let f = |v: f64| {
        if !v.is_finite() {
            report::float_json(v)
                .to_string()
                .trim_matches('"')
                .to_owned()
        } else if narrow {
            format!("{:?}", v as f32)
        } else {
            format!("{v:?}")
        }
    };
    match s {
        Scalar::Float(v) => f(v),
        Scalar::Complex(re, im) => format!(
            "{}{}{}j",
            f(re),
            if im < 0.0 || im.is_nan() { "" } else { "+" },
            f(im)
        ),
        other => report::scalar_json(other).to_string(),
    }
}

/// Which tensor `get` reads: by name, by `-w` clauses (exactly one must match), or both.
#[derive(Debug)]
pub struct Which<'a> {
    /// Its name (or `#<i>`).
    pub name: Option<&'a str>,
    /// Clauses it matches.
    pub clauses: &'a [Where],
}

/// The one tensor `which` picks.
fn pick<'f>(opened: &'f tensorkit::File, which: &Which<'_>, file: &Path) -> Result<TensorRef<'f>> {
    if let Some(name) = which.name {
        let found = find(opened.tensor_set(), name, file)?;
        let lookup = |k: &str| tensor_value(&found, opened, k);
        if !select::passes(which.clauses, &lookup) {
            return Err(Error::UnknownTarget {
                what: format!(
                    "{}: tensor {name:?} does not match the -w clauses",
                    file.display()
                ),
            });
        }
        return Ok(found);
    }
    let mut matching = opened.tensors().filter(|t| {
        let lookup = |k: &str| tensor_value(t, opened, k);
        select::passes(which.clauses, &lookup)
    });
    match (matching.next(), matching.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(Error::UnknownTarget {
            what: format!("{}: no tensor matches the -w clauses", file.display()),
        }),
        (Some(a), Some(b)) => Err(Error::UnknownTarget {
            what: format!(
                "{}: several tensors match the -w clauses ({}, {}, …): give a name, or more clauses",
                file.display(),
                a.name(),
                b.name()
            ),
        }),
    }
}

/// Tensor `t`'s value for `key`: its attributes first, then its file's metadata.
pub(super) fn tensor_value(t: &TensorRef<'_>, file: &tensorkit::File, key: &str) -> Option<String> {
    select::in_cbor(t.attributes(), key)
        .or_else(|| file.metadata().and_then(|m| select::in_json(m, key)))
}

/// `get`: the tensor's values as text, one row of the last dimension per line, or written
/// to `output` as a `.npy` file.
pub fn get(
    file: &Path,
    which: &Which<'_>,
    output: Option<&Path>,
    raw: bool,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(file, limits)?;
    let found = pick(&opened, which, file)?;
    let name = found.name();
    let key: &str = which.name.unwrap_or(&name);
    // --raw: a GGUF quantized tensor's blocks as stored, as bytes; a tensor stored as its
    // elements is its own raw bytes.
    let blocks = match (raw, found.blocks()) {
        (true, Some((_, bytes, shape))) => Some(tensorkit::TensorView::new(
            bytes,
            tensorkit::Dtype::Uint8,
            &shape,
            tensorkit::ByteOrder::Little,
        )?),
        (true, None) => {
            if let Some(encoding) = found.encoding() {
                return Err(Error::UnknownTarget {
                    what: format!(
                        "--raw gives the stored blocks of GGUF quantized tensors; {key:?} is stored as {encoding}"
                    ),
                });
            }
            None
        }
        (false, _) => None,
    };
    let (dtype, shape) = match &blocks {
        Some(v) => (v.dtype(), v.shape().to_vec()),
        None => (found.dtype(), found.shape().to_vec()),
    };
    if let Some(path) = output {
        let mut f = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
        match &blocks {
            Some(v) => crate::npy::write_view(v, key, limits, &mut f)?,
            None => crate::npy::write(found, key, &mut f)?,
        }
        f.commit()?;
        // Packed types are written one element per byte, as ml_dtypes holds them.
        let (bytes, how) = if dtype.is_packed() {
            (
                tensor_dtype::shape::element_count(&shape)?,
                ", one element per byte",
            )
        } else {
            (tensor_dtype::shape::byte_len(dtype, &shape)?, "")
        };
        return Ok(format!(
            "wrote {} ({dtype} {}, {bytes} bytes of data{how})\n",
            path.display(),
            report::shape_text(&shape),
        ));
    }
    let mut held = None;
    let v = match blocks {
        Some(v) => v,
        None => elements(found, &mut held)?,
    };
    let le = v.to_le_bytes();
    let n = usize::try_from(v.element_count()).unwrap_or(usize::MAX);
    let row = v
        .shape()
        .last()
        .map_or(1, |&d| usize::try_from(d).unwrap_or(1))
        .max(1);
    let mut out = format!(
        "# {} {} {}\n",
        key,
        v.dtype(),
        report::shape_text(v.shape())
    );
    let mut start = 0;
    while start < n {
        let values = scalar::decode(v.dtype(), &le, ByteOrder::Little, start, row);
        let line: Vec<String> = values
            .into_iter()
            .map(|s| scalar_text(s, v.dtype()))
            .collect();
        out.push_str(&line.join(" "));
        out.push('\n');
        start += row;
    }
    Ok(out)
}
