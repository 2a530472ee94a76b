//! [`Next`] and [`AsyncNext`]: the rest of a wrap point's nest as one extension sees it. The
//! generic half of the wrap loop (it knows the request and response types); [`wrap`](super::wrap)
//! is the erased half it calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;

use super::SendPtr;
use super::wrap::{Step, WrapChain};
use crate::error::Error;

/// The boxed future of an async wrap point's inner step: `|req| Box::pin(step(req))`.
pub type StepFuture<'r, Resp> = Pin<Box<dyn Future<Output = Result<Resp, Error>> + Send + 'r>>;

/// The rest of a [`WrapPoint`](crate::WrapPoint)'s nest, handed to one extension:
/// [`run`](Self::run) runs the extensions after it and the caller's inner step, once per call.
///
/// It borrows the dispatch (`'a`), so it cannot outlive it: an extension cannot keep it in a
/// `static`, return it or move it to a thread that may outlive the call, and `run` takes
/// `&mut self`, so two calls cannot overlap. Calling it costs one indirect call per extension
/// of the rest of the nest, and no allocation.
///
/// ```
/// use hookpoint::{Error, Next};
/// hookpoint::point! {
///     pub static DOC_NEXT: WrapPoint<u32, u32> = "doc_next.twice";
/// }
/// /// Calls the rest of the nest twice and adds both answers.
/// #[hookpoint::extension(point = DOC_NEXT)]
/// fn twice(n: &mut u32, mut next: Next<'_, u32, u32>) -> Result<u32, Error> {
///     Ok(next.run(n)? + next.run(n)?)
/// }
/// let mut calls = 0;
/// let sum = DOC_NEXT.call(&mut 20, |n| {
///     calls += 1;
///     Ok(*n + 1)
/// })?;
/// assert_eq!((sum, calls), (42, 2));
/// # Ok::<(), hookpoint::Error>(())
/// ```
pub struct Next<'a, Req, Resp> {
    chain: &'a WrapChain<'a>,
    pos: usize,
    inner: &'a mut (dyn FnMut(&mut Req) -> Result<Resp, Error> + 'a),
    /// Time spent inside [`run`](Self::run), in nanoseconds, when the dispatch is observed.
    inside: &'a AtomicU64,
}

impl<Req, Resp> std::fmt::Debug for Next<'_, Req, Resp> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

/// The rest of an [`AsyncWrapPoint`](crate::AsyncWrapPoint)'s nest, handed to one `async`
/// extension: `next.run(req).await` runs the extensions after it and the inner step. It is
/// `Send`, so the extension's future can run on a multi-threaded runtime; as [`Next`], it
/// cannot outlive the dispatch (a task spawned with it does not compile) and `run` takes
/// `&mut self`.
///
/// ```
/// use hookpoint::{AsyncNext, Error};
/// hookpoint::point! {
///     pub static DOC_ASYNC_NEXT: AsyncWrapPoint<String, usize> = "doc_next.measure";
/// }
/// #[hookpoint::extension(point = DOC_ASYNC_NEXT)]
/// async fn trimmed(text: &mut String, mut next: AsyncNext<'_, String, usize>) -> Result<usize, Error> {
///     *text = text.trim().to_owned();
///     next.run(text).await
/// }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let len = rt.block_on(DOC_ASYNC_NEXT.call(&mut "  four  ".into(), |t| {
///     Box::pin(async move { Ok(t.len()) })
/// }))?;
/// assert_eq!(len, 4);
/// # Ok::<(), hookpoint::Error>(())
/// ```
pub struct AsyncNext<'a, Req, Resp> {
    chain: &'a WrapChain<'a>,
    pos: usize,
    inner: &'a mut (dyn for<'r> FnMut(&'r mut Req) -> StepFuture<'r, Resp> + Send + 'a),
    inside: &'a AtomicU64,
}

impl<Req, Resp> std::fmt::Debug for AsyncNext<'_, Req, Resp> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncNext").finish_non_exhaustive()
    }
}

impl<'a, Req, Resp> Next<'a, Req, Resp> {
    pub(crate) fn new(
        chain: &'a WrapChain<'a>,
        inner: &'a mut (dyn FnMut(&mut Req) -> Result<Resp, Error> + 'a),
        inside: &'a AtomicU64,
    ) -> Self {
        Next {
            chain,
            pos: 0,
            inner,
            inside,
        }
    }

    /// Runs the rest of the nest with `request`: the next extension that runs for it (with its
    /// own `next`), or the caller's inner step when none is left.
    ///
    /// # Errors
    /// What the rest of the nest returns: the inner step's error, or a later extension's
    /// (attributed to it).
    #[inline]
    pub fn run(&mut self, request: &mut Req) -> Result<Resp, Error> {
        let started = self.chain.started();
        let r = self.run_rest(request);
        self.chain.add_inside(self.inside, started);
        r
    }

    #[inline]
    fn run_rest(&mut self, request: &mut Req) -> Result<Resp, Error> {
        let chain = self.chain;
        let mut pos = self.pos;
        {
            let req = request as *mut Req as *mut ();
            let mut next = Some(Next {
                chain,
                pos: pos + 1,
                inner: &mut *self.inner,
                inside: self.inside,
            });
            let mut out: Option<Resp> = None;
            let slots = (
                &mut next as *mut Option<Next<'_, Req, Resp>> as *mut (),
                &mut out as *mut Option<Resp> as *mut (),
            );
            match chain.invoke_fast(pos, req, slots.0, slots.1) {
                Some(Ok(())) => return out.ok_or_else(no_response),
                Some(Err(Some(e))) => return Err(e),
                Some(Err(None)) => return inner_step(self.inner, request, chain.point()),
                None => {}
            }
        }
        loop {
            let req = request as *mut Req as *mut ();
            let Some(turn) = chain.turn(pos, req) else {
                return inner_step(self.inner, request, chain.point());
            };
            pos = turn.next_pos();
            let inside = AtomicU64::new(0);
            let mut next = Some(Next {
                chain,
                pos,
                inner: &mut *self.inner,
                inside: &inside,
            });
            let mut out: Option<Resp> = None;
            let slots = (
                &mut next as *mut Option<Next<'_, Req, Resp>> as *mut (),
                &mut out as *mut Option<Resp> as *mut (),
            );
            match chain.invoke(turn, req, slots.0, slots.1, &inside) {
                Step::Answered => return out.ok_or_else(no_response),
                Step::PassOn => {}
                Step::Failed(e) => return Err(e),
            }
        }
    }
}

impl<'a, Req: Send, Resp: Send> AsyncNext<'a, Req, Resp> {
    pub(crate) fn new(
        chain: &'a WrapChain<'a>,
        inner: &'a mut (dyn for<'r> FnMut(&'r mut Req) -> StepFuture<'r, Resp> + Send + 'a),
        inside: &'a AtomicU64,
    ) -> Self {
        AsyncNext {
            chain,
            pos: 0,
            inner,
            inside,
        }
    }

    /// Runs the rest of the nest with `request`, as [`Next::run`] does, awaiting each
    /// extension; an extension's `timeout_ms` bounds everything it wraps.
    ///
    /// # Errors
    /// As [`Next::run`]; [`Timeout`](crate::ErrorKind::Timeout) from a later extension's budget.
    #[allow(
        clippy::manual_async_fn,
        reason = "the signature promises `Send`, which tokio needs and an `async fn` would leave implicit"
    )]
    pub fn run<'r>(
        &'r mut self,
        request: &'r mut Req,
    ) -> impl Future<Output = Result<Resp, Error>> + Send + 'r {
        async move {
            let started = self.chain.started();
            let r = self.run_rest(request).await;
            self.chain.add_inside(self.inside, started);
            r
        }
    }

    async fn run_rest(&mut self, request: &mut Req) -> Result<Resp, Error> {
        let chain = self.chain;
        let mut pos = self.pos;
        loop {
            let req = SendPtr(request as *mut Req as *mut ());
            let Some(turn) = chain.turn(pos, req.0) else {
                return (self.inner)(request)
                    .await
                    .map_err(|e| e.marked_inner_step(chain.point()));
            };
            pos = turn.next_pos();
            let inside = AtomicU64::new(0);
            let mut next = Some(AsyncNext {
                chain,
                pos,
                inner: &mut *self.inner,
                inside: &inside,
            });
            let mut out: Option<Resp> = None;
            let slots = (
                SendPtr(&mut next as *mut Option<AsyncNext<'_, Req, Resp>> as *mut ()),
                SendPtr(&mut out as *mut Option<Resp> as *mut ()),
            );
            match chain
                .invoke_async(turn, req, slots.0, slots.1, &inside)
                .await
            {
                Step::Answered => return out.ok_or_else(no_response),
                Step::PassOn => {}
                Step::Failed(e) => return Err(e),
            }
        }
    }
}

#[cold]
fn no_response() -> Error {
    Error::msg("a wrap extension reported success without a response")
}

/// Runs the caller's inner step; its error is marked as the inner step's.
#[inline(always)]
fn inner_step<Req, Resp>(
    inner: &mut (dyn FnMut(&mut Req) -> Result<Resp, Error> + '_),
    request: &mut Req,
    point: &str,
) -> Result<Resp, Error> {
    inner(request).map_err(|e| e.marked_inner_step(point))
}
