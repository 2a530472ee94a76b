//! The process group of a stdio server: the server is started as the leader of a group of its
//! own, so what it starts (the real server behind `npx`, `uv run` or a shell script) is in that
//! group too, and stopping it ends them all at once.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A stdio server's process group; dropping it kills every process still in it.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    pgid: Pid,
}

impl ProcessGroup {
    /// Makes `cmd` start as the leader of a new group (its id is the child's pid).
    pub(crate) fn lead(cmd: &mut tokio::process::Command) {
        cmd.process_group(0);
    }

    /// The group `child` leads (`None` once it was reaped).
    pub(crate) fn of(child: &tokio::process::Child) -> Option<ProcessGroup> {
        let pid = i32::try_from(child.id()?).ok()?;
        Some(ProcessGroup {
            pgid: Pid::from_raw(pid),
        })
    }

    /// Sends `SIGKILL` to every process of the group. The group's id cannot be reused while any
    /// of them lives, and this handle is dropped with the connection, before the leader's pid
    /// could name another group; an error (`ESRCH`: all of them are gone) is nothing to report.
    pub(crate) fn kill(&self) {
        let _ = killpg(self.pgid, Signal::SIGKILL);
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
