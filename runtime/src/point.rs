//! Typed points: a point's name, payload type and sync/async kind in one `static`, so the compiler
//! checks extensions attached with `#[extension(point = PATH)]` and dispatch needs no lookup.
//!
//! The top layer: typed points hand their payload to the scope layer, which finds the snapshot
//! and runs the dispatch loops.

use std::any::TypeId;
use std::marker::PhantomData;

use crate::dispatch::{Call, Erased, Outcome, SendPtr};
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

impl<S: PointSpec> std::fmt::Debug for SyncPoint<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SyncPoint").field(&S::NAME).finish()
    }
}

/// A point dispatched with `.await`: sync and async extensions run in order, one at a time.
pub struct AsyncPoint<S: PointSpec> {
    site: PointSite,
    _spec: PhantomData<fn() -> S>,
}

impl<S: PointSpec> std::fmt::Debug for AsyncPoint<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AsyncPoint").field(&S::NAME).finish()
    }
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

    /// Runs the point's extensions in order on the current scope: the scope entered with
    /// [`Scope::enter`] on this thread, else the default scope. Returns which extension stopped
    /// the chain, if one did ([`Outcome`]); most callers ignore it (`POINT.call(&mut p)?;`).
    ///
    /// To run in a named scope, enter it: `scope.enter(|| POINT.call(&mut p))`. An extension
    /// that dispatches again stays in that scope.
    ///
    /// # Errors
    /// The first extension error, naming point, extension and origin
    /// ([`ErrorKind::Extension`](crate::ErrorKind::Extension)); before any extension runs:
    /// [`AsyncOnSync`](crate::ErrorKind::AsyncOnSync), [`PayloadMismatch`](crate::ErrorKind::PayloadMismatch),
    /// [`Duplicate`](crate::ErrorKind::Duplicate), [`DepthLimit`](crate::ErrorKind::DepthLimit).
    ///
    /// ```
    /// use hookpoint::{Flow, ScopeBuilder};
    /// hookpoint::point! {
    ///     /// Greeting text, built by extensions.
    ///     pub static GREETING: SyncPoint<String> = "doc_typed_greeting";
    /// }
    /// #[hookpoint::extension(point = GREETING, order = 1)]
    /// fn add_name(text: &mut String) {
    ///     text.push_str(", world");
    /// }
    /// #[hookpoint::extension(point = GREETING, order = 2)]
    /// fn enough(text: &mut String) -> Flow {
    ///     text.push('!');
    ///     Flow::Stop
    /// }
    ///
    /// let mut text = String::from("hello");
    /// GREETING.call(&mut text)?;
    /// assert_eq!(text, "hello, world!");
    ///
    /// // In a named scope, and who stopped the chain:
    /// let scope = ScopeBuilder::new("greeter").build()?;
    /// let mut text = String::from("hi");
    /// let outcome = scope.enter(|| GREETING.call(&mut text))?;
    /// assert_eq!((text.as_str(), outcome.stopped_by()), ("hi, world!", Some("enough")));
    /// # Ok::<(), hookpoint::Error>(())
    /// ```
    #[inline]
    pub fn call(&'static self, payload: &mut S::Payload<'_>) -> Result<Outcome, Error> {
        if self.site.is_empty_everywhere() {
            return Ok(Outcome::RAN_ALL);
        }
        self.call_nonempty(payload)
    }

    /// The dispatch itself, out of line so that an empty point costs only the check above.
    #[inline(never)]
    fn call_nonempty(&'static self, payload: &mut S::Payload<'_>) -> Result<Outcome, Error> {
        let ptr = payload as *mut S::Payload<'_> as *mut ();
        let id = self.site.id_or_none();
        if let Some(done) = Scope::dispatch_bare(id, key_of::<S>(), S::NAME, ptr) {
            return done.map(|()| Outcome::RAN_ALL);
        }
        self.call_general(payload)
    }

    /// Every case the bare loop does not take, in a frame of its own so that the bare path
    /// needs none.
    #[inline(never)]
    fn call_general(&'static self, payload: &mut S::Payload<'_>) -> Result<Outcome, Error> {
        Scope::dispatch_current_slow(call_of::<S>(&self.site, payload), None)
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

    /// Runs the point's extensions in order, each awaited before the next, on the current scope:
    /// the scope bound with [`Scope::bind`] to the task (or entered on the thread) when the
    /// future is first polled, else the default scope. Returns which extension stopped the
    /// chain, if one did ([`Outcome`]).
    ///
    /// To run in a named scope, bind the future: `scope.bind(POINT.call(&mut p)).await`; the
    /// scope follows the task across `.await`s, and an extension that dispatches again stays
    /// in it.
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
    ///     items.push(hookpoint::Scope::current().name().to_owned());
    /// }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # rt.block_on(async {
    /// let mut items = Vec::new();
    /// LOADED.call(&mut items).await?;
    /// assert_eq!(items, ["default"]);
    ///
    /// let scope = hookpoint::ScopeBuilder::new("loader").build()?;
    /// let outcome = scope.bind(LOADED.call(&mut items)).await?;
    /// assert_eq!(items, ["default", "loader"]);
    /// assert!(!outcome.is_stopped());
    /// # Ok::<(), hookpoint::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn call<'p>(&'static self, payload: &'p mut S::Payload<'_>) -> Result<Outcome, Error>
    where
        for<'a> S::Payload<'a>: Send,
    {
        if self.site.is_empty_everywhere() {
            return Ok(Outcome::RAN_ALL);
        }
        let scope = Scope::current();
        scope
            .dispatch_async(call_of::<S>(&self.site, payload), None)
            .await
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
#[derive(Debug)]
pub enum SyncKind {}
/// Marker: the points of an `async` `#[extensible]` fn.
#[derive(Debug)]
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

impl<F, K> std::fmt::Debug for FnPoint<F, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("FnPoint").field(&self.name).finish()
    }
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
    /// `Self`, reached through this trait: the later checks of an extension take the point as
    /// `&T::Point`, so that when `T` is not a typed point only that one error is reported.
    type Point: ?Sized;
}

impl<S: PointSpec> TypedTarget for SyncPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::Sync;
    type Point = Self;
}
impl<S: PointSpec> TypedTarget for AsyncPoint<S> {
    type Handler = S::Handler;
    const KIND: PointKind = PointKind::Async;
    type Point = Self;
}
impl<F> TypedTarget for FnPoint<F, SyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::Sync;
    type Point = Self;
}
impl<F> TypedTarget for FnPoint<F, AsyncKind> {
    type Handler = F;
    const KIND: PointKind = PointKind::Async;
    type Point = Self;
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

// SAFETY: the key is the spec's handler type, `fn(&mut S::Payload<'_>)` (`PointSpec`'s contract).
unsafe impl<S: PointSpec> crate::scope::RegisterTarget for SyncPoint<S> {
    type Payload<'a> = S::Payload<'a>;
    const KIND: Option<PointKind> = Some(PointKind::Sync);
    fn key() -> TypeId {
        key_of::<S>()
    }
    fn payload_type() -> &'static str {
        S::payload_type()
    }
}

// SAFETY: as for `SyncPoint`.
unsafe impl<S: PointSpec> crate::scope::RegisterTarget for AsyncPoint<S> {
    type Payload<'a> = S::Payload<'a>;
    const KIND: Option<PointKind> = Some(PointKind::Async);
    fn key() -> TypeId {
        key_of::<S>()
    }
    fn payload_type() -> &'static str {
        S::payload_type()
    }
}

// SAFETY: the handler type is `fn(&mut P)` itself, `P` borrowing nothing.
unsafe impl<P: 'static> crate::scope::RegisterTarget for FnPoint<fn(&mut P), SyncKind> {
    type Payload<'a> = P;
    const KIND: Option<PointKind> = Some(PointKind::Sync);
    fn key() -> TypeId {
        TypeId::of::<fn(&mut P)>()
    }
    fn payload_type() -> &'static str {
        std::any::type_name::<P>()
    }
}

// SAFETY: as above.
unsafe impl<P: 'static> crate::scope::RegisterTarget for FnPoint<fn(&mut P), AsyncKind> {
    type Payload<'a> = P;
    const KIND: Option<PointKind> = Some(PointKind::Async);
    fn key() -> TypeId {
        TypeId::of::<fn(&mut P)>()
    }
    fn payload_type() -> &'static str {
        std::any::type_name::<P>()
    }
}

impl<S: PointSpec> crate::scope::AcceptsAsyncClosure for AsyncPoint<S> {}
impl<F> crate::scope::AcceptsAsyncClosure for FnPoint<F, AsyncKind> {}
