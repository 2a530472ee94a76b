//! The `tracing` layer: reads hookpoint's own telemetry — the `debug` span `hookpoint.dispatch`
//! (field `point`) around each dispatch and the per-extension event (`point`, `extension`,
//! `duration_us`, `outcome`) — and adds it to the observed task it belongs to (the agent whose
//! work emits it). Its filter enables hookpoint's targets only, and only while a task is
//! observed ([`armed`](crate::armed)); otherwise it hints `OFF` and dispatch stays on its fast
//! path.

use std::sync::Arc;
use std::time::Instant;

use hookpoint_extensions::trace::DispatchFields;
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id};
use tracing::subscriber::Interest;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::filter::Filtered;
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::arm::{armed, layer_made};
use crate::recorder::{Recorder, TaskKey, current_task};

/// The layer that feeds the plugin. Install it in the application's subscriber:
///
/// ```
/// use tracing_subscriber::prelude::*;
/// let subscriber = tracing_subscriber::registry().with(hookpoint_plugin_observability::layer());
/// let _guard = tracing::subscriber::set_default(subscriber);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ObservabilityLayer;

/// The layer, with its filter ([`WhileObserving`]).
pub fn layer<S>() -> Filtered<ObservabilityLayer, WhileObserving, S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    layer_made();
    ObservabilityLayer.with_filter(WhileObserving)
}

/// The layer's filter: hookpoint's spans and events, while a task is observed.
#[derive(Debug, Clone, Copy, Default)]
pub struct WhileObserving;

fn hookpoint_target(target: &str) -> bool {
    target == "hookpoint" || target.starts_with("hookpoint::")
}

impl<S> Filter<S> for WhileObserving {
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        armed() && hookpoint_target(meta.target())
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if hookpoint_target(meta.target()) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(if armed() {
            LevelFilter::TRACE
        } else {
            LevelFilter::OFF
        })
    }
}

/// A dispatch span of an observed task.
struct Timed {
    point: String,
    start: Instant,
    recorder: Arc<Recorder>,
    key: TaskKey,
}

/// The observed task the current work belongs to, with its scope's recorder.
fn observed() -> Option<(Arc<Recorder>, TaskKey)> {
    let (agent, key) = current_task()?;
    let recorder = Recorder::of(agent.scope());
    recorder.is_open(&key).then_some((recorder, key))
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for ObservabilityLayer {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "hookpoint.dispatch" {
            return;
        }
        let (Some((recorder, key)), Some(span)) = (observed(), ctx.span(id)) else {
            return;
        };
        let Some(point) = DispatchFields::of_span(attrs).point else {
            return;
        };
        span.extensions_mut().insert(Timed {
            point,
            start: Instant::now(),
            recorder,
            key,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        if let Some(t) = span.extensions_mut().remove::<Timed>() {
            let us = t.start.elapsed().as_secs_f64() * 1e6;
            t.recorder.point(&t.key, &t.point, us);
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let f = DispatchFields::of_event(event);
        let (Some(point), Some(name), Some(us)) = (f.point, f.extension, f.duration_us) else {
            return;
        };
        if let Some((recorder, key)) = observed() {
            recorder.extension(&key, &point, &name, us, f.ok);
        }
    }
}
