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

use super::codec::JsonCodec;
use super::cx::Cx;
use super::policy::{ErrorPolicy, PointKind};
use crate::error::Error;

/// A boxed extension future; its lifetime is the payload borrow's.
pub type BoxFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'a>>;

/// A type-erased sync handler. Unsafe to call: the pointer must be the payload type the handler
/// was compiled for (dispatch checks the payload key first).
pub type SyncFn = unsafe fn(*mut (), &Cx<'_>) -> Result<(), Error>;

/// A type-erased handler that takes no `Cx` and cannot fail (`fn(&mut P)` returning `()`): the
/// plain loop calls these exactly as a hand-written loop of fn pointers would.
pub type BareFn = unsafe fn(*mut ());

/// A type-erased async handler.
pub type AsyncFn = for<'a> unsafe fn(*mut (), &'a Cx<'a>) -> BoxFuture<'a>;

/// The compiled handler of an extension.
#[derive(Clone, Copy)]
pub enum Handler {
    /// `fn(&mut P)` or `fn(&Cx, &mut P)`.
    Sync(SyncFn),
    /// The same, `async`.
    Async(AsyncFn),
}

impl Handler {
    /// True for an `async fn` extension.
    pub fn is_async(&self) -> bool {
        matches!(self, Handler::Async(_))
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
pub struct ExtensionParts {
    pub point: PointOf,
    pub name: &'static str,
    pub order: i32,
    pub crate_name: &'static str,
    pub module_path: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub payload_type: fn() -> &'static str,
    /// `TypeId::of::<fn(&mut P)>()` with `P`'s lifetimes elided.
    pub payload_key: fn() -> TypeId,
    pub handler: Handler,
    /// The same handler as a [`BareFn`], when it takes no `Cx` and returns `()`.
    pub bare: Option<BareFn>,
    pub replace: bool,
    pub policy: ErrorPolicy,
}

/// One `#[extension]` in [`HOOKPOINT_EXT_V0`](super::HOOKPOINT_EXT_V0). Read its parts through
/// `Deref`; build it only with [`ExtensionEntry::new`].
#[doc(hidden)]
pub struct ExtensionEntry(ExtensionParts);

impl ExtensionEntry {
    /// # Safety
    /// `parts.handler` and `parts.bare` must cast their payload pointer to `&mut P` for the one
    /// type `P` whose handler type `fn(&mut P)` (lifetimes elided, so higher-ranked) has the
    /// `TypeId` that `parts.payload_key` returns, and must not keep the borrow past the call
    /// (async handlers: past their future).
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
pub struct PointParts {
    pub name: &'static str,
    pub kind: PointKind,
    /// `None` for the points of a generic `#[extensible]` fn: each instantiation has its own payload.
    pub payload_key: Option<fn() -> TypeId>,
    pub payload_type: fn() -> &'static str,
    /// The JSON codec of the payload, for points declared `#[serde]`: command hooks may attach.
    pub codec: Option<&'static JsonCodec>,
    pub crate_name: &'static str,
    pub file: &'static str,
    pub line: u32,
}

/// One declared point in [`HOOKPOINT_PTS_V0`](super::HOOKPOINT_PTS_V0). Build it only with
/// [`PointEntry::new`].
#[doc(hidden)]
pub struct PointEntry(PointParts);

impl PointEntry {
    /// # Safety
    /// `parts.codec`, when given, must have been made by [`JsonCodec::of`] for the payload type
    /// whose key `parts.payload_key` returns: by-name dispatch uses it on payloads of that key.
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
