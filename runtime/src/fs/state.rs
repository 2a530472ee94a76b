//! The filesystem side of one scope: its layer configuration, what the loader remembers, its
//! watcher, reload subscribers and latest status.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::event::ReloadEvent;
use super::layers::FsConfig;
#[cfg(all(feature = "folder-plugins", unix))]
use super::load::FolderPluginStatus;
use super::load::{LoadInput, LoadState};
use super::read::FileReader;
#[cfg(all(feature = "watch", unix))]
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
    #[cfg(all(feature = "watch", unix))]
    pub(crate) watcher: Mutex<Option<LayerWatcher>>,
    pub(crate) subscribers: Mutex<Vec<Subscriber>>,
    pub(crate) status: Mutex<ReloadEvent>,
    /// The folder plugins of the latest reload.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) folder_plugins: Mutex<Vec<FolderPluginStatus>>,
    /// Roots to rescan at the next rebuild; `None` means all.
    pub(crate) dirty: Mutex<Option<HashSet<PathBuf>>>,
    /// The web UI manifest, rebuilt with each snapshot (feature `webui`).
    #[cfg(all(feature = "webui", unix))]
    pub(crate) webui: super::webui::cache::WebuiCache,
    /// Reloads the scope (set once it exists): when a wasm module compiled off the reload path
    /// is ready.
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) on_compiled: std::sync::OnceLock<crate::wasm::compile::Wake>,
}

/// What a scope decided while the program runs, beside its folders: the crates and plugins
/// turned off, the extensions registered, the plugins that reported themselves unhealthy.
#[derive(Clone, Copy)]
pub(crate) struct RunTimeState<'a> {
    pub(crate) disabled: &'a HashMap<&'static str, &'static str>,
    pub(crate) disabled_plugins: &'a std::collections::BTreeSet<String>,
    pub(crate) registered: &'a crate::snapshot::RegisteredCandidates,
    pub(crate) reported: &'a crate::registry::Reported,
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
    #[cfg(all(feature = "watch", unix))]
    pub(crate) fn wants_watching(&self) -> bool {
        self.config.watch && self.config.has_folders()
    }

    /// Loads the layers (rescanning what is dirty, reading files with `reader`) into a new
    /// snapshot, with what the scope decided at run time (`decided`).
    pub(crate) fn build_snapshot(
        &self,
        table: &CompiledTable,
        decided: RunTimeState<'_>,
        generation: u64,
        reader: FileReader,
    ) -> (Snapshot, ReloadEvent) {
        let RunTimeState {
            disabled,
            disabled_plugins,
            registered,
            reported,
        } = decided;
        let dirty = locks::lock(&self.dirty).replace(Default::default());
        #[cfg(all(feature = "webui", unix))]
        let webui_dirty = dirty.clone();
        let loaded = locks::lock(&self.state).load(LoadInput {
            config: &self.config,
            table,
            disabled,
            disabled_plugins,
            registered,
            reported,
            dirty,
            generation,
            reader,
            #[cfg(all(feature = "wasm", unix))]
            wake: self.on_compiled.get().cloned(),
        });
        #[cfg(all(feature = "folder-plugins", unix))]
        {
            *locks::lock(&self.folder_plugins) = loaded.folder_plugins;
        }
        #[cfg_attr(not(all(feature = "webui", unix)), allow(unused_mut))]
        let mut event = loaded.event;
        #[cfg(all(feature = "webui", unix))]
        {
            #[cfg(all(feature = "folder-plugins", unix))]
            let active = self.active_folder_plugins();
            #[cfg(not(all(feature = "folder-plugins", unix)))]
            let active = Vec::new();
            self.webui.rebuild(
                &self.config,
                disabled,
                &active,
                webui_dirty.as_ref(),
                reader,
                &mut event,
            );
        }
        (loaded.snapshot, event)
    }

    /// (name, folder) of the folder plugins of the latest reload that are enabled, installed
    /// and healthy: those whose folders join the layers.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) fn active_folder_plugins(&self) -> Vec<(String, PathBuf)> {
        locks::lock(&self.folder_plugins)
            .iter()
            .filter(|p| p.enabled && p.installed && p.unhealthy.is_none())
            .map(|p| (p.name.clone(), p.dir.clone()))
            .collect()
    }

    /// Runs what waits for the snapshot [`build_snapshot`](Self::build_snapshot) made to be
    /// published (folder plugins' `uninstall`), recording it in the reload's event.
    /// Returns whether the reload needs another pass: a folder plugin's new version waits for
    /// the old one's uninstall, or a plugin folder moved while it was installed or read.
    pub(crate) fn after_publish(&self, event: &mut ReloadEvent) -> bool {
        locks::lock(&self.state).after_publish(event)
    }

    /// What this scope's loader compiled or found cached, of wasm modules.
    #[cfg(all(feature = "wasm", unix))]
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
