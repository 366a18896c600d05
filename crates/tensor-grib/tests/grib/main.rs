//! Integration tests of tensor-grib: every field of every file ecCodes wrote
//! (`testdata/grib/reference`, made by `scripts/reference/grib_eccodes.py`) decodes to
//! ecCodes' values bit for bit and carries ecCodes' keys; every cut and many damaged copies
//! of those files give an error, never a panic; every one packed again is the message ecCodes
//! writes for the same packing.

use libtest_mimic::{Arguments, Failed, Trial};

mod again;
mod eccodes;
mod hostile;
mod repack;

fn main() {
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = eccodes::trials();
    trials.extend(hostile::trials());
    trials.extend(repack::trials());
    trials.extend(again::trials());
    trials.extend(again::key_trials());
    libtest_mimic::run(&args, trials).exit();
}

/// Fails, naming `what` and the first value that moved, unless every value of `after` is
/// within half a step of `packing` of `before` (and NaN where it was); IEEE packing: within
/// the rounding of a single.
fn within_half_a_step(
    before: &[f64],
    after: &[f64],
    packing: &tensor_grib::Packing,
    what: &str,
) -> Result<(), Failed> {
    let step = packing.simple().map_or(0.0, |s| {
        2f64.powi(s.binary_scale_factor) / 10f64.powi(s.decimal_scale_factor)
    });
    ensure(before.len() == after.len(), || {
        format!("{what}: values lost")
    })?;
    for (x, y) in before.iter().zip(after) {
        let close = (x.is_nan() && y.is_nan())
            || (x - y).abs() <= step / 2.0 + x.abs() * f64::from(f32::EPSILON);
        ensure(close, || format!("{what}: {x} became {y}"))?;
    }
    Ok(())
}

/// Fails with `msg` unless `ok`.
fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(msg().into()) }
}
