//! The registry: what the binary carries. `#[extension]`, `#[extensible]`, [`point!`](crate::point!)
//! and [`plugin!`](crate::plugin!) write records into linkme distributed slices; nothing runs at
//! start-up. The slices are plain arrays the linker assembles; this layer reads them in a
//! deterministic order (the linker keeps none).
//!
//! Next in the data's way: `snapshot` resolves these records into per-point lists.

mod closure;
mod codec;
mod cx;
mod entry;
mod plugin;
mod policy;

pub(crate) use closure::{
    AsyncClosure, AsyncWrapClosure, ClosureRun, Started, SyncClosure, WrapClosure,
};
pub use codec::JsonCodec;
pub use cx::Cx;
pub(crate) use cx::DispatchScope;
pub use entry::{
    AsyncFn, AsyncWrapFn, BareFn, BoxFuture, ExtensionEntry, ExtensionParts, Flow, Handler,
    PointEntry, PointOf, PointParts, SyncFn, TypedPoint, WhenFn, WrapFn, WrapFuture,
};
pub use plugin::{ConfigMismatch, HOOKPOINT_PLG_V0, JsonPathSegment, PluginEntry};
pub(crate) use plugin::{Reported, default_configs, find as find_plugin, unhealthy};
pub use policy::{ErrorPolicy, PointKind};

/// Every `#[extension]` in the binary. The name is distinctive and versioned: linkme derives the
/// link section from it, and a second, incompatible copy of hookpoint must not share it.
#[linkme::distributed_slice]
pub static HOOKPOINT_EXT_V0: [ExtensionEntry];

/// Every declared point: [`point!`](crate::point!) statics and the start/end points of
/// `#[extensible]` fns. Used by [`validate`](fn@crate::validate) and [`introspect`](fn@crate::introspect).
#[linkme::distributed_slice]
pub static HOOKPOINT_PTS_V0: [PointEntry];

/// The compiled-in extensions, in a deterministic order: (point, order, name, crate, module,
/// file, line). Never the link order, which differs between build profiles.
pub(crate) fn sorted_extensions() -> Vec<&'static ExtensionEntry> {
    let mut all: Vec<&'static ExtensionEntry> = HOOKPOINT_EXT_V0.iter().collect();
    all.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    all
}

type SortKey = (
    &'static str,
    i32,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    u32,
);

fn sort_key(e: &ExtensionEntry) -> SortKey {
    (
        e.point.name(),
        e.order,
        e.name,
        e.crate_name,
        e.module_path,
        e.file,
        e.line,
    )
}

/// The declared points by name (the first declaration wins if a name is declared twice, which
/// [`validate`](fn@crate::validate) reports).
pub(crate) fn declared_points() -> Vec<&'static PointEntry> {
    let mut all: Vec<&'static PointEntry> = HOOKPOINT_PTS_V0.iter().collect();
    all.sort_by(|a, b| (a.name, a.file, a.line).cmp(&(b.name, b.file, b.line)));
    all
}
