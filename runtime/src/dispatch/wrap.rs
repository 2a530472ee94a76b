//! The wrap loop: a wrap point's list run as a nest. The generic halves are [`Next`] and
//! [`AsyncNext`] (they know the request and response types); this module is the erased half
//! they call: which extension runs next for a request, how one runs, and the same
//! per-extension rules as the other loops ([`Chain`]): matchers, error policy, budgets,
//! observation, the depth guard and the checks made before anything runs.
//!
//! A wrap extension's turn spans everything it wraps. A command hook or wasm extension in the
//! list is a "before" step at its place: it may rewrite the request (`{"payload": ...}`) or
//! answer it (`{"response": ...}`), else the nest goes on past it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::asynchronous::within;
use super::chain::{Chain, Turn};
use super::{Call, SendPtr};
use crate::error::{Error, ErrorKind};
use crate::registry::{Cx, JsonCodec, WrapFn};
use crate::snapshot::{PointList, Run, Snapshot};

/// One dispatch of a wrap point, shared by every level of its nest.
#[cfg_attr(
    not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
    allow(dead_code, reason = "read by command hooks and wasm extensions")
)]
pub(crate) struct WrapChain<'a> {
    snap: &'a Snapshot,
    list: &'a PointList,
    /// The per-extension rules; `None` on the fast path, where none applies.
    chain: Option<Chain<'a, 'static>>,
    call: Call<'a>,
    cx: Cx<'a>,
    /// The point's response codec (`Option<Response>`), for command hooks that answer.
    response: Option<&'a JsonCodec>,
    /// The handlers of a [`Shape::Wrap`] list dispatched unobserved: no rule applies per level,
    /// so a level is one indirect call.
    fast: Option<&'a [WrapFn]>,
}

// SAFETY: the one field that is not `Sync` is the chain's error sink, which a wrap dispatch
// never sets (`None`) and which no `&self` method of `Chain` touches; everything a level reads
// through `&WrapChain` is immutable or reached through `Sync` types (observers, atomics).
unsafe impl Sync for WrapChain<'_> {}

/// The turn of the next extension of a nest that runs for the request.
pub(crate) struct WrapTurn {
    turn: Turn,
    index: usize,
}

impl WrapTurn {
    /// Where the rest of the nest, after this extension, starts.
    pub(crate) fn next_pos(&self) -> usize {
        self.index + 1
    }
}

/// How one step of a nest ended.
pub(crate) enum Step {
    /// The extension (or a command hook) wrote the response.
    Answered,
    /// A command hook passed the request on, or an extension's error was logged
    /// (`on_error = "log"`): the nest goes on with the extensions after it.
    PassOn,
    /// The nest ends with this error.
    Failed(Error),
}

impl<'a> WrapChain<'a> {
    /// A nest over `list`, with the per-extension rules (`chain`) unless `fast` is given.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        snap: &'a Snapshot,
        list: &'a PointList,
        chain: Option<Chain<'a, 'static>>,
        call: Call<'a>,
        cx: Cx<'a>,
        response: Option<&'a JsonCodec>,
        fast: Option<&'a [WrapFn]>,
    ) -> Self {
        WrapChain {
            snap,
            list,
            chain,
            call,
            cx,
            response,
            fast,
        }
    }

    /// On a list where no rule applies per level: runs extension `pos` as [`invoke`](Self::invoke)
    /// does, `Some(Ok(()))` when it wrote the response; `Some(Err(None))` when no extension is
    /// left (the inner step is next); `None` on other lists, which take `turn` and `invoke`.
    #[inline(always)]
    pub(crate) fn invoke_fast(
        &self,
        pos: usize,
        request: *mut (),
        next: *mut (),
        response: *mut (),
    ) -> Option<Result<(), Option<Error>>> {
        let fns = self.fast?;
        let Some(f) = fns.get(pos) else {
            return Some(Err(None));
        };
        // SAFETY: the list's key equals the point's (checked before the nest started), so the
        // pointers are the types every handler of the list was compiled for.
        Some(
            unsafe { f(request, next, response, &self.cx) }
                .map_err(|e| Some(self.attributed(pos, e))),
        )
    }

    #[cold]
    #[inline(never)]
    fn attributed(&self, pos: usize, err: Error) -> Error {
        let m = &self.list.meta[pos];
        err.at_extension(&m.name, &m.origin)
            .at_point(self.call.point)
    }

    /// The per-extension rules, which every list but a fast one has.
    pub(super) fn rules(&self) -> &Chain<'a, 'static> {
        self.chain
            .as_ref()
            .expect("only a fast nest runs without rules, and it never asks for them")
    }

    /// The next extension at or after `from` that runs for `request`.
    pub(crate) fn turn(&self, from: usize, request: *mut ()) -> Option<WrapTurn> {
        (from..self.list.runs.len()).find_map(|index| {
            self.rules()
                .turn_for(index, request)
                .map(|turn| WrapTurn { turn, index })
        })
    }

    /// When timing is wanted (the dispatch is observed), now.
    #[inline]
    pub(crate) fn started(&self) -> Option<Instant> {
        self.chain
            .as_ref()
            .is_some_and(|c| c.observing)
            .then(Instant::now)
    }

    /// Adds the time since `started` to a level's time spent inside `next`: at least 1, so that
    /// a level whose `next` ran is told apart from one whose `next` did not (the error policy
    /// needs it). Nothing on a fast nest, where no rule reads it.
    #[inline]
    pub(crate) fn add_inside(&self, inside: &AtomicU64, started: Option<Instant>) {
        if self.chain.is_none() {
            return;
        }
        let nanos = started.map_or(1, |s| {
            u64::try_from(s.elapsed().as_nanos())
                .unwrap_or(u64::MAX)
                .max(1)
        });
        inside.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The point dispatched.
    pub(crate) fn point(&self) -> &'a str {
        self.call.point
    }

    fn end(
        &self,
        turn: WrapTurn,
        inside: &AtomicU64,
        result: Result<(), Error>,
        answered: bool,
    ) -> Step {
        let inside = inside.load(Ordering::Relaxed);
        let ran_next = inside > 0;
        match self
            .rules()
            .end_wrap(turn.turn, Duration::from_nanos(inside), ran_next, result)
        {
            Ok(()) if answered => Step::Answered,
            Ok(()) | Err(None) => Step::PassOn,
            Err(Some(e)) => Step::Failed(e),
        }
    }

    #[cfg_attr(
        not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
        allow(dead_code, reason = "read by command hooks and wasm extensions")
    )]
    fn call_with(&self, request: *mut ()) -> Call<'a> {
        let mut call = self.call;
        call.payload = SendPtr(request);
        call
    }

    /// Runs one extension of a sync nest.
    ///
    /// `request`, `next` and `response` are the pointers of [`WrapFn`](crate::registry::WrapFn),
    /// for the request and response types of the point (checked before the nest started).
    pub(crate) fn invoke(
        &self,
        turn: WrapTurn,
        request: *mut (),
        next: *mut (),
        response: *mut (),
        inside: &AtomicU64,
    ) -> Step {
        let run = self.list.runs[turn.index];
        let (result, answered) = match run {
            // SAFETY: `precheck` verified that this extension's key equals the point's, so the
            // pointers are the types its handler was compiled for; they live for the call.
            Run::Wrap(f) => (unsafe { f(request, next, response, &self.cx) }, true),
            #[cfg(all(feature = "command-hooks", unix))]
            Run::Command(ix) => {
                let call = self.call_with(request);
                let name = &*self.list.meta[turn.index].name;
                match super::hook::run_wrap_sync(
                    &self.snap.commands[ix as usize],
                    name,
                    call,
                    self.response,
                    response,
                ) {
                    Ok(answered) => (Ok(()), answered),
                    Err(e) => (Err(e), false),
                }
            }
            #[cfg(all(feature = "wasm", unix))]
            Run::Wasm(ix) => {
                let call = self.call_with(request);
                let hook = &self.snap.wasm[ix as usize];
                // SAFETY: `response` is this level's slot and `self.response` the point's
                // response codec, made for it.
                match unsafe { super::wasm::run_wrap(hook, call, self.response, response) } {
                    Ok(answered) => (Ok(()), answered),
                    Err(e) => (Err(e), false),
                }
            }
            // SAFETY: as above; the closure was made for the point's request and response.
            Run::Registered(ix) => (
                unsafe {
                    self.list.registered[ix as usize].call_wrap(request, next, response, &self.cx)
                },
                true,
            ),
            _ => (Err(not_wrap()), false),
        };
        self.end(turn, inside, result, answered)
    }

    /// Runs one extension of an async nest, under its time budget.
    pub(crate) async fn invoke_async(
        &self,
        turn: WrapTurn,
        request: SendPtr,
        next: SendPtr,
        response: SendPtr,
        inside: &AtomicU64,
    ) -> Step {
        let run = self.list.runs[turn.index];
        let budget = self.list.meta[turn.index].timeout;
        let (result, answered) = match run {
            Run::AsyncWrap(f) => {
                // SAFETY: as in `invoke`; the pointees outlive this future (they live in the
                // calling level's frame, which awaits it).
                let fut = unsafe { f(request.0, next.0, response.0, &self.cx) };
                (within(fut, budget).await, true)
            }
            #[cfg(all(feature = "command-hooks", unix))]
            Run::Command(ix) => {
                let call = self.call_with(request.0);
                let name = &*self.list.meta[turn.index].name;
                let spec = &self.snap.commands[ix as usize];
                match Box::pin(super::hook::run_wrap_async(
                    spec,
                    name,
                    call,
                    self.response,
                    response,
                ))
                .await
                {
                    Ok(answered) => (Ok(()), answered),
                    Err(e) => (Err(e), false),
                }
            }
            #[cfg(all(feature = "wasm", unix))]
            Run::Wasm(ix) => {
                let call = self.call_with(request.0);
                let hook = &self.snap.wasm[ix as usize];
                // SAFETY: as in `invoke`.
                match unsafe { super::wasm::run_wrap(hook, call, self.response, response.0) } {
                    Ok(answered) => (Ok(()), answered),
                    Err(e) => (Err(e), false),
                }
            }
            Run::Registered(ix) => {
                let closure = &self.list.registered[ix as usize];
                // SAFETY: as for `Run::AsyncWrap`; the closure was made for these types.
                let fut = unsafe { closure.start_wrap(request.0, next.0, response.0, &self.cx) };
                (within(fut, budget).await, true)
            }
            _ => (Err(not_wrap()), false),
        };
        self.end(turn, inside, result, answered)
    }
}

/// A run that cannot be part of a nest (ruled out by the payload key check before the nest
/// starts; kept as an error rather than a panic).
#[cold]
fn not_wrap() -> Error {
    Error::kind_msg(
        ErrorKind::PayloadMismatch,
        "this extension does not take `next`, so it cannot run on a wrap point",
    )
}
