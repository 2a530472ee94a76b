//! The typed wrap points, [`WrapPoint`] and [`AsyncWrapPoint`], and the compile-time checks of
//! the extensions attached to them.

use std::any::TypeId;
use std::marker::PhantomData;

use super::WrapSpec;
use crate::dispatch::{Call, Erased, SendPtr, StepFuture};
use crate::error::Error;
use crate::point::{AsyncKind, SyncKind};
use crate::registry::{PointKind, TypedPoint};
use crate::scope::Scope;
use crate::site::PointSite;

/// A point whose extensions nest around the caller's inner step, dispatched with a plain call;
/// declared with [`point!`](crate::point!) as `WrapPoint<Request, Response>`.
///
/// Each extension receives the request and a [`Next`](crate::Next); `next.run(req)` runs the
/// rest of the chain and the inner step once, so an extension may call it zero times (answer
/// from a cache, refuse), once (measure, hold a resource, rewrite the request or the response)
/// or several times (retry, fallback). Lower `order` is outermost.
///
/// ```
/// use hookpoint::{Error, Next};
/// hookpoint::point! {
///     /// One model call.
///     pub static DOC_MODEL_CALL: WrapPoint<String, String> = "doc_wrap.model_call";
/// }
/// /// Retries a failed call once.
/// #[hookpoint::extension(point = DOC_MODEL_CALL, order = 1)]
/// fn retry(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
///     next.run(req).or_else(|_| next.run(req))
/// }
/// /// Answers a known question without calling the model.
/// #[hookpoint::extension(point = DOC_MODEL_CALL, order = 2)]
/// fn cache(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
///     if req == "ping" {
///         return Ok("pong".into());
///     }
///     next.run(req)
/// }
///
/// let mut failures = 1;
/// let mut model = |req: &mut String| {
///     if failures > 0 {
///         failures -= 1;
///         return Err(Error::msg("busy"));
///     }
///     Ok(format!("answer to {req}"))
/// };
/// assert_eq!(DOC_MODEL_CALL.call(&mut "ping".into(), &mut model)?, "pong");
/// assert_eq!(DOC_MODEL_CALL.call(&mut "why".into(), &mut model)?, "answer to why");
/// # Ok::<(), hookpoint::Error>(())
/// ```
pub struct WrapPoint<S: WrapSpec> {
    site: PointSite,
    _spec: PhantomData<fn() -> S>,
}

impl<S: WrapSpec> std::fmt::Debug for WrapPoint<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WrapPoint").field(&S::NAME).finish()
    }
}

/// A wrap point dispatched with `.await`; declared as `AsyncWrapPoint<Request, Response>`. Its
/// extensions are `async fn`s taking an [`AsyncNext`](crate::AsyncNext).
///
/// ```
/// use hookpoint::{AsyncNext, Error};
/// hookpoint::point! {
///     pub static DOC_FETCH: AsyncWrapPoint<u32, String> = "doc_wrap.fetch";
/// }
/// /// Tries the next page when a page is missing.
/// #[hookpoint::extension(point = DOC_FETCH)]
/// async fn fallback(page: &mut u32, mut next: AsyncNext<'_, u32, String>) -> Result<String, Error> {
///     match next.run(page).await {
///         Ok(text) => Ok(text),
///         Err(_) => {
///             *page += 1;
///             next.run(page).await
///         }
///     }
/// }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # rt.block_on(async {
/// let text = DOC_FETCH
///     .call(&mut 1, |page| {
///         Box::pin(async move {
///             match *page {
///                 1 => Err(Error::msg("missing")),
///                 n => Ok(format!("page {n}")),
///             }
///         })
///     })
///     .await?;
/// assert_eq!(text, "page 2");
/// # Ok::<(), hookpoint::Error>(())
/// # }).unwrap();
/// ```
pub struct AsyncWrapPoint<S: WrapSpec> {
    site: PointSite,
    _spec: PhantomData<fn() -> S>,
}

impl<S: WrapSpec> std::fmt::Debug for AsyncWrapPoint<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AsyncWrapPoint").field(&S::NAME).finish()
    }
}

/// The typed around point of an `#[extensible]` fn, generated as an associated or free `const`
/// named `<FN>_AROUND` beside `<FN>_START` / `<FN>_END`: a wrap point whose inner step is one
/// run of the fn (start extensions, body, end extensions). Attach to it with
/// `#[extension(point = ...)]` a fn taking `&mut CallArgs<Args>` and
/// `Next<'_, CallArgs<Args>, Return>` (an `async fn` with `AsyncNext` for an `async` fn).
///
/// `F` is `fn(&mut CallArgs<Args>) -> Return`; `K` is [`SyncKind`] or [`AsyncKind`].
pub struct FnAroundPoint<F, K> {
    name: &'static str,
    _f: PhantomData<fn() -> (F, K)>,
}

impl<F, K> FnAroundPoint<F, K> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        FnAroundPoint {
            name,
            _f: PhantomData,
        }
    }

    /// The point's name, e.g. `_functions/my_app/agent/Agent/new/around`.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<F, K> std::fmt::Debug for FnAroundPoint<F, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FnAroundPoint").field(&self.name).finish()
    }
}

impl<F, K> TypedPoint for FnAroundPoint<F, K> {
    fn point_name(&self) -> &'static str {
        self.name
    }
}

/// A sync wrap point's inner step, erased.
type InnerStep<'a, S> =
    dyn FnMut(&mut <S as WrapSpec>::Request) -> Result<<S as WrapSpec>::Response, Error> + 'a;

/// The payload key of a wrap spec: its handler type's `TypeId`.
fn key_of<S: WrapSpec>() -> TypeId {
    TypeId::of::<S::Handler>()
}

fn handler_type<S: WrapSpec>() -> &'static str {
    super::wrap_type_of::<S>()
}

/// One dispatch of `site` with `request`.
fn call_of<'a, S: WrapSpec>(site: &'a PointSite, request: &mut S::Request) -> Call<'a> {
    Call {
        id: site.id(),
        point: site.name(),
        want: Erased {
            key: key_of::<S>(),
            type_name: handler_type::<S>,
            codec: S::json(),
        },
        payload: SendPtr(request as *mut S::Request as *mut ()),
    }
}

impl<S: WrapSpec> WrapPoint<S> {
    #[doc(hidden)]
    pub const fn __new() -> Self {
        WrapPoint {
            site: PointSite::new(S::NAME),
            _spec: PhantomData,
        }
    }

    /// The point's name.
    pub fn name(&self) -> &'static str {
        S::NAME
    }

    /// Runs the point's extensions nested around `inner` on the current scope (the scope
    /// entered with [`Scope::enter`] on this thread, else the default scope), outermost
    /// (lowest `order`) first, and returns the response the outermost one returns. Without
    /// extensions this is `inner(request)` after one check.
    ///
    /// `inner` runs once per call of the innermost `next.run` (zero times when an extension
    /// answers without calling `next`, several times when extensions retry).
    ///
    /// # Errors
    /// What the outermost extension returns (an extension's error names point, extension and
    /// origin, [`ErrorKind::Extension`](crate::ErrorKind::Extension)), or `inner`'s error as it
    /// passed through them; before anything runs:
    /// [`PayloadMismatch`](crate::ErrorKind::PayloadMismatch) (a by-name wrap extension of
    /// other types), [`AsyncOnSync`](crate::ErrorKind::AsyncOnSync),
    /// [`Duplicate`](crate::ErrorKind::Duplicate), [`DepthLimit`](crate::ErrorKind::DepthLimit).
    #[inline]
    pub fn call(
        &'static self,
        request: &mut S::Request,
        mut inner: impl FnMut(&mut S::Request) -> Result<S::Response, Error>,
    ) -> Result<S::Response, Error> {
        if self.site.is_empty_everywhere() {
            return inner(request).map_err(|e| e.marked_inner_step(S::NAME));
        }
        self.call_nonempty(request, &mut inner)
    }

    /// The dispatch itself, out of line so that an empty point costs only the check above.
    #[inline(never)]
    fn call_nonempty(
        &'static self,
        request: &mut S::Request,
        inner: &mut InnerStep<'_, S>,
    ) -> Result<S::Response, Error> {
        let call = call_of::<S>(&self.site, request);
        let codec = S::response_json();
        Scope::with_current(|tl, snap, scope| {
            crate::dispatch::run_wrap_sync(tl, snap, scope, call, codec, request, inner)
        })
    }
}

impl<S: WrapSpec> AsyncWrapPoint<S> {
    #[doc(hidden)]
    pub const fn __new() -> Self {
        AsyncWrapPoint {
            site: PointSite::new(S::NAME),
            _spec: PhantomData,
        }
    }

    /// The point's name.
    pub fn name(&self) -> &'static str {
        S::NAME
    }

    /// Runs the point's extensions nested around `inner`, each awaited, on the current scope
    /// (bound with [`Scope::bind`] or entered, else the default scope); `inner` returns its
    /// future boxed (`|req| Box::pin(step(req))`) so that the nest stays `Send`.
    ///
    /// Dropping the future cancels the whole nest (the extension running and everything it
    /// wrapped).
    ///
    /// # Errors
    /// As [`WrapPoint::call`], without `AsyncOnSync`; an extension's `timeout_ms` budget ends
    /// its whole nested call with [`Timeout`](crate::ErrorKind::Timeout).
    pub async fn call<F>(
        &'static self,
        request: &mut S::Request,
        mut inner: F,
    ) -> Result<S::Response, Error>
    where
        F: for<'r> FnMut(&'r mut S::Request) -> StepFuture<'r, S::Response> + Send,
        S::Request: Send,
        S::Response: Send,
    {
        if self.site.is_empty_everywhere() {
            return inner(request)
                .await
                .map_err(|e| e.marked_inner_step(S::NAME));
        }
        let call = call_of::<S>(&self.site, request);
        let scope = Scope::current();
        scope
            .dispatch_wrap_async(call, S::response_json(), request, &mut inner)
            .await
    }
}

impl<S: WrapSpec> TypedPoint for WrapPoint<S> {
    fn point_name(&self) -> &'static str {
        S::NAME
    }
}

impl<S: WrapSpec> TypedPoint for AsyncWrapPoint<S> {
    fn point_name(&self) -> &'static str {
        S::NAME
    }
}

impl<S: WrapSpec> crate::point::TypedTarget for WrapPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::Wrap;
    type Point = Self;
}

impl<S: WrapSpec> crate::point::TypedTarget for AsyncWrapPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::AsyncWrap;
    type Point = Self;
}

impl<F> crate::point::TypedTarget for FnAroundPoint<F, crate::point::SyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::Wrap;
    type Point = Self;
}

impl<F> crate::point::TypedTarget for FnAroundPoint<F, crate::point::AsyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::AsyncWrap;
    type Point = Self;
}

/// Implemented by wrap points: the target of an extension that takes `next`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a wrap point, so an extension taking `next` cannot attach to it",
    label = "a wrap extension (it takes `Next`/`AsyncNext`) on a point that is not a wrap point",
    note = "declare the point as `WrapPoint<Request, Response>` or `AsyncWrapPoint<Request, Response>`, or write a plain extension `fn(payload: &mut Payload)`"
)]
pub trait WrapTarget: TypedPoint {
    /// The point's request and response as `fn(&mut Request) -> Response`, compared with an
    /// extension's (lifetimes elided, so that an `#[extensible]` fn's borrowed arguments fit).
    type Shape;
    /// `Self`, as [`TypedTarget::Point`](crate::point::TypedTarget::Point).
    type Point: ?Sized;
}
impl<S: WrapSpec> WrapTarget for WrapPoint<S> {
    type Shape = fn(&mut S::Request) -> S::Response;
    type Point = Self;
}
impl<S: WrapSpec> WrapTarget for AsyncWrapPoint<S> {
    type Shape = fn(&mut S::Request) -> S::Response;
    type Point = Self;
}
impl<F, K> WrapTarget for FnAroundPoint<F, K> {
    type Shape = F;
    type Point = Self;
}

/// Implemented by the points plain extensions (without `next`) attach to.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a wrap point: its extensions take the request and `next`",
    label = "a plain extension on a wrap point",
    note = "write `fn name(req: &mut Request, mut next: hookpoint::Next<'_, Request, Response>) -> Result<Response, hookpoint::Error>` (`AsyncNext` and `async fn` for an `AsyncWrapPoint`)"
)]
pub trait AcceptsPlain {}
impl<S: crate::point::PointSpec> AcceptsPlain for crate::point::SyncPoint<S> {}
impl<S: crate::point::PointSpec> AcceptsPlain for crate::point::AsyncPoint<S> {}
impl<F, K> AcceptsPlain for crate::point::FnPoint<F, K> {}

/// Implemented by the wrap points a sync wrap extension (taking [`Next`](crate::Next)) attaches to.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a sync wrap extension cannot attach to `{Self}`, which is dispatched with `.await`",
    label = "sync wrap extension on an async wrap point",
    note = "make the extension an `async fn` taking `hookpoint::AsyncNext<'_, Request, Response>`, or declare the point as `WrapPoint<..>`"
)]
pub trait AcceptsSyncWrap {}
impl<S: WrapSpec> AcceptsSyncWrap for WrapPoint<S> {}
impl<F> AcceptsSyncWrap for FnAroundPoint<F, SyncKind> {}

/// Implemented by the wrap points an `async` wrap extension attaches to.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "an `async` wrap extension cannot attach to `{Self}`, which is dispatched synchronously",
    label = "`async` wrap extension on a sync wrap point",
    note = "make the extension a plain `fn` taking `hookpoint::Next<'_, Request, Response>`, or declare the point as `AsyncWrapPoint<..>`"
)]
pub trait AcceptsAsyncWrap {}
impl<S: WrapSpec> AcceptsAsyncWrap for AsyncWrapPoint<S> {}
impl<F> AcceptsAsyncWrap for FnAroundPoint<F, AsyncKind> {}
