//! How one scope is observed: its own observers, whether the process default observers see it,
//! and its slow-extension threshold. Set on the [`ScopeBuilder`](crate::ScopeBuilder); observers
//! may also be attached later with [`Scope::observe`](crate::Scope::observe).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::observers::{Observer, Observers};
use crate::locks;
use crate::stats::{self, Switch};

/// The process default observers ([`observe`](super::observe)).
pub(crate) static DEFAULT_OBSERVERS: Observers = Observers::new();

/// The process default slow-extension threshold in µs (`u64::MAX`: off).
static DEFAULT_SLOW_US: AtomicU64 = AtomicU64::new(u64::MAX);

/// Scopes with a threshold of their own, and whether the default is set: the
/// [`Switch::SlowThreshold`] bit is on while either is.
static SLOW: Mutex<(usize, bool)> = Mutex::new((0, false));

fn slow_changed(f: impl FnOnce(&mut (usize, bool))) {
    let mut slow = locks::lock(&SLOW);
    f(&mut slow);
    stats::switch(Switch::SlowThreshold, slow.0 > 0 || slow.1);
}

/// Sets the process default threshold (see [`set_slow_threshold`](super::set_slow_threshold)).
pub(crate) fn set_default_slow(threshold: Option<Duration>) {
    let us = threshold.map_or(u64::MAX, |t| {
        u64::try_from(t.as_micros()).unwrap_or(u64::MAX - 1)
    });
    slow_changed(|s| {
        DEFAULT_SLOW_US.store(us, Ordering::Relaxed);
        s.1 = threshold.is_some();
    });
}

fn default_slow() -> Option<Duration> {
    match DEFAULT_SLOW_US.load(Ordering::Relaxed) {
        u64::MAX => None,
        us => Some(Duration::from_micros(us)),
    }
}

/// What a [`ScopeBuilder`](crate::ScopeBuilder) collects about observation.
pub(crate) struct ObservationConfig {
    pub(crate) observers: Vec<Observer>,
    pub(crate) default_observers: bool,
    /// `None`: the process default; `Some(None)`: off for this scope.
    pub(crate) slow_threshold: Option<Option<Duration>>,
}

impl Default for ObservationConfig {
    fn default() -> Self {
        ObservationConfig {
            observers: Vec::new(),
            default_observers: true,
            slow_threshold: None,
        }
    }
}

/// One scope's observation, fixed at build but for the observers attached later.
pub(crate) struct ScopeObservation {
    pub(crate) observers: Observers,
    default_observers: bool,
    slow_threshold: Option<Option<Duration>>,
}

impl ScopeObservation {
    pub(crate) fn new(config: ObservationConfig) -> Self {
        let observers = Observers::new();
        for o in config.observers {
            observers.add(o);
        }
        if matches!(config.slow_threshold, Some(Some(_))) {
            slow_changed(|s| s.0 += 1);
        }
        ScopeObservation {
            observers,
            default_observers: config.default_observers,
            slow_threshold: config.slow_threshold,
        }
    }

    /// Whether an observer sees this scope's dispatches: its own, or the process default's
    /// unless the scope opted out.
    pub(crate) fn is_observed(&self) -> bool {
        !self.observers.is_empty() || (self.default_observers && !DEFAULT_OBSERVERS.is_empty())
    }

    /// Whether a dispatch of this scope has anything to tell: `tracing` or `EXTENSIONS_LOG`
    /// (every scope), an observer that sees this scope, or a threshold that applies here. Asked
    /// only when the process-wide switch is on, so a scope nobody observes keeps its fast path
    /// while another scope is observed.
    pub(crate) fn wanted(&self) -> bool {
        stats::observing_everywhere() || self.is_observed() || self.slow_threshold().is_some()
    }

    /// The threshold that applies: the scope's own, else the process default.
    pub(crate) fn slow_threshold(&self) -> Option<Duration> {
        self.slow_threshold.unwrap_or_else(default_slow)
    }

    /// What one observed dispatch of this scope delivers to: the process default observers
    /// first (unless opted out), then the scope's own; and the threshold that applies.
    pub(crate) fn watch(&self) -> Watch {
        let mut observers = Vec::new();
        if self.default_observers {
            DEFAULT_OBSERVERS.collect_into(&mut observers);
        }
        self.observers.collect_into(&mut observers);
        Watch {
            observers,
            slow: self.slow_threshold(),
        }
    }
}

impl Drop for ScopeObservation {
    fn drop(&mut self) {
        if matches!(self.slow_threshold, Some(Some(_))) {
            slow_changed(|s| s.0 -= 1);
        }
    }
}

/// What one observed dispatch delivers its events to, collected when it starts.
pub(crate) struct Watch {
    pub(crate) observers: Vec<Observer>,
    pub(crate) slow: Option<Duration>,
}
