//! When hookpoint's dispatch is observed. hookpoint takes its observed path (a span per
//! dispatch, an event per extension, clocks) only when some subscriber enables `debug` for it —
//! and `tracing` decides that from one process-wide maximum level, the largest level any
//! subscriber's layers hint. The plugin's layer hints `OFF` unless a task is being observed
//! right now (its `task.start` ran in a scope where the plugin is enabled); while none is, its
//! layer costs dispatch nothing. Arming and disarming rebuild `tracing`'s interest cache, once
//! per task, so the new maximum takes effect.

use hookpoint_extensions::lock::lock;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Observed tasks in flight, process-wide (the level it gates is process-wide too).
static ARMED: AtomicUsize = AtomicUsize::new(0);
/// Layers made; with none, arming need not touch `tracing`.
static LAYERS: AtomicUsize = AtomicUsize::new(0);
/// Serializes count changes with their rebuilds, so the last rebuild sees the last count.
static CHANGE: Mutex<()> = Mutex::new(());

/// True while at least one task is observed.
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed) > 0
}

pub(crate) fn layer_made() {
    LAYERS.fetch_add(1, Ordering::Relaxed);
}

fn rebuild() {
    if LAYERS.load(Ordering::Relaxed) > 0 {
        tracing::callsite::rebuild_interest_cache();
    }
}

/// One more task observed.
pub(crate) fn arm() {
    let _one = lock(&CHANGE);
    if ARMED.fetch_add(1, Ordering::Relaxed) == 0 {
        rebuild();
    }
}

/// One task less.
pub(crate) fn disarm() {
    let _one = lock(&CHANGE);
    let before = ARMED.load(Ordering::Relaxed);
    if before == 0 {
        return;
    }
    ARMED.store(before - 1, Ordering::Relaxed);
    if before == 1 {
        rebuild();
    }
}
