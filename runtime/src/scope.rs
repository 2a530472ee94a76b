//! Scopes: the set of layers that apply to a dispatch, and the snapshot they merge into.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::task::{Context, Poll};

use arc_swap::ArcSwap;

use crate::site;
use crate::snapshot::{self, CompiledTable, Snapshot};

/// The compiled-in registry, read and sorted once.
pub(crate) static COMPILED: LazyLock<CompiledTable> = LazyLock::new(CompiledTable::load);

pub(crate) struct ScopeInner {
    pub(crate) name: String,
    pub(crate) snapshot: ArcSwap<Snapshot>,
    pub(crate) generation: AtomicU64,
    /// Held while a snapshot is built, so reloads never overlap. Never held while extensions run.
    pub(crate) rebuild_lock: Mutex<()>,
    #[cfg(feature = "fs")]
    pub(crate) fs: crate::fs::ScopeFs,
    pub(crate) plugins: crate::plugin::PluginStates,
}

/// The set of layers that apply to one dispatch, and their merged [`Snapshot`].
///
/// The default scope ([`Scope::default_scope`]) holds the compiled-in extensions (and, with the
/// `fs` feature, the global override layers the application configures). Other scopes are built
/// with a [`ScopeBuilder`](crate::ScopeBuilder). Cloning a scope is cheap (an `Arc`).
///
/// Dispatch functions without a scope argument use the *current* scope: the one entered with
/// [`Scope::enter`] (sync code) or [`Scope::bind`] (a future, across `.await`s), else the default
/// scope.
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
        #[cfg(feature = "fs")]
        crate::fs::ScopeFs::default(),
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
        #[cfg(feature = "fs")] fs: crate::fs::ScopeFs,
        plugins: crate::plugin::PluginStates,
    ) -> Scope {
        crate::stats::init();
        let first = snapshot::compiled_snapshot(&COMPILED, &Default::default(), 1);
        let inner = Arc::new(ScopeInner {
            name,
            snapshot: ArcSwap::from_pointee(first),
            generation: AtomicU64::new(1),
            rebuild_lock: Mutex::new(()),
            #[cfg(feature = "fs")]
            fs,
            plugins,
        });
        SCOPES
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(&inner));
        let scope = Scope(inner);
        scope.refresh_active();
        scope
    }

    /// The default scope: compiled-in extensions plus any global layers.
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

    /// Runs `f` with this scope as the current scope of this thread (restored afterwards, also on
    /// panic). For async code use [`Scope::bind`]: a thread-local does not follow a task.
    ///
    /// ```
    /// let scope = hookpoint::Scope::default_scope().clone();
    /// let name = scope.enter(|| hookpoint::Scope::current().name().to_owned());
    /// assert_eq!(name, "default");
    /// ```
    pub fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Scope>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let prev = self.0.take();
                crate::thread_state::with(|tl| tl.set_entered(prev));
            }
        }
        let prev = crate::thread_state::with(|tl| tl.set_entered(Some(self.clone())));
        let _restore = Restore(prev);
        f()
    }

    /// Wraps a future so that, each time it is polled, this scope is the current scope. The
    /// scope follows the task across `.await` points and threads.
    pub fn bind<F: Future>(&self, fut: F) -> Bound<F> {
        Bound {
            scope: self.clone(),
            fut,
        }
    }

    /// The current scope: the innermost entered or bound one, else the default scope.
    pub fn current() -> Scope {
        crate::thread_state::with(|tl| tl.entered_scope()).unwrap_or_else(|| DEFAULT.clone())
    }

    /// Rebuilds this scope's snapshot from its current inputs (compiled-in extensions, plugin
    /// enablement and, with `fs`, its override layers) and publishes it. Serialized per scope.
    pub(crate) fn rebuild(&self) {
        let _serial = self
            .0
            .rebuild_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let disabled = crate::plugin::disabled_crates(self);
        let generation = self.next_generation();
        #[cfg(feature = "fs")]
        {
            let (snap, events) = crate::fs::build_snapshot(self, &COMPILED, &disabled, generation);
            self.publish(snap);
            drop(_serial);
            crate::fs::notify(self, events);
        }
        #[cfg(not(feature = "fs"))]
        {
            let snap = snapshot::compiled_snapshot(&COMPILED, &disabled, generation);
            self.publish(snap);
        }
    }

    /// Publishes a new snapshot atomically; dispatches in flight finish on the one they hold.
    pub(crate) fn publish(&self, snap: Snapshot) {
        self.0.snapshot.store(Arc::new(snap));
        crate::thread_state::bump_epoch();
        self.refresh_active();
    }

    pub(crate) fn next_generation(&self) -> u64 {
        self.0.generation.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Recomputes the union of non-empty points over all live scopes, for the no-extension fast path.
    fn refresh_active(&self) {
        let mut scopes = SCOPES.lock().unwrap_or_else(|p| p.into_inner());
        scopes.retain(|w| w.strong_count() > 0);
        let mut bits: Vec<u64> = Vec::new();
        for s in scopes.iter().filter_map(Weak::upgrade) {
            let snap = s.snapshot.load();
            if bits.len() < snap.active_bits.len() {
                bits.resize(snap.active_bits.len(), 0);
            }
            for (b, s) in bits.iter_mut().zip(snap.active_bits.iter()) {
                *b |= s;
            }
        }
        site::publish_active(bits);
    }
}

/// Every scope still alive.
#[cfg_attr(not(feature = "fs"), allow(dead_code))]
pub(crate) fn live_scopes() -> Vec<Scope> {
    let mut scopes = SCOPES.lock().unwrap_or_else(|p| p.into_inner());
    scopes.retain(|w| w.strong_count() > 0);
    scopes.iter().filter_map(Weak::upgrade).map(Scope).collect()
}

/// A future bound to a [`Scope`]; see [`Scope::bind`].
pub struct Bound<F> {
    scope: Scope,
    fut: F,
}

impl<F: Future> Future for Bound<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `fut` is structurally pinned; `scope` is never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        this.scope.enter(|| fut.poll(cx))
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

/// Builds a [`Scope`]: its name, which plugins start disabled and, with the `fs` feature, its
/// override layers (see the crate docs' "Layers" section for the search order).
///
/// ```
/// let scope = hookpoint::ScopeBuilder::new("agent-1").build().unwrap();
/// assert_eq!(scope.name(), "agent-1");
/// ```
pub struct ScopeBuilder {
    pub(crate) name: String,
    pub(crate) disabled_plugins: Vec<String>,
    #[cfg(feature = "fs")]
    pub(crate) fs: crate::fs::FsConfig,
}

impl ScopeBuilder {
    /// A builder for a scope named `name` (used in logs).
    pub fn new(name: impl Into<String>) -> Self {
        ScopeBuilder {
            name: name.into(),
            disabled_plugins: Vec::new(),
            #[cfg(feature = "fs")]
            fs: crate::fs::FsConfig::default(),
        }
    }

    /// Starts the scope with the named plugin disabled (its install hook is not called).
    pub fn disable_plugin(mut self, name: impl Into<String>) -> Self {
        self.disabled_plugins.push(name.into());
        self
    }

    /// Builds the scope and its first snapshot (with `fs`: scans the layers and starts the
    /// watcher unless [`watch(false)`](Self::watch)).
    ///
    /// # Errors
    /// [`ErrorKind::Plugin`](crate::ErrorKind::Plugin) for an unknown plugin name (in
    /// `disable_plugin` or `plugin_folder`); with `fs`,
    /// [`ErrorKind::Override`](crate::ErrorKind::Override) if the watcher cannot start. Bad
    /// override files are not errors here: they are reported in [`Scope::status`].
    pub fn build(self) -> Result<Scope, crate::Error> {
        let plugins = crate::plugin::PluginStates::default();
        {
            let mut d = plugins.disabled.lock().unwrap_or_else(|p| p.into_inner());
            for name in &self.disabled_plugins {
                let entry = crate::plugin::HOOKPOINT_PLG_V0
                    .iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| {
                        crate::Error::kind_msg(
                            crate::ErrorKind::Plugin,
                            format!("no plugin named `{name}` is linked"),
                        )
                    })?;
                d.insert(entry.name);
            }
        }
        #[cfg(feature = "fs")]
        for (name, _) in &self.fs.plugin_dirs {
            if !crate::plugin::HOOKPOINT_PLG_V0
                .iter()
                .any(|p| p.name == name)
            {
                return Err(crate::Error::kind_msg(
                    crate::ErrorKind::Plugin,
                    format!("plugin_folder names `{name}`, but no plugin of that name is linked"),
                ));
            }
        }
        #[cfg(feature = "fs")]
        let (fs, watch) = crate::fs::ScopeFs::new(self.fs);
        let scope = Scope::from_parts(
            self.name,
            #[cfg(feature = "fs")]
            fs,
            plugins,
        );
        scope.rebuild();
        #[cfg(feature = "fs")]
        if watch {
            crate::fs::start_watching(&scope)?;
        }
        Ok(scope)
    }
}
