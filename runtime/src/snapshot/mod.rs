//! Snapshots: the immutable, merged, sorted table of every point's extensions for one scope.
//! Pure data: built from inputs (the compiled-in table, plugin enablement, override definitions
//! and command hooks), with no knowledge of files or scopes.
//!
//! - [`compiled`]: the compiled-in table, with duplicates resolved (`replace`) or refused.
//! - [`merge`]: compiled-in candidates minus disabled plugins' ones, then (feature `overrides`)
//!   [`overrides`] applied per (point, name).
//! - [`layout`]: one point's winners sorted into a [`PointList`] whose [`Shape`] tells dispatch
//!   which loop may run it.
//! - [`plugin_values`]: the crate plugins' typed configs, deserialized once per snapshot.
//! - [`registered`]: extensions registered at run time join their point's candidates; one
//!   point is laid out again over the last merge when they come or go.
//!
//! Comes after `registry`; next in the data's way: `dispatch` runs one list, `scope` owns and
//! swaps snapshots.

mod compiled;
mod layout;
mod merge;
pub(crate) mod ordering;
#[cfg(all(feature = "overrides", unix))]
mod overrides;
mod plugin_values;
mod registered;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) use compiled::{Candidate, CandidateRun, CompiledTable};
pub(crate) use merge::compiled_snapshot;
#[cfg(all(feature = "overrides", unix))]
pub(crate) use merge::{BuildInput, build};
#[cfg(all(feature = "overrides", unix))]
pub(crate) use overrides::{LayerDefs, LayerInput, OverrideDef};
pub(crate) use plugin_values::{PluginValues, TypedConfig};
pub(crate) use registered::{MergeBase, RegisteredCandidates, relayout};

use crate::error::{Error, ErrorKind, Origin};
use crate::registry::{
    AsyncFn, AsyncWrapFn, BareFn, ClosureRun, ErrorPolicy, SyncFn, WhenFn, WrapFn,
};
use crate::site;

/// Where an extension's definition comes from; higher layers win per (point, name).
///
/// Serialized with a `kind` tag: `{"kind": "compiled"}`, `{"kind": "registered"}` or
/// `{"kind": "folder", "rank": 1, "root": "/home/me/.app"}`.
///
/// ```
/// assert_eq!(hookpoint::Layer::Compiled.to_string(), "compiled-in");
/// assert_eq!(
///     serde_json::to_value(hookpoint::Layer::Compiled).unwrap(),
///     serde_json::json!({"kind": "compiled"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Layer {
    /// Compiled into the binary with `#[extension]`.
    Compiled,
    /// Registered while the program runs ([`Scope::register`](crate::Scope::register)). Like a
    /// compiled-in extension it is below every folder: a manifest there changes it by (point,
    /// name).
    Registered,
    /// An override folder; `rank` 1 is the highest priority (see [`ScopeBuilder`](crate::ScopeBuilder)).
    Folder {
        /// Position in the scope's search order, 1 = highest.
        rank: u8,
        /// The layer's root folder.
        root: std::path::PathBuf,
    },
}

impl Layer {
    /// The rank used to order definitions of one extension: 1 is the highest, compiled-in lowest.
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Layer::Folder { rank, .. } => *rank,
            Layer::Compiled | Layer::Registered => u8::MAX,
        }
    }
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layer::Compiled => f.write_str("compiled-in"),
            Layer::Registered => f.write_str("registered"),
            Layer::Folder { rank, root } => write!(f, "layer {rank} ({})", root.display()),
        }
    }
}

/// How one extension runs.
#[derive(Clone, Copy)]
pub(crate) enum Run {
    Sync(SyncFn),
    Async(AsyncFn),
    /// A wrap extension: runs with the rest of its nest as `next`.
    Wrap(WrapFn),
    AsyncWrap(AsyncWrapFn),
    /// Index into [`Snapshot::commands`].
    #[cfg(all(feature = "command-hooks", unix))]
    Command(u32),
    /// Index into [`Snapshot::wasm`].
    #[cfg(all(feature = "wasm", unix))]
    Wasm(u32),
    /// Index into the list's [`PointList::registered`].
    Registered(u32),
}

/// Everything about one active extension that dispatch needs only off the hot path.
#[derive(Clone)]
pub(crate) struct ExtMeta {
    pub(crate) name: Arc<str>,
    pub(crate) order: i32,
    pub(crate) origin: Origin,
    pub(crate) layer: Layer,
    /// `None` for command hooks, which take any serde payload.
    pub(crate) key: Option<TypeId>,
    pub(crate) payload_type: &'static str,
    pub(crate) policy: ErrorPolicy,
    pub(crate) is_async: bool,
    /// What this definition replaced or changed, for introspection.
    pub(crate) note: Option<String>,
    /// Names of extensions of the same point this one runs after / before.
    pub(crate) after: Arc<[Arc<str>]>,
    pub(crate) before: Arc<[Arc<str>]>,
    /// When set, the extension runs only for payloads it accepts.
    pub(crate) matcher: Option<Matcher>,
    /// The time budget of an async extension or command hook.
    pub(crate) timeout: Option<std::time::Duration>,
    /// The SHA-256 (hex) of what an override file runs (its program, its module), when known.
    pub(crate) content: Option<Arc<str>>,
}

/// The condition an extension runs under.
#[derive(Clone)]
pub(crate) enum Matcher {
    /// `#[extension(when = pred)]`: a predicate over the typed payload.
    Typed(WhenFn),
    /// A manifest's `"match"`: JSON pointers into the payload as JSON (feature `overrides`).
    #[cfg(all(feature = "overrides", unix))]
    Json(Arc<crate::matcher::JsonMatcher>),
}

/// An extension known to the snapshot that does not run, and why (for introspection).
#[derive(Clone)]
pub(crate) struct Inactive {
    pub(crate) name: Arc<str>,
    pub(crate) origin: Origin,
    pub(crate) layer: Layer,
    pub(crate) why: String,
}

/// Why a whole point must not run (two compiled-in extensions share a name).
#[derive(Clone)]
pub(crate) struct Refusal {
    pub(crate) kind: ErrorKind,
    pub(crate) extension: Arc<str>,
    pub(crate) origin: Origin,
    pub(crate) message: String,
}

impl Refusal {
    pub(crate) fn to_error(&self, point: &str) -> Error {
        Error::kind_msg(self.kind, self.message.clone())
            .at_extension(&self.extension, &self.origin)
            .at_point(point)
    }
}

/// The candidates of one point while the merge runs.
#[derive(Default)]
pub(crate) struct PointCandidates {
    pub(crate) active: Vec<Candidate>,
    pub(crate) inactive: Vec<Inactive>,
}

/// Which loop may run a list. Decided once, when the list is laid out: a list gets a fast shape
/// only when no chain-level rule (an error policy, async, command hooks, a refusal, a generic
/// payload, a matcher, a time budget) applies to it, so a rule written in the general loop
/// cannot be skipped by a fast one. (Ordering constraints are applied at layout; `Flow::Stop`
/// is honoured by every loop.)
#[derive(Default, Clone)]
pub(crate) enum Shape {
    /// Nothing runs (the list may still show inactive extensions).
    #[default]
    Empty,
    /// Every extension is a sync `fn(&mut P)` returning `()` with the default policy, all for
    /// the payload `key`: a bare loop of indirect calls, as a hand-written one.
    Bare { key: TypeId, fns: Box<[BareFn]> },
    /// Every extension is a sync handler for the payload `key` with the default policy: a loop
    /// that stops at the first error.
    Plain { key: TypeId, fns: Box<[SyncFn]> },
    /// Every extension is a sync wrap extension for the payload `key` with the default policy,
    /// no matcher: the nest calls them one inside the other with no rule to apply per level.
    Wrap { key: TypeId, fns: Box<[WrapFn]> },
    /// Anything else: dispatch checks the whole list before anything runs, then applies each
    /// extension's rules.
    General,
}

/// One point's extensions in run order.
#[derive(Default, Clone)]
pub(crate) struct PointList {
    pub(crate) shape: Shape,
    pub(crate) runs: Box<[Run]>,
    /// The closures registered at run time that [`Run::Registered`] indexes.
    pub(crate) registered: Box<[ClosureRun]>,
    pub(crate) meta: Box<[ExtMeta]>,
    /// The payload key shared by every typed extension (and the declaration), when they agree.
    pub(crate) key: Option<TypeId>,
    /// True when some extensions' keys differ (a mismatch, or a generic point).
    pub(crate) mixed_keys: bool,
    /// The declared point's payload type, for mismatch errors (points declared with `point!`).
    pub(crate) declared_type: Option<fn() -> &'static str>,
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) has_commands: bool,
    /// The declared point's JSON codec (points declared `#[serde]`), so a by-name dispatch of
    /// the declared payload type reaches command hooks too.
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) codec: Option<&'static crate::registry::JsonCodec>,
    pub(crate) first_async: Option<u32>,
    /// Set when the point must not run at all (duplicate definitions).
    pub(crate) refusal: Option<Refusal>,
    /// The points of a generic `#[extensible]` fn: each extension runs for the instantiation
    /// whose payload it takes.
    pub(crate) generic: bool,
    pub(crate) inactive: Vec<Inactive>,
    /// The extensions whose ordering constraints form a cycle (numeric order kept), as
    /// `a, b, a`; empty when the constraints hold.
    pub(crate) ordering_cycle: Vec<Arc<str>>,
}

/// An immutable, merged, sorted table of all points' extensions for one [`Scope`](crate::Scope).
///
/// Built off the dispatch path and swapped atomically; a dispatch holds the snapshot it started
/// with until it finishes, so a reload never shows it half-applied.
pub struct Snapshot {
    pub(crate) generation: u64,
    pub(crate) lists: Box<[PointList]>,
    /// Bit `id` is set when point `id` has something to run (or a refusal).
    pub(crate) active_bits: Vec<u64>,
    /// Command hooks, indexed by [`Run::Command`] (shared with the snapshots a registration
    /// derives from this one).
    #[cfg(all(feature = "command-hooks", unix))]
    pub(crate) commands: Arc<Vec<crate::command::CommandSpec>>,
    /// Wasm extensions, indexed by [`Run::Wasm`] (shared as `commands`).
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) wasm: Arc<Vec<crate::wasm::WasmHook>>,
    /// Merged plugin configs by plugin name.
    pub(crate) plugin_configs: HashMap<String, serde_json::Value>,
    /// Enabled plugins whose self-check failed on these configs, with the reason.
    pub(crate) unhealthy_plugins: std::collections::BTreeMap<String, String>,
    /// The crate plugins' configs as their types, filled on first read.
    pub(crate) plugin_values: PluginValues,
    /// What the full build that made this snapshot (or the one it derives from) merged, so a
    /// registration lays out only its point again.
    pub(crate) base: Arc<MergeBase>,
}

impl Snapshot {
    /// Monotonic number of this snapshot within its scope (1 for the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn list(&self, id: u32) -> Option<&PointList> {
        self.lists.get(id as usize)
    }

    /// Names and run order of the active extensions of `point`.
    ///
    /// ```
    /// # #[hookpoint::extension(point = "doc_snapshot_names", order = 2)]
    /// # fn second(_: &mut ()) {}
    /// # #[hookpoint::extension(point = "doc_snapshot_names", order = 1)]
    /// # fn first(_: &mut ()) {}
    /// let snap = hookpoint::Scope::default_scope().snapshot();
    /// assert_eq!(snap.extension_names("doc_snapshot_names"), ["first", "second"]);
    /// ```
    pub fn extension_names(&self, point: &str) -> Vec<String> {
        site::lookup(point)
            .and_then(|id| self.list(id))
            .map(|l| l.meta.iter().map(|m| m.name.to_string()).collect())
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}
