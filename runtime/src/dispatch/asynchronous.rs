//! The async loop: sync and async extensions in order, each awaited before the next, with the
//! same per-extension rules as the sync loop ([`Chain`]), and async extensions' time budgets.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use super::chain::Chain;
use super::{Call, DepthGuard, ErrorSink, MAX_DEPTH, Outcome, ScopeRef, depth_error, precheck};
use crate::error::{Error, ErrorKind};
use crate::observe;
use crate::registry::{Cx, Flow, Started};
use crate::snapshot::{Run, Shape, Snapshot};
use crate::thread_state;

pin_project_lite::pin_project! {
    /// Sets the thread's dispatch depth (and, when observed, the point being dispatched) only
    /// while the inner future is polled, so both follow the task.
    pub(super) struct WithDepth<F> {
        depth: u32,
        observed_point: Option<u32>,
        #[pin]
        fut: F,
    }
}

impl<F> WithDepth<F> {
    /// `fut` run at `depth`, marked as dispatching `observed_point` when observed.
    pub(super) fn new(depth: u32, observed_point: Option<u32>, fut: F) -> Self {
        WithDepth {
            depth,
            observed_point,
            fut,
        }
    }
}

impl<F: Future> Future for WithDepth<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _depth = DepthGuard::enter(&thread_state::get().depth, *this.depth);
        let _doing = this.observed_point.map(observe::resume);
        this.fut.poll(cx)
    }
}

pin_project_lite::pin_project! {
    /// An async extension's future with its time budget: when the budget runs out first, the
    /// future is dropped and the turn ends with an [`ErrorKind::Timeout`] error.
    struct Budget<F> {
        #[pin]
        fut: F,
        #[pin]
        delay: futures_timer::Delay,
        limit: Duration,
    }
}

impl<T, F: Future<Output = Result<T, Error>>> Future for Budget<F> {
    type Output = Result<T, Error>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(r) = this.fut.poll(cx) {
            return Poll::Ready(r);
        }
        match this.delay.poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Error::kind_msg(
                ErrorKind::Timeout,
                format!(
                    "ran past its time budget of {} ms (`timeout_ms`) and was cancelled",
                    this.limit.as_millis()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// `fut` under `budget`, if there is one. For a wrap extension the budget covers everything it
/// wraps.
pub(super) async fn within<T, F: Future<Output = Result<T, Error>>>(
    fut: F,
    budget: Option<Duration>,
) -> Result<T, Error> {
    match budget {
        None => fut.await,
        Some(limit) => {
            Budget {
                fut,
                delay: futures_timer::Delay::new(limit),
                limit,
            }
            .await
        }
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
            observe::tracing_out::dropped_early(self.point, self.next, self.total);
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
) -> Result<Outcome, Error> {
    let Some(list) = snap.list(call.id) else {
        return Ok(Outcome::RAN_ALL);
    };
    if matches!(list.shape, Shape::Empty) {
        return Ok(Outcome::RAN_ALL);
    }
    precheck(list, call.point, &call.want, false)?;
    let call = call.with_declared_codec(list);
    let depth = thread_state::get().depth.get() + 1;
    if depth > MAX_DEPTH {
        return Err(depth_error(call.point));
    }
    let mut chain = Chain::new(list, call, sink, scope, depth);
    let span = chain.span();
    let observed_point = chain.doing().map(|guard| {
        drop(guard);
        call.id
    });
    let body = async {
        let cx = Cx::new(call.point, depth, scope);
        let mut notice = CancelNotice {
            point: call.point,
            done: false,
            next: 0,
            total: list.runs.len(),
        };
        let mut result = Ok(());
        for (i, run) in list.runs.iter().enumerate() {
            notice.next = i;
            let Some(turn) = chain.turn(i) else {
                continue;
            };
            let r = match *run {
                // SAFETY: payload key checked by `precheck`; `payload` is the live `&mut P`.
                Run::Sync(f) => unsafe { f(call.payload.0, &cx) },
                Run::Async(f) => {
                    // SAFETY: as above.
                    let fut = unsafe { f(call.payload.0, &cx) };
                    within(fut, chain.budget(&turn)).await
                }
                #[cfg(all(feature = "command-hooks", unix))]
                // Boxed: a process's future is large, and inline it would size every async
                // dispatch's future (and the stack of nested ones) for the rare command hook.
                Run::Command(ix) => {
                    Box::pin(super::hook::run_async(
                        &snap.commands[ix as usize],
                        chain.name(&turn),
                        call,
                    ))
                    .await
                }
                #[cfg(all(feature = "wasm", unix))]
                Run::Wasm(ix) => super::wasm::run(&snap.wasm[ix as usize], chain.name(&turn), call),
                Run::Registered(ix) => {
                    // SAFETY: as above; the closure was made for the payload its key names.
                    let started =
                        unsafe { list.registered[ix as usize].start(call.payload.0, &cx) };
                    match started {
                        Started::Done(r) => r,
                        Started::Future(fut) => within(fut, chain.budget(&turn)).await,
                    }
                }
                Run::Wrap(_) | Run::AsyncWrap(_) => Err(super::wrap_on_plain()),
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
        notice.done = true;
        chain.finish(&result);
        result.map(|()| chain.outcome())
    };
    let fut = WithDepth {
        depth,
        observed_point,
        fut: body,
    };
    tracing::Instrument::instrument(fut, span).await
}
