//! Integration tests of tensor-bintensors: one trial per conformance fixture (good, lenient,
//! bad, and the safetensors twins), plus property-based round trips cross-checked with
//! bincode itself.

use libtest_mimic::Arguments;

mod conformance;
mod roundtrip;
mod support;

fn main() {
    let args = Arguments::from_args();
    let mut trials = conformance::trials();
    trials.extend(roundtrip::trials());
    libtest_mimic::run(&args, trials).exit();
}
