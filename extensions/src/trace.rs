//! The agent's trace: for every point it fires, which extensions ran (with their time), what the
//! point changed in the payload, and how long it took — masked, so no secret reaches it.
//!
//! Turn it on with [`AgentBuilder::trace`](crate::AgentBuilder::trace). Extension names and
//! times come from hookpoint's own `tracing` events; install [`TraceLayer`] in the
//! application's subscriber to get them (without it the trace lists the extensions the
//! snapshot would run, without times).
//!
//! ```
//! use tracing_subscriber::prelude::*;
//! let subscriber = tracing_subscriber::registry().with(hookpoint_extensions::TraceLayer::new());
//! let _guard = tracing::subscriber::set_default(subscriber);
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing_subscriber::filter::Filtered;
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::agent::AgentCore;
use crate::agent::CURRENT;

/// One extension that ran during a traced point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtensionRun {
    /// The point it ran on.
    pub point: String,
    /// The extension's name.
    pub name: String,
    /// How long it ran, in microseconds (`None` when unknown: no [`TraceLayer`]).
    pub micros: Option<f64>,
    /// True when it succeeded.
    pub ok: bool,
}

/// One change a point made to its payload: a JSON path with the value before and after (`None`
/// for an added or removed list item or key).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Dotted path into the payload (`args.expression`, `parts[+]`).
    pub path: String,
    /// The value before (masked).
    pub before: Option<Value>,
    /// The value after (masked).
    pub after: Option<Value>,
}

/// What one dispatch of one point did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointTrace {
    /// The agent.
    pub agent: String,
    /// The point.
    pub point: String,
    /// The extensions that ran, in order.
    pub extensions: Vec<ExtensionRun>,
    /// What changed in the payload.
    pub changes: Vec<Change>,
    /// Wall time of the whole dispatch, in microseconds.
    pub micros: f64,
    /// The error, if the point failed.
    pub error: Option<String>,
}

/// Where traces go: called once per dispatch, on the agent's task.
pub type TraceFn = Arc<dyn Fn(&PointTrace) + Send + Sync>;

/// Differences between two JSON values, as changes under `path`.
pub fn diff(path: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    if before == after {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (k, av) in a {
                match b.get(k) {
                    Some(bv) => diff(&join(k), bv, av, out),
                    None => out.push(change(join(k), None, Some(av))),
                }
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                out.push(change(join(k), Some(bv), None));
            }
        }
        (Value::Array(b), Value::Array(a)) if a.len() >= b.len() && a.starts_with(b) => {
            for item in &a[b.len()..] {
                out.push(change(format!("{path}[+]"), None, Some(item)));
            }
        }
        _ => out.push(change(path.to_owned(), Some(before), Some(after))),
    }
}

fn change(path: String, before: Option<&Value>, after: Option<&Value>) -> Change {
    Change {
        path,
        before: before.cloned(),
        after: after.cloned(),
    }
}

/// A `tracing` layer that hands hookpoint's per-extension events (name, duration, outcome) to
/// the traced agent whose task emits them. It enables only `hookpoint`'s own `trace` events.
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceLayer;

/// Set once a [`TraceLayer`] was made: traces then trust its (possibly empty) event lists.
static LAYER_MADE: AtomicBool = AtomicBool::new(false);

impl TraceLayer {
    /// The layer, filtered to the events it reads (hookpoint's targets, every level).
    pub fn new<S>() -> Filtered<TraceLayer, HookpointEvents, S>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        LAYER_MADE.store(true, Ordering::Relaxed);
        TraceLayer.with_filter(HookpointEvents)
    }
}

/// The filter of [`TraceLayer`]: hookpoint's dispatch events at any level.
#[derive(Debug, Clone, Copy, Default)]
pub struct HookpointEvents;

impl<S> Filter<S> for HookpointEvents {
    fn enabled(&self, meta: &tracing::Metadata<'_>, _: &Context<'_, S>) -> bool {
        meta.target().starts_with("hookpoint")
    }
}

/// The fields hookpoint puts on its `tracing` output: a dispatch span's `point`, and an
/// extension event's `point`, `extension`, `duration_us` (µs) and `outcome`. Read them with
/// [`of_event`](Self::of_event) or [`of_span`](Self::of_span); a field that is absent stays
/// `None` (`ok`: `false`).
///
/// ```
/// use hookpoint_extensions::trace::DispatchFields;
/// let fields = DispatchFields::default();
/// assert!(fields.point.is_none() && !fields.ok);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DispatchFields {
    /// The point's name.
    pub point: Option<String>,
    /// The extension's name (extension events).
    pub extension: Option<String>,
    /// How long the extension ran, in microseconds (extension events).
    pub duration_us: Option<f64>,
    /// Whether its outcome was `ok` (extension events).
    pub ok: bool,
}

impl DispatchFields {
    /// The fields of one event.
    pub fn of_event(event: &tracing::Event<'_>) -> Self {
        let mut f = Self::default();
        event.record(&mut f);
        f
    }

    /// The fields a span was created with.
    pub fn of_span(attrs: &tracing::span::Attributes<'_>) -> Self {
        let mut f = Self::default();
        attrs.record(&mut f);
        f
    }
}

impl Visit for DispatchFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "point" => self.point = Some(value.to_owned()),
            "extension" => self.extension = Some(value.to_owned()),
            "outcome" => self.ok = value == "ok",
            _ => {}
        }
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "duration_us" {
            self.duration_us = Some(value);
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for TraceLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let f = DispatchFields::of_event(event);
        let (Some(point), Some(name), Some(micros)) = (f.point, f.extension, f.duration_us) else {
            return;
        };
        let _ = CURRENT.try_with(|agent| {
            if agent.core.tracer.is_some() {
                crate::agent::lock_trace(&agent.core).push(ExtensionRun {
                    point,
                    name,
                    micros: Some(micros),
                    ok: f.ok,
                });
            }
        });
    }
}

/// A traced dispatch in progress.
pub(crate) struct TraceStart {
    before: Value,
    mark: usize,
    start: std::time::Instant,
}

impl AgentCore {
    /// Starts tracing a dispatch when the agent has a tracer; `view` is the payload as the
    /// trace shows it (called only then).
    pub(crate) fn trace_begin(&self, view: impl FnOnce() -> Value) -> Option<TraceStart> {
        self.tracer.as_ref()?;
        Some(TraceStart {
            before: self.masked(view()),
            mark: crate::agent::lock_trace(self).len(),
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
    /// their own site), or, without a [`TraceLayer`], the names the snapshot would run.
    fn take_runs(&self, point: &str, mark: usize) -> Vec<ExtensionRun> {
        let mut buf = crate::agent::lock_trace(self);
        let mark = mark.min(buf.len());
        let tail: Vec<ExtensionRun> = buf.drain(mark..).collect();
        let (mine, others): (Vec<_>, Vec<_>) = tail.into_iter().partition(|r| r.point == point);
        buf.extend(others);
        if !mine.is_empty() || LAYER_MADE.load(Ordering::Relaxed) {
            return mine;
        }
        self.scope
            .snapshot()
            .extension_names(point)
            .into_iter()
            .map(|name| ExtensionRun {
                point: point.to_owned(),
                name,
                micros: None,
                ok: true,
            })
            .collect()
    }
}
