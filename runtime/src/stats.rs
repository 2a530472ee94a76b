//! `EXTENSIONS_LOG=N`: every N dispatches, log each point's call count (the variable Agent Zero
//! users know). Unset or 0: no counting cost beyond one check that also covers tracing.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::locks;

static EVERY: LazyLock<u64> = LazyLock::new(|| {
    let every = std::env::var("EXTENSIONS_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    COUNTING.store(every > 0, Ordering::Relaxed);
    every
});

/// `EVERY > 0`, readable without the `LazyLock` check; set when the default scope is built.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Reads `EXTENSIONS_LOG` (called once when the default scope is built).
pub(crate) fn init() {
    LazyLock::force(&EVERY);
}

static TOTAL: AtomicU64 = AtomicU64::new(0);
static COUNTS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// True when dispatch should take the observed path: a tracing subscriber wants `debug` events
/// from hookpoint, or `EXTENSIONS_LOG` is set.
#[inline]
pub(crate) fn observing() -> bool {
    tracing::level_enabled!(tracing::Level::DEBUG) || COUNTING.load(Ordering::Relaxed)
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
