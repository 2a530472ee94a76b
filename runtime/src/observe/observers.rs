//! Lists of observers: the process default's and each scope's. Every list counts toward one
//! process-wide switch, so a dispatch with nothing observing anywhere pays its one check only.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::Event;
use crate::locks;
use crate::stats::{self, Switch};

/// A registered observer: pass it to [`unobserve`](super::unobserve) (process default) or
/// [`Scope::unobserve`](crate::Scope::unobserve) (the scope it was attached to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObserverId(u64);

/// An observer as the lists hold it.
pub(crate) type Observer = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Observers registered in any list; the [`Switch::Observers`] bit is on while it is not zero.
static LIVE: Mutex<usize> = Mutex::new(0);

fn live_changed(added: usize, removed: usize) {
    let mut live = locks::lock(&LIVE);
    *live = *live + added - removed.min(*live + added);
    stats::switch(Switch::Observers, *live > 0);
}

/// One list of observers, in the order they were added, and its length (read without the lock
/// when a dispatch asks whether its scope is observed).
#[derive(Default)]
pub(crate) struct Observers(RwLock<Vec<(ObserverId, Observer)>>, AtomicUsize);

impl Observers {
    pub(crate) const fn new() -> Self {
        Observers(RwLock::new(Vec::new()), AtomicUsize::new(0))
    }

    /// Adds `f` at the end; it sees the dispatches that start from now on.
    pub(crate) fn add(&self, f: Observer) -> ObserverId {
        let id = ObserverId(NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let mut list = locks::write(&self.0);
        list.push((id, f));
        self.1.store(list.len(), Ordering::Relaxed);
        drop(list);
        live_changed(1, 0);
        id
    }

    /// Removes `id`; whether it was in this list.
    pub(crate) fn remove(&self, id: ObserverId) -> bool {
        let mut list = locks::write(&self.0);
        let before = list.len();
        list.retain(|(o, _)| *o != id);
        let removed = before - list.len();
        self.1.store(list.len(), Ordering::Relaxed);
        drop(list);
        live_changed(0, removed);
        removed > 0
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.1.load(Ordering::Relaxed) == 0
    }

    /// Appends this list's observers to `out` (one dispatch delivers to what it collected).
    pub(crate) fn collect_into(&self, out: &mut Vec<Observer>) {
        out.extend(locks::read(&self.0).iter().map(|(_, o)| o.clone()));
    }
}

impl Drop for Observers {
    fn drop(&mut self) {
        let n = locks::write(&self.0).len();
        live_changed(0, n);
    }
}
