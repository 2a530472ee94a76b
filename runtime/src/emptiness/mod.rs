//! The "empty everywhere" verdict behind every point site's no-extension fast path: each site
//! keeps its own verdict word, which the publisher of the set of points that have an extension in
//! some live snapshot rewrites for every site it knows, so that a warm check is one relaxed load
//! and a compare.
//!
//! A site joins ([`register`]) on its first check, under the same lock the publisher holds while
//! it replaces the set and rewrites the verdicts ([`publish`]); before that its word is
//! [`UNREGISTERED`], which no check reads as empty. The protocol is generic over its atomic word
//! ([`Word`]) so that the loom models (`loom_models.rs`) run this code on loom's atomics while
//! point sites run it on std's `static`s.
//!
//! Why it holds: registration and publishing are serial (one lock), so every registered site's
//! word is the verdict of the newest set — a publish cannot miss a site that registered before
//! it, and a site that registers after it computes from its set. A check that starts after a
//! publish finished reads that publish's store or a later one (coherence of one atomic word), so
//! it never gives a verdict from before it; a check racing a publish may give the old or the new
//! verdict. Only "empty" skips work: "not empty" goes on to the dispatch, which loads the snapshot
//! with its own ordering, so the verdict word carries no data and relaxed accesses suffice.

use std::sync::atomic::Ordering;

#[cfg(all(test, loom))]
mod loom_models;

/// A 64-bit atomic the protocol runs on.
pub(crate) trait Word {
    /// The atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// The atomic store.
    fn store(&self, value: u64, order: Ordering);
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
}

#[cfg(loom)]
impl Word for loom::sync::atomic::AtomicU64 {
    fn load(&self, order: Ordering) -> u64 {
        self.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.store(value, order)
    }
}

/// A site's word before its first check: not registered, so no publish rewrites it yet.
pub(crate) const UNREGISTERED: u64 = 0;
/// The bit every registered site's word has.
pub(crate) const REGISTERED: u64 = 1;

/// The site's verdict bits (`REGISTERED` and the site's own flags), as the fast path reads them:
/// one relaxed load.
#[inline(always)]
pub(crate) fn read(verdict: &impl Word) -> u64 {
    verdict.load(Ordering::Relaxed)
}

/// Joins the registered sites: with the lock that [`publish`] runs under held by the caller,
/// stores `REGISTERED | flags` (the flags computed from the current set) and hands the site to
/// `keep`, which the publisher's `each` will visit. Returns the stored word.
pub(crate) fn register(verdict: &impl Word, flags: u64, keep: impl FnOnce()) -> u64 {
    let word = REGISTERED | flags;
    verdict.store(word, Ordering::Relaxed);
    keep();
    word
}

/// Publishes a new set of non-empty points: with the registration lock held by the caller (its
/// guarded state is `sites`), `replace` writes the set, then `each` rewrites every registered site's word from it (through
/// [`rewrite`]). Publishes are serial (the caller holds the lock the set is computed under).
pub(crate) fn publish<S>(sites: &mut S, replace: impl FnOnce(&mut S), each: impl FnOnce(&S)) {
    replace(sites);
    each(sites);
}

/// One registered site's new word under [`publish`].
#[inline]
pub(crate) fn rewrite(verdict: &impl Word, flags: u64) {
    verdict.store(REGISTERED | flags, Ordering::Relaxed);
}
