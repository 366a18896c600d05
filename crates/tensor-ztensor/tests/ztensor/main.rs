//! Integration tests of tensor-ztensor: one trial per conformance fixture (read back to the
//! recorded tensors, write back to the reference's bytes, reject the bad ones with their
//! class), property-based round trips, and corruption tests.

use libtest_mimic::Arguments;

mod conformance;
mod roundtrip;

fn main() {
    let args = Arguments::from_args();
    let mut trials = conformance::trials();
    trials.extend(conformance::container_trials());
    trials.extend(roundtrip::trials());
    libtest_mimic::run(&args, trials).exit();
}
