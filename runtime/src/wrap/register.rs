//! Wrap closures registered at run time: the run methods of [`Register`] on a [`WrapPoint`]
//! and an [`AsyncWrapPoint`]. The closure receives the request and the rest of the nest, as a
//! wrap extension fn does, and joins the point's nest with the same rules.

use std::any::TypeId;
use std::sync::Arc;

use super::WrapSpec;
use super::point::{AsyncWrapPoint, WrapPoint};
use super::shim::{async_wrap_shim, wrap_shim};
use crate::dispatch::{AsyncNext, Next, StepFuture};
use crate::error::Error;
use crate::registry::{AsyncWrapClosure, ClosureRun, Cx, WrapClosure, WrapFuture};
use crate::scope::{Register, Registration};

fn key_of<S: WrapSpec>() -> TypeId {
    TypeId::of::<S::Handler>()
}

impl<S: WrapSpec> Register<'_, WrapPoint<S>> {
    /// Registers `f` as a wrap extension: it takes the request and a [`Next`] it may run zero,
    /// one or several times, and returns `Result<Response, hookpoint::Error>`. Lower `order` is
    /// outermost. The closure's types are inferred from the point, its error type too, so
    /// `Ok(next.run(req)? + 1)` needs no annotation; `?` converts errors `Error` has a `From`
    /// for (others: `.map_err(Error::new)`).
    ///
    /// ```
    /// use hookpoint::ScopeBuilder;
    /// hookpoint::point! {
    ///     pub static DOC_REG_MODEL: WrapPoint<String, String> = "doc_register_wrap.model";
    /// }
    /// let scope = ScopeBuilder::new("cached").build()?;
    /// let _cache = scope.register(&DOC_REG_MODEL).name("cache").wrap(|req, mut next| {
    ///     if req == "ping" {
    ///         return Ok("pong".into()); // answered without the inner step
    ///     }
    ///     Ok(format!("[{}]", next.run(req)?))
    /// })?;
    /// let model = |req: &mut String| Ok(format!("model: {req}"));
    /// assert_eq!(scope.enter(|| DOC_REG_MODEL.call(&mut "ping".into(), model))?, "pong");
    /// assert_eq!(scope.enter(|| DOC_REG_MODEL.call(&mut "hi".into(), model))?, "[model: hi]");
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Register::run`]: a name the point already has.
    pub fn wrap<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(
                &'a mut S::Request,
                Next<'a, S::Request, S::Response>,
            ) -> Result<S::Response, Error>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_cx(move |_: &Cx<'_>, req: &mut S::Request, next| f(req, next))
    }

    /// [`wrap`](Self::wrap) with a closure that also takes the dispatch's [`Cx`].
    ///
    /// # Errors
    /// As [`wrap`](Self::wrap).
    pub fn wrap_cx<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(
                &'a Cx<'a>,
                &'a mut S::Request,
                Next<'a, S::Request, S::Response>,
            ) -> Result<S::Response, Error>
            + Send
            + Sync
            + 'static,
    {
        let erased: Arc<WrapClosure> = Arc::new(
            move |request: *mut (), next: *mut (), response: *mut (), cx: &Cx<'_>| {
                // SAFETY: `ClosureRun::wrap`'s contract, kept by dispatch: the pointers are a
                // `WrapFn`'s for `S::Request` and `S::Response`, whose handler key the
                // registration records.
                unsafe { wrap_shim::<S::Request, S::Response, _>(request, next, response, cx, &f) }
            },
        );
        // SAFETY: the closure casts for `S`'s request and response; the key is `S::Handler`'s.
        let run = unsafe { ClosureRun::wrap(erased) };
        self.finish(run, key_of::<S>(), super::wrap_type_of::<S>(), true)
    }
}

impl<S: WrapSpec> Register<'_, AsyncWrapPoint<S>>
where
    S::Request: Send,
    S::Response: Send,
{
    /// Registers `f` as an async wrap extension: it takes the request and an [`AsyncNext`] and
    /// returns a boxed future of `Result<Response, Error>` (`Box::pin(async move { .. })`).
    ///
    /// ```
    /// use hookpoint::{AsyncNext, Error, ScopeBuilder};
    /// hookpoint::point! {
    ///     pub static DOC_REG_FETCH: AsyncWrapPoint<u32, String> = "doc_register_wrap.fetch";
    /// }
    /// let scope = ScopeBuilder::new("retrying").build()?;
    /// let _retry = scope.register(&DOC_REG_FETCH).name("retry").wrap_async(
    ///     |page: &mut u32, mut next: AsyncNext<'_, u32, String>| {
    ///         Box::pin(async move {
    ///             match next.run(page).await {
    ///                 Ok(text) => Ok(text),
    ///                 Err(_) => next.run(page).await, // once more
    ///             }
    ///         })
    ///     },
    /// )?;
    /// let mut failures = 1;
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let text = rt.block_on(scope.bind(DOC_REG_FETCH.call(&mut 7, |page| {
    ///     let fail = std::mem::take(&mut failures) > 0;
    ///     Box::pin(async move { if fail { Err(Error::msg("busy")) } else { Ok(format!("page {page}")) } })
    /// })))?;
    /// assert_eq!(text, "page 7");
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`wrap`](Register::wrap).
    pub fn wrap_async<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(
                &'a mut S::Request,
                AsyncNext<'a, S::Request, S::Response>,
            ) -> StepFuture<'a, S::Response>
            + Send
            + Sync
            + 'static,
    {
        self.wrap_async_cx(move |_: &Cx<'_>, req: &mut S::Request, next| f(req, next))
    }

    /// [`wrap_async`](Self::wrap_async) with a closure that also takes the dispatch's [`Cx`].
    ///
    /// # Errors
    /// As [`wrap`](Register::wrap).
    pub fn wrap_async_cx<F>(self, f: F) -> Result<Registration, Error>
    where
        F: for<'a> Fn(
                &'a Cx<'a>,
                &'a mut S::Request,
                AsyncNext<'a, S::Request, S::Response>,
            ) -> StepFuture<'a, S::Response>
            + Send
            + Sync
            + 'static,
    {
        let erased: Arc<AsyncWrapClosure> = Arc::new(erase_async::<S, F>(f));
        // SAFETY: as in `wrap_cx`; the future uses the pointees no longer than dispatch keeps
        // them (the awaiting level's frame).
        let run = unsafe { ClosureRun::async_wrap(erased) };
        self.finish(run, key_of::<S>(), super::wrap_type_of::<S>(), true)
    }
}

/// The async wrap closure erased; a fn so that the closure's signature is the higher-ranked one.
fn erase_async<S, F>(
    f: F,
) -> impl for<'a> Fn(*mut (), *mut (), *mut (), &'a Cx<'a>) -> WrapFuture<'a> + Send + Sync
where
    S: WrapSpec,
    S::Request: Send,
    S::Response: Send,
    F: for<'a> Fn(
            &'a Cx<'a>,
            &'a mut S::Request,
            AsyncNext<'a, S::Request, S::Response>,
        ) -> StepFuture<'a, S::Response>
        + Send
        + Sync
        + 'static,
{
    move |request: *mut (), next: *mut (), response: *mut (), cx| {
        // SAFETY: as in `Register::wrap_cx`, with `AsyncNext`; the pointees outlive the future.
        unsafe {
            async_wrap_shim::<S::Request, S::Response, _, Result<S::Response, Error>>(
                request, next, response, cx, &f,
            )
        }
    }
}
