//! `hookpoint::cli` (feature `cli`): the `hookpoint` subcommands an application mounts in its own
//! binary, where the registry (the compiled-in extensions and points) lives.
//!
//! | subcommand | what it prints |
//! |---|---|
//! | `list [PATTERN]` | points (a glob on the name) with their extensions in run order: layer, origin, what changed them; inactive ones with why |
//! | `explain POINT [EXTENSION]` | why each extension of the point runs or not: position, layer, what overrides or disables it, plugin off, untrusted project, refused files with the reason, last good version in use; the point's web UI assets |
//! | `validate [--deny-warnings]` | every problem of the registry and of every layer folder (`file:line:column: why`) |
//! | `watch [--count N]` | one line per reload of the scope with what changed |
//! | `points [--markdown]` | every point with its kind, payload type, command-hook support and declaration |
//! | `export` | the points as JSON ([`PointsFile`]), for the standalone `hookpoint validate --points` |
//!
//! `--format json` (before or after the subcommand) prints JSON instead of text: one document,
//! or one line per reload for `watch`.
//!
//! **Exit codes** ([`Exit`]): `0` success; `1` problems found (`validate`), or the point or
//! extension asked about does not exist (`explain`); `2` bad usage (clap's own code) or output
//! that could not be written.
//!
//! Mounting it: give your binary a `hookpoint` subcommand and hand it the scope it uses.
//!
//! ```
//! use hookpoint::cli::{self, Exit};
//! let scope = hookpoint::ScopeBuilder::new("app").watch(false).build()?;
//! // `my-app hookpoint explain system_prompt`: pass the arguments from `hookpoint` on.
//! let mut out = Vec::new();
//! let exit = cli::run_from(&scope, ["hookpoint", "points", "--format", "json"], &mut out);
//! assert_eq!(exit, Exit::Ok);
//! let points: serde_json::Value = serde_json::from_slice(&out)?;
//! assert!(points.is_array());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! In `main`: `if args.get(1).is_some_and(|a| a == "hookpoint") { std::process::exit(cli::main_from(&scope, &args[1..]).code()) }`.
//!
//! Comes on top of everything: it reads [`Scope`] ([`introspect`](Scope::introspect),
//! [`status`](Scope::status), [`webui_manifest`](Scope::webui_manifest)) and [`validate`](crate::validate()).

mod explain;
mod export;
mod folders;
mod list;
mod points;
mod validate;
mod watch;

use std::ffi::OsString;
use std::io::{self, Write};

use clap::{Parser, Subcommand, ValueEnum};

pub use explain::{Explanation, ExtensionVerdict};
pub use export::{ExportedExtension, ExportedPoint, PointsFile};
pub use folders::{FolderReport, validate_folders};
pub use validate::ValidateReport;

use crate::scope::Scope;

/// The `hookpoint` command line an application mounts (a clap [`Parser`]; embed
/// [`Command`] as a subcommand of your own parser, or parse this with [`run_from`]).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "hookpoint",
    about = "Inspect, explain and validate this application's extension points"
)]
pub struct Cli {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text, global = true)]
    pub format: Format,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands (see the [module docs](self)).
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Points and their extensions in run order, with layer and origin.
    List {
        /// Only points whose name matches this glob (`*` also crosses `/`), e.g. `tool*`.
        pattern: Option<String>,
    },
    /// Why each extension of a point runs, or does not.
    Explain {
        /// The point, e.g. `system_prompt`.
        point: String,
        /// Only this extension.
        extension: Option<String>,
    },
    /// Every problem of the registry and of every layer folder; exit 1 if any.
    Validate {
        /// Fail on warnings too (overrides that match nothing, refused command hooks).
        #[arg(long)]
        deny_warnings: bool,
    },
    /// One line per reload of the scope, with what changed. Runs until interrupted.
    Watch {
        /// Stop after this many reloads.
        #[arg(long)]
        count: Option<u64>,
    },
    /// Every point with its kind, payload type and declaration.
    Points {
        /// A Markdown reference instead of plain text.
        #[arg(long)]
        markdown: bool,
    },
    /// The points as JSON, for `hookpoint validate --points` without the application.
    Export,
}

/// The output format of every subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Lines for people.
    Text,
    /// JSON for programs.
    Json,
}

/// How a subcommand ended; [`Exit::code`] is the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// `0`: done, nothing wrong.
    Ok,
    /// `1`: problems found, or the point or extension asked about does not exist.
    Problems,
    /// `2`: bad usage, or the output could not be written.
    Usage,
}

impl Exit {
    /// The process exit code: 0, 1 or 2.
    pub fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Problems => 1,
            Exit::Usage => 2,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code() as u8)
    }
}

/// Runs one parsed command line against `scope`, writing to `out`.
///
/// ```
/// use clap::Parser;
/// let scope = hookpoint::ScopeBuilder::new("app").watch(false).build().unwrap();
/// let cli = hookpoint::cli::Cli::parse_from(["hookpoint", "validate"]);
/// let mut out = Vec::new();
/// assert_eq!(hookpoint::cli::run(&scope, &cli, &mut out), hookpoint::cli::Exit::Ok);
/// ```
pub fn run(scope: &Scope, cli: &Cli, out: &mut dyn Write) -> Exit {
    let json = cli.format == Format::Json;
    let result = match &cli.command {
        Command::List { pattern } => list::run(scope, pattern.as_deref(), json, out),
        Command::Explain { point, extension } => {
            explain::run(scope, point, extension.as_deref(), json, out)
        }
        Command::Validate { deny_warnings } => validate::run(scope, *deny_warnings, json, out),
        Command::Watch { count } => watch::run(scope, *count, json, out),
        Command::Points { markdown } => points::run(scope, *markdown, json, out),
        Command::Export => export::run(scope, out),
    };
    result.unwrap_or(Exit::Usage)
}

/// Parses `args` (the first is the program name, e.g. `hookpoint`) and runs them; a parse error
/// or `--help` is written to `out` (exit 2 for errors, 0 for help).
pub fn run_from<I, T>(scope: &Scope, args: I, out: &mut dyn Write) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => run(scope, &cli, out),
        Err(e) => {
            let _ = write!(out, "{}", e.render());
            if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            }
        }
    }
}

/// [`run_from`] on standard output, with clap's errors on standard error: what an
/// application's `main` calls.
pub fn main_from<I, T>(scope: &Scope, args: I) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => {
            let stdout = io::stdout();
            let mut lock = stdout.lock();
            let exit = run(scope, &cli, &mut lock);
            let _ = lock.flush();
            exit
        }
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Ok
            }
        }
    }
}

/// Writes `value` as pretty JSON and a newline.
fn write_json<T: serde::Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::other)?;
    writeln!(out)
}
