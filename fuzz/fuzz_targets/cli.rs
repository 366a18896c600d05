//! The command itself on arbitrary bytes: `inspect --json`, `ls`, `get` (values and `.npy`),
//! `verify`, `validate`, `diff` and `convert` (with an arbitrary `--pipeline` spec taken from
//! the input) run in process with the default limits. Every command returns an exit status
//! (0, 1 for diff, 2, or 3 for verify with nothing to verify), never a panic.
#![no_main]

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use tensorkit_cli::cli::Cli;

fuzz_target!(|input: &[u8]| {
    // A first line of up to 64 bytes is a pipeline spec, the rest the file; without one the
    // whole input is the file (so the conformance seeds reach every reader).
    let (spec, file) = match input.iter().take(64).position(|&b| b == b'\n') {
        Some(cut) => (String::from_utf8_lossy(&input[..cut]).into_owned(), &input[cut + 1..]),
        None => ("zstd".to_owned(), input),
    };
    let _ = tensorkit::pipeline_spec::PipelineSpec::parse(&spec);
    let dir = std::env::temp_dir().join(format!("tensorkit-fuzz-cli-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("input");
    std::fs::write(&path, file).expect("scratch file");
    let p = path.to_string_lossy().into_owned();
    let npy = dir.join("out.npy").to_string_lossy().into_owned();
    let tgm = dir.join("out.tgm").to_string_lossy().into_owned();
    let st = dir.join("out.safetensors").to_string_lossy().into_owned();
    let runs: Vec<Vec<&str>> = vec![
        vec!["inspect", "--json", &p],
        vec!["ls", &p],
        vec!["get", &p, "#0"],
        vec!["get", &p, "#0", "-o", &npy],
        vec!["verify", &p],
        vec!["validate", &p],
        vec!["diff", &p, &p],
        vec!["convert", "--quiet", "--duplicates", "suffix", &p, &st],
        vec!["convert", "--quiet", &p, &tgm, "--pipeline", &spec],
    ];
    for args in runs {
        let cli = match Cli::try_parse_from(std::iter::once("tensorkit").chain(args.iter().copied())) {
            Ok(c) => c,
            Err(_) => continue,
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = tensorkit_cli::run(&cli, &mut out, &mut err);
        assert!(matches!(status, 0..=3), "{args:?}: status {status}");
    }
});
