//! Closures registered at run time ([`Scope::register`](crate::Scope::register)), erased to the
//! shapes dispatch calls: one payload pointer and the [`Cx`].
//!
//! Like a compiled-in handler, an erased closure casts the payload pointer back to the type it
//! was made for, so it is built only through the `unsafe` constructors here, by code that fixes that
//! type (`Scope::register`), and
//! called only through `unsafe` methods whose contract dispatch keeps by comparing payload keys
//! first.

use std::sync::Arc;

use super::cx::Cx;
use super::entry::{BoxFuture, Flow, WrapFuture};
use crate::error::Error;

/// An erased sync closure: the payload pointer and the dispatch's context.
pub(crate) type SyncClosure = dyn Fn(*mut (), &Cx<'_>) -> Result<Flow, Error> + Send + Sync;
/// An erased async closure.
pub(crate) type AsyncClosure = dyn for<'a> Fn(*mut (), &'a Cx<'a>) -> BoxFuture<'a> + Send + Sync;
/// An erased wrap closure: the request, `next` and response pointers of a
/// [`WrapFn`](super::WrapFn), and the context.
pub(crate) type WrapClosure =
    dyn Fn(*mut (), *mut (), *mut (), &Cx<'_>) -> Result<(), Error> + Send + Sync;
/// An erased async wrap closure, as an [`AsyncWrapFn`](super::AsyncWrapFn).
pub(crate) type AsyncWrapClosure =
    dyn for<'a> Fn(*mut (), *mut (), *mut (), &'a Cx<'a>) -> WrapFuture<'a> + Send + Sync;

/// What a registered closure runs as. A new kind of point whose extensions take another shape
/// adds its variant to [`Kind`] and its call in dispatch.
#[derive(Clone)]
pub(crate) struct ClosureRun(Kind);

#[derive(Clone)]
enum Kind {
    /// Runs to completion in the dispatch's thread.
    Sync(Arc<SyncClosure>),
    /// Returns a future the async loop awaits.
    Async(Arc<AsyncClosure>),
    /// Nests around the rest of a wrap point's chain.
    Wrap(Arc<WrapClosure>),
    /// The same, returning a future.
    AsyncWrap(Arc<AsyncWrapClosure>),
}

impl ClosureRun {
    /// A sync closure.
    ///
    /// # Safety
    /// `f` casts its pointer to `&mut P` for the one payload type `P` whose handler type
    /// `fn(&mut P)` (lifetimes elided) has the key the registration records, and keeps the
    /// borrow no longer than the call: dispatch compares that key with the dispatched payload's
    /// before calling it.
    pub(crate) unsafe fn sync(f: Arc<SyncClosure>) -> Self {
        ClosureRun(Kind::Sync(f))
    }

    /// An async closure.
    ///
    /// # Safety
    /// As [`sync`](Self::sync); the borrow may last as long as the returned future.
    pub(crate) unsafe fn asynchronous(f: Arc<AsyncClosure>) -> Self {
        ClosureRun(Kind::Async(f))
    }

    /// A wrap closure.
    ///
    /// # Safety
    /// `f` casts its pointers as a [`WrapFn`](super::WrapFn) does, for the one `(Req, Resp)`
    /// whose wrap handler type has the key the registration records.
    pub(crate) unsafe fn wrap(f: Arc<WrapClosure>) -> Self {
        ClosureRun(Kind::Wrap(f))
    }

    /// An async wrap closure.
    ///
    /// # Safety
    /// As [`wrap`](Self::wrap); the pointees may be used until the returned future is dropped.
    pub(crate) unsafe fn async_wrap(f: Arc<AsyncWrapClosure>) -> Self {
        ClosureRun(Kind::AsyncWrap(f))
    }

    /// True for a closure returning a future.
    pub(crate) fn is_async(&self) -> bool {
        matches!(self.0, Kind::Async(_) | Kind::AsyncWrap(_))
    }

    /// Runs a sync closure.
    ///
    /// # Safety
    /// `payload` points to a live value of the type the closure was made for.
    pub(crate) unsafe fn call_sync(&self, payload: *mut (), cx: &Cx<'_>) -> Result<Flow, Error> {
        match &self.0 {
            Kind::Sync(f) => f(payload, cx),
            Kind::Async(_) => unreachable!("precheck refuses async extensions on sync dispatch"),
            Kind::Wrap(_) | Kind::AsyncWrap(_) => Err(wrap_elsewhere()),
        }
    }

    /// Starts the closure from the async loop: a sync one runs at once, an async one gives
    /// its future.
    ///
    /// # Safety
    /// As [`call_sync`](Self::call_sync), until the future is dropped.
    pub(crate) unsafe fn start<'a>(&'a self, payload: *mut (), cx: &'a Cx<'a>) -> Started<'a> {
        match &self.0 {
            Kind::Sync(f) => Started::Done(f(payload, cx)),
            Kind::Async(f) => Started::Future(f(payload, cx)),
            Kind::Wrap(_) | Kind::AsyncWrap(_) => Started::Done(Err(wrap_elsewhere())),
        }
    }

    /// Runs a wrap closure in a sync nest.
    ///
    /// # Safety
    /// The pointers are a [`WrapFn`](super::WrapFn)'s for the types the closure was made for.
    pub(crate) unsafe fn call_wrap(
        &self,
        request: *mut (),
        next: *mut (),
        response: *mut (),
        cx: &Cx<'_>,
    ) -> Result<(), Error> {
        match &self.0 {
            Kind::Wrap(f) => f(request, next, response, cx),
            _ => Err(not_wrap()),
        }
    }

    /// Starts an async wrap closure in an async nest.
    ///
    /// # Safety
    /// As [`call_wrap`](Self::call_wrap), until the future is dropped.
    pub(crate) unsafe fn start_wrap<'a>(
        &'a self,
        request: *mut (),
        next: *mut (),
        response: *mut (),
        cx: &'a Cx<'a>,
    ) -> WrapFuture<'a> {
        match &self.0 {
            Kind::AsyncWrap(f) => f(request, next, response, cx),
            _ => Box::pin(std::future::ready(Err(not_wrap()))),
        }
    }
}

/// A wrap closure reached by a plain dispatch (ruled out by the payload key check first; an
/// error rather than a panic).
#[cold]
fn wrap_elsewhere() -> Error {
    Error::kind_msg(
        crate::error::ErrorKind::PayloadMismatch,
        "this closure takes `next`, so it runs only on a wrap point",
    )
}

/// A closure of another shape reached by a nest (ruled out as above).
#[cold]
fn not_wrap() -> Error {
    Error::kind_msg(
        crate::error::ErrorKind::PayloadMismatch,
        "this closure does not take `next` (or is not async on an async wrap point), so it cannot run in this nest",
    )
}

/// What [`ClosureRun::start`] gives the async loop.
pub(crate) enum Started<'a> {
    /// A sync closure's result.
    Done(Result<Flow, Error>),
    /// An async closure's future, to await.
    Future(BoxFuture<'a>),
}
