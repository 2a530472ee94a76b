//! Observing every dispatch without being an extension (WordPress's `all` hook, pluggy's hook
//! call monitoring): an observer sees each dispatch start and end, each extension's outcome with
//! its time, and the extensions skipped; [`did`], [`doing`] and [`current_point`] answer what ran
//! and what runs now; a slow-extension threshold logs who is slow.
//!
//! **One channel.** A dispatch produces typed [`Event`]s, and everything that watches dispatch
//! reads them: the observers, hookpoint's own `tracing` spans and events, and the
//! `EXTENSIONS_LOG` counter.
//!
//! **Where observers attach.** To a scope — [`ScopeBuilder::observer`](crate::ScopeBuilder::observer)
//! or [`Scope::observe`](crate::Scope::observe) — or to the process default with [`observe`],
//! as `tracing`'s global dispatcher. The rule: a scope's observers see that scope's dispatches
//! only; the process default observers see every scope's, except a scope's built with
//! [`default_observers(false)`](crate::ScopeBuilder::default_observers). The default observers
//! are told first, then the scope's, in the order they were added.
//!
//! **Settings.** The slow-extension threshold is a scope setting
//! ([`ScopeBuilder::slow_threshold`](crate::ScopeBuilder::slow_threshold)) whose process default
//! [`set_slow_threshold`] sets.
//!
//! Nothing observed anywhere, no threshold set and `tracing` not asking for hookpoint's `debug`:
//! dispatch pays one check, and [`did`] / [`doing`] / [`current_point`] report nothing (they are
//! answered from the observed path). While some scope is observed, a dispatch of a scope that
//! nothing reads pays one more check and keeps its fast path.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use hookpoint::observe::{self, What};
//!
//! #[hookpoint::extension(point = "doc_observed")]
//! fn add(n: &mut u32) {
//!     *n += 1;
//! }
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = seen.clone();
//! let id = observe::observe(move |event| {
//!     if let What::Extension { name, .. } = event.what {
//!         sink.lock().unwrap().push(format!("{} ran {name}", event.point));
//!     }
//! });
//! let mut n = 0u32;
//! hookpoint::call_sync("doc_observed", &mut n).unwrap();
//! observe::unobserve(id);
//! assert_eq!(seen.lock().unwrap().as_slice(), ["doc_observed ran add"]);
//! assert!(observe::did("doc_observed") >= 1);
//! ```

mod doing;
mod event;
mod observers;
mod scope;
pub(crate) mod tracing_out;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use doing::{Doing, count, resume};
pub use doing::{current_point, did, doing};
pub(crate) use event::PayloadView;
pub use event::{Event, What};
pub use observers::ObserverId;
pub(crate) use scope::{ObservationConfig, ScopeObservation, Watch};

use scope::DEFAULT_OBSERVERS;

/// Registers `f` as a process default observer: it sees every dispatch of every scope (but the
/// scopes built with [`default_observers(false)`](crate::ScopeBuilder::default_observers)), from
/// now until [`unobserve`]. It runs on the dispatching thread, synchronously: keep it short. A
/// panicking observer is logged, not propagated.
pub fn observe(f: impl Fn(&Event<'_>) + Send + Sync + 'static) -> ObserverId {
    DEFAULT_OBSERVERS.add(Arc::new(f))
}

/// Removes a process default observer; returns whether it was registered there.
pub fn unobserve(id: ObserverId) -> bool {
    DEFAULT_OBSERVERS.remove(id)
}

/// Sets the process default slow-extension threshold: every scope without a threshold of its
/// own ([`ScopeBuilder::slow_threshold`](crate::ScopeBuilder::slow_threshold)) logs, at `warn`
/// with name and time, every extension that runs longer than `threshold`; `None` turns the
/// default off. While a threshold applies, dispatch is timed.
pub fn set_slow_threshold(threshold: Option<Duration>) {
    scope::set_default_slow(threshold);
}

/// Delivers `event` to everything that reads dispatch events: the `EXTENSIONS_LOG` counter,
/// hookpoint's `tracing` output, then the observers `watch` collected.
pub(crate) fn deliver(event: &Event<'_>, watch: &Watch) {
    if matches!(event.what, What::Start) {
        crate::stats::count(event.point);
    }
    tracing_out::event(event, watch.slow);
    for o in &watch.observers {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o(event))).is_err() {
            tracing_out::observer_panicked(event.point);
        }
    }
}
