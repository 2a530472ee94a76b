//! Starting a wrap point's nest: the checks made before anything runs, the depth guard, the
//! choice between the fast nest and the one with per-extension rules, then the outermost
//! [`Next`]/[`AsyncNext`] run with the caller's request.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::asynchronous::WithDepth;
use super::chain::Chain;
use super::next::{AsyncNext, Next, StepFuture};
use super::wrap::WrapChain;
use super::{Call, DepthGuard, MAX_DEPTH, ScopeRef, depth_error, precheck, unobserved};
use crate::error::Error;
use crate::registry::{Cx, JsonCodec};
use crate::snapshot::{PointList, Shape, Snapshot};
use crate::thread_state::{self, ThreadState};

/// The list of `call`'s point, unless nothing runs there.
fn active_list<'s>(snap: &'s Snapshot, call: &Call<'_>) -> Option<&'s PointList> {
    snap.list(call.id)
        .filter(|l| !matches!(l.shape, Shape::Empty))
}

/// Runs a sync wrap point's nest around `inner` on `snap`.
pub(crate) fn run_sync<Req, Resp>(
    tl: &ThreadState,
    snap: &Snapshot,
    scope: ScopeRef<'_>,
    call: Call<'_>,
    response: Option<&'static JsonCodec>,
    request: &mut Req,
    inner: &mut dyn FnMut(&mut Req) -> Result<Resp, Error>,
) -> Result<Resp, Error> {
    let Some(list) = active_list(snap, &call) else {
        return inner(request).map_err(|e| e.marked_inner_step(call.point));
    };
    let fast = match &list.shape {
        Shape::Wrap { key, fns } if *key == call.want.key && unobserved(scope) => Some(&fns[..]),
        _ => {
            precheck(list, call.point, &call.want, true)?;
            None
        }
    };
    let call = call.with_declared_codec(list);
    let (_depth, depth) = DepthGuard::next(&tl.depth, call.point)?;
    let inside = AtomicU64::new(0);
    let cx = Cx::new(call.point, depth, scope);
    if fast.is_some() {
        let chain = WrapChain::new(snap, list, None, call, cx, response, fast);
        return Next::new(&chain, inner, &inside).run(request);
    }
    let rules = Some(Chain::new(list, call, None, scope, depth));
    let chain = WrapChain::new(snap, list, rules, call, cx, response, None);
    let rules = chain.rules();
    let _doing = rules.doing();
    let span = rules.span();
    let _entered = span.enter();
    let r = Next::new(&chain, inner, &inside).run(request);
    chain.rules().finish_with(r.as_ref().err());
    r
}

/// Runs an async wrap point's nest around `inner` on `snap`, on the depth of the task.
pub(crate) async fn run_async<Req: Send, Resp: Send>(
    snap: Arc<Snapshot>,
    scope: ScopeRef<'_>,
    call: Call<'_>,
    response: Option<&'static JsonCodec>,
    request: &mut Req,
    inner: &mut (dyn for<'r> FnMut(&'r mut Req) -> StepFuture<'r, Resp> + Send),
) -> Result<Resp, Error> {
    let Some(list) = active_list(&snap, &call) else {
        return inner(request)
            .await
            .map_err(|e| e.marked_inner_step(call.point));
    };
    precheck(list, call.point, &call.want, false)?;
    let call = call.with_declared_codec(list);
    let depth = thread_state::get().depth.get() + 1;
    if depth > MAX_DEPTH {
        return Err(depth_error(call.point));
    }
    let rules = Some(Chain::new(list, call, None, scope, depth));
    let cx = Cx::new(call.point, depth, scope);
    let chain = WrapChain::new(&snap, list, rules, call, cx, response, None);
    let span = chain.rules().span();
    let observed_point = chain.rules().doing().map(|guard| {
        drop(guard);
        call.id
    });
    let body = async {
        let inside = AtomicU64::new(0);
        let r = AsyncNext::new(&chain, inner, &inside).run(request).await;
        chain.rules().finish_with(r.as_ref().err());
        r
    };
    let fut = WithDepth::new(depth, observed_point, body);
    tracing::Instrument::instrument(fut, span).await
}
