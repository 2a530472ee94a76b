//! The records `#[extension]`, `#[extensible]` and [`point!`](crate::point!) put into the
//! binary, and the shapes of extension handlers.
//!
//! A record pairs a handler that casts a type-erased payload pointer with the key of the type it
//! casts to. Nothing checks that pairing at run time, so the records are built only through
//! `unsafe` constructors whose contract the macros keep: safe code cannot make dispatch cast a
//! payload to the wrong type.

use std::any::TypeId;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::time::Duration;

use super::codec::JsonCodec;
use super::cx::Cx;
use super::policy::{ErrorPolicy, PointKind};
use crate::error::Error;

/// What an extension tells the chain after it ran: go on with the next extension, or stop here
/// because it handled the point (pluggy's `firstresult`, Claude Code's `"continue": false`).
///
/// An extension returns it directly (`-> Flow`) or in a result (`-> Result<Flow, E>`). The
/// caller learns who stopped the chain from the [`Outcome`](crate::Outcome) every dispatch
/// returns; the end extensions of an `#[extensible]` fn still run when a start extension stops.
///
/// ```
/// use hookpoint::Flow;
/// #[hookpoint::extension(point = "doc_flow", order = 1)]
/// fn handle(text: &mut String) -> Flow {
///     text.push_str("handled");
///     Flow::Stop
/// }
/// #[hookpoint::extension(point = "doc_flow", order = 2)]
/// fn never(text: &mut String) {
///     text.push_str(", again");
/// }
/// let mut text = String::new();
/// hookpoint::call_sync("doc_flow", &mut text).unwrap();
/// assert_eq!(text, "handled");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Flow {
    /// Run the next extension (what `()` and `Ok(())` mean).
    #[default]
    Continue,
    /// Do not run later extensions of this dispatch; the dispatch succeeds.
    Stop,
}

/// A boxed extension future; its lifetime is the payload borrow's.
pub type BoxFuture<'a> = Pin<Box<dyn Future<Output = Result<Flow, Error>> + Send + 'a>>;

/// A type-erased sync handler. Unsafe to call: the pointer must be the payload type the handler
/// was compiled for (dispatch checks the payload key first).
pub type SyncFn = unsafe fn(*mut (), &Cx<'_>) -> Result<Flow, Error>;

/// A type-erased predicate (`when = ..`): whether the extension runs for this payload. Unsafe
/// to call, as [`SyncFn`].
pub type WhenFn = unsafe fn(*const ()) -> bool;

/// A type-erased handler that takes no `Cx` and cannot fail (`fn(&mut P)` returning `()`): the
/// plain loop calls these exactly as a hand-written loop of fn pointers would.
pub type BareFn = unsafe fn(*mut ());

/// A type-erased async handler.
pub type AsyncFn = for<'a> unsafe fn(*mut (), &'a Cx<'a>) -> BoxFuture<'a>;

/// A boxed wrap extension's future: `Ok(())` once it wrote its response.
pub type WrapFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'a>>;

/// A type-erased wrap handler: `fn(&mut Req, Next<'_, Req, Resp>) -> Result<Resp, E>` (or with
/// `&Cx` first) behind three pointers. Unsafe to call: `request` points to the `Req`, `next` to
/// an `Option<Next<'_, Req, Resp>>` holding the rest of the chain (the handler takes it), and
/// `response` to an `Option<Resp>` the handler fills when it returns `Ok(())`, for the one
/// `(Req, Resp)` the handler was compiled for (dispatch checks the payload key first).
pub type WrapFn = unsafe fn(*mut (), *mut (), *mut (), &Cx<'_>) -> Result<(), Error>;

/// The same for an `async fn` wrap extension taking an
/// [`AsyncNext`](crate::AsyncNext): the response is written when the future ends with `Ok(())`;
/// the three pointees outlive the future.
pub type AsyncWrapFn = for<'a> unsafe fn(*mut (), *mut (), *mut (), &'a Cx<'a>) -> WrapFuture<'a>;

/// The compiled handler of an extension.
#[derive(Clone, Copy, Debug)]
pub enum Handler {
    /// `fn(&mut P)` or `fn(&Cx, &mut P)`.
    Sync(SyncFn),
    /// The same, `async`.
    Async(AsyncFn),
    /// A wrap extension: `fn(&mut Req, Next<'_, Req, Resp>) -> Result<Resp, E>`, optionally
    /// with `&Cx` first.
    Wrap(WrapFn),
    /// The same, `async`, taking an [`AsyncNext`](crate::AsyncNext).
    AsyncWrap(AsyncWrapFn),
}

impl Handler {
    /// True for an `async fn` extension.
    pub fn is_async(&self) -> bool {
        matches!(self, Handler::Async(_) | Handler::AsyncWrap(_))
    }

    /// True for a wrap extension (one that takes `next`).
    pub fn is_wrap(&self) -> bool {
        matches!(self, Handler::Wrap(_) | Handler::AsyncWrap(_))
    }
}

/// The point an extension attaches to, as written in `#[extension(point = ...)]`.
#[derive(Clone, Copy)]
pub enum PointOf {
    /// A string: checked when the snapshot is built and when the point is dispatched.
    Name(&'static str),
    /// A typed point (a [`point!`](crate::point!) static or an `#[extensible]` fn's
    /// `*_START`/`*_END` constant): payload and sync/async were checked by the compiler.
    Typed(&'static (dyn TypedPoint + Sync)),
}

impl std::fmt::Debug for PointOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PointOf::Name(n) => f.debug_tuple("Name").field(n).finish(),
            PointOf::Typed(t) => f.debug_tuple("Typed").field(&t.point_name()).finish(),
        }
    }
}

impl PointOf {
    /// The point's name.
    pub fn name(&self) -> &'static str {
        match self {
            PointOf::Name(n) => n,
            PointOf::Typed(t) => t.point_name(),
        }
    }
}

/// Implemented by typed point declarations so an extension entry can name them.
pub trait TypedPoint {
    /// The point's name.
    fn point_name(&self) -> &'static str;
}

/// The parts of an [`ExtensionEntry`], as `#[extension]` writes them.
#[doc(hidden)]
#[derive(Debug)]
pub struct ExtensionParts {
    pub point: PointOf,
    pub name: &'static str,
    pub order: i32,
    pub crate_name: &'static str,
    pub module_path: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub payload_type: fn() -> &'static str,
    /// `TypeId::of::<fn(&mut P)>()` with `P`'s lifetimes elided; for a wrap extension the
    /// `TypeId` of its handler type (see [`WrapSpec`](crate::WrapSpec)).
    pub payload_key: fn() -> TypeId,
    pub handler: Handler,
    /// The same handler as a [`BareFn`], when it takes no `Cx` and returns `()`.
    pub bare: Option<BareFn>,
    pub replace: bool,
    pub policy: ErrorPolicy,
    /// Names of extensions of the same point this one runs after / before.
    pub after: &'static [&'static str],
    pub before: &'static [&'static str],
    /// The predicate the extension runs under, over the same payload type as `handler`.
    pub when: Option<WhenFn>,
    /// The time budget of an async extension.
    pub timeout: Option<Duration>,
}

/// One `#[extension]` in [`HOOKPOINT_EXT_V0`](super::HOOKPOINT_EXT_V0). Read its parts through
/// `Deref`; build it only with [`ExtensionEntry::new`].
#[doc(hidden)]
#[derive(Debug)]
pub struct ExtensionEntry(ExtensionParts);

impl ExtensionEntry {
    /// # Safety
    /// `parts.handler`, `parts.bare` and `parts.when` must cast their payload pointer to `&mut P`
    /// (`&P` for `when`) for the one
    /// type `P` whose handler type `fn(&mut P)` (lifetimes elided, so higher-ranked) has the
    /// `TypeId` that `parts.payload_key` returns, and must not keep the borrow past the call
    /// (async handlers: past their future). A wrap handler ([`Handler::Wrap`],
    /// [`Handler::AsyncWrap`]) casts its pointers as [`WrapFn`] says, for the `(Req, Resp)`
    /// whose wrap handler type (see [`WrapSpec`](crate::WrapSpec)) has that `TypeId`; its
    /// `when` casts the request.
    pub const unsafe fn new(parts: ExtensionParts) -> Self {
        ExtensionEntry(parts)
    }
}

impl Deref for ExtensionEntry {
    type Target = ExtensionParts;
    fn deref(&self) -> &ExtensionParts {
        &self.0
    }
}

/// The parts of a [`PointEntry`], as [`point!`](crate::point!) and `#[extensible]` write them.
#[doc(hidden)]
#[derive(Debug)]
pub struct PointParts {
    pub name: &'static str,
    pub kind: PointKind,
    /// `None` for the points of a generic `#[extensible]` fn: each instantiation has its own payload.
    pub payload_key: Option<fn() -> TypeId>,
    pub payload_type: fn() -> &'static str,
    /// The JSON codec of the payload, for points declared `#[serde]`: command hooks may attach.
    pub codec: Option<&'static JsonCodec>,
    /// The declaration's doc comment (`""` when it has none).
    pub doc: &'static str,
    pub crate_name: &'static str,
    pub file: &'static str,
    pub line: u32,
}

/// One declared point in [`HOOKPOINT_PTS_V0`](super::HOOKPOINT_PTS_V0). Build it only with
/// [`PointEntry::new`].
#[doc(hidden)]
#[derive(Debug)]
pub struct PointEntry(PointParts);

impl PointEntry {
    /// # Safety
    /// `parts.codec`, when given, must have been made by [`JsonCodec::of`] for the payload type
    /// whose key `parts.payload_key` returns (for a wrap point: the request of the wrap handler
    /// type whose key it returns): by-name dispatch uses it on payloads of that key.
    pub const unsafe fn new(parts: PointParts) -> Self {
        PointEntry(parts)
    }
}

impl Deref for PointEntry {
    type Target = PointParts;
    fn deref(&self) -> &PointParts {
        &self.0
    }
}
