//! Command-line arguments.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Read, check and convert tensor files: safetensors today, every tensorkit format as they land.
#[derive(Debug, Parser)]
#[command(name = "tensorkit", version, about, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show a file's format, metadata and tensors (format detected from the content).
    Inspect {
        /// The file to read.
        file: PathBuf,
        /// Print one JSON object instead of a table: format, metadata, and per tensor the
        /// name, dtype, shape, SHA-256 of the little-endian elements and the first values.
        #[arg(long)]
        json: bool,
    },
    /// Convert a tensor file to another format, keeping names, dtypes, shapes, values and
    /// metadata; anything the target cannot hold is an error that names it.
    Convert {
        /// The file to read (any supported format, detected from its content).
        input: PathBuf,
        /// The file to write.
        output: PathBuf,
        /// The output format, as `inspect --json` names it (safetensors, bintensors,
        /// bintensors-legacy); by default it follows OUTPUT's extension.
        #[arg(long, value_name = "FORMAT")]
        to: Option<String>,
        /// No progress bar (it is shown only on a terminal, for more than 64 MiB of tensors).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Read or write stdlib-js ndarray meta data (the record `@stdlib/ndarray` serializes).
    #[command(subcommand)]
    StdlibMeta(StdlibMetaCommand),
    /// Write an embedded data set in every supported format, read it back, compare, and print
    /// sizes and throughput.
    Demo {
        /// Keep the files in this directory instead of a temporary one.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Use tiny tensors (a 10° grid): the data set behind the golden files.
        #[arg(long)]
        small: bool,
    },
}

/// `tensorkit stdlib-meta ...`
#[derive(Debug, Subcommand)]
pub enum StdlibMetaCommand {
    /// Decode and strictly validate a meta data buffer, and print its fields.
    Decode {
        /// The buffer to read.
        file: PathBuf,
        /// Print JSON with the conformance fixtures' keys instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write a meta data buffer from a JSON specification (the keys `decode --json` prints;
    /// only `dtype` and `shape` are required).
    Encode {
        /// The JSON specification.
        #[arg(long = "from-json", value_name = "SPEC")]
        from_json: PathBuf,
        /// Where to write the buffer.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
}
