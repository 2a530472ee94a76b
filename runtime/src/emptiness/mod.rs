//! The "empty everywhere" verdict behind every point site's no-extension fast path: a global
//! generation, bumped after each publish of the set of points that have an extension in some
//! live snapshot, and per site a cached verdict tagged with the generation it was computed for.
//!
//! The protocol is generic over its atomic word ([`Word`]) so that the loom models
//! (`publication/loom_models.rs`) run this code on loom's atomics while point sites run it on
//! std's `static`s.
//!
//! Why it holds: a site computes a verdict only after loading the generation it tags it with
//! (acquire), and the set is replaced before the generation is bumped (release), so a verdict
//! tagged `g` was computed from the set of `g` or a newer one. A check that starts after a
//! publish finished loads that publish's generation or a later one and so never reuses a
//! verdict from before it; a check racing a publish may give the old or the new verdict.

use std::sync::atomic::Ordering;

#[cfg(all(test, loom))]
mod loom_models;

/// A 64-bit atomic the protocol runs on.
pub(crate) trait Word {
    /// The atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// The atomic store.
    fn store(&self, value: u64, order: Ordering);
    /// The atomic add, returning the previous value.
    fn fetch_add(&self, value: u64, order: Ordering) -> u64;
}

impl Word for std::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    #[inline(always)]
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    #[inline(always)]
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
}

#[cfg(loom)]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
    fn fetch_add(&self, value: u64, order: Ordering) -> u64 {
        self.fetch_add(value, order)
    }
}

/// Publishes a new set of non-empty points: `replace` writes it, then `generation` is bumped so
/// every site computes its verdict again. Publishes are serial (the caller holds the lock the
/// set is computed under).
pub(crate) fn publish(generation: &impl Word, replace: impl FnOnce()) {
    replace();
    generation.fetch_add(1, Ordering::AcqRel);
}

/// True when the site whose cached verdict is `state` (`generation << 1 | empty`, starting at
/// 0: "generation 0, not empty") has no extension anywhere; `compute` reads the current set
/// when the cached verdict is for another generation. Never true before the first publish.
/// Two loads and a compare once warm.
#[inline(always)]
pub(crate) fn is_empty(
    generation: &impl Word,
    state: &impl Word,
    compute: impl FnOnce() -> bool,
) -> bool {
    let now = generation.load(Ordering::Acquire);
    let cached = state.load(Ordering::Relaxed);
    if cached == (now << 1) | 1 {
        return true;
    }
    if cached == now << 1 {
        return false;
    }
    refresh(now, state, compute)
}

#[cold]
fn refresh(now: u64, state: &impl Word, compute: impl FnOnce() -> bool) -> bool {
    if now == 0 {
        // Nothing has published yet: not known to be empty.
        return false;
    }
    let empty = compute();
    state.store((now << 1) | u64::from(empty), Ordering::Relaxed);
    empty
}
