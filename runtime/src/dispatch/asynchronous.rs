//! The async loop: sync and async extensions in order, each awaited before the next, with the
//! same per-extension rules as the sync loop ([`Chain`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::chain::Chain;
use super::{Call, DepthGuard, ErrorSink, MAX_DEPTH, ScopeRef, depth_error, precheck};
use crate::error::Error;
use crate::registry::Cx;
use crate::snapshot::{Run, Shape, Snapshot};
use crate::thread_state;

pin_project_lite::pin_project! {
    /// Sets the thread's dispatch depth only while the inner future is polled, so nested sync
    /// and async dispatches see the depth of the task they run in.
    struct WithDepth<F> {
        depth: u32,
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for WithDepth<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _depth = DepthGuard::enter(&thread_state::get().depth, *this.depth);
        this.fut.poll(cx)
    }
}

/// Logs when an async dispatch is dropped before it finished (cancellation).
struct CancelNotice<'a> {
    point: &'a str,
    done: bool,
    next: usize,
    total: usize,
}

impl Drop for CancelNotice<'_> {
    fn drop(&mut self) {
        if !self.done {
            tracing::debug!(
                point = self.point,
                ran = self.next,
                total = self.total,
                "async dispatch dropped before it finished; the remaining extensions did not run"
            );
        }
    }
}

/// Runs `call`'s point of `snap`, awaiting each extension in turn. `snap` stays alive (and the
/// dispatch on it) until the future finishes or is dropped.
pub(crate) async fn run_async(
    snap: Arc<Snapshot>,
    scope: ScopeRef<'_>,
    call: Call<'_>,
    sink: Option<ErrorSink<'_>>,
) -> Result<(), Error> {
    let Some(list) = snap.list(call.id) else {
        return Ok(());
    };
    if matches!(list.shape, Shape::Empty) {
        return Ok(());
    }
    precheck(list, call.point, &call.want, false)?;
    let call = call.with_declared_codec(list);
    let depth = thread_state::get().depth.get() + 1;
    if depth > MAX_DEPTH {
        return Err(depth_error(call.point));
    }
    let mut chain = Chain::new(list, call, sink);
    let span = chain.span(depth);
    let body = async {
        let cx = Cx::new(call.point, depth, scope);
        let mut notice = CancelNotice {
            point: call.point,
            done: false,
            next: 0,
            total: list.runs.len(),
        };
        for (i, run) in list.runs.iter().enumerate() {
            notice.next = i;
            let Some(turn) = chain.turn(i) else {
                continue;
            };
            let r = match *run {
                // SAFETY: payload key checked by `precheck`; `payload` is the live `&mut P`.
                Run::Sync(f) => unsafe { f(call.payload.0, &cx) },
                // SAFETY: as above.
                Run::Async(f) => unsafe { f(call.payload.0, &cx) }.await,
                #[cfg(feature = "fs")]
                Run::Command(ix) => {
                    super::hook::run_async(&snap.commands[ix as usize], chain.name(&turn), call)
                        .await
                }
            };
            chain.end(turn, r)?;
        }
        notice.done = true;
        Ok(())
    };
    tracing::Instrument::instrument(WithDepth { depth, fut: body }, span).await
}
