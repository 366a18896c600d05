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

/// Fails with `msg` unless `ok`.
fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(msg().into()) }
}
