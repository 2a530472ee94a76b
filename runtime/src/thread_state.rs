//! The hot per-thread dispatch state: plain `Cell`s in a const-initialized thread-local with no
//! destructor, so each access is a bare TLS offset.
//!
//! - the nesting depth of the dispatch running on this thread (async dispatches set it only
//!   while they are polled, so it follows the task);
//! - the scope entered on this thread, as an erased pointer (the scope layer owns its meaning);
//! - this thread's copy of the default scope's snapshot pointer and the epoch it was taken at.
//!
//! Only the pointer lives here; what keeps it valid (an `Arc`) is owned by the scope layer,
//! which also refreshes the copy when [`epoch`] moves (see `scope/current.rs`).

use std::cell::Cell;
use std::ptr;

use crate::publication::Epoch;
use crate::snapshot::Snapshot;

/// Bumped (after the store) whenever any scope publishes a snapshot. Starts at 1; a thread's
/// epoch 0 means "no valid copy".
#[cfg(not(loom))]
pub(crate) static EPOCH: Epoch = Epoch::new();

#[cfg(loom)]
loom::lazy_static! {
    /// As above; a loom build's statics live per model run.
    pub(crate) static ref EPOCH: Epoch = Epoch::new();
}

/// The current epoch.
#[inline(always)]
pub(crate) fn epoch() -> u64 {
    EPOCH.get()
}

/// The hot, destructor-free part of the per-thread state.
pub(crate) struct ThreadState {
    /// Nesting depth of the dispatch running on this thread.
    pub(crate) depth: Cell<u32>,
    /// The scope entered on this thread, erased (a `*const Scope` the scope layer sets and
    /// restores around the code that runs in it), or null.
    pub(crate) entered: Cell<*const ()>,
    /// The epoch `snapshot` was taken at; 0 when there is no valid copy.
    pub(crate) cached_epoch: Cell<u64>,
    /// The default scope's snapshot, kept alive by the scope layer while `cached_epoch` is valid.
    pub(crate) cached: Cell<*const Snapshot>,
}

impl ThreadState {
    /// Forgets the cached snapshot pointer (its owner is going away).
    pub(crate) fn invalidate(&self) {
        self.cached_epoch.set(0);
        self.cached.set(ptr::null());
    }
}

thread_local! {
    static STATE: ThreadState = const {
        ThreadState {
            depth: Cell::new(0),
            entered: Cell::new(ptr::null()),
            cached_epoch: Cell::new(0),
            cached: Cell::new(ptr::null()),
        }
    };
}

/// This thread's hot state. It has no destructor, so its storage lives as long as the thread;
/// the reference cannot leave the thread (`ThreadState` is not `Sync`).
#[inline(always)]
pub(crate) fn get() -> &'static ThreadState {
    // SAFETY: a const-initialized thread-local without drop glue is never deallocated before
    // the thread ends, and `&ThreadState` is `!Send`, so the reference stays on this thread.
    STATE.with(|s| unsafe { &*(s as *const ThreadState) })
}
