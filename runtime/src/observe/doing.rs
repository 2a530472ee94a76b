//! What ran and what runs now, answered from observed dispatches: [`did`], [`doing`] and
//! [`current_point`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::locks;
use crate::site;

static DID: Mutex<Option<HashMap<u32, u64>>> = Mutex::new(None);

thread_local! {
    /// The points being dispatched on this thread, innermost last (observed path only).
    static DOING: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// How many times `point` was dispatched while an observer saw it (0 if never, or if no
/// observer was ever registered).
pub fn did(point: &str) -> u64 {
    let Some(id) = site::lookup(point) else {
        return 0;
    };
    locks::lock(&DID)
        .as_ref()
        .and_then(|m| m.get(&id).copied())
        .unwrap_or(0)
}

/// Whether `point` is being dispatched on this thread right now, at any depth (observed
/// dispatches only: register an observer to use it).
pub fn doing(point: &str) -> bool {
    site::lookup(point).is_some_and(|id| DOING.with(|d| d.borrow().contains(&id)))
}

/// The innermost point being dispatched on this thread (observed dispatches only).
pub fn current_point() -> Option<&'static str> {
    DOING.with(|d| d.borrow().last().map(|&id| site::name_of(id)))
}

/// Counts one observed dispatch of point `id` (for [`did`]).
pub(crate) fn count(id: u32) {
    *locks::lock(&DID)
        .get_or_insert_with(HashMap::new)
        .entry(id)
        .or_insert(0) += 1;
}

/// Marks point `id` as being dispatched on this thread until the guard drops (for [`doing`]
/// and [`current_point`]); an async dispatch is marked each time it is polled.
pub(crate) fn resume(id: u32) -> Doing {
    DOING.with(|d| d.borrow_mut().push(id));
    Doing(())
}

/// See [`resume`].
pub(crate) struct Doing(());

impl Drop for Doing {
    fn drop(&mut self) {
        let _ = DOING.try_with(|d| d.borrow_mut().pop());
    }
}
