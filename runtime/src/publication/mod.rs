//! How a published snapshot reaches dispatch on every thread: the publisher stores the new value
//! and then bumps an [`Epoch`]; each thread keeps a raw copy of the pointer tagged with the epoch
//! it was taken at, and a [`ThreadCopy`] that owns what keeps that pointer valid.
//!
//! The invariants (checked by the loom models in `loom_models.rs`, `RUSTFLAGS="--cfg loom"`):
//!
//! - a thread that sees the epoch a publish bumped to loads that publish's value or a newer one
//!   (the store happens before the bump, the bump is read with `Acquire`);
//! - a dispatch reads one whole value: the pointer it holds is never replaced under it, and the
//!   value it points to is never freed while the dispatch runs — a refresh inside a nested
//!   dispatch retires the old value instead of dropping it, and retired values are released by
//!   the next refresh with no dispatch running on the thread;
//! - after publishes are done, the next refresh on any thread finds the last value stored.
//!
//! Below `scope` (which owns the values and serialises its publishes) and beside
//! `thread_state` (which keeps the raw copy in its destructor-free cells).

use std::cell::RefCell;
use std::sync::Arc;

use crate::sync::{AtomicU64, Ordering, Swap};

#[cfg(all(test, loom))]
mod loom_models;

/// A counter every publish bumps after its store; a copy taken at an older epoch is stale.
/// Starts at 1, so 0 can mean "no valid copy".
pub(crate) struct Epoch(AtomicU64);

impl Epoch {
    /// Epoch 1.
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Epoch(AtomicU64::new(1))
    }

    /// Epoch 1 (loom's atomics are not `const`).
    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Epoch(AtomicU64::new(1))
    }

    /// Marks every thread's copy stale; called after the store it announces.
    pub(crate) fn bump(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// The current epoch: a copy taken at this value reflects every store announced so far.
    #[inline(always)]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// Stores `value` in `slot` and then bumps `epoch`. The caller serialises publishes of one slot
/// (the scope's rebuild lock), so the last one stored is the newest.
pub(crate) fn publish<T>(slot: &Swap<T>, epoch: &Epoch, value: Arc<T>) {
    slot.store(value);
    epoch.bump();
}

/// The owning half of one thread's copy of a published value: the `Arc` that keeps the copied
/// pointer alive, and values retired while a dispatch on this thread may still read them.
pub(crate) struct ThreadCopy<T> {
    held: RefCell<Option<Arc<T>>>,
    retired: RefCell<Vec<Arc<T>>>,
}

impl<T> ThreadCopy<T> {
    /// No copy yet.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) const fn new() -> Self {
        ThreadCopy {
            held: RefCell::new(None),
            retired: RefCell::new(Vec::new()),
        }
    }

    /// Loads the value published in `slot` now and holds it; returns its pointer, valid while
    /// this copy holds it (until a later `refresh` with `nested == false`, or the copy's drop).
    ///
    /// `nested`: a dispatch is running on this thread (it may hold the previous pointer), so the
    /// previous value is retired instead of dropped; with `nested == false` the previous value
    /// and every retired one are released.
    ///
    /// Releasing a value can run user code (a registered closure's captures) that dispatches on
    /// this thread and so refreshes this copy again, or publishes: values are released with no
    /// borrow held, and the pointer returned is the one held after they are gone.
    pub(crate) fn refresh(&self, slot: &Swap<T>, nested: bool) -> *const T {
        let fresh = slot.load_full();
        let old = self.held.borrow_mut().replace(fresh);
        if nested {
            self.retired.borrow_mut().extend(old);
        } else {
            let retired = std::mem::take(&mut *self.retired.borrow_mut());
            drop(old);
            drop(retired);
        }
        // A refresh run by a release above may have replaced (and freed) `fresh`.
        let held = self.held.borrow();
        Arc::as_ptr(
            held.as_ref()
                .expect("a refresh holds a value; nothing takes it out"),
        )
    }
}
