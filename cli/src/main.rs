//! `hookpoint`: validates override folders without the application, against the points it
//! exported (`my-app hookpoint export > points.json`). For the CI of a repository that holds
//! override folders.
//!
//! ```text
//! hookpoint validate --points points.json project/ user/
//! hookpoint validate --points points.json --format json project/
//! ```
//!
//! Exit codes: `0` every folder is clean; `1` problems found (each printed as
//! `file:line:column: why`); `2` bad usage or an unreadable points file (with `--format json`,
//! `{"error": "..."}` on stdout).

#![warn(missing_docs)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hookpoint::cli::{Exit, Format, PointsFile, validate_folders};

/// Command-line options.
#[derive(Debug, Parser)]
#[command(
    name = "hookpoint",
    version,
    about = "Check hookpoint override folders against the points an application exported"
)]
struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text, global = true)]
    format: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Every problem of each override folder; exit 1 if any.
    Validate {
        /// The application's points (`<app> hookpoint export > points.json`).
        #[arg(long)]
        points: PathBuf,
        /// Layer folders: each holds `extensions/` and/or `plugins/`.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Command::Validate { points, dirs } = &args.command;
    let points = match PointsFile::read_file(points) {
        Ok(p) => p,
        Err(e) => {
            // With `--format json` the error is JSON too (`{"error": ...}` on stdout), as the
            // mounted command line answers.
            match args.format {
                Format::Json => println!("{}", serde_json::json!({ "error": e })),
                Format::Text => eprintln!("error: {e}"),
            }
            return Exit::Usage.into();
        }
    };
    let report = validate_folders(&points, dirs);
    let failed = !report.problems.is_empty();
    match args.format {
        Format::Json => match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: {e}");
                return Exit::Usage.into();
            }
        },
        Format::Text => {
            for p in &report.problems {
                println!("{p}");
            }
            println!(
                "{}: {} problem(s) in {} folder(s), {} file(s) fine",
                if failed { "failed" } else { "ok" },
                report.problems.len(),
                report.folders,
                report.files
            );
        }
    }
    if failed { Exit::Problems } else { Exit::Ok }.into()
}
