//! Integration tests of tensor-frame: the reference's fixtures (one trial each), round trips
//! through both encoders, file scanning, and corruption.

use libtest_mimic::Arguments;

mod bitflip;
mod codecs;
mod conformance;
mod hostile;
mod roundtrip;
mod v2;

fn main() {
    let args = Arguments::from_args();
    let mut trials = conformance::trials();
    trials.extend(roundtrip::trials());
    trials.extend(bitflip::trials());
    trials.extend(v2::trials());
    trials.extend(codecs::trials());
    trials.extend(hostile::trials());
    libtest_mimic::run(&args, trials).exit();
}
