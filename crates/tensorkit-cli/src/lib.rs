//! The `tensorkit` command, as a library so that its parts can be tested in-process.
//!
//! ```no_run
//! use clap::Parser;
//! let cli = tensorkit_cli::cli::Cli::parse_from(["tensorkit", "inspect", "model.safetensors"]);
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let status = tensorkit_cli::run(&cli, &mut out, &mut err);
//! assert_eq!(status, 0);
//! ```
#![forbid(unsafe_code)]

pub mod cli;
// The format-neutral layer lives in the library; the command uses it as its own modules.
pub use tensorkit::{error, npy, pipeline_spec};
pub mod convert;
pub mod demo;
pub mod demo_data;
pub mod edit;
mod input;
pub mod report;
pub mod stdlib_meta;
pub mod tools;

pub use input::open;

use cli::{Cli, Command, StdlibMetaCommand};
use error::Result;
use std::io::Write;
use std::path::Path;
use tensor_core::{ErrorKind, Kinded, Limits};

/// Exit status for a file that cannot be read or a check that failed.
pub const EXIT_FAILURE: i32 = 2;

/// What bounds the work a file may ask for, said with a `limit_exceeded` error: which
/// options raise it.
const LIMITS_HINT: &str = "bounded by --max-memory, the bytes one tensor may decode to, and \
    --max-ratio, decoded to stored bytes beyond the first 64 MiB: raise them for a file you \
    trust";

/// The one line on standard error that says why a command failed: `error[kind]: message`,
/// with the command's own hint where it has one — what bounds the work when a limit was
/// passed, which flag renames repeated names (the library says what is wrong; the flags
/// are the command's).
fn error_line(err: &mut dyn Write, e: &tensorkit::Error) {
    let kind = e.kind();
    let hint = match e {
        _ if kind == ErrorKind::LimitExceeded => Some(LIMITS_HINT),
        tensorkit::Error::RepeatedName { .. } => Some("--duplicates suffix"),
        _ => None,
    };
    let _ = match hint {
        Some(hint) => writeln!(err, "error[{kind}]: {e} ({hint})"),
        None => writeln!(err, "error[{kind}]: {e}"),
    };
}

/// Exit status of `verify` when the file carries no checksum or hash: nothing was verified
/// (distinct from a mismatch, which is [`EXIT_FAILURE`]).
pub const EXIT_NOTHING_VERIFIED: i32 = 3;

/// Exit status of `diff` when the files differ (as diff(1) does).
pub const EXIT_DIFFERENT: i32 = 1;

/// Prints a check's report (`verify`, `validate`, `diff`). `Err(status)` when the check
/// failed: the command then exits with `status` without a further error line.
fn report_check(
    out: &mut dyn Write,
    r: Result<(String, bool)>,
    status: i32,
) -> Result<Result<()>, i32> {
    match r {
        Err(e) => Ok(Err(e)),
        Ok((text, failed)) => match write_out(out, &text) {
            Err(e) => Ok(Err(e)),
            Ok(()) if failed => Err(status),
            Ok(()) => Ok(Ok(())),
        },
    }
}

fn inspect(file: &Path, json: bool, out: &mut dyn Write, limits: &Limits) -> Result<()> {
    let opened = open(file, limits)?;
    let set = opened.tensor_set();
    let name = file
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let outline = set.format().adapter().outline(set, &name);
    let text = if json {
        let mut o = report::json(set)?;
        if let Some(outline) = outline {
            o["outline"] = serde_json::Value::from(outline);
        }
        let mut s =
            serde_json::to_string_pretty(&o).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    } else {
        let mut s = report::table(set);
        if let Some(outline) = outline {
            s.push('\n');
            s.push_str(&outline);
        }
        s
    };
    write_out(out, &text)
}

fn write_out(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| tensor_core::Error::io("writing to standard output", e).into())
}

fn stdlib_meta_command(
    cmd: &StdlibMetaCommand,
    out: &mut dyn Write,
    durability: tensorkit::Durability,
) -> Result<()> {
    match cmd {
        StdlibMetaCommand::Decode { file, json } => {
            let meta = stdlib_meta::decode(file)?;
            let text = if *json {
                let mut s =
                    serde_json::to_string_pretty(&tensorkit::stdlib_meta::json::to_json(&meta))
                        .unwrap_or_default();
                s.push('\n');
                s
            } else {
                stdlib_meta::to_table(&meta)
            };
            write_out(out, &text)
        }
        StdlibMetaCommand::Encode { from_json, output } => {
            let meta = stdlib_meta::encode(from_json, output, durability)?;
            write_out(
                out,
                &format!(
                    "wrote {} ({} bytes)\n",
                    output.display(),
                    meta.byte_length()
                ),
            )
        }
    }
}

/// Runs one command, writing its output to `out` and errors to `err`; returns the exit status.
pub fn run(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let before = tensorkit::remote::process_transfer();
    let status = run_command(cli, out, err);
    let after = tensorkit::remote::process_transfer();
    if cli.verbose && after.requests > before.requests {
        let _ = writeln!(
            err,
            "remote: {} requests, {} bytes received",
            after.requests - before.requests,
            after.bytes - before.bytes
        );
    }
    status
}

fn run_command(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let limits = &cli.limits();
    let durability = cli.durability();
    let (result, json) = match &cli.command {
        Command::Inspect { file, json } => (inspect(file, *json, out, limits), *json),
        Command::Ls {
            file,
            clauses,
            keys,
            json,
        } => (
            tools::select::parse_all(clauses)
                .and_then(|clauses| {
                    let listing = tools::Listing {
                        clauses: &clauses,
                        keys,
                        json: *json,
                    };
                    tools::ls(file, &listing, limits)
                })
                .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Get {
            file,
            name,
            clauses,
            output,
            raw,
        } => (
            tools::select::parse_all(clauses)
                .and_then(|clauses| {
                    let which = tools::Which {
                        name: name.as_deref(),
                        clauses: &clauses,
                    };
                    tools::get(file, &which, output.as_deref(), *raw, limits, durability)
                })
                .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Doctor { json } => {
            let d = tensorkit::doctor::doctor();
            let text = if *json {
                format!("{}\n", report::doctor_json(&d))
            } else {
                report::doctor_text(&d)
            };
            if let Err(e) = write_out(out, &text) {
                (Err(e), false)
            } else if d.self_test.iter().any(|t| t.outcome == "failed") {
                return EXIT_FAILURE;
            } else {
                (Ok(()), false)
            }
        }
        Command::Migrate { input, output } => (
            tensorkit::migrate(input, output, limits, durability).and_then(|m| {
                let mut text = format!(
                    "migrated {} wire version 2 message{} ({} objects, {} hashes verified){}: {} ({} bytes)\n",
                    m.v2_messages,
                    if m.v2_messages == 1 { "" } else { "s" },
                    m.objects,
                    m.hashes_verified,
                    if m.v3_messages > 0 {
                        format!(", {} version 3 messages copied", m.v3_messages)
                    } else {
                        String::new()
                    },
                    output.display(),
                    m.bytes
                );
                for n in &m.notes {
                    use std::fmt::Write as _;
                    let _ = writeln!(text, "note: {n}");
                }
                write_out(out, &text)
            }),
            false,
        ),
        Command::Verify { file } => match tensorkit::verify(file, limits) {
            Err(e) => (Err(e), false),
            Ok(v) => {
                if let Err(e) = write_out(out, &report::verification_text(&v, file)) {
                    (Err(e), false)
                } else if let Some(problem) = v.problem {
                    error_line(err, &problem);
                    return if problem.kind() == ErrorKind::MissingHash {
                        EXIT_NOTHING_VERIFIED
                    } else {
                        EXIT_FAILURE
                    };
                } else {
                    (Ok(()), false)
                }
            }
        },
        Command::Diff { a, b, tolerance } => {
            match report_check(out, tools::diff(a, b, *tolerance, limits), EXIT_DIFFERENT) {
                Err(code) => return code,
                Ok(r) => (r, false),
            }
        }
        Command::Copy {
            input,
            output,
            clauses,
            target,
        } => (
            tools::select::parse_all(clauses)
                .and_then(|clauses| {
                    let copying = tools::Copying {
                        output,
                        clauses: &clauses,
                        target,
                    };
                    tools::copy(input, &copying, limits, durability)
                })
                .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Reshuffle {
            input,
            output,
            group_by,
            sort_by,
        } => (
            tools::reshuffle(
                input,
                output,
                &tools::Reshuffling { group_by, sort_by },
                limits,
                durability,
            )
            .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Merge {
            inputs,
            output,
            strategy,
            target,
            quiet,
        } => (
            tools::merge(inputs, output, *strategy, target, !quiet, limits, durability)
                .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Split {
            input,
            out_dir,
            max_tensors,
            max_size,
            target,
        } => (
            match (max_tensors, max_size) {
                (Some(n), _) => tools::split_gguf(
                    input,
                    out_dir,
                    tensorkit::gguf::split::Limit::Tensors(*n),
                    target,
                    limits,
                    durability,
                ),
                (None, Some(bytes)) => tools::split_gguf(
                    input,
                    out_dir,
                    tensorkit::gguf::split::Limit::Bytes(*bytes),
                    target,
                    limits,
                    durability,
                ),
                (None, None) => tools::split(input, out_dir, target, limits, durability),
            }
                .and_then(|t| write_out(out, &t)),
            false,
        ),
        Command::Validate {
            file,
            level,
            canonical,
            json,
        } => {
            let options = tensorkit::ValidateOptions {
                level: (*level).into(),
                canonical: *canonical,
            };
            let r = tensorkit::validate(file, options, limits).map(|o| {
                let text = if *json {
                    format!(
                        "{}\n",
                        serde_json::to_string_pretty(&o.to_json()).unwrap_or_default()
                    )
                } else {
                    let mut text = report::validation_text(&o, file);
                    if o.problems.iter().any(|p| p.kind == ErrorKind::LimitExceeded) {
                        text.push_str("note: ");
                        text.push_str(LIMITS_HINT);
                        text.push('\n');
                    }
                    text
                };
                (text, o.failed())
            });
            match report_check(out, r, EXIT_FAILURE) {
                Err(code) => return code,
                Ok(r) => (r, *json),
            }
        }
        Command::Edit {
            file,
            set,
            delete,
            rename,
            attr,
            from_json,
            dry_run,
            json,
        } => {
            let request = edit::Request {
                set,
                delete,
                rename,
                attr,
                from_json: from_json.as_deref(),
            };
            let options = tensorkit::EditOptions {
                dry_run: *dry_run,
                durability,
                limits: *limits,
            };
            (
                edit::run(file, &request, &options, *json).and_then(|t| write_out(out, &t)),
                *json,
            )
        }
        Command::Convert {
            input,
            output,
            target,
            max_shard_size,
            quiet,
        } => (
            convert::run(
                input,
                output,
                target,
                *max_shard_size,
                !quiet,
                limits,
                durability,
            ).and_then(|s| {
                let written = match &s.index {
                    Some(index) => format!("a shard set indexed by {}", index.display()),
                    None => output.display().to_string(),
                };
                let mut text = format!(
                    "converted {} tensors from {} to {}: {written} ({} bytes)\n",
                    s.tensors,
                    s.from.id(),
                    s.to.id(),
                    s.bytes
                );
                for d in &s.dropped {
                    text.push_str("left out: ");
                    text.push_str(d);
                    text.push('\n');
                }
                write_out(out, &text)
            }),
            false,
        ),
        Command::StdlibMeta(cmd) => (
            stdlib_meta_command(cmd, out, durability),
            matches!(cmd, StdlibMetaCommand::Decode { json: true, .. }),
        ),
        Command::Demo { out: dir, small } => {
            let size = if *small {
                demo_data::Size::Small
            } else {
                demo_data::Size::Default
            };
            let r = demo::run(dir.as_deref(), size).and_then(|text| write_out(out, &text));
            (r, false)
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let kind = e.kind();
            error_line(err, &e);
            if json {
                let v =
                    serde_json::json!({"error": {"kind": kind.as_str(), "message": e.to_string()}});
                let _ = writeln!(out, "{v}");
            }
            EXIT_FAILURE
        }
    }
}
