//! The blocking runner (`std::process`): four short-lived helper threads per call (waiter, stdin
//! writer, stdout and stderr readers), so it works anywhere, a tokio worker thread included.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

use super::group::{Group, kill_group, timed_out};
use super::output::{Stdout, finish, render_stderr};
use super::prepare::{explain_spawn_error, prepare, spawn_blocking_retrying};
use super::{
    CommandError, CommandSpec, HookOutput, MAX_STDERR_BYTES, MAX_STDOUT_BYTES, REAP_GRACE,
};

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

/// The helper threads of one call, started before the hook so that failing to create one never
/// strands a running hook.
struct Helpers {
    waiter: mpsc::Sender<Child>,
    status: mpsc::Receiver<io::Result<ExitStatus>>,
    writer: mpsc::Sender<ChildStdin>,
    stdout_reader: mpsc::Sender<(ChildStdout, u32)>,
    stdout: mpsc::Receiver<Stdout>,
    stderr_reader: mpsc::Sender<ChildStderr>,
    stderr: mpsc::Receiver<String>,
}

impl Helpers {
    fn start(input: &[u8]) -> io::Result<Helpers> {
        let (status_tx, status) = mpsc::channel::<io::Result<ExitStatus>>();
        let waiter = spawn_worker("hookpoint-wait", move |mut child: Child| {
            let _ = status_tx.send(child.wait());
        })?;
        let input = input.to_vec();
        let writer = spawn_worker("hookpoint-stdin", move |mut stdin: ChildStdin| {
            // EPIPE (hook exited or closed stdin without reading) is fine;
            // dropping `stdin` closes the pipe so the hook sees EOF.
            let _ = stdin.write_all(&input);
        })?;
        let (stdout_tx, stdout) = mpsc::channel::<Stdout>();
        let stdout_reader = spawn_worker(
            "hookpoint-stdout",
            move |(out, pgid): (ChildStdout, u32)| {
                let _ = stdout_tx.send(read_stdout(out, pgid));
            },
        )?;
        let (stderr_tx, stderr) = mpsc::channel::<String>();
        let stderr_reader = spawn_worker("hookpoint-stderr", move |err: ChildStderr| {
            let _ = stderr_tx.send(read_stderr(err));
        })?;
        Ok(Helpers {
            waiter,
            status,
            writer,
            stdout_reader,
            stdout,
            stderr_reader,
            stderr,
        })
    }

    /// Gives the running hook and its pipes to the helper threads; on failure the hook is
    /// killed and reaped.
    fn hand_off(&self, mut child: Child, group: &mut Group) -> io::Result<()> {
        let pid = child.id();
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let handed_off = match pipes {
            (Some(stdin), Some(stdout), Some(stderr)) => {
                self.writer.send(stdin).is_ok()
                    && self.stdout_reader.send((stdout, pid)).is_ok()
                    && self.stderr_reader.send(stderr).is_ok()
            }
            _ => false,
        };
        if !handed_off {
            group.kill();
            let _ = child.wait();
            return Err(io::Error::other(
                "could not hand the hook's pipes to the helper threads",
            ));
        }
        if let Err(mpsc::SendError(mut child)) = self.waiter.send(child) {
            group.kill();
            let _ = child.wait();
            return Err(io::Error::other(
                "could not hand the hook to the waiting thread",
            ));
        }
        Ok(())
    }
}

/// Runs a hook to completion, blocking the calling thread for at most about `spec.timeout`.
pub(super) fn run(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    let prepared = prepare(spec)?;
    let program = prepared.program.clone();
    let could_not_start = |source: io::Error| CommandError::CouldNotStart {
        program: program.clone(),
        source,
    };
    let helpers = Helpers::start(input).map_err(could_not_start)?;
    let deadline = Instant::now().checked_add(spec.timeout);
    let mut command = prepared.command(spec);
    let child = spawn_blocking_retrying(|| command.spawn())
        .map_err(|err| could_not_start(explain_spawn_error(&program, err)))?;
    let mut group = Group::new(child.id());
    helpers
        .hand_off(child, &mut group)
        .map_err(could_not_start)?;
    let status = match recv_until(&helpers.status, deadline) {
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
            let _ = helpers.status.recv_timeout(REAP_GRACE);
            return Err(timed_out(program, spec));
        }
    };
    // Kill whatever the hook left behind so its pipes close.
    group.kill();
    collect(program, spec, &helpers, status, deadline)
}

/// Reads what the readers collected, within the deadline, and interprets it.
fn collect(
    program: std::path::PathBuf,
    spec: &CommandSpec,
    helpers: &Helpers,
    status: ExitStatus,
    deadline: Option<Instant>,
) -> Result<HookOutput, CommandError> {
    let stdout = match recv_until(&helpers.stdout, deadline) {
        Recv::Got(stdout) => stdout,
        Recv::Deadline => return Err(timed_out(program, spec)),
        Recv::Gone => Stdout::Failed(io::Error::other("the stdout reader ended unexpectedly")),
    };
    let stderr = match recv_until(&helpers.stderr, deadline) {
        Recv::Got(stderr) => stderr,
        Recv::Deadline => return Err(timed_out(program, spec)),
        Recv::Gone => String::new(),
    };
    finish(program, status, stdout, stderr)
}
