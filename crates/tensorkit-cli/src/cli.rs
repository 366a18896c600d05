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
