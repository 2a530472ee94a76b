//! hookpoint's own `tracing` output about dispatch, written from the typed events: the one place
//! that knows its span names and field names (`point`, `depth`, `extension`, `origin`,
//! `duration_us`, `outcome`, `error`).
//!
//! - span `hookpoint.dispatch` (`debug`; `point`, `depth`) around each observed dispatch, and
//!   span `hookpoint.extension` (`trace`; `extension`, `origin`) around each extension;
//! - per extension: a `trace` event (`outcome = "ok"`) or a `debug` event (`outcome = "error"`,
//!   `error`), with `point`, `extension` and `duration_us` (µs, `f64`);
//! - `warn`: an extension slower than the threshold (`slow extension`), an extension error
//!   that its `on_error = log` policy swallowed;
//! - `debug`: a command hook or wasm extension that stopped the chain, an async dispatch
//!   dropped before it finished; `error`: an observer that panicked.

use std::time::Duration;

use super::{Event, What};
use crate::error::{Error, Origin};

/// The span of one dispatch (call only on the observed path).
pub(crate) fn dispatch_span(point: &str, depth: u32) -> tracing::Span {
    tracing::debug_span!("hookpoint.dispatch", point, depth)
}

/// The span of one extension's turn (call only on the observed path).
pub(crate) fn extension_span(name: &str, origin: &Origin) -> tracing::Span {
    tracing::trace_span!("hookpoint.extension", extension = name, origin = %origin)
}

/// Writes what `event` says to `tracing`; `slow` is the slow-extension threshold that applies.
pub(crate) fn event(event: &Event<'_>, slow: Option<Duration>) {
    let What::Extension {
        name,
        origin,
        elapsed,
        outcome,
        ..
    } = &event.what
    else {
        return;
    };
    let point = event.point;
    let duration_us = elapsed.as_secs_f64() * 1e6;
    match outcome {
        Ok(_) => tracing::trace!(point, extension = name, duration_us, outcome = "ok"),
        Err(e) => {
            tracing::debug!(point, extension = name, duration_us, outcome = "error", error = %e)
        }
    }
    if slow.is_some_and(|t| *elapsed > t) {
        tracing::warn!(point, extension = name, origin = %origin, duration_us, "slow extension");
    }
}

/// An extension failed and its `on_error = log` policy lets the chain go on.
pub(crate) fn continued_after_error(point: &str, name: &str, origin: &Origin, err: &Error) {
    tracing::warn!(point, extension = name, origin = %origin, error = %err, "extension failed; continuing (on_error = log)");
}

/// A command hook or wasm extension (`what`) asked to stop the chain.
#[cfg(any(hookpoint_command_hooks, hookpoint_wasm))]
pub(crate) fn stopped_by(point: &str, name: &str, what: &str, reason: &str) {
    tracing::debug!(point, extension = name, reason, "{what} stopped the chain");
}

/// An async dispatch was dropped after `ran` of its `total` extensions.
pub(crate) fn dropped_early(point: &str, ran: usize, total: usize) {
    tracing::debug!(
        point,
        ran,
        total,
        "async dispatch dropped before it finished; the remaining extensions did not run"
    );
}

/// An observer panicked while it was told about a dispatch of `point`.
pub(crate) fn observer_panicked(point: &str) {
    tracing::error!(point, "a hookpoint observer panicked");
}
