//! Turn-taking by name: one thread at a time holds the turn for a name, the others wait for it,
//! and the thread holding a turn that asks for it again is told so instead of waiting forever.
//! A scope's plugin toggles take turns per plugin, so concurrent enables run `install` once.
//!
//! Std's lock and condition variable in a build, loom's in a loom build, so the loom models
//! (`publication/loom_models.rs`) run this code.

use std::collections::HashMap;

#[cfg(all(test, loom))]
mod loom_models;

#[cfg(loom)]
use loom::sync::{Condvar, Mutex};
#[cfg(loom)]
use loom::thread::{ThreadId, current};
#[cfg(not(loom))]
use std::sync::{Condvar, Mutex};
#[cfg(not(loom))]
use std::thread::{ThreadId, current};

/// The names whose turn is held, with the thread holding each.
#[derive(Default)]
pub(crate) struct Turns {
    held: Mutex<HashMap<String, ThreadId>>,
    /// Signalled when a turn ends.
    ended: Condvar,
}

/// The turn for one name, held until dropped (also on panic).
pub(crate) struct Turn<'a> {
    turns: &'a Turns,
    name: &'a str,
}

/// This thread holds the turn it asked for already.
#[derive(Debug)]
pub(crate) struct HeldHere;

impl Turns {
    /// Waits until no other thread holds the turn for `name`, then takes it.
    ///
    /// # Errors
    /// [`HeldHere`] when this thread holds it already: waiting would never end.
    pub(crate) fn take<'a>(&'a self, name: &'a str) -> Result<Turn<'a>, HeldHere> {
        let me = current().id();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(holder) = held.get(name) {
            if *holder == me {
                return Err(HeldHere);
            }
            held = self.ended.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        held.insert(name.to_owned(), me);
        Ok(Turn { turns: self, name })
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut held = self.turns.held.lock().unwrap_or_else(|e| e.into_inner());
        held.remove(self.name);
        drop(held);
        self.turns.ended.notify_all();
    }
}
