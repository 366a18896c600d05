//! `diff`: two files compared tensor by tensor, across formats.

use super::tensors::{digest, elements};
use crate::error::Result;
use crate::report;
use std::fmt::Write as _;
use std::path::Path;
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::scalar::{self, Scalar};
use tensorkit::TensorRef;

/// Real and imaginary parts of a value, for numeric comparison.
fn parts(s: Scalar) -> (f64, f64) {
    match s {
        Scalar::Bool(b) => (f64::from(u8::from(b)), 0.0),
        Scalar::Int(i) => (i as f64, 0.0),
        Scalar::Uint(u) => (u as f64, 0.0),
        Scalar::Float(f) => (f, 0.0),
        Scalar::Complex(re, im) => (re, im),
    }
}

/// Folds the differences between `xs` and `ys` into `worst` (NaN matching NaN counts as
/// equal); `worst` becomes `None` when one holds NaN where the other does not.
fn fold_differences(worst: &mut Option<f64>, xs: Vec<Scalar>, ys: Vec<Scalar>) {
    for (x, y) in xs.into_iter().zip(ys) {
        let ((xr, xi), (yr, yi)) = (parts(x), parts(y));
        for (p, q) in [(xr, yr), (xi, yi)] {
            if p.is_nan() || q.is_nan() {
                if p.is_nan() != q.is_nan() {
                    *worst = None;
                    return;
                }
            } else if p != q
                && let Some(w) = worst
            {
                *w = w.max((p - q).abs());
            }
        }
    }
}

/// The largest difference between `a`'s values and `b`'s, or `None` when one holds NaN
/// where the other does not. `a` is held in memory, `b` streamed in runs: one decoded tensor
/// at a time (bitmasks, whose elements are bits, are compared whole).
fn max_difference(a: TensorRef<'_>, b: TensorRef<'_>) -> Result<Option<f64>> {
    let mut held_a = None;
    let va = elements(a, &mut held_a)?;
    let le = va.to_le_bytes();
    let (da, db) = (va.dtype(), b.dtype());
    let mut worst = Some(0f64);
    if db.is_packed() || da.is_packed() {
        let mut held_b = None;
        let vb = elements(b, &mut held_b)?;
        let n = usize::try_from(va.element_count()).unwrap_or(usize::MAX);
        let xs = scalar::decode(da, &le, ByteOrder::Little, 0, n);
        let ys = scalar::decode(db, &vb.to_le_bytes(), ByteOrder::Little, 0, n);
        fold_differences(&mut worst, xs, ys);
        return Ok(worst);
    }
    let width = db.byte_width().max(1);
    let mut at = 0usize;
    b.stream(&mut |c| {
        let count = c.len() / width;
        if worst.is_some() {
            let xs = scalar::decode(da, &le, ByteOrder::Little, at, count);
            let ys = scalar::decode(db, c, ByteOrder::Little, 0, count);
            fold_differences(&mut worst, xs, ys);
        }
        at += count;
        Ok(())
    })?;
    Ok(worst)
}

/// `diff`: tensor by tensor, by name (or by position for unnamed tensors). Returns the
/// report and whether anything differs beyond `tolerance`.
pub fn diff(a: &Path, b: &Path, tolerance: f64, limits: &Limits) -> Result<(String, bool)> {
    let (fa, fb) = (crate::open(a, limits)?, crate::open(b, limits)?);
    let (sa, sb) = (fa.tensor_set(), fb.tensor_set());
    let (na, nb) = (sa.names(), sb.names());
    let mut out = format!(
        "--- {} ({})\n+++ {} ({})\n",
        a.display(),
        sa.format().id(),
        b.display(),
        sb.format().id()
    );
    let mut differ = false;
    let tbs: Vec<TensorRef<'_>> = sb.tensors().collect();
    for (ta, name) in sa.tensors().zip(&na) {
        let Some(j) = nb.iter().position(|n| n == name) else {
            differ = true;
            let _ = writeln!(out, "- {name}: only in the first file");
            continue;
        };
        let tb = tbs[j];
        if ta.shape() != tb.shape() {
            differ = true;
            let _ = writeln!(
                out,
                "! {name}: shape {} vs {}",
                report::shape_text(ta.shape()),
                report::shape_text(tb.shape())
            );
            continue;
        }
        let dtypes = if ta.dtype() == tb.dtype() {
            String::new()
        } else {
            format!(" ({} vs {})", ta.dtype(), tb.dtype())
        };
        // Identical tensors are found by streaming both through a hash (bounded memory);
        // only tensors that differ are loaded to measure by how much.
        if ta.dtype() == tb.dtype() && digest(ta)? == digest(tb)? {
            let _ = writeln!(out, "= {name}: identical");
            continue;
        }
        match max_difference(ta, tb)? {
            Some(0.0) => {
                let _ = writeln!(out, "= {name}: equal values{dtypes}");
            }
            Some(d) if d <= tolerance => {
                let _ = writeln!(out, "~ {name}: within tolerance, max |a-b| = {d:e}{dtypes}");
            }
            Some(d) => {
                differ = true;
                let _ = writeln!(out, "! {name}: max |a-b| = {d:e}{dtypes}");
            }
            None => {
                differ = true;
                let _ = writeln!(
                    out,
                    "! {name}: NaN in one file where the other has a number{dtypes}"
                );
            }
        }
    }
    for name in nb.iter().filter(|n| !na.contains(n)) {
        differ = true;
        let _ = writeln!(out, "+ {name}: only in the second file");
    }
    if sa.metadata() != sb.metadata() {
        let _ = writeln!(out, "(file metadata differs)");
    }
    Ok((out, differ))
}
