//! The `tensorkit` binary.
#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    let cli = tensorkit_cli::cli::Cli::parse();
    let status = tensorkit_cli::run(
        &cli,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status);
}
