//! Typed points: a point's name, payload type and sync/async kind in one `static`, so the compiler
//! checks extensions attached with `#[extension(point = PATH)]` and dispatch needs no lookup.
//!
//! The top layer: typed points hand their payload to the scope layer, which finds the snapshot
//! and runs the dispatch loops.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::dispatch::{Call, Erased, SendPtr, StopSlot};
use crate::error::Error;
use crate::registry::{JsonCodec, PointKind, TypedPoint};
use crate::scope::Scope;
use crate::site::PointSite;

/// What [`point!`](crate::point!) generates for each point: its name and payload type.
///
/// `Payload<'a>` is the payload with every borrowed lifetime set to `'a`; `Handler` is the
/// higher-ranked handler type `fn(&mut Payload<'_>)` whose `TypeId` is the payload key.
///
/// # Safety
/// Dispatch casts the payload pointer back to the type an extension was compiled for after
/// comparing `TypeId::of::<Handler>()` with the extension's key, so an implementation must keep:
/// `Handler` is exactly `fn(&mut Payload<'_>)` with every lifetime of the payload elided, and
/// [`json`](Self::json) returns `None` or a codec made by [`JsonCodec::of`] for that payload.
/// [`point!`](crate::point!) writes the impl and keeps this; do not implement it by hand.
///
/// A hand-written impl must say `unsafe impl` (a plain `impl` does not compile):
///
/// ```compile_fail,E0200
/// struct Mine;
/// impl hookpoint::PointSpec for Mine {
///     type Payload<'a> = u64;
///     type Handler = fn(&mut String);
///     const NAME: &'static str = "lying";
///     fn payload_type() -> &'static str { "u64" }
/// }
/// ```
pub unsafe trait PointSpec: 'static {
    /// The payload extensions receive by `&mut`.
    type Payload<'a>;
    /// `fn(&mut Payload)` with elided lifetimes: `'static` even when the payload borrows.
    type Handler: Copy + 'static;
    /// The point's name, such as `"system_prompt"`.
    const NAME: &'static str;
    /// The payload's type name, for messages.
    fn payload_type() -> &'static str;
    /// Serde support for command hooks, when the point was declared `serde`.
    fn json() -> Option<&'static JsonCodec> {
        None
    }
}

/// The erased view of a spec's payload.
fn erased<S: PointSpec>() -> Erased<'static> {
    Erased {
        key: key_of::<S>(),
        type_name: S::payload_type,
        codec: S::json(),
    }
}

/// One dispatch of `site` with `payload`.
fn call_of<'a, S: PointSpec>(site: &'a PointSite, payload: &mut S::Payload<'_>) -> Call<'a> {
    Call {
        id: site.id(),
        point: site.name(),
        want: erased::<S>(),
        payload: SendPtr(payload as *mut S::Payload<'_> as *mut ()),
        stopped: None,
    }
}

/// What a dispatch did, beyond succeeding: whether an extension stopped the chain with
/// [`Flow::Stop`](crate::Flow::Stop), and which. Returned by [`SyncPoint::dispatch`] and
/// [`AsyncPoint::dispatch`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    stopped_by: Option<String>,
}

impl Outcome {
    fn from_slot(slot: StopSlot) -> Self {
        Outcome {
            stopped_by: slot.into_inner().map(|name| name.to_string()),
        }
    }

    /// The extension that stopped the chain, if one did (later extensions did not run).
    pub fn stopped_by(&self) -> Option<&str> {
        self.stopped_by.as_deref()
    }
}

/// The payload key of a point spec.
pub(crate) fn key_of<S: PointSpec>() -> TypeId {
    TypeId::of::<S::Handler>()
}

/// A point dispatched synchronously, declared with [`point!`](crate::point!).
///
/// `async` extensions cannot attach to it (compile error with a typed `#[extension(point = ..)]`,
/// [`ErrorKind::AsyncOnSync`](crate::ErrorKind::AsyncOnSync) at dispatch for a string one).
pub struct SyncPoint<S: PointSpec> {
    site: PointSite,
    _spec: PhantomData<fn() -> S>,
}

/// A point dispatched with `.await`: sync and async extensions run in order, one at a time.
pub struct AsyncPoint<S: PointSpec> {
    site: PointSite,
    _spec: PhantomData<fn() -> S>,
}

impl<S: PointSpec> SyncPoint<S> {
    #[doc(hidden)]
    pub const fn __new() -> Self {
        SyncPoint {
            site: PointSite::new(S::NAME),
            _spec: PhantomData,
        }
    }

    /// The point's name.
    pub fn name(&self) -> &'static str {
        S::NAME
    }

    /// Runs the point's extensions in order on the default scope (or the scope entered with
    /// [`Scope::enter`]).
    ///
    /// # Errors
    /// The first extension error, naming point, extension and origin
    /// ([`ErrorKind::Extension`](crate::ErrorKind::Extension)); before any extension runs:
    /// [`AsyncOnSync`](crate::ErrorKind::AsyncOnSync), [`PayloadMismatch`](crate::ErrorKind::PayloadMismatch),
    /// [`Duplicate`](crate::ErrorKind::Duplicate), [`DepthLimit`](crate::ErrorKind::DepthLimit).
    ///
    /// ```
    /// hookpoint::point! {
    ///     /// Greeting text, built by extensions.
    ///     pub static GREETING: SyncPoint<String> = "doc_typed_greeting";
    /// }
    /// #[hookpoint::extension(point = GREETING)]
    /// fn add_name(text: &mut String) {
    ///     text.push_str(", world");
    /// }
    ///
    /// let mut text = String::from("hello");
    /// GREETING.call(&mut text).unwrap();
    /// assert_eq!(text, "hello, world");
    /// ```
    #[inline]
    pub fn call(&'static self, payload: &mut S::Payload<'_>) -> Result<(), Error> {
        if self.site.is_empty_everywhere() {
            return Ok(());
        }
        self.call_nonempty(payload)
    }

    /// The dispatch itself, out of line so that an empty point costs only the check above.
    #[inline(never)]
    fn call_nonempty(&'static self, payload: &mut S::Payload<'_>) -> Result<(), Error> {
        let ptr = payload as *mut S::Payload<'_> as *mut ();
        let id = self.site.id();
        if let Some(done) = Scope::dispatch_bare(id, key_of::<S>(), S::NAME, ptr) {
            return done;
        }
        Scope::dispatch_current_slow(call_of::<S>(&self.site, payload), None)
    }

    /// Like [`call`](Self::call), on an explicit scope.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub fn call_in(
        &'static self,
        scope: &Scope,
        payload: &mut S::Payload<'_>,
    ) -> Result<(), Error> {
        scope.dispatch_sync(call_of::<S>(&self.site, payload), None)
    }

    /// Like [`call`](Self::call), and tells whether an extension stopped the chain
    /// ([`Flow::Stop`](crate::Flow::Stop)) and which.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    ///
    /// ```
    /// use hookpoint::Flow;
    /// hookpoint::point! {
    ///     pub static ANSWER: SyncPoint<Option<u32>> = "doc_answer";
    /// }
    /// #[hookpoint::extension(point = ANSWER, order = 1)]
    /// fn cached(answer: &mut Option<u32>) -> Flow {
    ///     *answer = Some(42);
    ///     Flow::Stop
    /// }
    /// #[hookpoint::extension(point = ANSWER, order = 2)]
    /// fn expensive(answer: &mut Option<u32>) {
    ///     *answer = Some(0);
    /// }
    /// let mut answer = None;
    /// let outcome = ANSWER.dispatch(&mut answer).unwrap();
    /// assert_eq!((answer, outcome.stopped_by()), (Some(42), Some("cached")));
    /// ```
    pub fn dispatch(&'static self, payload: &mut S::Payload<'_>) -> Result<Outcome, Error> {
        if self.site.is_empty_everywhere() {
            return Ok(Outcome::default());
        }
        let slot = StopSlot::new();
        let mut call = call_of::<S>(&self.site, payload);
        call.stopped = Some(&slot);
        Scope::dispatch_current(call, None)?;
        Ok(Outcome::from_slot(slot))
    }

    /// Like [`dispatch`](Self::dispatch), on an explicit scope.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub fn dispatch_in(
        &'static self,
        scope: &Scope,
        payload: &mut S::Payload<'_>,
    ) -> Result<Outcome, Error> {
        let slot = StopSlot::new();
        let mut call = call_of::<S>(&self.site, payload);
        call.stopped = Some(&slot);
        scope.dispatch_sync(call, None)?;
        Ok(Outcome::from_slot(slot))
    }
}

impl<S: PointSpec> AsyncPoint<S> {
    #[doc(hidden)]
    pub const fn __new() -> Self {
        AsyncPoint {
            site: PointSite::new(S::NAME),
            _spec: PhantomData,
        }
    }

    /// The point's name.
    pub fn name(&self) -> &'static str {
        S::NAME
    }

    /// Runs the point's extensions in order, each awaited before the next, on the current scope.
    ///
    /// Dropping the future stops the chain: later extensions do not run, nothing stays locked
    /// (a `debug` event records the cancellation).
    ///
    /// # Errors
    /// As [`SyncPoint::call`], without `AsyncOnSync`.
    ///
    /// ```
    /// hookpoint::point! {
    ///     pub static LOADED: AsyncPoint<Vec<String>> = "doc_loaded";
    /// }
    /// #[hookpoint::extension(point = LOADED)]
    /// async fn remember(items: &mut Vec<String>) {
    ///     items.push("memory".into());
    /// }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # rt.block_on(async {
    /// let mut items = Vec::new();
    /// LOADED.call(&mut items).await.unwrap();
    /// assert_eq!(items, ["memory"]);
    /// # });
    /// ```
    pub async fn call<'p>(&'static self, payload: &'p mut S::Payload<'_>) -> Result<(), Error>
    where
        for<'a> S::Payload<'a>: Send,
    {
        if self.site.is_empty_everywhere() {
            return Ok(());
        }
        let scope = Scope::current();
        scope
            .dispatch_async(call_of::<S>(&self.site, payload), None)
            .await
    }

    /// Like [`call`](Self::call), on an explicit scope.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn call_in(
        &'static self,
        scope: &Scope,
        payload: &mut S::Payload<'_>,
    ) -> Result<(), Error>
    where
        for<'a> S::Payload<'a>: Send,
    {
        scope
            .dispatch_async(call_of::<S>(&self.site, payload), None)
            .await
    }

    /// Like [`call`](Self::call), and tells whether an extension stopped the chain
    /// ([`Flow::Stop`](crate::Flow::Stop)) and which.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn dispatch(&'static self, payload: &mut S::Payload<'_>) -> Result<Outcome, Error>
    where
        for<'a> S::Payload<'a>: Send,
    {
        self.dispatch_in(&Scope::current(), payload).await
    }

    /// Like [`dispatch`](Self::dispatch), on an explicit scope.
    ///
    /// # Errors
    /// As [`call`](Self::call).
    pub async fn dispatch_in(
        &'static self,
        scope: &Scope,
        payload: &mut S::Payload<'_>,
    ) -> Result<Outcome, Error>
    where
        for<'a> S::Payload<'a>: Send,
    {
        let slot = StopSlot::new();
        let mut call = call_of::<S>(&self.site, payload);
        call.stopped = Some(&slot);
        scope.dispatch_async(call, None).await?;
        Ok(Outcome::from_slot(slot))
    }
}

impl<S: PointSpec> TypedPoint for SyncPoint<S> {
    fn point_name(&self) -> &'static str {
        S::NAME
    }
}

impl<S: PointSpec> TypedPoint for AsyncPoint<S> {
    fn point_name(&self) -> &'static str {
        S::NAME
    }
}

/// Marker: the points of a sync `#[extensible]` fn.
pub enum SyncKind {}
/// Marker: the points of an `async` `#[extensible]` fn.
pub enum AsyncKind {}

/// The typed start or end point of an `#[extensible]` fn, generated as an associated or free
/// `const` named `<FN>_START` / `<FN>_END`. Attach to it with `#[extension(point = ...)]` so a
/// typo or a wrong payload is a compile error.
///
/// `F` is the handler type `fn(&mut Payload)`; `K` is [`SyncKind`] or [`AsyncKind`].
pub struct FnPoint<F, K> {
    name: &'static str,
    _f: PhantomData<fn() -> (F, K)>,
}

impl<F, K> FnPoint<F, K> {
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        FnPoint {
            name,
            _f: PhantomData,
        }
    }

    /// The point's name, e.g. `_functions/my_app/agent/Agent/new/start`.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<F, K> TypedPoint for FnPoint<F, K> {
    fn point_name(&self) -> &'static str {
        self.name
    }
}

/// Links a typed point to its handler type, for the compile-time payload check.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a typed hookpoint point",
    label = "expected a `point!` static or an `#[extensible]` fn's `*_START`/`*_END` constant",
    note = "write a string (`point = \"name\"`) for a point without a typed declaration"
)]
pub trait TypedTarget: TypedPoint {
    type Handler;
    const KIND: PointKind;
}

impl<S: PointSpec> TypedTarget for SyncPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::Sync;
}
impl<S: PointSpec> TypedTarget for AsyncPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::Async;
}
impl<F> TypedTarget for FnPoint<F, SyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::Sync;
}
impl<F> TypedTarget for FnPoint<F, AsyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::Async;
}

/// Implemented by points that accept `async` extensions.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "an `async` extension cannot attach to `{Self}`, which is dispatched synchronously",
    label = "`async` extension on a sync point",
    note = "make the extension a plain `fn`, or declare the point as `AsyncPoint<..>`"
)]
pub trait AcceptsAsync {}
impl<S: PointSpec> AcceptsAsync for AsyncPoint<S> {}
impl<F> AcceptsAsync for FnPoint<F, AsyncKind> {}
