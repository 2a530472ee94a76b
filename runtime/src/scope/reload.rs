//! The filesystem side of a scope's API (feature `overrides`): reload by hand, the status
//! of the latest reload, reload subscribers, the scope's layers, and the process-wide
//! command-hook switch.

use std::sync::Arc;

use super::{Scope, live_scopes};
use crate::fs::state::Subscriber;
use crate::fs::switch;
use crate::fs::{LayerRoot, ReloadEvent};
use crate::locks;

/// Sets the process default for command hooks (on by default): it applies to every scope that
/// was not given a setting of its own with [`ScopeBuilder::command_hooks`](crate::ScopeBuilder::command_hooks).
/// Off: override files that are command hooks are loaded but do not run (introspection shows
/// them as inactive, with why), and every live scope is rebuilt at once.
///
/// ```
/// hookpoint::set_command_hooks_enabled(false);
/// assert!(!hookpoint::command_hooks_enabled());
/// hookpoint::set_command_hooks_enabled(true);
/// ```
pub fn set_command_hooks_enabled(enabled: bool) {
    if switch::set(enabled) != enabled {
        for scope in live_scopes() {
            scope.rebuild();
        }
    }
}

/// The process default for command hooks (see [`set_command_hooks_enabled`]); a scope may
/// have its own ([`Scope::command_hooks_enabled`]).
pub fn command_hooks_enabled() -> bool {
    switch::command_hooks_enabled()
}

impl crate::ScopeBuilder {
    /// Whether command hooks may run in this scope, whatever the process default
    /// ([`set_command_hooks_enabled`]); without it the scope follows the default. Off: command
    /// hooks (and folder plugins' commands) are loaded but do not run, and introspection shows
    /// them inactive with why. The other rules still apply when on
    /// (a layer's trust, [`LayerSpec::trusted`](crate::LayerSpec::trusted), and
    /// [`managed_hooks_only`](Self::managed_hooks_only)).
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("no-commands")
    ///     .command_hooks(false)
    ///     .watch(false)
    ///     .build()
    ///     .unwrap();
    /// assert!(!scope.command_hooks_enabled());
    /// assert!(hookpoint::command_hooks_enabled()); // the default is untouched
    /// ```
    pub fn command_hooks(mut self, enabled: bool) -> Self {
        self.fs.command_hooks = Some(enabled);
        self
    }
}

impl Scope {
    /// Whether command hooks may run in this scope now: its own setting
    /// ([`ScopeBuilder::command_hooks`](crate::ScopeBuilder::command_hooks)), else the process
    /// default ([`set_command_hooks_enabled`]).
    pub fn command_hooks_enabled(&self) -> bool {
        self.0
            .fs
            .config
            .command_hooks
            .unwrap_or_else(switch::command_hooks_enabled)
    }

    /// Rescans every layer and publishes a new snapshot now (the watcher does this by itself on
    /// change). Returns what the reload found.
    ///
    /// ```
    /// let scope = hookpoint::ScopeBuilder::new("manual").build().unwrap();
    /// let before = scope.snapshot().generation();
    /// let event = scope.reload();
    /// assert!(event.generation > before);
    /// ```
    pub fn reload(&self) -> ReloadEvent {
        self.0.fs.mark_dirty(None);
        self.rebuild();
        self.status()
    }

    /// The outcome of the latest reload: bad files (path, line, column, why) and warnings.
    pub fn status(&self) -> ReloadEvent {
        locks::lock(&self.0.fs.status).clone()
    }

    /// Calls `f` after every reload of this scope, on the thread that reloaded: the watcher's,
    /// the caller of [`reload`](Self::reload) (or of a plugin toggle), or (feature `wasm`) the
    /// thread that reloads once a module compiled off the reload path is ready
    /// (`ScopeBuilder::wasm_compile_wait`).
    pub fn on_reload(&self, f: impl Fn(&ReloadEvent) + Send + Sync + 'static) {
        locks::lock(&self.0.fs.subscribers).push(Arc::new(f));
    }

    /// The scope's override layers in search order, highest first.
    pub fn layers(&self) -> Vec<LayerRoot> {
        let disabled = locks::lock(&self.0.plugins.disabled).clone();
        let folder: Vec<(String, std::path::PathBuf)> = locks::lock(&self.0.fs.folder_plugins)
            .iter()
            .filter(|p| p.enabled && p.installed && p.unhealthy.is_none())
            .map(|p| (p.name.clone(), p.dir.clone()))
            .collect();
        self.0.fs.config.layers(|n| !disabled.contains(n), &folder)
    }

    /// Records the reload's outcome as the scope's status and tells subscribers.
    pub(crate) fn notify(&self, event: ReloadEvent) {
        let scope = self;
        for p in &event.problems {
            tracing::warn!(scope = scope.name(), file = %p.path().display(), code = p.code.as_str(), line = p.line, column = p.column, problem = %p.message, "bad override file; its last good version stays active");
        }
        for w in &event.warnings {
            tracing::warn!(scope = scope.name(), code = w.code.as_str(), "{w}");
        }
        tracing::debug!(
            scope = scope.name(),
            generation = event.generation,
            "snapshot published"
        );
        *locks::lock(&scope.0.fs.status) = event.clone();
        let subs: Vec<Subscriber> = locks::lock(&scope.0.fs.subscribers).clone();
        for s in subs {
            // A panicking subscriber must not abort the caller's work (a plugin toggle still runs
            // its install/uninstall hook) nor the other subscribers.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| s(&event))).is_err() {
                tracing::error!(scope = scope.name(), "an on_reload subscriber panicked");
            }
        }
    }
}
