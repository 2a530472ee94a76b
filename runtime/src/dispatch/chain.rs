//! The rules that apply to each extension of a general list, written once for the sync and
//! the async loop: which extensions run for this payload, what is observed (timing, outcome,
//! `EXTENSIONS_LOG`), and what an error does (the extension's policy, or the caller's sink).

use std::time::Instant;

use super::{Call, ErrorSink};
use crate::error::Error;
use crate::registry::ErrorPolicy;
use crate::snapshot::PointList;
use crate::stats;

/// One dispatch of a general list, extension by extension.
pub(super) struct Chain<'a, 's> {
    list: &'a PointList,
    call: Call<'a>,
    sink: Option<ErrorSink<'s>>,
    /// A tracing subscriber wants `debug` from hookpoint, or `EXTENSIONS_LOG` is set.
    pub(super) observing: bool,
}

/// One extension's turn: when it started, if observed.
pub(super) struct Turn {
    index: usize,
    start: Option<Instant>,
}

impl<'a, 's> Chain<'a, 's> {
    pub(super) fn new(list: &'a PointList, call: Call<'a>, sink: Option<ErrorSink<'s>>) -> Self {
        let observing = stats::observing();
        if observing {
            stats::count(call.point);
        }
        Chain {
            list,
            call,
            sink,
            observing,
        }
    }

    /// The `debug` span of the whole dispatch (disabled unless observing).
    pub(super) fn span(&self, depth: u32) -> tracing::Span {
        if self.observing {
            tracing::debug_span!("hookpoint.dispatch", point = self.call.point, depth)
        } else {
            tracing::Span::none()
        }
    }

    /// Starts extension `index`'s turn, or `None` when it does not run for this payload (a
    /// generic point runs only the extensions of the dispatched instantiation).
    pub(super) fn turn(&self, index: usize) -> Option<Turn> {
        let m = &self.list.meta[index];
        if self.list.generic && m.key.is_some_and(|k| k != self.call.want.key) {
            return None;
        }
        Some(Turn {
            index,
            start: self.observing.then(Instant::now),
        })
    }

    /// The `trace` span of one extension (disabled unless observing).
    pub(super) fn extension_span(&self, turn: &Turn) -> tracing::Span {
        if self.observing {
            let m = &self.list.meta[turn.index];
            tracing::trace_span!("hookpoint.extension", extension = &*m.name, origin = %m.origin)
        } else {
            tracing::Span::none()
        }
    }

    /// The name of the extension whose turn it is.
    pub(super) fn name(&self, turn: &Turn) -> &'a str {
        &self.list.meta[turn.index].name
    }

    /// Ends a turn with the extension's result: logs the outcome when observed, then applies the
    /// extension's policy. `Err` stops the chain.
    pub(super) fn end(&mut self, turn: Turn, result: Result<(), Error>) -> Result<(), Error> {
        let point = self.call.point;
        let m = &self.list.meta[turn.index];
        if let Some(start) = turn.start {
            let duration_us = start.elapsed().as_secs_f64() * 1e6;
            match &result {
                Ok(()) => {
                    tracing::trace!(point, extension = &*m.name, duration_us, outcome = "ok")
                }
                Err(e) => {
                    tracing::debug!(point, extension = &*m.name, duration_us, outcome = "error", error = %e)
                }
            }
        }
        let Err(err) = result else {
            return Ok(());
        };
        let err = err.at_extension(&m.name, &m.origin).at_point(point);
        if m.policy == ErrorPolicy::Log {
            tracing::warn!(point, extension = &*m.name, origin = %m.origin, error = %err, "extension failed; continuing (on_error = log)");
            return Ok(());
        }
        match &mut self.sink {
            Some(sink) => {
                sink(self.call.payload.0, err);
                Ok(())
            }
            None => Err(err),
        }
    }
}
