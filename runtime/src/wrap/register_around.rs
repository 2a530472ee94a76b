//! Wrap closures registered at run time on an `#[extensible]` fn's around point: the run
//! methods of [`Register`] on a [`FnAroundPoint`] whose arguments and result borrow nothing,
//! with the rules of [`Register::wrap`] on a [`WrapPoint`](crate::WrapPoint).

use std::any::TypeId;
use std::sync::Arc;

use super::point::FnAroundPoint;
use super::shim::{async_wrap_shim, wrap_shim};
use crate::dispatch::{AsyncNext, Next, StepFuture};
use crate::error::Error;
use crate::point::{AsyncKind, SyncKind};
use crate::registry::{AsyncWrapClosure, ClosureRun, Cx, WrapClosure, WrapFuture};
use crate::scope::{Register, Registration};

/// A sync around point's handler type (its payload key).
type SyncHandler<Req, Resp> = fn(&mut Req, Next<'_, Req, Resp>) -> Result<Resp, Error>;
/// An async around point's handler type.
type AsyncHandler<Req, Resp> = fn(&mut Req, AsyncNext<'_, Req, Resp>) -> Result<Resp, Error>;

impl<Req: 'static, Resp: 'static> Register<'_, FnAroundPoint<fn(&mut Req) -> Resp, SyncKind>> {
    /// Registers `f` as an around extension of a sync `#[extensible]` fn: it takes the
    /// [`CallArgs`](crate::CallArgs) request and a [`Next`] that runs the fn once per call, as
    /// [`Register::wrap`] on a wrap point.
    ///
    /// ```
    /// use hookpoint::ScopeBuilder;
    /// #[hookpoint::extensible]
    /// pub fn doc_square(n: u64) -> u64 {
    ///     n * n
    /// }
    /// let scope = ScopeBuilder::new("squared-twice").build()?;
    /// let _twice = scope
    ///     .register(&DOC_SQUARE_AROUND)
    ///     .name("sum_of_two_runs")
    ///     .wrap(|req, mut next| Ok(next.run(req)? + next.run(req)?))?;
    /// assert_eq!(scope.enter(|| doc_square(3)), 18);
    /// assert_eq!(doc_square(3), 9);
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Register::run`]: a name the point already has.
    pub fn wrap<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(&'a mut Req, Next<'a, Req, Resp>) -> Result<Resp, Error>
            + Send
            + Sync
            + 'static,
    {
        let erased: Arc<WrapClosure> = Arc::new(
            move |request: *mut (), next: *mut (), response: *mut (), cx: &Cx<'_>| {
                // SAFETY: `ClosureRun::wrap`'s contract, kept by dispatch: the pointers are a
                // `WrapFn`'s for `Req` and `Resp`, whose handler key the registration records.
                unsafe {
                    wrap_shim::<Req, Resp, _>(request, next, response, cx, |_, req, next| {
                        f(req, next)
                    })
                }
            },
        );
        // SAFETY: the closure casts for `Req` and `Resp`; the key is their handler type's.
        let run = unsafe { ClosureRun::wrap(erased) };
        let name = super::fn_wrap_type_name::<SyncHandler<Req, Resp>, Req, Resp>(false);
        self.finish(run, TypeId::of::<SyncHandler<Req, Resp>>(), name, true)
    }
}

impl<Req, Resp> Register<'_, FnAroundPoint<fn(&mut Req) -> Resp, AsyncKind>>
where
    Req: Send + 'static,
    Resp: Send + 'static,
{
    /// Registers `f` as an around extension of an `async` `#[extensible]` fn, as
    /// [`Register::wrap_async`] on an async wrap point: it returns a boxed future.
    ///
    /// # Errors
    /// As [`Register::run`]: a name the point already has.
    pub fn wrap_async<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(&'a mut Req, AsyncNext<'a, Req, Resp>) -> StepFuture<'a, Resp>
            + Send
            + Sync
            + 'static,
    {
        let erased: Arc<AsyncWrapClosure> = Arc::new(erase_async::<Req, Resp, F>(f));
        // SAFETY: as in `wrap`; the future uses the pointees no longer than dispatch keeps them.
        let run = unsafe { ClosureRun::async_wrap(erased) };
        let name = super::fn_wrap_type_name::<AsyncHandler<Req, Resp>, Req, Resp>(true);
        self.finish(run, TypeId::of::<AsyncHandler<Req, Resp>>(), name, true)
    }
}

/// The async closure erased; a fn so that the closure's signature is the higher-ranked one.
fn erase_async<Req, Resp, F>(
    f: F,
) -> impl for<'a> Fn(*mut (), *mut (), *mut (), &'a Cx<'a>) -> WrapFuture<'a> + Send + Sync
where
    Req: Send + 'static,
    Resp: Send + 'static,
    F: for<'a> Fn(&'a mut Req, AsyncNext<'a, Req, Resp>) -> StepFuture<'a, Resp>
        + Send
        + Sync
        + 'static,
{
    move |request: *mut (), next: *mut (), response: *mut (), cx| {
        // SAFETY: as in `wrap`, with `AsyncNext`; the pointees outlive the future.
        unsafe {
            async_wrap_shim::<Req, Resp, _, Result<Resp, Error>>(
                request,
                next,
                response,
                cx,
                |_, req, next| f(req, next),
            )
        }
    }
}
