//! Observing every dispatch without being an extension (WordPress's `all` hook, pluggy's hook
//! call monitoring): an observer sees each dispatch start and end and each extension's outcome
//! with its time; [`did`], [`doing`] and [`current_point`] answer what ran and what runs now; a
//! slow-extension threshold logs who is slow.
//!
//! Nothing registered and no threshold set: dispatch pays one check, and [`did`] / [`doing`] /
//! [`current_point`] report nothing (they are answered from the observed path).
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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::error::{Error, Origin};
use crate::locks;
use crate::registry::{Flow, JsonCodec};
use crate::site;
use crate::stats::{self, Switch};

/// One thing that happened in a dispatch, as an observer sees it.
pub struct Event<'a> {
    /// The point being dispatched.
    pub point: &'a str,
    /// The dispatching scope's name.
    pub scope: &'a str,
    /// Nesting depth (1 for a dispatch not made from inside an extension).
    pub depth: u32,
    /// What happened.
    pub what: What<'a>,
    pub(crate) payload: PayloadView<'a>,
}

/// What an [`Event`] reports.
#[non_exhaustive]
pub enum What<'a> {
    /// The dispatch passed its checks and starts running extensions.
    Start,
    /// An extension ran (`outcome` is what it returned; its error policy applies after).
    Extension {
        /// The extension's name.
        name: &'a str,
        /// Where it is defined.
        origin: &'a Origin,
        /// How long it ran.
        elapsed: Duration,
        /// What it returned.
        outcome: Result<Flow, &'a Error>,
    },
    /// An extension did not run for this payload (its `when` predicate or `"match"` said no).
    Skipped {
        /// The extension's name.
        name: &'a str,
    },
    /// The dispatch ended.
    End {
        /// From start to end.
        elapsed: Duration,
        /// The extension that stopped the chain with [`Flow::Stop`], if one did.
        stopped_by: Option<&'a str>,
        /// The dispatch's error, if it failed.
        error: Option<&'a Error>,
    },
}

/// The payload of the dispatch an event belongs to, for points whose payload can travel as JSON.
#[derive(Clone, Copy)]
pub(crate) struct PayloadView<'a> {
    pub(crate) ptr: *const (),
    pub(crate) codec: Option<&'a JsonCodec>,
}

impl Event<'_> {
    /// The payload as it is now, as JSON (`None` unless the point is declared `#[serde]`). At
    /// `Start` it is what the caller passed; after each `Extension` what that extension left.
    /// Serializes on every call: nothing is paid unless an observer asks.
    pub fn payload_json(&self) -> Option<serde_json::Value> {
        let codec = self.payload.codec?;
        // SAFETY: events are delivered synchronously while the dispatch holds the payload, and
        // the codec is the one dispatch checked against the payload's key.
        unsafe { (codec.to_json)(self.payload.ptr) }.ok()
    }
}

/// A registered observer; pass it to [`unobserve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObserverId(u64);

type Observer = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

static OBSERVERS: RwLock<Vec<(ObserverId, Observer)>> = RwLock::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static DID: Mutex<Option<HashMap<u32, u64>>> = Mutex::new(None);
static SLOW_US: AtomicU64 = AtomicU64::new(u64::MAX);

thread_local! {
    /// The points being dispatched on this thread, innermost last (observed path only).
    static DOING: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Registers `f` to see every dispatch of every scope, from now until [`unobserve`]. It runs on
/// the dispatching thread, synchronously: keep it short. A panicking observer is logged, not
/// propagated.
pub fn observe(f: impl Fn(&Event<'_>) + Send + Sync + 'static) -> ObserverId {
    let id = ObserverId(NEXT_ID.fetch_add(1, Ordering::Relaxed));
    let mut observers = locks::write(&OBSERVERS);
    observers.push((id, Arc::new(f)));
    stats::switch(Switch::Observers, true);
    id
}

/// Removes an observer; returns whether it was registered.
pub fn unobserve(id: ObserverId) -> bool {
    let mut observers = locks::write(&OBSERVERS);
    let before = observers.len();
    observers.retain(|(o, _)| *o != id);
    stats::switch(Switch::Observers, !observers.is_empty());
    observers.len() != before
}

/// How many times `point` was dispatched while observers were registered (0 if never, or if
/// no observer was ever registered).
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

/// Logs (at `warn`, with name and time) every extension that runs longer than `threshold`;
/// `None` turns it off. While set, every dispatch is timed.
pub fn set_slow_threshold(threshold: Option<Duration>) {
    let us = threshold.map_or(u64::MAX, |t| {
        u64::try_from(t.as_micros()).unwrap_or(u64::MAX)
    });
    SLOW_US.store(us, Ordering::Relaxed);
    stats::switch(Switch::SlowThreshold, threshold.is_some());
}

/// The slow-extension threshold, if set.
pub(crate) fn slow_threshold() -> Option<Duration> {
    match SLOW_US.load(Ordering::Relaxed) {
        u64::MAX => None,
        us => Some(Duration::from_micros(us)),
    }
}

/// Whether any observer is registered.
pub(crate) fn has_observers() -> bool {
    stats::is_on(Switch::Observers)
}

/// Delivers `event` to every observer.
pub(crate) fn emit(event: &Event<'_>) {
    let observers: Vec<Observer> = locks::read(&OBSERVERS)
        .iter()
        .map(|(_, o)| o.clone())
        .collect();
    for o in observers {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| o(event))).is_err() {
            tracing::error!(point = event.point, "a hookpoint observer panicked");
        }
    }
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
