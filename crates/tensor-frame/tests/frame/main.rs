//! Integration tests of tensor-frame: the reference's fixtures (one trial each), round trips
//! through both encoders, file scanning, and corruption.

use libtest_mimic::Arguments;

mod conformance;

fn main() {
    let args = Arguments::from_args();
    let trials = conformance::trials();
    libtest_mimic::run(&args, trials).exit();
}
