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
//!
//! Whether any of it is wanted is known without asking `tracing` on each dispatch: this module
//! registers a callsite of its own (`debug`, this module's target), and `tracing` tells every
//! registered callsite its interest whenever subscribers change (a subscriber set, a filter
//! reloaded); the answer becomes the [`Switch::Tracing`](crate::stats::Switch) switch.

use std::sync::Once;
use std::time::Duration;

use tracing_core::callsite::Callsite;
use tracing_core::subscriber::Interest;
use tracing_core::{Kind, Level, LevelFilter, Metadata, field::FieldSet};

use super::{Event, What};
use crate::error::{Error, Origin};

/// The callsite whose interest says whether a subscriber wants hookpoint's `debug` output.
struct DebugInterest;

static INTEREST: DebugInterest = DebugInterest;

static INTEREST_META: Metadata<'static> = Metadata::new(
    "hookpoint.interest",
    module_path!(),
    Level::DEBUG,
    Some(file!()),
    Some(line!()),
    Some(module_path!()),
    FieldSet::new(&[], tracing_core::identify_callsite!(&INTEREST)),
    Kind::EVENT,
);

impl Callsite for DebugInterest {
    fn set_interest(&self, interest: Interest) {
        // Events compiled out (`tracing`'s `max_level_*` features) are never wanted.
        let wanted =
            !interest.is_never() && tracing::level_filters::STATIC_MAX_LEVEL >= LevelFilter::DEBUG;
        crate::stats::switch(crate::stats::Switch::Tracing, wanted);
    }

    fn metadata(&self) -> &Metadata<'_> {
        &INTEREST_META
    }
}

/// Registers the interest callsite (once per process): from then on `tracing` keeps
/// [`Switch::Tracing`](crate::stats::Switch) up to date.
pub(crate) fn follow_interest() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| tracing_core::callsite::register(&INTEREST));
}

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
#[cfg(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix)))]
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

#[cfg(test)]
mod tests {
    use tracing::span;
    use tracing_core::subscriber::Interest;
    use tracing_core::{Event, LevelFilter, Metadata};

    use crate::stats::{Switch, is_on};

    /// A subscriber that wants everything up to a level.
    struct UpTo(LevelFilter);

    impl tracing::Subscriber for UpTo {
        fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
            if self.0 >= *meta.level() {
                Interest::always()
            } else {
                Interest::never()
            }
        }
        fn max_level_hint(&self) -> Option<LevelFilter> {
            Some(self.0)
        }
        fn enabled(&self, meta: &Metadata<'_>) -> bool {
            self.0 >= *meta.level()
        }
        fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
            span::Id::from_u64(1)
        }
        fn record(&self, _: &span::Id, _: &span::Record<'_>) {}
        fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &span::Id) {}
        fn exit(&self, _: &span::Id) {}
    }

    #[test]
    fn the_tracing_switch_follows_what_subscribers_want() {
        super::follow_interest();
        tracing::subscriber::with_default(UpTo(LevelFilter::INFO), || {
            assert!(
                !is_on(Switch::Tracing),
                "an `info` subscriber does not want `debug`"
            );
        });
        tracing::subscriber::with_default(UpTo(LevelFilter::DEBUG), || {
            assert!(is_on(Switch::Tracing), "a `debug` subscriber does");
        });
        tracing::subscriber::with_default(UpTo(LevelFilter::WARN), || {
            assert!(
                !is_on(Switch::Tracing),
                "and it is off again for a `warn` one"
            );
        });
    }
}
