//! An agent's trace as it is recorded: the agent observes its scope while it lives, keeps the
//! extension events of its own work ([`ExtensionRun`]), and hands one [`PointTrace`] per
//! dispatch to its tracer, masked.

use std::sync::Arc;

use hookpoint::observe::{Event, ObserverId, What};
use serde_json::Value;

use super::handle::{AgentCore, CURRENT};
use crate::lock::lock;
use crate::trace::{ExtensionRun, PointTrace, diff};

/// A traced dispatch in progress.
pub(crate) struct TraceStart {
    before: Value,
    mark: usize,
    start: std::time::Instant,
}

/// Attaches the observer that records `core`'s extension runs to its scope, when it has a
/// tracer: it keeps only the events of work done by this agent (the task it runs on).
pub(crate) fn observe_runs(core: &Arc<AgentCore>) -> Option<ObserverId> {
    core.tracer.as_ref()?;
    let me = Arc::as_ptr(core) as usize;
    Some(core.scope.observe(move |event: &Event<'_>| {
        let What::Extension {
            name,
            elapsed,
            outcome,
            ..
        } = &event.what
        else {
            return;
        };
        let _ = CURRENT.try_with(|agent| {
            if Arc::as_ptr(&agent.core) as usize == me {
                lock(&agent.core.trace_buf).push(ExtensionRun {
                    point: event.point.to_owned(),
                    name: (*name).to_owned(),
                    micros: elapsed.as_secs_f64() * 1e6,
                    ok: outcome.is_ok(),
                });
            }
        });
    }))
}

impl AgentCore {
    /// Starts tracing a dispatch when the agent has a tracer; `view` is the payload as the
    /// trace shows it (called only then).
    pub(crate) fn trace_begin(&self, view: impl FnOnce() -> Value) -> Option<TraceStart> {
        self.tracer.as_ref()?;
        Some(TraceStart {
            before: self.masked(view()),
            mark: lock(&self.trace_buf).len(),
            start: std::time::Instant::now(),
        })
    }

    fn masked(&self, mut view: Value) -> Value {
        self.secrets.mask_json(&mut view);
        view
    }

    /// Ends a traced dispatch; `after` is the payload as the trace shows it, after the point.
    pub(crate) fn trace_end(
        &self,
        point: &str,
        t: TraceStart,
        after: Value,
        result: &Result<(), hookpoint::Error>,
    ) {
        let Some(tracer) = &self.tracer else { return };
        let micros = t.start.elapsed().as_secs_f64() * 1e6;
        let after = self.masked(after);
        let mut changes = Vec::new();
        diff("", &t.before, &after, &mut changes);
        let extensions = self.take_runs(point, t.mark);
        tracer(&PointTrace {
            agent: self.name.clone(),
            point: point.to_owned(),
            extensions,
            changes,
            micros,
            error: result
                .as_ref()
                .err()
                .map(|e| self.secrets.mask(&e.to_string()).into_owned()),
        });
    }

    /// The runs recorded for `point` since `mark` (nested dispatches of other points stay for
    /// their own site).
    fn take_runs(&self, point: &str, mark: usize) -> Vec<ExtensionRun> {
        let mut buf = lock(&self.trace_buf);
        let mark = mark.min(buf.len());
        let tail: Vec<ExtensionRun> = buf.drain(mark..).collect();
        let (mine, others): (Vec<_>, Vec<_>) = tail.into_iter().partition(|r| r.point == point);
        buf.extend(others);
        mine
    }
}
