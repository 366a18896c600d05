//! Integration tests of the `tensorkit` binary: one trial per conformance fixture, hostile
//! inputs derived from them, conversions killed mid-write, snapshots of the readable output,
//! and the demo.

mod conformance;
mod convert;
mod derived;
mod edit;
mod foreign;
mod gguf;
mod grib;
mod hostile;
mod killed;
mod netcdf;
mod numpy;
mod onnx;
mod output;
mod pytorch;
mod reference;
mod registered;
mod remote;
mod stdlib;
mod support;
mod tensogram;
mod tools;
mod weather;
mod wire_v2;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = Vec::new();
    trials.extend(conformance::trials());
    trials.extend(hostile::trials());
    trials.extend(derived::trials());
    trials.extend(edit::trials());
    trials.extend(foreign::trials());
    trials.extend(gguf::trials());
    trials.extend(grib::trials());
    trials.extend(killed::trials());
    trials.extend(netcdf::trials());
    trials.extend(numpy::trials());
    trials.extend(onnx::trials());
    trials.extend(convert::trials());
    trials.extend(output::trials());
    trials.extend(pytorch::trials());
    trials.extend(reference::trials());
    trials.extend(registered::trials());
    trials.extend(remote::trials());
    trials.extend(stdlib::trials());
    trials.extend(weather::trials());
    trials.extend(tensogram::trials());
    trials.extend(tools::trials());
    trials.extend(wire_v2::trials());
    libtest_mimic::run(&args, trials).exit();
}
