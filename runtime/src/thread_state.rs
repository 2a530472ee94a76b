//! Per-thread dispatch state.
//!
//! Two thread-locals. [`ThreadState`] holds only `Cell`s of plain values, so it needs no
//! destructor and each access is a bare TLS offset: the nesting depth, whether a scope is entered,
//! and this thread's copy of the default scope's snapshot pointer with the epoch it was taken at.
//! `OWNED` holds what keeps that pointer valid (the `Arc`s), the entered scope, and retired
//! snapshots; it is touched only when the epoch moves or a scope is entered.
//!
//! The copy is what keeps a sync dispatch of the default scope free of atomic writes. An outer
//! dispatch may still be using the old snapshot when a nested one refreshes (an extension
//! reloaded), so a refresh at depth > 0 retires the old handle instead of dropping it; retired
//! handles are released by the next refresh at depth 0, when no dispatch runs on this thread.
//! When the thread's `OWNED` is destroyed, the copy is invalidated first, and later dispatches on
//! the thread (from other thread-local destructors) fall back to loading the snapshot per call.

use std::cell::{Cell, RefCell};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::scope::Scope;
use crate::snapshot::Snapshot;

/// Bumped (after the store) whenever any scope publishes a snapshot. Starts at 1; a thread's
/// epoch 0 means "no valid copy".
static EPOCH: AtomicU64 = AtomicU64::new(1);

pub(crate) fn bump_epoch() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// The hot, destructor-free part of the per-thread state.
pub(crate) struct ThreadState {
    /// Nesting depth of the dispatch running on this thread (async dispatches set it only while
    /// they are polled, so it follows the task).
    pub(crate) depth: Cell<u32>,
    /// True while `OWNED.current` holds an entered scope.
    entered: Cell<bool>,
    /// The epoch `snapshot` was taken at; 0 when there is no valid copy.
    epoch: Cell<u64>,
    /// The default scope's snapshot, kept alive by `OWNED.snapshot` (or `OWNED.retired`).
    snapshot: Cell<*const Snapshot>,
}

/// The owning part: touched only on refresh and on `Scope::enter`.
struct Owned {
    current: RefCell<Option<Scope>>,
    snapshot: RefCell<Option<Arc<Snapshot>>>,
    retired: RefCell<Vec<Arc<Snapshot>>>,
}

impl Drop for Owned {
    fn drop(&mut self) {
        // The snapshot pointer is about to dangle: make every later dispatch refresh (and find
        // `OWNED` gone, so load per call).
        let _ = STATE.try_with(|s| {
            s.epoch.set(0);
            s.snapshot.set(ptr::null());
            s.entered.set(false);
        });
    }
}

thread_local! {
    static STATE: ThreadState = const {
        ThreadState {
            depth: Cell::new(0),
            entered: Cell::new(false),
            epoch: Cell::new(0),
            snapshot: Cell::new(ptr::null()),
        }
    };
    static OWNED: Owned = const {
        Owned {
            current: RefCell::new(None),
            snapshot: RefCell::new(None),
            retired: RefCell::new(Vec::new()),
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

/// Runs `f` with this thread's hot state.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    f(get())
}

impl ThreadState {
    /// The entered scope, if any (cloned: it may be replaced while the caller uses it).
    #[inline]
    pub(crate) fn entered_scope(&self) -> Option<Scope> {
        if self.entered.get() {
            OWNED
                .try_with(|o| o.current.borrow().clone())
                .ok()
                .flatten()
        } else {
            None
        }
    }

    /// Replaces the entered scope, returning the previous one.
    pub(crate) fn set_entered(&self, scope: Option<Scope>) -> Option<Scope> {
        self.entered.set(scope.is_some());
        OWNED.try_with(|o| o.current.replace(scope)).ok().flatten()
    }

    /// The default scope's current snapshot as seen by this thread, or null when this thread
    /// can no longer cache one (its thread-locals are being destroyed): the caller then loads
    /// the snapshot itself.
    ///
    /// A non-null pointer stays valid while the caller keeps `depth > 0` on this thread (or
    /// returns before any nested dispatch), see the module doc.
    #[inline(always)]
    pub(crate) fn default_snapshot(&self, default: &Scope) -> *const Snapshot {
        let epoch = EPOCH.load(Ordering::Acquire);
        if self.epoch.get() != epoch {
            return self.refresh(default, epoch);
        }
        self.snapshot.get()
    }

    #[cold]
    #[inline(never)]
    fn refresh(&self, default: &Scope, epoch: u64) -> *const Snapshot {
        OWNED
            .try_with(|o| {
                let fresh = default.0.snapshot.load_full();
                let ptr = Arc::as_ptr(&fresh);
                let old = o.snapshot.borrow_mut().replace(fresh);
                if self.depth.get() > 0 {
                    o.retired.borrow_mut().extend(old);
                } else {
                    drop(old);
                    o.retired.borrow_mut().clear();
                }
                self.snapshot.set(ptr);
                self.epoch.set(epoch);
                ptr
            })
            .unwrap_or(ptr::null())
    }
}
