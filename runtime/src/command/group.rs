//! The hook's process group: killed as a whole on timeout, when the hook exits (whatever it
//! left behind), and on every early return.

use super::{CommandError, CommandSpec};

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
pub(super) struct Group {
    pgid: u32,
    armed: bool,
}

impl Group {
    pub(super) fn new(pgid: u32) -> Self {
        Self { pgid, armed: true }
    }

    pub(super) fn kill(&mut self) {
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

pub(super) fn timed_out(program: std::path::PathBuf, spec: &CommandSpec) -> CommandError {
    CommandError::TimedOut {
        program,
        after: spec.timeout,
    }
}
