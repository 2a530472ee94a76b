//! The rules that apply to each extension of a general list, written once for the sync and the
//! async loop: which extensions run for this payload (generic instantiation, `when` predicate,
//! `"match"`), what is observed (the typed events that observers, hookpoint's `tracing` output
//! and `EXTENSIONS_LOG` read), what `Flow::Stop` does, and what an error does (the extension's
//! policy, or the caller's sink).

use std::time::Instant;

use super::{Call, ErrorSink, Outcome, ScopeRef};
use crate::error::Error;
use crate::observe::{self, Event, PayloadView, Watch, What, tracing_out};
use crate::registry::{ErrorPolicy, Flow};
use crate::snapshot::{Matcher, PointList};
use crate::stats;

/// One dispatch of a general list, extension by extension.
pub(super) struct Chain<'a, 's> {
    list: &'a PointList,
    call: Call<'a>,
    sink: Option<ErrorSink<'s>>,
    scope: ScopeRef<'a>,
    depth: u32,
    /// Something reads this dispatch's events (`tracing`, `EXTENSIONS_LOG`, an observer of the
    /// scope, a threshold that applies here): they are made and delivered.
    pub(super) observing: bool,
    /// Who the events go to (collected when observing; no observer and no threshold else).
    watch: Watch,
    started: Option<Instant>,
    stopped_by: Option<usize>,
}

/// One extension's turn: when it started, if observed.
pub(super) struct Turn {
    index: usize,
    start: Option<Instant>,
}

impl<'a, 's> Chain<'a, 's> {
    /// Starts the chain (telling what observes it, when observed).
    pub(super) fn new(
        list: &'a PointList,
        call: Call<'a>,
        sink: Option<ErrorSink<'s>>,
        scope: ScopeRef<'a>,
        depth: u32,
    ) -> Self {
        let observing = stats::observing() && scope.observation().wanted();
        let watch = if observing {
            scope.observation().watch()
        } else {
            Watch {
                observers: Vec::new(),
                slow: None,
            }
        };
        if !watch.observers.is_empty() {
            observe::count(call.id);
        }
        let chain = Chain {
            list,
            call,
            sink,
            scope,
            depth,
            observing,
            watch,
            started: observing.then(Instant::now),
            stopped_by: None,
        };
        chain.emit(What::Start);
        chain
    }

    fn emit(&self, what: What<'_>) {
        if self.observing {
            observe::deliver(
                &Event {
                    point: self.call.point,
                    scope: self.scope.name(),
                    depth: self.depth,
                    what,
                    payload: PayloadView {
                        ptr: self.call.payload.0,
                        codec: self.call.want.codec,
                    },
                },
                &self.watch,
            );
        }
    }

    /// The `debug` span of the whole dispatch (disabled unless observing).
    pub(super) fn span(&self) -> tracing::Span {
        if self.observing {
            tracing_out::dispatch_span(self.call.point, self.depth)
        } else {
            tracing::Span::none()
        }
    }

    /// Marks this dispatch's point as being dispatched on this thread (for `doing`).
    pub(super) fn doing(&self) -> Option<observe::Doing> {
        (!self.watch.observers.is_empty()).then(|| observe::resume(self.call.id))
    }

    /// Starts extension `index`'s turn, or `None` when it does not run for this payload: a
    /// generic point runs only the extensions of the dispatched instantiation, and a `when`
    /// predicate or `"match"` may say no.
    pub(super) fn turn(&self, index: usize) -> Option<Turn> {
        self.turn_for(index, self.call.payload.0)
    }

    /// [`turn`](Self::turn) for `payload`, which a wrap point's extensions may pass on in place
    /// of the one the dispatch started with.
    pub(super) fn turn_for(&self, index: usize, payload: *mut ()) -> Option<Turn> {
        let m = &self.list.meta[index];
        if self.list.generic && m.key.is_some_and(|k| k != self.call.want.key) {
            return None;
        }
        if let Some(matcher) = &m.matcher
            && !self.accepts(matcher, payload)
        {
            self.emit(What::Skipped { name: &m.name });
            return None;
        }
        Some(Turn {
            index,
            start: self.observing.then(Instant::now),
        })
    }

    fn accepts(&self, matcher: &Matcher, payload: *mut ()) -> bool {
        match matcher {
            // SAFETY: the list's payload key equals the dispatcher's (`precheck`, and the generic
            // skip above), so the payload is the type the predicate was compiled for.
            Matcher::Typed(when) => unsafe { when(payload) },
            #[cfg(all(feature = "overrides", unix))]
            Matcher::Json(m) => {
                let Some(codec) = self.call.want.codec else {
                    return false;
                };
                // SAFETY: as above; the codec is the point's, checked against the payload key.
                unsafe { (codec.to_json)(payload) }.is_ok_and(|v| m.matches(&v))
            }
        }
    }

    /// The `trace` span of one extension (disabled unless observing).
    pub(super) fn extension_span(&self, turn: &Turn) -> tracing::Span {
        if self.observing {
            let m = &self.list.meta[turn.index];
            tracing_out::extension_span(&m.name, &m.origin)
        } else {
            tracing::Span::none()
        }
    }

    /// The name of the extension whose turn it is.
    pub(super) fn name(&self, turn: &Turn) -> &'a str {
        &self.list.meta[turn.index].name
    }

    /// The time budget of the extension whose turn it is.
    pub(super) fn budget(&self, turn: &Turn) -> Option<std::time::Duration> {
        self.list.meta[turn.index].timeout
    }

    /// Ends a turn with the extension's result: observes it, then applies `Flow::Stop` or the
    /// error policy. `Ok(Flow::Stop)` or `Err` ends the chain.
    pub(super) fn end(&mut self, turn: Turn, result: Result<Flow, Error>) -> Result<Flow, Error> {
        let m = &self.list.meta[turn.index];
        if let Some(start) = turn.start {
            self.observe_outcome(turn.index, start, &result);
        }
        let err = match result {
            Ok(Flow::Continue) => return Ok(Flow::Continue),
            Ok(Flow::Stop) => {
                self.stopped_by = Some(turn.index);
                return Ok(Flow::Stop);
            }
            Err(err) => err,
        };
        let point = self.call.point;
        let err = err.at_extension(&m.name, &m.origin).at_point(point);
        if m.policy == ErrorPolicy::Log {
            tracing_out::continued_after_error(point, &m.name, &m.origin, &err);
            return Ok(Flow::Continue);
        }
        match &mut self.sink {
            Some(sink) => {
                sink(self.call.payload.0, err);
                Ok(Flow::Continue)
            }
            None => Err(err),
        }
    }

    /// Tells what observes the chain how the extension did and how long it ran.
    fn observe_outcome(&self, index: usize, start: Instant, result: &Result<Flow, Error>) {
        let m = &self.list.meta[index];
        self.emit(What::Extension {
            name: &m.name,
            origin: &m.origin,
            elapsed: start.elapsed(),
            own: None,
            outcome: result.as_ref().copied(),
        });
    }

    /// Ends the turn of a wrap point's extension (or of a command hook acting as its "before"
    /// step): observes it, with `inside` the time it spent in `next`, then applies its error
    /// policy. `Ok(())`: the turn's result stands; `Err(None)`: its error was logged
    /// (`on_error = "log"`) and the nest goes on as if it were absent; `Err(Some(e))`: the
    /// nest ends with `e`.
    pub(super) fn end_wrap(
        &self,
        turn: Turn,
        inside: std::time::Duration,
        ran_next: bool,
        result: Result<(), Error>,
    ) -> Result<(), Option<Error>> {
        let m = &self.list.meta[turn.index];
        if let Some(start) = turn.start {
            let elapsed = start.elapsed();
            self.emit(What::Extension {
                name: &m.name,
                origin: &m.origin,
                elapsed,
                own: Some(elapsed.saturating_sub(inside)),
                outcome: result.as_ref().map(|()| Flow::Continue),
            });
        }
        let Err(err) = result else {
            return Ok(());
        };
        let point = self.call.point;
        let err = err.at_extension(&m.name, &m.origin).at_point(point);
        // `log` runs the rest of the nest as if the extension were absent, which is only sound
        // before its `next` ran: afterwards it would run the rest (the model, a payment) twice,
        // so the error is returned as it is.
        if m.policy == ErrorPolicy::Log && !ran_next {
            tracing_out::continued_after_error(point, &m.name, &m.origin, &err);
            return Err(None);
        }
        Err(Some(err))
    }

    /// Which extension stopped the chain, if one did.
    pub(super) fn outcome(&self) -> Outcome {
        match self.stopped_by {
            Some(i) => Outcome::stopped(&self.list.meta[i].name),
            None => Outcome::RAN_ALL,
        }
    }

    /// Ends the chain: tells observers how it ended.
    pub(super) fn finish(&self, result: &Result<(), Error>) {
        self.finish_with(result.as_ref().err());
    }

    /// [`finish`](Self::finish) with the dispatch's error, if it failed.
    pub(super) fn finish_with(&self, error: Option<&Error>) {
        if let Some(start) = self.started {
            self.emit(What::End {
                elapsed: start.elapsed(),
                stopped_by: self.stopped_by.map(|i| &*self.list.meta[i].name),
                error,
            });
        }
    }
}
