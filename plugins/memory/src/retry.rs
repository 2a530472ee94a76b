//! A store that cannot be opened (its server is down, its folder cannot be created): the plugin
//! reports itself unhealthy with the reason, so its extensions sit out and the agent works
//! without memory, and a background thread holding only a [`WeakScope`] tries again, waiting
//! 1 s, then twice as long each time up to 30 s. When the store opens, the plugin reports itself
//! healthy and memory works again; the thread ends then, when the scope is gone, or when the
//! plugin is disabled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hookpoint::{Scope, WeakScope};

use crate::MEMORY;
use crate::home::place_for;
use crate::models;
use crate::notes::{info, warn};
use crate::state::OpenStore;

/// The first wait before trying again.
const FIRST_WAIT: Duration = Duration::from_secs(1);

/// The longest wait between two tries.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting thread looks whether its scope is gone.
const LOOK: Duration = Duration::from_millis(200);

/// Whether a retry thread runs for the scope (plugin state: one thread per scope).
#[derive(Default)]
struct Retrying(AtomicBool);

/// What one try came to.
enum Tried {
    /// The store is open (or memory has nothing to open): healthy again.
    Done,
    /// The plugin is disabled: nothing to retry.
    Disabled,
    /// Still failing.
    Failed,
}

/// The store could not be opened for `why`: reports the plugin unhealthy in `scope` and starts
/// the retry thread, unless one runs already.
pub(crate) fn store_failed(scope: &Scope, why: String) {
    warn(
        "memory is off",
        format!("{why}; retrying in the background"),
    );
    scope.enter(|| MEMORY.report_unhealthy(why));
    let retrying = scope.enter(|| MEMORY.state::<Retrying>());
    if retrying.0.swap(true, Ordering::AcqRel) {
        return;
    }
    let weak = scope.downgrade();
    let spawned = std::thread::Builder::new()
        .name("memory-retry".into())
        .spawn(move || retry(&weak));
    if let Err(e) = spawned {
        retrying.0.store(false, Ordering::Release);
        warn(
            "memory cannot retry",
            format!("no thread for it: {e}; it stays off until the plugin is enabled again"),
        );
    }
}

/// The retry loop: waits, tries, doubles the wait; ends when a try succeeds, the plugin is
/// disabled or the scope is gone.
fn retry(weak: &WeakScope) {
    let mut wait = FIRST_WAIT;
    loop {
        if !sleep(weak, wait) {
            return;
        }
        let Some(scope) = weak.upgrade() else { return };
        let tried = scope.enter(|| attempt(&scope));
        if !matches!(tried, Tried::Failed) {
            scope.enter(|| MEMORY.state::<Retrying>().0.store(false, Ordering::Release));
            return;
        }
        wait = (wait * 2).min(LONGEST_WAIT);
    }
}

/// Sleeps `wait`, looking now and then whether the scope is still there; false when it is gone.
fn sleep(weak: &WeakScope, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(LOOK));
        if weak.upgrade().is_none() {
            return false;
        }
    }
}

/// One try, in `scope`: opens the store its current config names and reports the outcome.
fn attempt(scope: &Scope) -> Tried {
    if !MEMORY.enabled() {
        return Tried::Disabled;
    }
    let config = match MEMORY.config() {
        Ok(config) => config,
        Err(e) => {
            MEMORY.report_unhealthy(e.to_string());
            return Tried::Failed;
        }
    };
    let Some(place) = place_for(scope, &config) else {
        MEMORY.report_healthy();
        return Tried::Done;
    };
    let opened = OpenStore::of(scope)
        .get_or_open(place)
        .and_then(|store| store.count(None).map_err(hookpoint::Error::new));
    match opened {
        Ok(n) => {
            info("memory", format!("the store is back: {n} memories"));
            models::on_open(scope, &config);
            MEMORY.report_healthy();
            Tried::Done
        }
        Err(e) => {
            MEMORY.report_unhealthy(e.to_string());
            Tried::Failed
        }
    }
}
