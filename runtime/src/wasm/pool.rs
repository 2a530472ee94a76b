//! Idle instances of a guest that keeps state (`hookpoint_keep_state`): a call takes one (or
//! makes one), and gives it back when it ended normally. An instance that trapped, ran out of
//! time or broke the interface is dropped, so its state cannot reach another call.

use std::sync::Mutex;

use super::call::Live;
use crate::locks;

/// Instances kept idle per extension at most; more concurrent calls make more, then drop them.
const MAX_IDLE: usize = 8;

/// The idle instances of one extension (of one snapshot: a reload starts with none).
#[derive(Default)]
pub(crate) struct Idle(Mutex<Vec<Live>>);

impl Idle {
    /// An idle instance, if there is one.
    pub(crate) fn take(&self) -> Option<Live> {
        locks::lock(&self.0).pop()
    }

    /// Gives an instance back after a call that ended normally.
    pub(crate) fn put(&self, live: Live) {
        let mut idle = locks::lock(&self.0);
        if idle.len() < MAX_IDLE {
            idle.push(live);
        }
    }
}
