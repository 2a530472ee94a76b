//! Command hooks: run an external program as a hook, modelled on Claude Code's
//! command hooks.
//!
//! A hook is a program inside a layer folder. For each invocation the runner:
//!
//! 1. resolves the program (`argv[0]`): a name containing `/` is taken relative
//!    to [`CommandSpec::cwd`]; a bare name is looked up on the `PATH` the hook
//!    will see (absolute `PATH` entries only);
//! 2. starts it directly (no shell) with `cwd` as its working directory, an
//!    environment cleared down to [`ENV_ALLOW_LIST`] plus [`CommandSpec::env`],
//!    and in a process group of its own;
//! 3. writes the input bytes (normally [`hook_input`]) to its stdin from a
//!    separate thread/task and closes stdin, while reading stdout (at most
//!    [`MAX_STDOUT_BYTES`]) and stderr (first [`MAX_STDERR_BYTES`] kept)
//!    concurrently, so no pipe can fill up and deadlock either side;
//! 4. waits until the hook exits or [`CommandSpec::timeout`] elapses; on timeout
//!    the whole process group is killed with `SIGKILL` and the hook is reaped;
//! 5. when the hook exits, kills whatever it left behind in its process group
//!    (a hook is a filter, not a launcher: anything meant to outlive it must
//!    detach into its own session and close the hook's stdout/stderr), and
//!    interprets the exit status and stdout (see [`HookOutput`] and
//!    [`CommandError`]).
//!
//! The timeout covers the whole invocation: start, run, and draining the
//! output pipes. If some process outside the hook's process group (for
//! example one that called `setsid`) keeps the pipes open past the deadline,
//! the call ends with [`CommandError::TimedOut`].
//!
//! Unix only. On other platforms every call fails with
//! [`CommandError::CouldNotStart`] (error kind [`std::io::ErrorKind::Unsupported`]).
//!
//! Writing to a hook that exited without reading its stdin raises `SIGPIPE`
//! in the host; Rust binaries ignore `SIGPIPE` by default, so this shows up as
//! an ignored `EPIPE`. A host that restores the default `SIGPIPE` disposition
//! would be terminated by it.

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
#[cfg(unix)]
const REAP_GRACE: Duration = Duration::from_secs(2);

/// What to run for one hook invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
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
}

impl CommandSpec {
    /// A spec running `argv` in `cwd` with [`DEFAULT_TIMEOUT`] and no extra
    /// environment variables.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn new<I, S>(argv: I, cwd: impl Into<PathBuf>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: cwd.into(),
            timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
        }
    }
}

/// What a hook that exited with status 0 asked for.
///
/// Its stdout must be empty (only JSON whitespace), `{}`, or `{"payload": v}`
/// with any JSON value `v` (including `null`); anything else is
/// [`CommandError::BadOutput`].
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutput {
    /// Empty stdout or `{}`: keep the payload as it was.
    Unchanged,
    /// `{"payload": v}`: replace the payload with `v`.
    Replace(Value),
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
    #[error("hook {} was killed by signal {signal}", program.display())]
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
    #[error("hook {} exited with status {code}", program.display())]
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
pub fn hook_input(point: &str, extension: &str, payload: &Value) -> Vec<u8> {
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
pub fn run_sync(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    #[cfg(unix)]
    {
        unix::run_sync(spec, input)
    }
    #[cfg(not(unix))]
    {
        let _ = input;
        Err(unsupported(spec))
    }
}

/// Runs a hook asynchronously with `tokio::process` and `tokio::time`;
/// otherwise identical to [`run_sync`].
///
/// Must be polled inside a Tokio runtime with the I/O and time drivers
/// enabled (`Builder::enable_all`); any flavour works. `input` is copied so
/// that a spawned task can write it. Dropping the future kills the hook's
/// process group.
///
/// # Errors
///
/// Same as [`run_sync`].
pub async fn run_async(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    #[cfg(unix)]
    {
        unix::run_async(spec, input).await
    }
    #[cfg(not(unix))]
    {
        let _ = input;
        Err(unsupported(spec))
    }
}

#[cfg(not(unix))]
fn unsupported(spec: &CommandSpec) -> CommandError {
    CommandError::CouldNotStart {
        program: spec.argv.first().map(PathBuf::from).unwrap_or_default(),
        source: io::Error::new(
            io::ErrorKind::Unsupported,
            "command hooks are only supported on Unix",
        ),
    }
}

/// Everything needed to start the hook, computed before anything runs.
#[cfg(unix)]
struct Prepared {
    program: PathBuf,
    cwd: PathBuf,
    env: Vec<(OsString, OsString)>,
}

#[cfg(unix)]
fn prepare(spec: &CommandSpec) -> Result<Prepared, CommandError> {
    let Some(argv0) = spec.argv.first() else {
        return Err(CommandError::CouldNotStart {
            program: PathBuf::new(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "argv is empty"),
        });
    };
    let could_not_start =
        |program: PathBuf, source: io::Error| CommandError::CouldNotStart { program, source };

    // The environment the hook will see: allow-list, then spec.env in order.
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for name in ENV_ALLOW_LIST {
        if let Some(value) = std::env::var_os(name) {
            env.push((OsString::from(name), value));
        }
    }
    for (name, value) in &spec.env {
        let name = OsString::from(name);
        env.retain(|(existing, _)| *existing != name);
        env.push((name, OsString::from(value)));
    }

    let cwd = std::path::absolute(&spec.cwd)
        .map_err(|source| could_not_start(PathBuf::from(argv0), source))?;
    let program = if has_slash(argv0) {
        // Absolute so that the child's chdir cannot change its meaning.
        cwd.join(argv0)
    } else {
        let path_var = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map(|(_, value)| value.as_os_str());
        search_path(argv0, path_var).ok_or_else(|| {
            could_not_start(
                PathBuf::from(argv0),
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{:?} is not an executable file in any absolute PATH entry",
                        argv0
                    ),
                ),
            )
        })?
    };
    Ok(Prepared { program, cwd, env })
}

#[cfg(unix)]
fn has_slash(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().contains(&b'/')
}

/// First `dir/name` over the absolute entries of `path_var` that is an
/// executable regular file.
#[cfg(unix)]
fn search_path(name: &std::ffi::OsStr, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Makes the confusing `ENOENT` that `execve` reports for a missing `#!`
/// interpreter say so.
#[cfg(unix)]
fn explain_spawn_error(program: &Path, err: io::Error) -> io::Error {
    if err.kind() == io::ErrorKind::NotFound && program.is_file() {
        let interpreter = shebang(program).unwrap_or_else(|| "?".to_owned());
        return io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the program exists but its #! interpreter {interpreter:?} was not found ({err})"
            ),
        );
    }
    err
}

/// The `#!` line of `program` (without `#!`), if it has one.
#[cfg(unix)]
fn shebang(program: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let file = std::fs::File::open(program).ok()?;
    let n = file.take(head.len() as u64).read(&mut head).ok()?;
    let line = head.get(..n)?.strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    Some(String::from_utf8_lossy(line).trim().to_owned())
}

/// Result of reading a hook's stdout.
#[cfg(unix)]
enum Stdout {
    /// All of it (at most [`MAX_STDOUT_BYTES`]).
    Complete(Vec<u8>),
    /// More than [`MAX_STDOUT_BYTES`]; the process group has been killed.
    TooLarge,
    /// Reading failed.
    Failed(io::Error),
}

/// Turns the kept stderr bytes plus the count of dropped ones into text.
#[cfg(unix)]
fn render_stderr(mut kept: Vec<u8>, dropped: u64) -> String {
    if dropped == 0 {
        return String::from_utf8_lossy(&kept).into_owned();
    }
    trim_partial_utf8_tail(&mut kept);
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    text.push_str(&format!("\n[... {dropped} more bytes of stderr dropped]"));
    text
}

/// Drops an incomplete multi-byte UTF-8 sequence cut off at the end.
#[cfg(unix)]
fn trim_partial_utf8_tail(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let Some(&byte) = bytes.get(len - back) else {
            return;
        };
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let needed = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        if needed > back {
            bytes.truncate(len - back);
        }
        return;
    }
}

/// Interprets the exit status and output of a hook that exited (timeouts
/// are handled by the callers).
#[cfg(unix)]
fn finish(
    program: PathBuf,
    status: std::process::ExitStatus,
    stdout: Stdout,
    stderr: String,
) -> Result<HookOutput, CommandError> {
    use std::os::unix::process::ExitStatusExt;
    if let Stdout::TooLarge = stdout {
        return Err(CommandError::BadOutput {
            program,
            reason: format!("stdout is longer than {MAX_STDOUT_BYTES} bytes"),
        });
    }
    match (status.code(), status.signal()) {
        (Some(0), _) => match stdout {
            Stdout::Complete(bytes) => parse_output(program, &bytes),
            Stdout::Failed(err) => Err(CommandError::BadOutput {
                program,
                reason: format!("could not read stdout: {err}"),
            }),
            Stdout::TooLarge => Err(CommandError::BadOutput {
                program,
                reason: format!("stdout is longer than {MAX_STDOUT_BYTES} bytes"),
            }),
        },
        (Some(code), _) => Err(CommandError::ExitedNonZero {
            program,
            code,
            stderr,
        }),
        (None, Some(signal)) => Err(CommandError::Signalled {
            program,
            signal,
            stderr,
        }),
        // wait() never reports stopped/continued children; be defensive.
        (None, None) => Err(CommandError::ExitedNonZero {
            program,
            code: -1,
            stderr,
        }),
    }
}

/// Parses the stdout of a hook that exited with status 0.
#[cfg(unix)]
fn parse_output(program: PathBuf, stdout: &[u8]) -> Result<HookOutput, CommandError> {
    if stdout
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return Ok(HookOutput::Unchanged);
    }
    let bad = |reason: String| CommandError::BadOutput {
        program: program.clone(),
        reason,
    };
    let value: Value = serde_json::from_slice(stdout)
        .map_err(|err| bad(format!("stdout is not valid JSON: {err}")))?;
    let mut object = match value {
        Value::Object(object) => object,
        other => {
            let kind = match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            };
            return Err(bad(format!("stdout must be a JSON object, got {kind}")));
        }
    };
    if let Some(unknown) = object.keys().find(|key| *key != "payload") {
        return Err(bad(format!(
            "unknown key {unknown:?} in output (only \"payload\" is allowed)"
        )));
    }
    Ok(match object.remove("payload") {
        Some(payload) => HookOutput::Replace(payload),
        None => HookOutput::Unchanged,
    })
}

#[cfg(unix)]
mod unix {
    //! The Unix implementation.

    use super::{
        CommandError, CommandSpec, HookOutput, MAX_STDERR_BYTES, MAX_STDOUT_BYTES, REAP_GRACE,
        Stdout, explain_spawn_error, finish, prepare, render_stderr,
    };
    use std::io::{self, Read, Write};
    use std::os::unix::process::CommandExt;
    use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus, Stdio};
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::time::Instant;

    unsafe extern "C" {
        /// `kill(2)`. Takes two integers and touches no memory of ours, so it
        /// is safe to call. (`pid_t` is a C `int` on every Unix Rust supports.)
        safe fn kill(pid: i32, sig: i32) -> i32;
    }

    /// `SIGKILL` is 9 on every Unix.
    const SIGKILL: i32 = 9;

    /// Sends `SIGKILL` to the process group `pgid` (the hook's pid, since it
    /// was started with `process_group(0)`). Errors (typically `ESRCH`: the
    /// group is already gone) are ignored.
    pub(super) fn kill_group(pgid: u32) {
        // Never signal group 0 (our own group) or use -1 (every process).
        match i32::try_from(pgid) {
            Ok(pgid) if pgid > 1 => {
                let _ = kill(-pgid, SIGKILL);
            }
            _ => {}
        }
    }

    /// Kills the hook's process group when dropped, unless [`Self::kill`] has
    /// already done so. Covers early returns, panics and dropped futures.
    struct Group {
        pgid: u32,
        armed: bool,
    }

    impl Group {
        fn new(pgid: u32) -> Self {
            Self { pgid, armed: true }
        }

        fn kill(&mut self) {
            kill_group(self.pgid);
            self.armed = false;
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if self.armed {
                kill_group(self.pgid);
            }
        }
    }

    fn timed_out(program: std::path::PathBuf, spec: &CommandSpec) -> CommandError {
        CommandError::TimedOut {
            program,
            after: spec.timeout,
        }
    }

    // ----------------------------------------------------------------- sync

    /// Starts a thread that waits for one value of type `T` and runs `work` on
    /// it. Threads are created before the child so that failing to create one
    /// never strands a running child; a thread whose sender is dropped just ends.
    fn spawn_worker<T, F>(name: &str, work: F) -> io::Result<mpsc::Sender<T>>
    where
        T: Send + 'static,
        F: FnOnce(T) + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<T>();
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                if let Ok(value) = rx.recv() {
                    work(value);
                }
            })?;
        Ok(tx)
    }

    enum Recv<T> {
        Got(T),
        Deadline,
        Gone,
    }

    fn recv_until<T>(rx: &mpsc::Receiver<T>, deadline: Option<Instant>) -> Recv<T> {
        let result = match deadline {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(deadline) => rx.recv_timeout(deadline.saturating_duration_since(Instant::now())),
        };
        match result {
            Ok(value) => Recv::Got(value),
            Err(RecvTimeoutError::Timeout) => Recv::Deadline,
            Err(RecvTimeoutError::Disconnected) => Recv::Gone,
        }
    }

    fn read_stdout(stdout: impl Read, pgid: u32) -> Stdout {
        let mut bytes = Vec::new();
        let limit = MAX_STDOUT_BYTES as u64 + 1;
        match stdout.take(limit).read_to_end(&mut bytes) {
            Err(err) => Stdout::Failed(err),
            Ok(_) if bytes.len() > MAX_STDOUT_BYTES => {
                kill_group(pgid);
                Stdout::TooLarge
            }
            Ok(_) => Stdout::Complete(bytes),
        }
    }

    fn read_stderr(mut stderr: impl Read) -> String {
        let mut kept = Vec::new();
        let _ = (&mut stderr)
            .take(MAX_STDERR_BYTES as u64)
            .read_to_end(&mut kept);
        let dropped = io::copy(&mut stderr, &mut io::sink()).unwrap_or(0);
        render_stderr(kept, dropped)
    }

    pub(super) fn run_sync(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
        let prepared = prepare(spec)?;
        let program = prepared.program.clone();
        let could_not_start = |source: io::Error| CommandError::CouldNotStart {
            program: program.clone(),
            source,
        };

        // Helper threads first (see spawn_worker).
        let (status_tx, status_rx) = mpsc::channel::<io::Result<ExitStatus>>();
        let waiter = spawn_worker("hookpoint-wait", move |mut child: Child| {
            let _ = status_tx.send(child.wait());
        })
        .map_err(could_not_start)?;
        let input = input.to_vec();
        let writer = spawn_worker("hookpoint-stdin", move |mut stdin: ChildStdin| {
            // EPIPE (hook exited or closed stdin without reading) is fine;
            // dropping `stdin` closes the pipe so the hook sees EOF.
            let _ = stdin.write_all(&input);
        })
        .map_err(could_not_start)?;
        let (stdout_tx, stdout_rx) = mpsc::channel::<Stdout>();
        let stdout_reader = spawn_worker(
            "hookpoint-stdout",
            move |(stdout, pgid): (ChildStdout, u32)| {
                let _ = stdout_tx.send(read_stdout(stdout, pgid));
            },
        )
        .map_err(could_not_start)?;
        let (stderr_tx, stderr_rx) = mpsc::channel::<String>();
        let stderr_reader = spawn_worker("hookpoint-stderr", move |stderr: ChildStderr| {
            let _ = stderr_tx.send(read_stderr(stderr));
        })
        .map_err(could_not_start)?;

        let deadline = Instant::now().checked_add(spec.timeout);
        let mut child = std::process::Command::new(&program)
            .args(spec.argv.iter().skip(1))
            .current_dir(&prepared.cwd)
            .env_clear()
            .envs(prepared.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|err| could_not_start(explain_spawn_error(&program, err)))?;
        let mut group = Group::new(child.id());

        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let handed_off = match pipes {
            (Some(stdin), Some(stdout), Some(stderr)) => {
                writer.send(stdin).is_ok()
                    && stdout_reader.send((stdout, child.id())).is_ok()
                    && stderr_reader.send(stderr).is_ok()
            }
            _ => false,
        };
        if !handed_off {
            group.kill();
            let _ = child.wait();
            return Err(could_not_start(io::Error::other(
                "could not hand the hook's pipes to the helper threads",
            )));
        }
        if let Err(mpsc::SendError(mut child)) = waiter.send(child) {
            group.kill();
            let _ = child.wait();
            return Err(could_not_start(io::Error::other(
                "could not hand the hook to the waiting thread",
            )));
        }

        let status = match recv_until(&status_rx, deadline) {
            Recv::Got(Ok(status)) => status,
            Recv::Got(Err(err)) => {
                group.kill();
                return Err(could_not_start(err));
            }
            Recv::Gone => {
                group.kill();
                return Err(could_not_start(io::Error::other(
                    "the waiting thread ended unexpectedly",
                )));
            }
            Recv::Deadline => {
                group.kill();
                // SIGKILL cannot be caught; wait for the waiter to reap it.
                let _ = status_rx.recv_timeout(REAP_GRACE);
                return Err(timed_out(program, spec));
            }
        };
        // Kill whatever the hook left behind so its pipes close.
        group.kill();

        let stdout = match recv_until(&stdout_rx, deadline) {
            Recv::Got(stdout) => stdout,
            Recv::Deadline => return Err(timed_out(program, spec)),
            Recv::Gone => Stdout::Failed(io::Error::other("the stdout reader ended unexpectedly")),
        };
        let stderr = match recv_until(&stderr_rx, deadline) {
            Recv::Got(stderr) => stderr,
            Recv::Deadline => return Err(timed_out(program, spec)),
            Recv::Gone => String::new(),
        };
        finish(program, status, stdout, stderr)
    }

    // ---------------------------------------------------------------- async

    /// Aborts a spawned task when dropped (its pipe end is then closed).
    struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

    impl<T> Drop for AbortOnDrop<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }

    /// Awaits `future` until `deadline` (`None`: no deadline); `None` if the
    /// deadline passed first.
    async fn until<F: Future>(
        deadline: Option<tokio::time::Instant>,
        future: F,
    ) -> Option<F::Output> {
        match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, future).await.ok(),
            None => Some(future.await),
        }
    }

    async fn read_stdout_async(stdout: tokio::process::ChildStdout, pgid: u32) -> Stdout {
        use tokio::io::AsyncReadExt;
        let mut bytes = Vec::new();
        let limit = MAX_STDOUT_BYTES as u64 + 1;
        match stdout.take(limit).read_to_end(&mut bytes).await {
            Err(err) => Stdout::Failed(err),
            Ok(_) if bytes.len() > MAX_STDOUT_BYTES => {
                kill_group(pgid);
                Stdout::TooLarge
            }
            Ok(_) => Stdout::Complete(bytes),
        }
    }

    async fn read_stderr_async(mut stderr: tokio::process::ChildStderr) -> String {
        use tokio::io::AsyncReadExt;
        let mut kept = Vec::new();
        let _ = (&mut stderr)
            .take(MAX_STDERR_BYTES as u64)
            .read_to_end(&mut kept)
            .await;
        let dropped = tokio::io::copy(&mut stderr, &mut tokio::io::sink())
            .await
            .unwrap_or(0);
        render_stderr(kept, dropped)
    }

    pub(super) async fn run_async(
        spec: &CommandSpec,
        input: &[u8],
    ) -> Result<HookOutput, CommandError> {
        use tokio::io::AsyncWriteExt;

        let prepared = prepare(spec)?;
        let program = prepared.program.clone();
        let could_not_start = |source: io::Error| CommandError::CouldNotStart {
            program: program.clone(),
            source,
        };

        let deadline = tokio::time::Instant::now().checked_add(spec.timeout);
        let mut command = tokio::process::Command::new(&program);
        command
            .args(spec.argv.iter().skip(1))
            .current_dir(&prepared.cwd)
            .env_clear()
            .envs(prepared.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            // If this future is dropped, Tokio kills and reaps the hook.
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|err| could_not_start(explain_spawn_error(&program, err)))?;
        let Some(pgid) = child.id() else {
            return Err(could_not_start(io::Error::other(
                "the hook was reaped before its pid could be read",
            )));
        };
        let mut group = Group::new(pgid);

        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(could_not_start(io::Error::other(
                "the hook's pipes were not created",
            )));
        };
        let input = input.to_vec();
        let _writer = AbortOnDrop(tokio::spawn(async move {
            // EPIPE is fine (see run_sync); dropping `stdin` closes the pipe.
            let _ = stdin.write_all(&input).await;
        }));
        let mut stdout_task = AbortOnDrop(tokio::spawn(read_stdout_async(stdout, pgid)));
        let mut stderr_task = AbortOnDrop(tokio::spawn(read_stderr_async(stderr)));

        let status = match until(deadline, child.wait()).await {
            Some(Ok(status)) => status,
            Some(Err(err)) => {
                group.kill();
                return Err(could_not_start(err));
            }
            None => {
                group.kill();
                let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
                return Err(timed_out(program, spec));
            }
        };
        group.kill();

        let stdout = match until(deadline, &mut stdout_task.0).await {
            Some(Ok(stdout)) => stdout,
            Some(Err(err)) => Stdout::Failed(io::Error::other(err)),
            None => return Err(timed_out(program, spec)),
        };
        let stderr = match until(deadline, &mut stderr_task.0).await {
            Some(Ok(stderr)) => stderr,
            Some(Err(_)) => String::new(),
            None => return Err(timed_out(program, spec)),
        };
        finish(program, status, stdout, stderr)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    /// Writes an executable (0o755) script into `dir`.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create script folder");
        }
        std::fs::write(&path, body).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("chmod script");
        path
    }

    /// A `#!` line for python3 that does not go through wrappers (pyenv shims
    /// add variables of their own), falling back to `env`.
    fn python() -> String {
        ["/usr/bin/python3", "/usr/local/bin/python3"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .map_or_else(|| "#!/usr/bin/env python3".to_owned(), |p| format!("#!{p}"))
    }

    fn sh_hook(dir: &Path, body: &str) -> CommandSpec {
        script(dir, "hook.sh", &format!("#!/bin/sh\n{body}\n"));
        CommandSpec::new(["./hook.sh"], dir)
    }

    fn py_hook(dir: &Path, body: &str) -> CommandSpec {
        script(dir, "hook.py", &format!("{}\n{body}\n", python()));
        CommandSpec::new(["./hook.py"], dir)
    }

    /// `ETXTBSY`: another test thread forked while this script's write fd
    /// was open; the fd lives on in that child until it execs. Retry.
    fn busy(result: &Result<HookOutput, CommandError>) -> bool {
        matches!(result, Err(CommandError::CouldNotStart { source, .. })
            if source.kind() == io::ErrorKind::ExecutableFileBusy)
    }

    fn sync(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
        for _ in 0..20 {
            let result = run_sync(spec, input);
            if !busy(&result) {
                return result;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        run_sync(spec, input)
    }

    async fn asynchronous(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
        for _ in 0..20 {
            let result = run_async(spec, input).await;
            if !busy(&result) {
                return result;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        run_async(spec, input).await
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime")
    }

    /// Runs `spec` with both runners; returns `[sync, async]` with the time
    /// each took.
    fn both(spec: &CommandSpec, input: &[u8]) -> [(Result<HookOutput, CommandError>, Duration); 2] {
        let start = Instant::now();
        let s = sync(spec, input);
        let s_time = start.elapsed();
        let start = Instant::now();
        let a = runtime().block_on(asynchronous(spec, input));
        let a_time = start.elapsed();
        [(s, s_time), (a, a_time)]
    }

    fn read_pid(path: &Path) -> i32 {
        let text = std::fs::read_to_string(path).expect("pid file");
        text.trim().parse().expect("pid")
    }

    /// Process state letter from /proc, `None` if the process is gone (or
    /// /proc is unavailable).
    fn proc_state(pid: i32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after_name = stat.rsplit_once(')')?.1;
        after_name.trim_start().chars().next()
    }

    /// Waits up to 2 s for `pid` to be dead: gone, or a zombie (for
    /// grandchildren, whose reaping is init's business).
    fn assert_dead_soon(pid: i32) {
        let start = Instant::now();
        loop {
            match proc_state(pid) {
                None | Some('Z') | Some('X') => return,
                Some(state) if start.elapsed() > Duration::from_secs(2) => {
                    panic!("process {pid} still alive (state {state})")
                }
                Some(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    // ------------------------------------------------------------ success

    #[test]
    fn empty_stdout_and_empty_object_mean_unchanged() {
        for body in [
            "cat >/dev/null",
            "echo '{}'",
            "printf ' \\n\\t\\r\\n'",
            "echo ' { } '",
        ] {
            let dir = tempfile::tempdir().expect("tempdir");
            let spec = sh_hook(dir.path(), body);
            for (result, _) in both(&spec, b"{\"x\":1}") {
                assert_eq!(result.expect(body), HookOutput::Unchanged, "{body}");
            }
        }
    }

    #[test]
    fn payload_is_replaced_and_spec_env_is_visible() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = py_hook(
            dir.path(),
            "import json, os, sys\n\
             data = json.load(sys.stdin)\n\
             out = {'payload': {'got': data, 'point': os.environ['HOOKPOINT_POINT'],\n\
                    'cwd': os.getcwd()}}\n\
             json.dump(out, sys.stdout)",
        );
        spec.env
            .push(("HOOKPOINT_POINT".to_owned(), "before-save".to_owned()));
        let payload = serde_json::json!({"text": "tab\there\u{0}nul", "n": [1, 2.5, null]});
        let input = hook_input("before-save", "ext.a", &payload);
        let cwd = std::fs::canonicalize(dir.path()).expect("canonicalize");
        for (result, _) in both(&spec, &input) {
            let HookOutput::Replace(value) = result.expect("hook runs") else {
                panic!("expected Replace");
            };
            assert_eq!(value["got"]["point"], "before-save");
            assert_eq!(value["got"]["extension"], "ext.a");
            assert_eq!(value["got"]["payload"], payload);
            assert_eq!(value["point"], "before-save");
            assert_eq!(value["cwd"], cwd.to_str().expect("utf-8 path"));
        }
    }

    #[test]
    fn payload_null_is_a_replacement() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), "echo '{\"payload\": null}'");
        for (result, _) in both(&spec, b"") {
            assert_eq!(result.expect("runs"), HookOutput::Replace(Value::Null));
        }
    }

    #[test]
    fn exit_zero_without_reading_a_large_input_succeeds() {
        let big = vec![b'x'; 5 * 1024 * 1024];
        for (body, expected) in [
            ("exit 0", HookOutput::Unchanged),
            (
                "echo '{\"payload\": 7}'",
                HookOutput::Replace(serde_json::json!(7)),
            ),
            // Reads a little, then closes stdin and exits.
            ("head -c 10 >/dev/null", HookOutput::Unchanged),
        ] {
            let dir = tempfile::tempdir().expect("tempdir");
            let spec = sh_hook(dir.path(), body);
            for (result, _) in both(&spec, &big) {
                assert_eq!(result.expect(body), expected, "{body}");
            }
        }
    }

    #[test]
    fn large_stdout_before_reading_stdin_does_not_deadlock() {
        let dir = tempfile::tempdir().expect("tempdir");
        // ~900 KB of stdout (well over a pipe buffer) before touching a 2 MB stdin.
        let spec = py_hook(
            dir.path(),
            "import sys\n\
             sys.stdout.write('{\"payload\": \"' + 'y' * 900000 + '\"}')\n\
             sys.stdout.flush()\n\
             n = len(sys.stdin.buffer.read())\n\
             sys.stderr.write('read %d' % n)",
        );
        let input = vec![b' '; 2 * 1024 * 1024];
        for (result, took) in both(&spec, &input) {
            let HookOutput::Replace(Value::String(s)) = result.expect("runs") else {
                panic!("expected a string payload");
            };
            assert_eq!(s.len(), 900_000);
            assert!(took < Duration::from_secs(5), "took {took:?}");
        }
    }

    #[test]
    fn five_megabyte_payload_with_control_characters_reaches_python_intact() {
        let dir = tempfile::tempdir().expect("tempdir");
        // json.load is strict: raw control characters inside strings are rejected.
        let spec = py_hook(
            dir.path(),
            "import json, sys\n\
             data = json.load(sys.stdin)\n\
             s = data['payload']['s']\n\
             json.dump({'payload': {'len': len(s), 'tail': s[-40:],\n\
                        'point': data['point'], 'ext': data['extension']}}, sys.stdout)",
        );
        let unit: String = (0u8..0x20).map(char::from).collect::<String>() + "\"\\/é€😀\u{7f}";
        let mut s = String::new();
        while s.len() < 5 * 1024 * 1024 {
            s.push_str(&unit);
        }
        let chars = s.chars().count();
        let payload = serde_json::json!({ "s": s });
        let input = hook_input("p\u{1}\n", "e\"\u{0}", &payload);
        assert!(input.len() > 5 * 1024 * 1024);
        for (result, _) in both(&spec, &input) {
            let HookOutput::Replace(value) = result.expect("runs") else {
                panic!("expected Replace");
            };
            assert_eq!(value["len"], chars);
            let tail: String = s.chars().skip(chars - 40).collect();
            assert_eq!(value["tail"], tail);
            assert_eq!(value["point"], "p\u{1}\n");
            assert_eq!(value["ext"], "e\"\u{0}");
        }
    }

    #[test]
    fn program_resolution() {
        let dir = tempfile::tempdir().expect("tempdir");
        let body = "#!/bin/sh\necho '{\"payload\": \"ok\"}'\n";
        let abs = script(dir.path(), "sub/hook.sh", body);
        script(dir.path(), "bin/my-hook", body);
        let ok = HookOutput::Replace(serde_json::json!("ok"));

        let cases = [
            CommandSpec::new(["./sub/hook.sh"], dir.path()),
            CommandSpec::new(["sub/hook.sh"], dir.path()),
            CommandSpec::new(["hook.sh"], dir.path().join("sub"))
                .tap_env("PATH", &dir.path().join("sub").display().to_string()),
            CommandSpec::new([abs.as_os_str()], "/"),
            // A bare name is looked up on PATH (spec.env overrides the host's).
            CommandSpec::new(["my-hook"], dir.path()).tap_env(
                "PATH",
                &format!("relative/dir::{}", dir.path().join("bin").display()),
            ),
        ];
        for spec in &cases {
            for (result, _) in both(spec, b"") {
                assert_eq!(result.expect("runs"), ok, "{spec:?}");
            }
        }

        // Relative PATH entries are ignored, even when they would match.
        let spec = CommandSpec::new(["my-hook"], dir.path()).tap_env("PATH", "bin");
        for (result, _) in both(&spec, b"") {
            assert!(
                matches!(&result, Err(CommandError::CouldNotStart { source, .. })
                    if source.kind() == io::ErrorKind::NotFound),
                "{result:?}"
            );
        }
    }

    impl CommandSpec {
        fn tap_env(mut self, name: &str, value: &str) -> Self {
            self.env.push((name.to_owned(), value.to_owned()));
            self
        }
    }

    #[test]
    fn environment_is_cleared_to_the_allow_list() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = py_hook(
            dir.path(),
            "import json, os\n\
             json.dump({'payload': dict(os.environ)}, open(1, 'w'))",
        )
        .tap_env("HOOKPOINT_POINT", "p")
        .tap_env("HOOKPOINT_EXTENSION", "e")
        .tap_env("HOOKPOINT_LAYER", "/layer")
        // Stop python from adding LC_CTYPE (PEP 538) to its own environment.
        .tap_env("PYTHONCOERCECLOCALE", "0");
        let extra: Vec<&str> = spec.env.iter().map(|(k, _)| k.as_str()).collect();
        for (result, _) in both(&spec, b"") {
            let HookOutput::Replace(Value::Object(seen)) = result.expect("runs") else {
                panic!("expected an object");
            };
            for name in seen.keys() {
                assert!(
                    ENV_ALLOW_LIST.contains(&name.as_str()) || extra.contains(&name.as_str()),
                    "unexpected variable {name} in {seen:?}"
                );
            }
            for (name, value) in &spec.env {
                assert_eq!(seen[name], value.as_str());
            }
            for name in ENV_ALLOW_LIST {
                if let Ok(value) = std::env::var(name) {
                    assert_eq!(seen[*name], value, "{name}");
                }
            }
            // Cargo sets this for test binaries; it must not leak through.
            assert!(!seen.contains_key("CARGO_MANIFEST_DIR"));
        }
    }

    // ------------------------------------------------------------ failures

    #[test]
    fn timeout_kills_and_reaps_the_hook() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = sh_hook(dir.path(), "echo $$ > pid\nexec sleep 30");
        spec.timeout = Duration::from_millis(200);
        for (result, took) in both(&spec, b"") {
            assert!(
                matches!(&result, Err(CommandError::TimedOut { after, .. })
                    if *after == Duration::from_millis(200)),
                "{result:?}"
            );
            assert!(took < Duration::from_secs(1), "took {took:?}");
            // We are the parent: if it were not reaped it would be a zombie.
            let pid = read_pid(&dir.path().join("pid"));
            assert_eq!(proc_state(pid), None, "hook {pid} not reaped");
        }
    }

    #[test]
    fn timeout_is_not_defeated_by_a_grandchild_holding_the_pipes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = sh_hook(
            dir.path(),
            "sleep 30 &\necho $! > grandchild\necho $$ > pid\nwait",
        );
        spec.timeout = Duration::from_millis(200);
        for (result, took) in both(&spec, b"") {
            assert!(
                matches!(result, Err(CommandError::TimedOut { .. })),
                "{result:?}"
            );
            assert!(took < Duration::from_secs(1), "took {took:?}");
            assert_eq!(proc_state(read_pid(&dir.path().join("pid"))), None);
            assert_dead_soon(read_pid(&dir.path().join("grandchild")));
        }
    }

    #[test]
    fn leftover_background_process_is_killed_when_the_hook_exits() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The background sleep inherits stdout and stderr; the hook itself
        // finishes immediately.
        let spec = sh_hook(
            dir.path(),
            "sleep 30 &\necho $! > grandchild\necho '{\"payload\": \"done\"}'",
        );
        for (result, took) in both(&spec, b"") {
            assert_eq!(
                result.expect("runs"),
                HookOutput::Replace(serde_json::json!("done"))
            );
            assert!(took < Duration::from_secs(2), "took {took:?}");
            assert_dead_soon(read_pid(&dir.path().join("grandchild")));
        }
    }

    #[test]
    fn dropping_the_async_future_kills_the_hook() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(
            dir.path(),
            "echo $$ > pid\nsleep 30 &\necho $! > grandchild\nwait",
        );
        let result = runtime().block_on(async {
            tokio::time::timeout(Duration::from_millis(300), run_async(&spec, b"")).await
        });
        assert!(result.is_err(), "should still have been running");
        assert_dead_soon(read_pid(&dir.path().join("pid")));
        assert_dead_soon(read_pid(&dir.path().join("grandchild")));
    }

    #[test]
    fn nonzero_exit_reports_code_and_stderr() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), "cat >/dev/null\necho 'no, because' >&2\nexit 3");
        for (result, _) in both(&spec, b"{}") {
            match result {
                Err(CommandError::ExitedNonZero { code, stderr, .. }) => {
                    assert_eq!(code, 3);
                    assert_eq!(stderr, "no, because\n");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn long_stderr_is_truncated_with_a_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        // 'a' then 2-byte characters: the cut at MAX_STDERR_BYTES splits one.
        let spec = py_hook(
            dir.path(),
            "import sys\n\
             sys.stderr.buffer.write(('a' + 'é' * 50000).encode())\n\
             sys.exit(1)",
        );
        for (result, _) in both(&spec, b"") {
            let Err(CommandError::ExitedNonZero {
                code: 1, stderr, ..
            }) = result
            else {
                panic!("{result:?}");
            };
            let (kept, marker) = stderr.split_once('\n').expect("marker line");
            assert!(kept.len() <= MAX_STDERR_BYTES);
            assert_eq!(
                kept.len(),
                MAX_STDERR_BYTES - 1,
                "partial character dropped"
            );
            assert!(kept.starts_with("aé") && !kept.contains('\u{fffd}'));
            let total = 1 + 2 * 50000;
            let dropped = total - MAX_STDERR_BYTES;
            assert_eq!(
                marker,
                format!("[... {dropped} more bytes of stderr dropped]")
            );
        }
    }

    #[test]
    fn death_by_signal_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), "echo dying >&2\nkill -9 $$");
        for (result, _) in both(&spec, b"") {
            match result {
                Err(CommandError::Signalled { signal, stderr, .. }) => {
                    assert_eq!(signal, 9);
                    assert_eq!(stderr, "dying\n");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn programs_that_cannot_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let plain = script(d, "plain.sh", "#!/bin/sh\nexit 0\n");
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        script(d, "bad-interp.sh", "#!/nonexistent/interp -x\nexit 0\n");
        script(d, "no-shebang", "echo this is not a binary\n");
        std::fs::create_dir(d.join("a-dir")).expect("mkdir");

        let cases: [(CommandSpec, &str); 7] = [
            (CommandSpec::new(["./missing.sh"], d), "missing"),
            (CommandSpec::new(["./plain.sh"], d), "not executable"),
            (CommandSpec::new(["./bad-interp.sh"], d), "bad interpreter"),
            (CommandSpec::new(["./no-shebang"], d), "ENOEXEC"),
            (CommandSpec::new(["./a-dir"], d), "directory"),
            (
                CommandSpec::new(["surely-not-a-real-program-xyz"], d),
                "not on PATH",
            ),
            (CommandSpec::new(Vec::<OsString>::new(), d), "empty argv"),
        ];
        for (spec, what) in &cases {
            for (result, _) in both(spec, b"input") {
                let Err(CommandError::CouldNotStart { program, source }) = &result else {
                    panic!("{what}: {result:?}");
                };
                if *what == "bad interpreter" {
                    assert_eq!(program, &d.join("./bad-interp.sh"));
                    assert_eq!(source.kind(), io::ErrorKind::NotFound);
                    let message = source.to_string();
                    assert!(message.contains("/nonexistent/interp -x"), "{message}");
                }
                if *what == "not executable" {
                    assert_eq!(source.kind(), io::ErrorKind::PermissionDenied);
                }
                if *what == "ENOEXEC" {
                    assert_eq!(source.raw_os_error(), Some(8), "{source}");
                }
            }
        }
    }

    #[test]
    fn unacceptable_stdout_is_bad_output() {
        for (body, needle) in [
            ("echo 'not json'", "not valid JSON"),
            ("echo '[1,2]'", "got an array"),
            ("echo '\"text\"'", "got a string"),
            ("echo '{\"payload\":1,\"extra\":2}'", "\"extra\""),
            ("echo '{}{}'", "not valid JSON"),
            ("printf '\\377\\376'", "not valid JSON"),
        ] {
            let dir = tempfile::tempdir().expect("tempdir");
            let spec = sh_hook(dir.path(), body);
            for (result, _) in both(&spec, b"") {
                let Err(CommandError::BadOutput { reason, .. }) = &result else {
                    panic!("{body}: {result:?}");
                };
                assert!(reason.contains(needle), "{body}: {reason}");
            }
        }
    }

    #[test]
    fn stdout_limit_is_exact() {
        let dir = tempfile::tempdir().expect("tempdir");
        // `{"payload":1}` padded with spaces to exactly N bytes.
        let spec = py_hook(
            dir.path(),
            "import sys\n\
             n = int(sys.argv[1])\n\
             head = b'{\"payload\":1}'\n\
             sys.stdout.buffer.write(head + b' ' * (n - len(head)))",
        );
        let mut at_limit = spec.clone();
        at_limit.argv.push(MAX_STDOUT_BYTES.to_string().into());
        for (result, _) in both(&at_limit, b"") {
            assert_eq!(result.expect("at limit"), HookOutput::Replace(1.into()));
        }
        let mut over = spec;
        over.argv.push((MAX_STDOUT_BYTES + 1).to_string().into());
        for (result, _) in both(&over, b"") {
            assert!(
                matches!(&result, Err(CommandError::BadOutput { reason, .. })
                    if reason.contains("longer than")),
                "{result:?}"
            );
        }
    }

    #[test]
    fn flooding_stdout_kills_the_hook_promptly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = py_hook(
            dir.path(),
            "import os, sys, time\n\
             open('pid', 'w').write(str(os.getpid()))\n\
             sys.stdout.buffer.write(b'x' * (3 * 1024 * 1024))\n\
             sys.stdout.flush()\n\
             time.sleep(30)",
        );
        for (result, took) in both(&spec, b"") {
            assert!(
                matches!(&result, Err(CommandError::BadOutput { .. })),
                "{result:?}"
            );
            assert!(took < Duration::from_secs(3), "took {took:?}");
            assert_eq!(proc_state(read_pid(&dir.path().join("pid"))), None);
        }
    }

    #[test]
    fn huge_timeout_means_no_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = sh_hook(dir.path(), "echo '{}'");
        spec.timeout = Duration::MAX;
        for (result, _) in both(&spec, b"") {
            assert_eq!(result.expect("runs"), HookOutput::Unchanged);
        }
    }

    // --------------------------------------------------- runtime contexts

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sync_runner_works_on_a_tokio_worker_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = sh_hook(dir.path(), "cat\n");
        let input = br#"{"payload": {"from": "worker"}}"#;
        // Directly on the worker thread running this test…
        let direct = sync(&spec, input).expect("runs");
        // …and on another worker via a spawned task, while async runs go on.
        let spec2 = spec.clone();
        let spawned = tokio::spawn(async move { sync(&spec2, input) });
        let concurrent = asynchronous(&spec, input).await.expect("runs");
        let spawned = spawned.await.expect("join").expect("runs");
        let expected = HookOutput::Replace(serde_json::json!({"from": "worker"}));
        assert_eq!(direct, expected);
        assert_eq!(spawned, expected);
        assert_eq!(concurrent, expected);
    }

    #[tokio::test]
    async fn sync_runner_works_inside_a_current_thread_runtime() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut spec = sh_hook(dir.path(), "sleep 30");
        spec.timeout = Duration::from_millis(100);
        assert!(matches!(
            sync(&spec, b""),
            Err(CommandError::TimedOut { .. })
        ));
        assert!(matches!(
            asynchronous(&spec, b"").await,
            Err(CommandError::TimedOut { .. })
        ));
    }

    // ------------------------------------------------------------- pieces

    #[test]
    fn hook_input_is_strict_json_even_with_control_characters() {
        let all_controls: String = (0u32..0x20).filter_map(char::from_u32).collect();
        let point = format!("pt{all_controls}\u{7f}\u{2028}\"\\");
        let extension = "ext\u{0}\r\n";
        let payload = serde_json::json!({
            "k\u{1b}": [all_controls, "😀", 1.5, -0, true, null, {"nested": "\u{8}"}],
        });
        let bytes = hook_input(&point, extension, &payload);
        assert!(
            bytes.iter().all(|b| *b >= 0x20),
            "raw control byte in output"
        );
        assert!(std::str::from_utf8(&bytes).is_ok());
        let parsed: Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(
            parsed,
            serde_json::json!({"point": point, "extension": extension, "payload": payload})
        );
        assert!(bytes.starts_with(b"{\"point\":"));
    }

    #[test]
    fn hook_input_handles_five_megabytes() {
        let big: String = "line\nwith\ttabs\u{0}and \"quotes\" é\n".repeat(5 * 1024 * 1024 / 30);
        assert!(big.len() >= 5 * 1024 * 1024 - 64);
        let payload = serde_json::json!({"big": big, "list": vec![1; 1000]});
        let bytes = hook_input("p", "e", &payload);
        assert!(bytes.len() > big.len());
        assert!(bytes.iter().all(|b| *b >= 0x20));
        let parsed: Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(parsed["payload"], payload);
    }

    #[test]
    fn parse_output_rules() {
        let p = || PathBuf::from("hook");
        assert_eq!(parse_output(p(), b"").expect("ok"), HookOutput::Unchanged);
        assert_eq!(
            parse_output(p(), b" \r\n\t").expect("ok"),
            HookOutput::Unchanged
        );
        assert_eq!(
            parse_output(p(), b"{}\n").expect("ok"),
            HookOutput::Unchanged
        );
        assert_eq!(
            parse_output(p(), b"\n{\"payload\": {\"a\": [1]}}\n").expect("ok"),
            HookOutput::Replace(serde_json::json!({"a": [1]}))
        );
        for bad in [
            &b"null"[..],
            b"1",
            b"true",
            b"{\"Payload\":1}",
            b"{",
            b"\x0c",
        ] {
            assert!(
                matches!(parse_output(p(), bad), Err(CommandError::BadOutput { .. })),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn stderr_rendering() {
        assert_eq!(render_stderr(b"plain".to_vec(), 0), "plain");
        assert_eq!(render_stderr(b"bad\xffbyte".to_vec(), 0), "bad\u{fffd}byte");
        // A cut multi-byte character is dropped, not shown as U+FFFD.
        let mut euro = "x€".as_bytes().to_vec();
        euro.pop();
        assert_eq!(
            render_stderr(euro, 5),
            "x\n[... 5 more bytes of stderr dropped]"
        );
        let mut emoji = "y😀".as_bytes().to_vec();
        emoji.truncate(2);
        assert_eq!(
            render_stderr(emoji, 1),
            "y\n[... 1 more bytes of stderr dropped]"
        );
        assert_eq!(
            render_stderr("zé".as_bytes().to_vec(), 1),
            "zé\n[... 1 more bytes of stderr dropped]"
        );
    }

    #[test]
    fn errors_display_and_expose_the_program() {
        let err = CommandError::TimedOut {
            program: PathBuf::from("/layer/hook.sh"),
            after: Duration::from_millis(200),
        };
        assert_eq!(err.program(), Path::new("/layer/hook.sh"));
        assert_eq!(
            err.to_string(),
            "hook /layer/hook.sh timed out after 200ms and was killed"
        );
    }
}
