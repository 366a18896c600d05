//! The `tensorkit` binary.
#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    let cli = tensorkit_cli::cli::Cli::parse();
    if let Some(n) = cli.threads {
        // The process's one pool, set before anything runs on it: it cannot fail here.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global();
    }
    tensorkit::remote::RemoteOptions::set_process_defaults(cli.remote_options());
    let status = tensorkit_cli::run(
        &cli,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status);
}
