//! Scopes: the set of layers that apply to a dispatch, and the snapshot they merge into. A scope
//! owns its snapshot and swaps it atomically; it rebuilds it from the compiled-in table, its
//! plugin enablement and (feature `overrides`) its override layers.
//!
//! - [`current`]: which scope a dispatch uses (entered, bound to a task, or the default) and the
//!   per-thread copy of the default scope's snapshot handle;
//! - [`builder`]: the [`ScopeBuilder`];
//! - [`plugins`]: per-scope plugin enablement, config and state, by name;
//! - [`plugin_handle`]: [`Plugin`], a crate plugin's typed handle to the same;
//! - [`health`]: a plugin's health as it reports it at run time, and [`WeakScope`] for the
//!   background work that watches it;
//! - [`register`]: [`Scope::register`], closures attached while the program runs, and their
//!   guard; [`registrations`]: the scope's store of them and how they are published;
//! - `reload` (feature `overrides`): status, reload events, the scope's layers;
//! - `command_hooks` (feature `command-hooks`): the scope's and the process's command-hook
//!   setting;
//! - `watching` (feature `watch`): the watcher of a scope's folders;
//! - `webui` (feature `webui`): the scope's web UI manifest and assets.
//! - `folder_plugins` (feature `folder-plugins`): listing and toggling folder plugins;
//! - `toggles` (feature `overrides`): the plugin toggles file;
//! - `wasm` (feature `wasm`): the compiled-module cache folder and compile statistics.
//!
//! Comes after `dispatch` (it hands a snapshot and itself to the dispatch loops) and after `fs`
//! (whose loader produces the override inputs of a rebuild).

mod builder;
#[cfg(all(feature = "command-hooks", unix))]
mod command_hooks;
pub(crate) mod current;
#[cfg(all(feature = "folder-plugins", unix))]
mod folder_plugins;
mod health;
mod observation;
mod plugin_handle;
mod plugin_info;
mod plugins;
mod register;
mod registrations;
#[cfg(all(feature = "overrides", unix))]
mod reload;
#[cfg(all(feature = "overrides", unix))]
mod toggles;
#[cfg(all(feature = "wasm", unix))]
mod wasm;
#[cfg(all(feature = "watch", unix))]
mod watching;
#[cfg(all(feature = "webui", unix))]
mod webui;

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

pub use builder::ScopeBuilder;
#[cfg(all(feature = "command-hooks", unix))]
pub use command_hooks::{command_hooks_enabled, set_command_hooks_enabled};
pub use current::Bound;
pub use health::WeakScope;
pub use plugin_handle::Plugin;
pub use plugin_info::{PluginInfo, PluginSource, PluginState};
pub use register::{AcceptsAsyncClosure, Named, Register, RegisterTarget, Registration};

use crate::locks;
use crate::publication;
use crate::registry::{Cx, DispatchScope};
use crate::site;
use crate::snapshot::{self, CompiledTable, Snapshot};
use crate::sync::Swap;
use crate::thread_state;

/// The compiled-in registry, read and sorted once.
pub(crate) static COMPILED: LazyLock<CompiledTable> = LazyLock::new(CompiledTable::load);

pub(crate) struct ScopeInner {
    pub(crate) name: String,
    /// The compiled-in table its snapshots start from ([`COMPILED`], or a synthetic one in
    /// benchmarks).
    pub(crate) table: &'static CompiledTable,
    /// Extensions registered at run time ([`Scope::register`]). Locked after `rebuild_lock`.
    pub(crate) registered: Mutex<registrations::Registrations>,
    pub(crate) snapshot: Swap<Snapshot>,
    pub(crate) generation: AtomicU64,
    /// Held while a snapshot is built, so reloads never overlap. Never held while extensions run.
    pub(crate) rebuild_lock: Mutex<()>,
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fs: crate::fs::ScopeFs,
    pub(crate) plugins: plugins::PluginStates,
    pub(crate) observation: crate::observe::ScopeObservation,
}

/// The set of layers that apply to one dispatch, and their merged [`Snapshot`].
///
/// The default scope ([`Scope::default_scope`]) holds the compiled-in extensions. Other scopes
/// are built with a [`ScopeBuilder`] (with the `fs` feature: from override folders). Cloning a
/// scope is cheap (an `Arc`).
///
/// Every dispatch uses the *current* scope: the one entered with [`Scope::enter`] (sync code) or
/// bound with [`Scope::bind`] (a future, across `.await`s), else the default scope. To run a
/// point in a scope, enter or bind it around the call:
/// `scope.enter(|| POINT.call(&mut p))`, `scope.bind(POINT.call(&mut p)).await`.
///
/// ```
/// let scope = hookpoint::Scope::default_scope();
/// assert!(scope.snapshot().generation() >= 1);
/// ```
#[derive(Clone)]
pub struct Scope(pub(crate) Arc<ScopeInner>);

static SCOPES: Mutex<Vec<Weak<ScopeInner>>> = Mutex::new(Vec::new());

static DEFAULT: LazyLock<Scope> = LazyLock::new(|| {
    Scope::from_parts(
        "default".into(),
        #[cfg(all(feature = "overrides", unix))]
        crate::fs::ScopeFs::default(),
        Default::default(),
        Default::default(),
    )
});

/// Makes sure the default scope exists and has published its snapshot.
pub(crate) fn ensure_default_published() {
    LazyLock::force(&DEFAULT);
}

impl Scope {
    pub(crate) fn from_parts(
        name: String,
        #[cfg(all(feature = "overrides", unix))] fs: crate::fs::ScopeFs,
        plugins: plugins::PluginStates,
        observation: crate::observe::ObservationConfig,
    ) -> Scope {
        Self::with_table(
            &COMPILED,
            name,
            #[cfg(all(feature = "overrides", unix))]
            fs,
            plugins,
            observation,
        )
    }

    /// [`from_parts`](Self::from_parts) over the compiled-in table `table`.
    pub(crate) fn with_table(
        table: &'static CompiledTable,
        name: String,
        #[cfg(all(feature = "overrides", unix))] fs: crate::fs::ScopeFs,
        plugins: plugins::PluginStates,
        observation: crate::observe::ObservationConfig,
    ) -> Scope {
        crate::stats::init();
        crate::observe::tracing_out::follow_interest();
        let first = snapshot::compiled_snapshot(
            table,
            &Default::default(),
            &Default::default(),
            &Default::default(),
            1,
        );
        let inner = Arc::new(ScopeInner {
            name,
            table,
            registered: Mutex::default(),
            snapshot: Swap::from_pointee(first),
            generation: AtomicU64::new(1),
            rebuild_lock: Mutex::new(()),
            #[cfg(all(feature = "overrides", unix))]
            fs,
            plugins,
            observation: crate::observe::ScopeObservation::new(observation),
        });
        locks::lock(&SCOPES).push(Arc::downgrade(&inner));
        let scope = Scope(inner);
        scope.refresh_active();
        scope
    }

    /// The default scope: compiled-in extensions only.
    #[inline]
    pub fn default_scope() -> &'static Scope {
        &DEFAULT
    }

    /// The scope's name, for logs.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The snapshot dispatch uses now. Holding it keeps it alive; a reload publishes a new one.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.0.snapshot.load_full()
    }

    /// Rebuilds this scope's snapshot from its current inputs (compiled-in extensions, plugin
    /// enablement and, with `fs`, its override layers) and publishes it. Serialized per scope.
    ///
    /// With `fs`, one rebuild may take a few passes, each publishing a snapshot and telling the
    /// subscribers: a folder plugin replaced by a new version is uninstalled after a snapshot
    /// without it and the new version installs in the next pass; a plugin folder that moved
    /// while it was installed or read is looked at again. When it returns, the folder plugins'
    /// installs and uninstalls of what it found are done.
    pub(crate) fn rebuild(&self) {
        #[cfg(all(feature = "overrides", unix))]
        self.rebuild_reading(crate::fs::read::FileReader::now());
        #[cfg(not(all(feature = "overrides", unix)))]
        {
            let serial = locks::lock(&self.0.rebuild_lock);
            let disabled = self.disabled_crates();
            let registered = locks::lock(&self.0.registered).candidates();
            let reported = self.reported_unhealthy();
            let generation = self.next_generation();
            self.publish(snapshot::compiled_snapshot(
                self.0.table,
                &disabled,
                &registered,
                &reported,
                generation,
            ));
            drop(serial);
        }
    }

    /// [`rebuild`](Self::rebuild), reading the layers' files with `reader` (the watcher's reads
    /// only files that settled).
    #[cfg(all(feature = "overrides", unix))]
    pub(crate) fn rebuild_reading(&self, reader: crate::fs::read::FileReader) {
        /// Passes of one rebuild; more are only needed while folders keep changing, and each
        /// such change brings a reload of its own.
        const MAX_PASSES: usize = 8;
        let serial = locks::lock(&self.0.rebuild_lock);
        let disabled = self.disabled_crates();
        let disabled_plugins = self.disabled_plugins();
        let registered = locks::lock(&self.0.registered).candidates();
        let reported = self.reported_unhealthy();
        let mut events = Vec::new();
        for _ in 0..MAX_PASSES {
            let generation = self.next_generation();
            let decided = crate::fs::state::RunTimeState {
                disabled: &disabled,
                disabled_plugins: &disabled_plugins,
                registered: &registered,
                reported: &reported,
            };
            let (snap, mut event) =
                self.0
                    .fs
                    .build_snapshot(self.0.table, decided, generation, reader);
            self.publish(snap);
            let again = self.0.fs.after_publish(&mut event);
            events.push(event);
            if !again {
                break;
            }
            self.0.fs.mark_dirty(None);
        }
        drop(serial);
        for event in events {
            self.notify(event);
        }
    }

    /// Publishes a new snapshot atomically; dispatches in flight finish on the one they hold.
    pub(crate) fn publish(&self, snap: Snapshot) {
        publication::publish(&self.0.snapshot, &thread_state::EPOCH, Arc::new(snap));
        self.refresh_active();
    }

    pub(crate) fn next_generation(&self) -> u64 {
        self.0.generation.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Recomputes the union of non-empty points over all live scopes, for the no-extension fast
    /// path of every point site.
    fn refresh_active(&self) {
        // Computed and published under the registry lock, so concurrent publishes cannot leave
        // an older union in place; the scopes are released after the lock.
        let mut scopes = locks::lock(&SCOPES);
        scopes.retain(|w| w.strong_count() > 0);
        let live: Vec<Arc<ScopeInner>> = scopes.iter().filter_map(Weak::upgrade).collect();
        let mut bits: Vec<u64> = Vec::new();
        for s in &live {
            let snap = s.snapshot.load();
            if bits.len() < snap.active_bits.len() {
                bits.resize(snap.active_bits.len(), 0);
            }
            for (b, s) in bits.iter_mut().zip(snap.active_bits.iter()) {
                *b |= s;
            }
        }
        site::publish_active(bits);
        drop(scopes);
        drop(live);
    }

    /// This scope as dispatch and [`Cx`] carry it.
    pub(crate) fn as_dispatch(&self) -> &dyn crate::dispatch::ScopeView {
        self
    }
}

/// Every scope still alive.
#[cfg_attr(not(all(feature = "command-hooks", unix)), allow(dead_code))]
pub(crate) fn live_scopes() -> Vec<Scope> {
    let live: Vec<Arc<ScopeInner>> = locks::lock(&SCOPES)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    live.into_iter().map(Scope).collect()
}

/// The scope a [`Cx`] or a plugin hook received erased (always a [`Scope`]: dispatch and
/// plugin toggles pass nothing else).
pub fn scope_of(any: &(dyn Any + Send + Sync)) -> &Scope {
    any.downcast_ref::<Scope>()
        .expect("hookpoint passes a Scope to extensions and plugin hooks")
}

impl DispatchScope for Scope {
    fn name(&self) -> &str {
        &self.0.name
    }
}

impl crate::dispatch::ScopeView for Scope {
    fn observation(&self) -> &crate::observe::ScopeObservation {
        &self.0.observation
    }
}

impl<'a> Cx<'a> {
    /// The scope this dispatch runs in (its plugin state and config).
    ///
    /// ```
    /// #[hookpoint::extension(point = "doc_cx_scope")]
    /// fn note_scope(cx: &hookpoint::Cx, out: &mut String) {
    ///     out.push_str(cx.scope().name());
    /// }
    /// let mut out = String::new();
    /// hookpoint::call_sync("doc_cx_scope", &mut out).unwrap();
    /// assert_eq!(out, "default");
    /// ```
    pub fn scope(&self) -> &'a Scope {
        scope_of(self.scope_any())
    }
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("name", &self.0.name)
            .field("generation", &self.0.snapshot.load().generation)
            .finish()
    }
}
