//! The link-time registry: what `#[extension]`, `#[extensible]` and [`point!`](crate::point!)
//! put into the binary, collected by linkme distributed slices.
//!
//! Nothing here runs at start-up: the slices are plain arrays the linker assembles. The runtime
//! reads them once, sorts them (the linker keeps no order), and builds a [`Snapshot`](crate::Snapshot).

use std::any::TypeId;
use std::future::Future;
use std::pin::Pin;

use crate::cx::Cx;
use crate::error::Error;

/// Every `#[extension]` in the binary. The name is distinctive and versioned: linkme derives the
/// link section from it, and a second, incompatible copy of hookpoint must not share it.
#[linkme::distributed_slice]
pub static HOOKPOINT_EXT_V0: [ExtensionEntry];

/// Every declared point: [`point!`](crate::point!) statics and the start/end points of
/// `#[extensible]` fns. Used by [`validate`](crate::validate) and [`introspect`](crate::introspect).
#[linkme::distributed_slice]
pub static HOOKPOINT_PTS_V0: [PointEntry];

/// A boxed extension future; its lifetime is the payload borrow's.
pub type BoxFuture<'a> = Pin<Box<dyn Future<Output = Result<(), Error>> + Send + 'a>>;

/// A type-erased sync handler: the payload pointer is cast back to `&mut P` after the runtime has
/// checked the payload key.
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
    /// A typed point (a [`point!`](crate::point!) static or an `#[extensible]` fn's `*_START`/`*_END`
    /// constant): payload and sync/async were checked by the compiler.
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

/// Whether a point is dispatched synchronously or asynchronously.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointKind {
    /// Dispatched with a sync call: `async` extensions are refused.
    Sync,
    /// Dispatched with `.await`: sync and async extensions run in order.
    Async,
}

/// One `#[extension]`, as the macro writes it into [`HOOKPOINT_EXT_V0`]. Not constructed by hand.
#[doc(hidden)]
pub struct ExtensionEntry {
    pub point: PointOf,
    pub name: &'static str,
    pub order: i32,
    pub crate_name: &'static str,
    pub module_path: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub payload_type: fn() -> &'static str,
    pub payload_key: fn() -> TypeId,
    pub handler: Handler,
    /// The same handler as a [`BareFn`], when it takes no `Cx` and returns `()`.
    pub bare: Option<BareFn>,
    pub replace: bool,
    pub policy: crate::snapshot::ErrorPolicy,
}

/// One declared point, as [`point!`](crate::point!) or `#[extensible]` writes it into
/// [`HOOKPOINT_PTS_V0`]. Not constructed by hand.
#[doc(hidden)]
pub struct PointEntry {
    pub name: &'static str,
    pub kind: PointKind,
    /// `None` for the points of a generic `#[extensible]` fn: each instantiation has its own payload.
    pub payload_key: Option<fn() -> TypeId>,
    pub payload_type: fn() -> &'static str,
    /// True when the payload travels as JSON (declared `#[serde]`): command hooks may attach.
    pub serde: bool,
    pub crate_name: &'static str,
    pub file: &'static str,
    pub line: u32,
}

/// The compiled-in extensions, in a deterministic order: (point, order, name, crate, module,
/// file, line). Never the link order, which differs between build profiles.
pub(crate) fn sorted_extensions() -> Vec<&'static ExtensionEntry> {
    let mut all: Vec<&'static ExtensionEntry> = HOOKPOINT_EXT_V0.iter().collect();
    all.sort_by(|a, b| {
        (
            a.point.name(),
            a.order,
            a.name,
            a.crate_name,
            a.module_path,
            a.file,
            a.line,
        )
            .cmp(&(
                b.point.name(),
                b.order,
                b.name,
                b.crate_name,
                b.module_path,
                b.file,
                b.line,
            ))
    });
    all
}

/// The declared points by name (the first declaration wins if a name is declared twice, which
/// [`validate`](crate::validate) reports).
pub(crate) fn declared_points() -> Vec<&'static PointEntry> {
    let mut all: Vec<&'static PointEntry> = HOOKPOINT_PTS_V0.iter().collect();
    all.sort_by(|a, b| (a.name, a.file, a.line).cmp(&(b.name, b.file, b.line)));
    all
}
