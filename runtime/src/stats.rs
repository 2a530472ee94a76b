//! Whether dispatch is observed, and `EXTENSIONS_LOG=N`: every N dispatches, log each point's
//! call count (the variable Agent Zero users know).
//!
//! Dispatch takes its observed path (timing, events, counting) when a tracing subscriber wants
//! `debug` from hookpoint, or when one of the switches here is on: `EXTENSIONS_LOG`, a
//! registered observer, a slow-extension threshold. All off: one check, no counting cost.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::locks;

static EVERY: LazyLock<u64> = LazyLock::new(|| {
    let every = std::env::var("EXTENSIONS_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    switch(Switch::Counting, every > 0);
    every
});

/// One bit per reason to observe dispatch (see [`Switch`]).
static SWITCHES: AtomicU8 = AtomicU8::new(0);

/// A reason to take the observed path.
#[derive(Clone, Copy)]
pub(crate) enum Switch {
    /// `EXTENSIONS_LOG` is set.
    Counting = 1,
    /// At least one observer is registered.
    Observers = 2,
    /// A slow-extension threshold is set.
    SlowThreshold = 4,
    /// A tracing subscriber is interested in hookpoint's `debug` output (kept up to date by
    /// [`observe::tracing_out`](crate::observe::tracing_out)).
    Tracing = 8,
}

/// Turns one reason to observe on or off.
pub(crate) fn switch(which: Switch, on: bool) {
    if on {
        SWITCHES.fetch_or(which as u8, Ordering::Relaxed);
    } else {
        SWITCHES.fetch_and(!(which as u8), Ordering::Relaxed);
    }
}

/// True when every scope's dispatch is observed: a tracing subscriber wants `debug` from
/// hookpoint, or `EXTENSIONS_LOG` counts. (Observers and thresholds are per scope.)
#[cold]
pub(crate) fn observing_everywhere() -> bool {
    SWITCHES.load(Ordering::Relaxed) & (Switch::Counting as u8 | Switch::Tracing as u8) != 0
}

/// Whether one reason to observe is on.
#[cfg(test)]
pub(crate) fn is_on(which: Switch) -> bool {
    SWITCHES.load(Ordering::Relaxed) & which as u8 != 0
}

/// Reads `EXTENSIONS_LOG` (called once when the default scope is built).
pub(crate) fn init() {
    LazyLock::force(&EVERY);
}

static TOTAL: AtomicU64 = AtomicU64::new(0);
static COUNTS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// True when dispatch may have to take the observed path: a switch is on (a tracing subscriber
/// wants hookpoint's `debug` output, `EXTENSIONS_LOG` counts, an observer or a threshold is set
/// somewhere). One load, the one check the fast paths pay; which scope is observed is asked only
/// when it is true.
#[inline(always)]
pub(crate) fn observing() -> bool {
    SWITCHES.load(Ordering::Relaxed) != 0
}

/// Counts one dispatch of `point` and logs the table every N dispatches.
pub(crate) fn count(point: &str) {
    let every = *EVERY;
    if every == 0 {
        return;
    }
    let mut counts = locks::lock(&COUNTS);
    *counts.entry(point.to_owned()).or_insert(0) += 1;
    let n = TOTAL.fetch_add(1, Ordering::Relaxed) + 1;
    if n.is_multiple_of(every) {
        let table: Vec<String> = counts.iter().map(|(p, c)| format!("{p}={c}")).collect();
        // Through tracing when the application installed a subscriber, else on stderr (as Agent
        // Zero prints), never both.
        if tracing::dispatcher::has_been_set() {
            tracing::info!(target: "hookpoint::stats", dispatches = n, counts = %table.join(" "), "EXTENSIONS_LOG");
        } else {
            eprintln!(
                "[hookpoint] EXTENSIONS_LOG after {n} dispatches: {}",
                table.join(" ")
            );
        }
    }
}

/// Call counts per point since start (empty unless `EXTENSIONS_LOG` is set).
pub fn dispatch_counts() -> BTreeMap<String, u64> {
    locks::lock(&COUNTS).clone()
}
