//! Dispatch: runs one point's list of extensions, sync or async, on a given snapshot.
//!
//! A list's [`Shape`](crate::snapshot::Shape) picks the loop: a bare or plain list of sync
//! handlers for the dispatched payload runs as a plain loop of indirect calls after one compare;
//! every other list goes through the general loop, which checks the whole list before anything
//! runs ([`precheck`]) and applies each extension's rules through one [`Chain`](chain::Chain)
//! shared by the sync and async loops.
//!
//! Comes after `snapshot`; knows nothing of scopes (the scope layer finds the snapshot and passes
//! the scope along, erased, for [`Cx`](crate::Cx)).

mod asynchronous;
mod chain;
#[cfg(all(feature = "command-hooks", unix))]
mod hook;
mod nest;
mod next;
mod outcome;
mod sync;
#[cfg(all(feature = "wasm", unix))]
mod wasm;
#[cfg(all(feature = "wasm", unix))]
pub(crate) mod wasm_answer;
mod wrap;

use std::any::TypeId;
use std::cell::Cell;

pub(crate) use asynchronous::run_async;
pub(crate) use nest::{run_async as run_wrap_async, run_sync as run_wrap_sync};
pub use next::{AsyncNext, Next, StepFuture};
pub use outcome::Outcome;
pub(crate) use sync::{run_bare, run_sync};

use crate::error::{Error, ErrorKind};
use crate::registry::JsonCodec;
use crate::snapshot::PointList;

/// How deep dispatches may nest (an extension dispatching a point whose extension dispatches...)
/// before [`ErrorKind::DepthLimit`] is returned instead of overflowing the stack.
pub const MAX_DEPTH: u32 = 64;

/// The scope a dispatch runs in, as dispatch sees it: what [`Cx`](crate::Cx) carries, and who
/// observes it (the scope layer sits above and implements it).
pub(crate) trait ScopeView: crate::registry::DispatchScope {
    /// Who observes the scope's dispatches, and its observation settings.
    fn observation(&self) -> &crate::observe::ScopeObservation;
}

/// The scope a dispatch runs in, erased.
pub(crate) type ScopeRef<'a> = &'a dyn ScopeView;

/// Whether a dispatch in `scope` may take a fast loop: one check while nothing is observed
/// anywhere; when something is, whether anything reads this scope's events.
#[inline(always)]
pub(crate) fn unobserved(scope: ScopeRef<'_>) -> bool {
    !crate::stats::observing() || !observed_here(scope)
}

#[cold]
#[inline(never)]
fn observed_here(scope: ScopeRef<'_>) -> bool {
    scope.observation().wanted()
}

/// What a payload looks like to the erased dispatch core.
#[derive(Clone, Copy)]
pub(crate) struct Erased<'c> {
    /// `TypeId::of::<fn(&mut P)>()` with `P`'s lifetimes elided.
    pub(crate) key: TypeId,
    pub(crate) type_name: fn() -> &'static str,
    /// Present when the payload can travel as JSON (command hooks, wasm).
    pub(crate) codec: Option<&'c JsonCodec>,
}

/// A raw pointer that may cross threads: it points to the `&mut P` payload the dispatch
/// borrows, and `P: Send` is required by every async entry point.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub(crate) *mut ());
// SAFETY: see the type's doc; the pointee is borrowed mutably by the dispatch for its whole life.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the pointer is only dereferenced by the one extension running at a time.
unsafe impl Sync for SendPtr {}

/// One dispatch: which point (interned id and name) with what payload.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) id: u32,
    pub(crate) point: &'a str,
    pub(crate) want: Erased<'a>,
    /// The `&mut P` being dispatched, erased; its type is `want.key`'s.
    pub(crate) payload: SendPtr,
}

/// Called with an extension's error instead of stopping the chain (the `#[extensible]` mode: the
/// error becomes the call's result and the next extension sees it).
pub(crate) type ErrorSink<'f> = &'f mut (dyn FnMut(*mut (), Error) + Send);

fn mismatch(list: &PointList, point: &str, want: &Erased<'_>) -> Error {
    let typed = list
        .meta
        .iter()
        .find(|m| m.key.is_some_and(|k| k != want.key));
    let wanted = (want.type_name)();
    let message = match (typed, list.declared_type) {
        (Some(m), _) => format!(
            "this extension takes `{}` but the point was dispatched with `{wanted}`",
            m.payload_type
        ),
        // Only command hooks and wasm extensions (they take any serde payload): the declaration
        // is the reference, and the first of them is named.
        (None, Some(declared)) => format!(
            "the point is declared with payload `{}` but was dispatched with `{wanted}`; none of its {} extension(s) ran, this one first",
            declared(),
            list.meta.len()
        ),
        (None, None) => format!("the point's extensions take another payload than `{wanted}`"),
    };
    let mut e = Error::kind_msg(ErrorKind::PayloadMismatch, message);
    if let Some(m) = typed.or(list.meta.first()) {
        e = e.at_extension(&m.name, &m.origin);
    }
    e.at_point(point)
}

/// Checks that can refuse the whole point before any extension runs: a refusal (duplicates), a
/// payload mismatch, an async extension on a sync dispatch, command hooks without a codec.
fn precheck(list: &PointList, point: &str, want: &Erased<'_>, sync: bool) -> Result<(), Error> {
    if let Some(r) = &list.refusal {
        return Err(r.to_error(point));
    }
    if !list.generic && (list.mixed_keys || list.key.is_some_and(|k| k != want.key)) {
        return Err(mismatch(list, point, want));
    }
    if sync && let Some(i) = list.first_async {
        let m = &list.meta[i as usize];
        return Err(Error::kind_msg(
            ErrorKind::AsyncOnSync,
            "async extension on a point dispatched synchronously; nothing ran. Dispatch the point with `.await` (call_async / AsyncPoint) or make the extension sync",
        )
        .at_extension(&m.name, &m.origin)
        .at_point(point));
    }
    #[cfg(all(feature = "overrides", unix))]
    if list.has_commands && want.codec.is_none() && list.codec.is_none() {
        return Err(no_codec(list, point));
    }
    Ok(())
}

impl<'a> Call<'a> {
    /// The call with the declared point's codec when the dispatcher brought none (by-name
    /// dispatch of a `#[serde]` point). Sound after [`precheck`]: the payload key equals the
    /// declared one, and the declaration's codec is made for that payload.
    #[inline]
    fn with_declared_codec(self, list: &'a PointList) -> Self {
        #[cfg(all(feature = "overrides", unix))]
        if self.want.codec.is_none() {
            let mut call = self;
            call.want.codec = list.codec;
            return call;
        }
        let _ = list;
        self
    }
}

#[cfg(all(feature = "overrides", unix))]
fn no_codec(list: &PointList, point: &str) -> Error {
    let mut e = Error::kind_msg(
        ErrorKind::Command,
        "command hooks and wasm extensions need the point's payload as JSON: declare the point `#[serde]` in `point!` (dispatch it through that static, `call!` or `call_sync` with the declared payload type)",
    );
    if let Some(m) = list
        .runs
        .iter()
        .position(|r| {
            !matches!(
                r,
                crate::snapshot::Run::Sync(_)
                    | crate::snapshot::Run::Async(_)
                    | crate::snapshot::Run::Registered(_)
                    | crate::snapshot::Run::Wrap(_)
                    | crate::snapshot::Run::AsyncWrap(_)
            )
        })
        .map(|i| &list.meta[i])
    {
        e = e.at_extension(&m.name, &m.origin);
    }
    e.at_point(point)
}

/// A wrap extension met in a plain list (ruled out by the payload key check; an error rather
/// than a panic).
#[cold]
fn wrap_on_plain() -> Error {
    Error::kind_msg(
        ErrorKind::PayloadMismatch,
        "this extension takes `next`, so it runs only on a wrap point",
    )
}

#[cold]
#[inline(never)]
fn depth_error(point: &str) -> Error {
    Error::kind_msg(
        ErrorKind::DepthLimit,
        format!("dispatch nested more than {MAX_DEPTH} levels deep; an extension keeps dispatching the point it runs on"),
    )
    .at_point(point)
}

/// Restores the thread's depth when a dispatch (or one poll of it) ends, also on panic.
struct DepthGuard<'a> {
    cell: &'a Cell<u32>,
    prev: u32,
}

impl<'a> DepthGuard<'a> {
    /// Enters one more level of nesting, or refuses past [`MAX_DEPTH`].
    #[inline(always)]
    fn next(cell: &'a Cell<u32>, point: &str) -> Result<(Self, u32), Error> {
        let depth = cell.get() + 1;
        if depth > MAX_DEPTH {
            return Err(depth_error(point));
        }
        Ok((Self::enter(cell, depth), depth))
    }

    #[inline(always)]
    fn enter(cell: &'a Cell<u32>, depth: u32) -> Self {
        DepthGuard {
            cell,
            prev: cell.replace(depth),
        }
    }
}

impl Drop for DepthGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.cell.set(self.prev);
    }
}
