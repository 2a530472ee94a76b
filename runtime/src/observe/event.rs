//! The typed events of one dispatch: what an observer, hookpoint's own `tracing` output and the
//! `EXTENSIONS_LOG` counter all read.

use std::time::Duration;

use crate::error::{Error, Origin};
use crate::registry::{Flow, JsonCodec};

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

impl std::fmt::Debug for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("point", &self.point)
            .field("scope", &self.scope)
            .field("depth", &self.depth)
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

/// What an [`Event`] reports.
#[non_exhaustive]
#[derive(Debug)]
pub enum What<'a> {
    /// The dispatch passed its checks and starts running extensions.
    Start,
    /// An extension ran (`outcome` is what it returned; its error policy applies after).
    Extension {
        /// The extension's name.
        name: &'a str,
        /// Where it is defined.
        origin: &'a Origin,
        /// How long it ran. For a wrap point's extension this includes everything it wrapped
        /// (the rest of the nest and the inner step, each time it called `next`).
        elapsed: Duration,
        /// For a wrap point's extension, its own time: `elapsed` minus the time spent inside
        /// `next`; `None` for the extensions of other points.
        own: Option<Duration>,
        /// What it returned (`Ok(Flow::Continue)` for a wrap extension that answered).
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
