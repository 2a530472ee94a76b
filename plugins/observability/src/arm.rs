//! When a scope's dispatch is observed. The plugin attaches its observer to a scope
//! ([`hookpoint::Scope::observe`]) while at least one task of that scope is observed (its
//! `task.start` ran with the plugin enabled) and detaches it after the last one ends. With no
//! observer attached anywhere, dispatch takes its fast path: the plugin costs nothing between
//! tasks, where it is disabled, and in every other scope's dispatches but the one check.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use hookpoint::Scope;
use hookpoint::observe::{Event, ObserverId, What};
use hookpoint_extensions::lock::lock;

use crate::OBSERVABILITY;
use crate::recorder::{Recorder, current_task};

/// Observed tasks in flight, process-wide.
static ARMED: AtomicUsize = AtomicUsize::new(0);

/// True while at least one task is observed, in any scope.
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed) > 0
}

/// One scope's observed tasks and the observer attached for them (plugin state).
#[derive(Default)]
struct Armed(Mutex<(usize, Option<ObserverId>)>);

/// One more task of `scope` observed: attaches the observer to the first.
pub(crate) fn arm(scope: &Scope) {
    let state = scope.enter(|| OBSERVABILITY.state::<Armed>());
    let mut s = lock(&state.0);
    s.0 += 1;
    ARMED.fetch_add(1, Ordering::Relaxed);
    if s.1.is_none() {
        s.1 = Some(scope.observe(record));
    }
}

/// One task of `scope` less: detaches the observer after the last.
pub(crate) fn disarm(scope: &Scope) {
    let state = scope.enter(|| OBSERVABILITY.state::<Armed>());
    let mut s = lock(&state.0);
    if s.0 == 0 {
        return;
    }
    s.0 -= 1;
    ARMED.fetch_sub(1, Ordering::Relaxed);
    if s.0 == 0
        && let Some(id) = s.1.take()
    {
        scope.unobserve(id);
    }
}

/// The observer: adds each extension's time and outcome, and each point's time, to the observed
/// task the work belongs to (the agent whose task emits the event).
fn record(event: &Event<'_>) {
    let us = |d: &std::time::Duration| d.as_secs_f64() * 1e6;
    let (name, elapsed, ok) = match &event.what {
        What::Extension {
            name,
            elapsed,
            outcome,
            ..
        } => (Some(*name), elapsed, outcome.is_ok()),
        What::End { elapsed, .. } => (None, elapsed, true),
        _ => return,
    };
    let Some((agent, key)) = current_task() else {
        return;
    };
    let recorder = Recorder::of(agent.scope());
    match name {
        Some(name) => recorder.extension(&key, event.point, name, us(elapsed), ok),
        None => recorder.point(&key, event.point, us(elapsed)),
    }
}
