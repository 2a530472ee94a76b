//! The filesystem side of a scope's API (feature `overrides`): reload by hand, the status
//! of the latest reload, reload subscribers, the scope's layers.

use std::sync::Arc;

use super::Scope;
use crate::fs::state::Subscriber;
use crate::fs::{LayerRoot, ReloadEvent};
use crate::locks;

impl Scope {
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
        #[cfg(all(feature = "folder-plugins", unix))]
        let folder = self.0.fs.active_folder_plugins();
        #[cfg(not(all(feature = "folder-plugins", unix)))]
        let folder = Vec::new();
        self.0.fs.config.layers(|n| !disabled.contains(n), &folder)
    }

    /// Replaces, in the status, the warnings the merge of `point` gives (overrides with no
    /// effect, ordering constraints naming nothing or forming a cycle) with `warnings`, that
    /// point's merge laid out again after a registration came or went. Not a reload: the
    /// generation and the reload subscribers are left alone.
    pub(crate) fn replace_merge_warnings(
        &self,
        point: &str,
        warnings: &[crate::diagnostic::Diagnostic],
    ) {
        use crate::diagnostic::Code;
        let from_merge = |code: Code| {
            matches!(
                code,
                Code::OverrideUnknownExtension
                    | Code::OverrideIgnoredKey
                    | Code::OrderingUnknownExtension
                    | Code::OrderingCycle
            )
        };
        let mut status = locks::lock(&self.0.fs.status);
        status
            .warnings
            .retain(|w| !(w.point.as_deref() == Some(point) && from_merge(w.code)));
        status.warnings.extend(warnings.iter().cloned());
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
