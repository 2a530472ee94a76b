//! The async runner (`tokio::process`, `tokio::time`): must be polled inside a tokio runtime
//! with the I/O and time drivers enabled. Dropping its future kills the hook's process group.

use std::io;

use super::group::{Group, kill_group, timed_out};
use super::output::{Stdout, finish, render_stderr};
use super::prepare::{BUSY_PAUSES_MS, explain_spawn_error, is_busy, prepare};
use super::{
    CommandError, CommandSpec, HookOutput, MAX_STDERR_BYTES, MAX_STDOUT_BYTES, REAP_GRACE,
};

/// Aborts a spawned task when dropped (its pipe end is then closed).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Awaits `future` until `deadline` (`None`: no deadline); `None` if the
/// deadline passed first.
async fn until<F: Future>(deadline: Option<tokio::time::Instant>, future: F) -> Option<F::Output> {
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

/// Starts `command`, again after each of [`BUSY_PAUSES_MS`] while it is refused with `ETXTBSY`
/// (the task sleeps in between; see the constant for why the refusal passes).
async fn spawn_retrying(
    command: &mut tokio::process::Command,
) -> io::Result<tokio::process::Child> {
    for pause in BUSY_PAUSES_MS {
        match command.spawn() {
            Err(err) if is_busy(&err) => {
                tokio::time::sleep(std::time::Duration::from_millis(pause)).await
            }
            done => return done,
        }
    }
    command.spawn()
}

pub(super) async fn run(spec: &CommandSpec, input: &[u8]) -> Result<HookOutput, CommandError> {
    use tokio::io::AsyncWriteExt;

    let prepared = prepare(spec)?;
    let program = prepared.program.clone();
    let could_not_start = |source: io::Error| CommandError::CouldNotStart {
        program: program.clone(),
        source,
    };

    let deadline = tokio::time::Instant::now().checked_add(spec.timeout);
    let mut command = tokio::process::Command::from(prepared.command(spec));
    // If this future is dropped, Tokio kills and reaps the hook.
    command.kill_on_drop(true);
    let mut child = spawn_retrying(&mut command)
        .await
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
