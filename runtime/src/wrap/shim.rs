//! The shims `#[extension]` generates calls to for wrap extensions: they cast the erased
//! pointers of [`WrapFn`](crate::registry::WrapFn) and
//! [`AsyncWrapFn`](crate::registry::AsyncWrapFn) back to their types and call the extension.

use std::future::Future;

use crate::dispatch::{AsyncNext, Next, SendPtr};
use crate::error::Error;
use crate::registry::{Cx, WrapFuture};

/// What a wrap extension may return: `Result<Response, E>` with `E: Into<hookpoint::Error>`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a wrap extension must return `Result<{Resp}, E>` with `E: Into<hookpoint::Error>`, not `{Self}`",
    label = "unsupported return type for this wrap point",
    note = "the response type is the point's (the second type of `Next<'_, Request, Response>`)"
)]
pub trait WrapReturn<Resp> {
    fn into_response(self) -> Result<Resp, Error>;
}

impl<Resp, E: Into<Error>> WrapReturn<Resp> for Result<Resp, E> {
    #[inline(always)]
    fn into_response(self) -> Result<Resp, Error> {
        self.map_err(Into::into)
    }
}

/// The body of a sync wrap extension's erased handler ([`WrapFn`](crate::registry::WrapFn)):
/// casts the pointers back, calls `f` and writes its response.
///
/// # Safety
/// As [`WrapFn`](crate::registry::WrapFn): `request` points to a live `Req`, `next` to a
/// `Some(Next<'_, Req, Resp>)` and `response` to an `Option<Resp>`, all exclusively borrowed
/// for the call.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn wrap_shim<'a, Req: 'a, Resp: 'a, R: WrapReturn<Resp>>(
    request: *mut (),
    next: *mut (),
    response: *mut (),
    cx: &'a Cx<'a>,
    f: impl FnOnce(&'a Cx<'a>, &'a mut Req, Next<'a, Req, Resp>) -> R,
) -> Result<(), Error> {
    // SAFETY: the caller's contract; the handler's `'a` is no longer than the dispatch that
    // owns the pointees, and the extension fn, generic over it, cannot keep them longer.
    let (request, next) = unsafe {
        (
            &mut *(request as *mut Req),
            (*(next as *mut Option<Next<'a, Req, Resp>>)).take(),
        )
    };
    let next = next.expect("dispatch hands every wrap extension the rest of its nest");
    let r = f(cx, request, next).into_response()?;
    // SAFETY: the caller's contract: `response` is an `Option<Resp>` borrowed for the call.
    unsafe { *(response as *mut Option<Resp>) = Some(r) };
    Ok(())
}

/// The body of an async wrap extension's erased handler
/// ([`AsyncWrapFn`](crate::registry::AsyncWrapFn)).
///
/// # Safety
/// As [`wrap_shim`], with `AsyncNext`; the pointees outlive the returned future.
#[doc(hidden)]
pub unsafe fn async_wrap_shim<'a, Req, Resp, Fut, R>(
    request: *mut (),
    next: *mut (),
    response: *mut (),
    cx: &'a Cx<'a>,
    f: impl FnOnce(&'a Cx<'a>, &'a mut Req, AsyncNext<'a, Req, Resp>) -> Fut,
) -> WrapFuture<'a>
where
    Req: Send + 'a,
    Resp: Send + 'a,
    Fut: Future<Output = R> + Send + 'a,
    R: WrapReturn<Resp>,
{
    // SAFETY: as in `wrap_shim`.
    let (request, next) = unsafe {
        (
            &mut *(request as *mut Req),
            (*(next as *mut Option<AsyncNext<'a, Req, Resp>>)).take(),
        )
    };
    let next = next.expect("dispatch hands every wrap extension the rest of its nest");
    let fut = f(cx, request, next);
    let response = SendPtr(response);
    Box::pin(async move {
        let r = fut.await.into_response()?;
        let response = response;
        // SAFETY: the caller's contract: `response` is an `Option<Resp>` that outlives this
        // future and nothing else touches while it runs.
        unsafe { *(response.0 as *mut Option<Resp>) = Some(r) };
        Ok(())
    })
}
