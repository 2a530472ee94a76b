//! Per-thread dispatch state, in one thread-local so the hot path touches it once: the nesting
//! depth, the scope entered with `Scope::enter`, and this thread's copy of the default scope's
//! snapshot handle.
//!
//! The copy is what keeps a sync dispatch of the default scope free of atomic writes: it is
//! refreshed when the global snapshot epoch moves (one relaxed-acquire load per dispatch). An
//! outer dispatch may still be using the old snapshot when a nested one refreshes (an extension
//! reloaded), so a refresh at depth > 0 retires the old handle instead of dropping it; retired
//! handles are released by the next refresh at depth 0, when no dispatch runs on this thread.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::scope::Scope;
use crate::snapshot::Snapshot;

/// Bumped (after the store) whenever any scope publishes a snapshot.
static EPOCH: AtomicU64 = AtomicU64::new(1);

pub(crate) fn bump_epoch() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

pub(crate) struct ThreadState {
    /// Nesting depth of the dispatch running on this thread (async dispatches set it only while
    /// they are polled, so it follows the task).
    pub(crate) depth: Cell<u32>,
    /// True while `current` holds an entered scope (checked without borrowing the `RefCell`).
    entered: Cell<bool>,
    current: RefCell<Option<Scope>>,
    default_epoch: Cell<u64>,
    default_snapshot: UnsafeCell<Option<Arc<Snapshot>>>,
    retired: UnsafeCell<Vec<Arc<Snapshot>>>,
}

thread_local! {
    static STATE: ThreadState = const {
        ThreadState {
            depth: Cell::new(0),
            entered: Cell::new(false),
            current: RefCell::new(None),
            default_epoch: Cell::new(0),
            default_snapshot: UnsafeCell::new(None),
            retired: UnsafeCell::new(Vec::new()),
        }
    };
}

/// Runs `f` with this thread's state.
#[inline(always)]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    STATE.with(f)
}

impl ThreadState {
    /// The entered scope, if any (cloned: it may be replaced while the caller uses it).
    #[inline]
    pub(crate) fn entered_scope(&self) -> Option<Scope> {
        if self.entered.get() {
            self.current.borrow().clone()
        } else {
            None
        }
    }

    /// Replaces the entered scope, returning the previous one.
    pub(crate) fn set_entered(&self, scope: Option<Scope>) -> Option<Scope> {
        self.entered.set(scope.is_some());
        self.current.replace(scope)
    }

    /// The default scope's current snapshot, as seen by this thread.
    ///
    /// The reference stays valid for as long as the caller keeps `depth > 0` on this thread (or
    /// returns before any nested dispatch), see the module doc.
    #[inline(always)]
    pub(crate) fn default_snapshot(&self, default: &Scope) -> *const Snapshot {
        let epoch = EPOCH.load(Ordering::Acquire);
        if self.default_epoch.get() != epoch {
            self.refresh(default, epoch);
        }
        // SAFETY: only this thread touches the cell; `refresh` always leaves `Some`.
        match unsafe { &*self.default_snapshot.get() } {
            Some(s) => Arc::as_ptr(s),
            None => unreachable!("refreshed above"),
        }
    }

    #[cold]
    #[inline(never)]
    fn refresh(&self, default: &Scope, epoch: u64) {
        let fresh = default.0.snapshot.load_full();
        // SAFETY: only this thread touches these cells, and no reference into the cells (as
        // opposed to into the snapshots, which stay alive) is held across this call.
        let old = unsafe { (*self.default_snapshot.get()).replace(fresh) };
        let retired = unsafe { &mut *self.retired.get() };
        if self.depth.get() > 0 {
            retired.extend(old);
        } else {
            drop(old);
            retired.clear();
        }
        self.default_epoch.set(epoch);
    }
}
