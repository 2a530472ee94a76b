//! The sync loops. The hot path: index the point's list, one compare that says "this list is
//! all plain sync handlers for this payload type", then a loop of indirect calls. Everything else
//! goes through [`run_general`], which checks the whole list before anything runs.

use super::chain::Chain;
use super::{Call, DepthGuard, ErrorSink, Outcome, ScopeRef, precheck, unobserved};
use crate::error::Error;
use crate::registry::{Cx, Flow, SyncFn};
use crate::snapshot::{PointList, Run, Shape, Snapshot};
use crate::stats;
use crate::thread_state::ThreadState;

/// Runs `call`'s point of `snap` synchronously on this thread.
///
/// `sink`, when given, receives extension errors instead of stopping the chain.
#[inline(always)]
pub(crate) fn run_sync(
    tl: &ThreadState,
    snap: &Snapshot,
    scope: ScopeRef<'_>,
    call: Call<'_>,
    sink: Option<ErrorSink<'_>>,
) -> Result<Outcome, Error> {
    let Some(list) = snap.list(call.id) else {
        return Ok(Outcome::RAN_ALL);
    };
    match &list.shape {
        Shape::Empty => Ok(Outcome::RAN_ALL),
        Shape::Bare { key, fns } if *key == call.want.key && unobserved(scope) => {
            let (_depth, _) = DepthGuard::next(&tl.depth, call.point)?;
            for f in fns.iter() {
                // SAFETY: the shape's key equals the dispatcher's payload key, so `payload`
                // points to the `P` every handler of this list was compiled for; bare handlers
                // take no `Cx`, cannot fail and do not stop the chain.
                unsafe { f(call.payload.0) };
            }
            Ok(Outcome::RAN_ALL)
        }
        Shape::Plain { key, fns } if *key == call.want.key && unobserved(scope) => {
            run_plain(tl, list, fns, scope, call, sink)
        }
        _ => run_general(tl, snap, list, scope, call, sink),
    }
}

/// The bare loop alone, for callers that inline it: `None` when the list is not a bare list of
/// this payload type (or dispatch is observed), and the caller goes the full way. Bare handlers
/// cannot stop the chain, so there is no [`Outcome`] to tell.
#[inline(always)]
pub(crate) fn run_bare(
    tl: &ThreadState,
    snap: &Snapshot,
    id: u32,
    key: std::any::TypeId,
    point: &str,
    payload: *mut (),
) -> Option<Result<(), Error>> {
    let list = snap.list(id)?;
    let Shape::Bare { key: list_key, fns } = &list.shape else {
        return None;
    };
    if *list_key != key || stats::observing() {
        return None;
    }
    let depth = tl.depth.get() + 1;
    if depth > super::MAX_DEPTH {
        return Some(Err(super::depth_error(point)));
    }
    tl.depth.set(depth);
    let _leave = Leave;
    // SAFETY: as in `run_sync`'s bare loop.
    unsafe { bare_loop(fns, payload) };
    Some(Ok(()))
}

/// Leaves the level of nesting the bare path entered, when dropped (also on panic). It holds
/// nothing: the loop's callee-saved registers stay free, so the fast path saves none.
struct Leave;

impl Drop for Leave {
    #[inline(always)]
    fn drop(&mut self) {
        let depth = &crate::thread_state::get().depth;
        depth.set(depth.get() - 1);
    }
}

/// Calls every handler of a bare list with `payload`.
///
/// # Safety
/// `payload` points to the `P` every handler of `fns` was compiled for (the list's key equals
/// the dispatcher's payload key).
#[inline(always)]
unsafe fn bare_loop(fns: &[crate::registry::BareFn], payload: *mut ()) {
    // One handler is a jump to it; a loop saves registers first, so it has a frame of its own.
    match fns {
        // SAFETY: the caller's contract.
        [f] => unsafe { f(payload) },
        // SAFETY: the caller's contract.
        _ => unsafe { bare_many(fns, payload) },
    }
}

/// The loop of [`bare_loop`] for lists of other lengths.
///
/// # Safety
/// As [`bare_loop`].
#[inline(never)]
unsafe fn bare_many(fns: &[crate::registry::BareFn], payload: *mut ()) {
    for f in fns {
        // SAFETY: the caller's contract.
        unsafe { f(payload) };
    }
}

/// A plain list: sync handlers for this payload with the default policy and no matcher.
#[inline(always)]
fn run_plain(
    tl: &ThreadState,
    list: &PointList,
    fns: &[SyncFn],
    scope: ScopeRef<'_>,
    call: Call<'_>,
    mut sink: Option<ErrorSink<'_>>,
) -> Result<Outcome, Error> {
    let (_depth, depth) = DepthGuard::next(&tl.depth, call.point)?;
    let cx = &Cx::new(call.point, depth, scope);
    for (i, f) in fns.iter().enumerate() {
        // SAFETY: as for the bare loop above.
        match unsafe { f(call.payload.0, cx) } {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => return Ok(Outcome::stopped(&list.meta[i].name)),
            Err(e) => {
                let e = attributed(list, i, call.point, e);
                match &mut sink {
                    Some(sink) => sink(call.payload.0, e),
                    None => return Err(e),
                }
            }
        }
    }
    Ok(Outcome::RAN_ALL)
}

/// The error of extension `i`, attributed (the fast loop's error exit).
#[cold]
#[inline(never)]
fn attributed(list: &PointList, i: usize, point: &str, err: Error) -> Error {
    let m = &list.meta[i];
    err.at_extension(&m.name, &m.origin).at_point(point)
}

/// Everything the fast loops do not handle, checked before any extension runs.
#[inline(never)]
fn run_general(
    tl: &ThreadState,
    snap: &Snapshot,
    list: &PointList,
    scope: ScopeRef<'_>,
    call: Call<'_>,
    sink: Option<ErrorSink<'_>>,
) -> Result<Outcome, Error> {
    precheck(list, call.point, &call.want, true)?;
    let call = call.with_declared_codec(list);
    let (_depth, depth) = DepthGuard::next(&tl.depth, call.point)?;
    let cx = Cx::new(call.point, depth, scope);
    let mut chain = Chain::new(list, call, sink, scope, depth);
    let _doing = chain.doing();
    let span = chain.span();
    let _entered = span.enter();
    let mut result = Ok(());
    for (i, run) in list.runs.iter().enumerate() {
        let Some(turn) = chain.turn(i) else {
            continue;
        };
        let r = if chain.observing {
            chain
                .extension_span(&turn)
                .in_scope(|| invoke(snap, list, *run, &cx, chain.name(&turn), call))
        } else {
            invoke(snap, list, *run, &cx, chain.name(&turn), call)
        };
        match chain.end(turn, r) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    chain.finish(&result);
    result.map(|()| chain.outcome())
}

/// Calls one extension from a sync dispatch.
#[inline(always)]
#[cfg_attr(
    not(any(all(feature = "command-hooks", unix), all(feature = "wasm", unix))),
    allow(unused_variables)
)]
fn invoke(
    snap: &Snapshot,
    list: &PointList,
    run: Run,
    cx: &Cx<'_>,
    name: &str,
    call: Call<'_>,
) -> Result<Flow, Error> {
    match run {
        // SAFETY: `precheck` verified that this extension's payload key equals the
        // dispatcher's, so `payload` points to the `P` the handler was compiled for.
        Run::Sync(f) => unsafe { f(call.payload.0, cx) },
        Run::Async(_) => unreachable!("precheck refuses async extensions on sync dispatch"),
        // SAFETY: as above; the closure was made for the payload its key names.
        Run::Registered(ix) => unsafe {
            list.registered[ix as usize].call_sync(call.payload.0, cx)
        },
        Run::Wrap(_) | Run::AsyncWrap(_) => Err(super::wrap_on_plain()),
        #[cfg(all(feature = "command-hooks", unix))]
        Run::Command(ix) => super::hook::run_sync(&snap.commands[ix as usize], name, call),
        #[cfg(all(feature = "wasm", unix))]
        Run::Wasm(ix) => super::wasm::run(&snap.wasm[ix as usize], name, call),
    }
}
