//! The filesystem side of one scope: its layer configuration, what the loader remembers, its
//! watcher, reload subscribers and latest status.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::event::ReloadEvent;
use super::layers::FsConfig;
use super::load::{FolderPluginStatus, LoadInput, LoadState};
use super::read::FileReader;
#[cfg(hookpoint_watch)]
use super::watch::LayerWatcher;
use crate::locks;
use crate::snapshot::{CompiledTable, Snapshot};

/// A reload subscriber ([`Scope::on_reload`](crate::Scope::on_reload)).
pub(crate) type Subscriber = Arc<dyn Fn(&ReloadEvent) + Send + Sync>;

/// The filesystem side of a scope.
#[derive(Default)]
pub(crate) struct ScopeFs {
    pub(crate) config: FsConfig,
    state: Mutex<LoadState>,
    #[cfg(hookpoint_watch)]
    pub(crate) watcher: Mutex<Option<LayerWatcher>>,
    pub(crate) subscribers: Mutex<Vec<Subscriber>>,
    pub(crate) status: Mutex<ReloadEvent>,
    /// The folder plugins of the latest reload.
    pub(crate) folder_plugins: Mutex<Vec<FolderPluginStatus>>,
    /// Roots to rescan at the next rebuild; `None` means all.
    pub(crate) dirty: Mutex<Option<HashSet<PathBuf>>>,
    /// The web UI manifest, rebuilt with each snapshot.
    pub(crate) webui: super::webui::cache::WebuiCache,
    /// Reloads the scope (set once it exists): when a wasm module compiled off the reload path
    /// is ready.
    #[cfg(hookpoint_wasm)]
    pub(crate) on_compiled: std::sync::OnceLock<crate::wasm::compile::Wake>,
}

impl ScopeFs {
    /// The filesystem side of a new scope.
    pub(crate) fn new(config: FsConfig) -> ScopeFs {
        ScopeFs {
            config,
            ..ScopeFs::default()
        }
    }

    /// Whether the scope should be watched: watching is on and it has folders.
    #[cfg(hookpoint_watch)]
    pub(crate) fn wants_watching(&self) -> bool {
        self.config.watch && self.config.has_folders()
    }

    /// Loads the layers (rescanning what is dirty, reading files with `reader`) into a new
    /// snapshot.
    pub(crate) fn build_snapshot(
        &self,
        table: &CompiledTable,
        disabled: &HashMap<&'static str, &'static str>,
        disabled_plugins: &std::collections::BTreeSet<String>,
        generation: u64,
        reader: FileReader,
    ) -> (Snapshot, ReloadEvent) {
        let dirty = locks::lock(&self.dirty).replace(Default::default());
        let webui_dirty = dirty.clone();
        let loaded = locks::lock(&self.state).load(LoadInput {
            config: &self.config,
            table,
            disabled,
            disabled_plugins,
            dirty,
            generation,
            reader,
            #[cfg(hookpoint_wasm)]
            wake: self.on_compiled.get().cloned(),
        });
        let active: Vec<(String, PathBuf)> = loaded
            .folder_plugins
            .iter()
            .filter(|p| p.enabled && p.installed && p.unhealthy.is_none())
            .map(|p| (p.name.clone(), p.dir.clone()))
            .collect();
        *locks::lock(&self.folder_plugins) = loaded.folder_plugins;
        let mut event = loaded.event;
        self.webui.rebuild(
            &self.config,
            disabled,
            &active,
            webui_dirty.as_ref(),
            reader,
            &mut event,
        );
        (loaded.snapshot, event)
    }

    /// Runs what waits for the snapshot [`build_snapshot`](Self::build_snapshot) made to be
    /// published (folder plugins' `uninstall`), recording it in the reload's event.
    /// Returns whether the reload needs another pass: a folder plugin's new version waits for
    /// the old one's uninstall, or a plugin folder moved while it was installed or read.
    pub(crate) fn after_publish(&self, event: &mut ReloadEvent) -> bool {
        locks::lock(&self.state).after_publish(event)
    }

    /// What this scope's loader compiled or found cached, of wasm modules.
    #[cfg(hookpoint_wasm)]
    pub(crate) fn wasm_stats(&self) -> crate::wasm::WasmStats {
        locks::lock(&self.state).wasm_stats()
    }

    /// Marks roots to rescan at the next rebuild (`None`: all of them).
    pub(crate) fn mark_dirty(&self, roots: Option<&[PathBuf]>) {
        let mut dirty = locks::lock(&self.dirty);
        match roots {
            None => *dirty = None,
            Some(roots) => {
                if let Some(set) = dirty.as_mut() {
                    set.extend(roots.iter().cloned());
                }
            }
        }
    }
}
