//! Command hooks (feature `command-hooks`): an executable or a manifest's `command` in an override folder
//! runs as an extension, with Claude Code's protocol. This module holds the runner (spawn,
//! timeout, process group, bounded pipes) behind a narrow crate-internal API, and the public
//! error type and limits.
//!
//! For each invocation the runner:
//!
//! 1. resolves the program (`argv[0]`): a name containing `/` is taken relative to the layer
//!    folder; a bare name is looked up on the `PATH` the hook will see (absolute entries only);
//! 2. starts it directly (no shell) in the layer folder, with an environment cleared down to
//!    [`ENV_ALLOW_LIST`] plus `HOOKPOINT_POINT`, `HOOKPOINT_EXTENSION` and `HOOKPOINT_LAYER`, in
//!    a process group of its own;
//! 3. writes `{"point", "extension", "payload"}` (strictly valid JSON whatever the payload holds)
//!    to its stdin and closes it, while reading stdout (at most [`MAX_STDOUT_BYTES`]) and stderr
//!    (the first [`MAX_STDERR_BYTES`] kept) concurrently, so no pipe can fill up and deadlock;
//! 4. waits until the hook exits or its timeout ([`DEFAULT_TIMEOUT`] unless the manifest says
//!    `timeout_ms`) elapses; on timeout the whole process group is killed with `SIGKILL`;
//! 5. when the hook exits, kills whatever it left behind in its process group (a hook is a
//!    filter, not a launcher), and reads the outcome: exit 0 with `{"payload": ...}` replaces
//!    the payload, `{}` or nothing leaves it; anything else is a [`CommandError`].
//!
//! The timeout covers the whole invocation: start, run, and draining the output pipes. A hook
//! that exits 0 without reading its stdin succeeds (the host ignores `EPIPE`; a host that
//! restores the default `SIGPIPE` disposition would be terminated by it).
//!
//! A failed hook makes the dispatch return an [`Error`](crate::Error) of kind
//! [`ErrorKind::Command`](crate::ErrorKind::Command) whose `source()` is the [`CommandError`]:
//!
//! ```no_run
//! # fn run() -> Result<(), hookpoint::Error> { Ok(()) }
//! use hookpoint::command::CommandError;
//! if let Err(e) = run() {
//!     match std::error::Error::source(&e).and_then(|s| s.downcast_ref::<CommandError>()) {
//!         Some(CommandError::ExitedNonZero { code, stderr, .. }) => eprintln!("hook said no ({code}): {stderr}"),
//!         Some(other) => eprintln!("hook failed: {other}"),
//!         None => eprintln!("{e}"),
//!     }
//! }
//! ```

mod blocking;
mod group;
mod nonblocking;
pub(crate) mod output;
mod prepare;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use output::parse_output as parse_hook_output;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// Default per-invocation time limit: 10 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest stdout a hook may produce, in bytes (1 MiB). Producing more kills
/// the hook's process group and fails with [`CommandError::BadOutput`].
pub const MAX_STDOUT_BYTES: usize = 1024 * 1024;

/// How many bytes of a hook's stderr are kept (16 KiB). Further stderr is
/// drained and discarded (so the hook never blocks on it) and the kept text
/// ends with a `[... N more bytes of stderr dropped]` marker. Exceeding it is
/// not an error.
pub const MAX_STDERR_BYTES: usize = 16 * 1024;

/// Names of the host environment variables passed through to a hook; every
/// other variable is removed. Variables not set in the host are simply absent.
///
/// - `PATH`: where programs are looked up, both for a bare `argv[0]` and by
///   the hook itself (needed by `#!/usr/bin/env python3` style scripts).
/// - `HOME`: the user's home folder; many tools locate their config there.
/// - `USER`: the user's login name.
/// - `LANG`: the default locale, so tools print and decode text correctly.
/// - `LC_ALL`: locale override taking precedence over `LANG` and `LC_*`.
/// - `TZ`: time zone used to render local times.
/// - `TMPDIR`: folder for temporary files.
/// - `SYSTEMROOT`: Windows system folder, required by many Windows programs
///   (harmless and normally absent on Unix).
///
/// The variables hookpoint adds (`HOOKPOINT_POINT`, `HOOKPOINT_EXTENSION`, `HOOKPOINT_LAYER`) are
/// applied afterwards.
pub const ENV_ALLOW_LIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TZ",
    "TMPDIR",
    "SYSTEMROOT",
];

/// How long to wait for a `SIGKILL`ed hook to be reaped before giving up on
/// it (it is then reaped in the background).
pub(crate) const REAP_GRACE: Duration = Duration::from_secs(2);

/// What to run for one hook invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandSpec {
    /// Program followed by its arguments; must not be empty. The program is
    /// resolved relative to [`cwd`](Self::cwd) if it contains a `/` (an
    /// absolute path stays as it is), otherwise it is looked up on the `PATH`
    /// the hook will see (from [`ENV_ALLOW_LIST`] or [`env`](Self::env));
    /// empty and relative `PATH` entries are skipped. Arguments are passed
    /// verbatim (no shell, no globbing).
    pub argv: Vec<OsString>,
    /// The layer folder: the program runs with this as its working directory.
    /// A relative path is taken relative to the host's current directory.
    pub cwd: PathBuf,
    /// Time limit for the whole invocation (start to output drained); on
    /// expiry the hook's process group is killed and
    /// [`CommandError::TimedOut`] returned. Defaults to [`DEFAULT_TIMEOUT`].
    /// A duration too large to add to the current instant means "no limit".
    pub timeout: Duration,
    /// Extra `(name, value)` variables set after the environment has been
    /// cleared down to [`ENV_ALLOW_LIST`], in order (later entries win), for
    /// example `HOOKPOINT_POINT`, `HOOKPOINT_EXTENSION`, `HOOKPOINT_LAYER`.
    pub env: Vec<(String, String)>,
    /// The folder [`cwd`](Self::cwd) lies in, held open: the program then runs in that very
    /// folder whatever its path names by the time it starts (a folder plugin's, see
    /// [`HeldFolder`]). `None`: `cwd` is taken by its path.
    pub held: Option<HeldFolder>,
}

/// A folder held open by its handle, for commands that must run from the folder that was
/// checked (a folder plugin's): the child changes into it by the handle (`fchdir`, then into
/// `cwd` below it), and a program given by a path below it is run by a path relative to it, so
/// neither a rename nor a symlink put in its place can change what starts.
#[derive(Debug, Clone)]
pub(crate) struct HeldFolder {
    /// The open folder.
    pub(crate) handle: std::sync::Arc<std::fs::File>,
    /// Its path as it was checked; `cwd` and program paths below it are resolved through
    /// `handle` instead.
    pub(crate) path: PathBuf,
}

impl PartialEq for HeldFolder {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.handle, &other.handle) && self.path == other.path
    }
}

impl Eq for HeldFolder {}

impl CommandSpec {
    /// A spec running `argv` in `cwd` with [`DEFAULT_TIMEOUT`] and no extra
    /// environment variables.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn new<I, S>(argv: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: cwd.into(),
            timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
            held: None,
        }
    }
}

/// What a hook that exited with status 0 asked for.
///
/// Its stdout must be empty (only JSON whitespace) or a JSON object with the keys `payload`
/// (any JSON value, `null` included: replaces the payload), `response` (on a wrap point: the
/// answer, decoded with the point's response codec), `continue` (`false` stops the
/// chain after this hook, Claude Code's convention) and `stopReason` (a string, logged); any
/// other output is [`CommandError::BadOutput`].
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct HookOutput {
    /// `{"payload": v}`: replace the payload with `v`; `None` keeps it.
    pub(crate) payload: Option<Value>,
    /// `{"response": v}`: on a wrap point, the answer (the rest of the nest does not run).
    pub(crate) response: Option<Value>,
    /// `{"continue": false}`: later extensions of this dispatch do not run.
    pub(crate) stop: bool,
    /// `{"stopReason": "..."}`, when stopping.
    pub(crate) stop_reason: Option<String>,
}

impl HookOutput {
    /// Empty output or `{}`: nothing to do.
    #[cfg(test)]
    pub(crate) const UNCHANGED: HookOutput = HookOutput {
        payload: None,
        response: None,
        stop: false,
        stop_reason: None,
    };

    /// `{"payload": v}`.
    #[cfg(test)]
    pub(crate) fn replace(v: Value) -> HookOutput {
        HookOutput {
            payload: Some(v),
            ..HookOutput::default()
        }
    }
}

/// Why a command hook failed. It is the `source()` of the [`Error`](crate::Error) of kind
/// [`ErrorKind::Command`](crate::ErrorKind::Command) that dispatch returns; downcast to match on it.
///
/// `program` is the resolved path that was (or would have been) executed, or
/// `argv[0]` as given when resolution itself failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The program could not be run: empty `argv`, not found (on disk or on
    /// `PATH`), not executable, unusable format (`ENOEXEC`), missing `#!`
    /// interpreter, unsupported platform, or the runner could not create its
    /// helper threads or wait for the process.
    #[error("could not start hook {}: {source}", program.display())]
    CouldNotStart {
        /// The program that was to be run.
        program: PathBuf,
        /// The underlying operating-system error.
        #[source]
        source: io::Error,
    },
    /// The hook ran longer than its `timeout_ms` (or kept its output
    /// pipes open that long); its process group was killed with `SIGKILL`.
    #[error("hook {} timed out after {after:?} and was killed", program.display())]
    TimedOut {
        /// The program that was run.
        program: PathBuf,
        /// The configured time limit that elapsed.
        after: Duration,
    },
    /// The hook was terminated by a signal (Unix signal number, e.g. 9 for
    /// `SIGKILL`) that the runner did not send because of a timeout.
    #[error("hook {} was killed by signal {signal}{}", program.display(), stderr_head(stderr))]
    Signalled {
        /// The program that was run.
        program: PathBuf,
        /// The signal number.
        signal: i32,
        /// The hook's stderr, lossily decoded as UTF-8 and bounded as
        /// described for [`MAX_STDERR_BYTES`].
        stderr: String,
    },
    /// The hook exited with a non-zero status: "the hook said no".
    #[error("hook {} exited with status {code}{}", program.display(), stderr_head(stderr))]
    ExitedNonZero {
        /// The program that was run.
        program: PathBuf,
        /// The exit status (1..=255 on Unix).
        code: i32,
        /// The hook's stderr, lossily decoded as UTF-8; at most
        /// [`MAX_STDERR_BYTES`] of it followed by a truncation marker when
        /// there was more.
        stderr: String,
    },
    /// The hook exited with status 0 but its stdout is not acceptable: not
    /// JSON, not a JSON object, an object with keys other than `"payload"`,
    /// longer than [`MAX_STDOUT_BYTES`] (the hook is killed as soon as it
    /// goes over), or unreadable.
    #[error("hook {} produced bad output: {reason}", program.display())]
    BadOutput {
        /// The program that was run.
        program: PathBuf,
        /// Human-readable description of the problem.
        reason: String,
    },
}

/// The start of a hook's stderr for `Display`: `": "` and its first 300 characters (to the first
/// blank line), or nothing when it is empty. The whole (bounded) stderr stays in the field.
fn stderr_head(stderr: &str) -> String {
    let text = stderr.trim();
    if text.is_empty() {
        return String::new();
    }
    let head = text.split("\n\n").next().unwrap_or(text);
    let mut out: String = head.chars().take(300).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    format!(": {out}")
}

impl CommandError {
    /// The program this error is about (see the type-level docs).
    pub fn program(&self) -> &Path {
        match self {
            Self::CouldNotStart { program, .. }
            | Self::TimedOut { program, .. }
            | Self::Signalled { program, .. }
            | Self::ExitedNonZero { program, .. }
            | Self::BadOutput { program, .. } => program,
        }
    }
}

/// Builds the bytes written to a hook's stdin: the compact JSON object
/// `{"point":<point>,"extension":<extension>,"payload":<payload>}`.
///
/// The result is always strictly valid UTF-8 JSON: strings are escaped by
/// `serde_json` (quotes, backslashes and all control characters U+0000 to
/// U+001F). It holds the whole serialized payload in memory.
pub(crate) fn hook_input(point: &str, extension: &str, payload: &Value) -> Vec<u8> {
    // `Display` for `Value` is serde_json's compact serializer; it cannot fail
    // for a `Value` (no non-string keys, no non-finite numbers).
    format!(
        "{{\"point\":{},\"extension\":{},\"payload\":{}}}",
        Value::from(point),
        Value::from(extension),
        payload
    )
    .into_bytes()
}

/// Runs a hook synchronously and returns what it asked for.
///
/// `input` is written to the hook's stdin (then stdin is closed); a hook that
/// exits without reading it is fine. Blocks the calling thread for at most
/// about `spec.timeout` (plus up to 2 s to reap a killed hook in pathological
/// cases). Uses only `std` (four short-lived helper threads per call: waiter, stdin
/// writer, stdout and stderr readers), so it
/// may be called from anywhere, including inside a Tokio runtime thread
/// (where it blocks that worker).
///
/// # Errors
///
/// See [`CommandError`]: `CouldNotStart`, `TimedOut`, `Signalled`,
/// `ExitedNonZero` or `BadOutput`.
pub(crate) fn run_sync(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    blocking::run(spec, input)
}

/// Runs a hook asynchronously; otherwise identical to [`run_sync`].
///
/// Inside a Tokio runtime it uses `tokio::process` and `tokio::time` (the runtime needs its I/O
/// and time drivers, `Builder::enable_all`; any flavour works), and dropping the future kills
/// the hook's process group. Polled by another executor (no Tokio runtime on this thread), it
/// runs [`run_sync`] on a thread of its own and awaits the answer: the hook's timeout still
/// applies, but dropping the future does not kill it early.
///
/// # Errors
///
/// Same as [`run_sync`].
pub(crate) async fn run_async(
    spec: &CommandSpec,
    input: &[u8],
) -> Result<HookOutput, CommandError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return off_runtime(spec, input).await;
    }
    nonblocking::run(spec, input).await
}

/// [`run_sync`] on a thread of its own, awaited through a channel any executor can poll.
async fn off_runtime(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    let could_not_start = |source: std::io::Error| CommandError::CouldNotStart {
        program: spec.argv.first().map(PathBuf::from).unwrap_or_default(),
        source,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (owned_spec, owned_input) = (spec.clone(), input.to_vec());
    std::thread::Builder::new()
        .name("hookpoint-hook".into())
        .spawn(move || {
            let _ = tx.send(blocking::run(&owned_spec, &owned_input));
        })
        .map_err(could_not_start)?;
    rx.await.unwrap_or_else(|_| {
        Err(could_not_start(std::io::Error::other(
            "the thread running the hook ended without an answer",
        )))
    })
}
