//! The loader: from a scope's layer folders to snapshot inputs, in four phases.
//!
//! 1. rescan the layers that changed ([`scan`](crate::fs::scan));
//! 2. per file, the fresh version when good, else its last good version ([`last_good`]);
//! 3. override definitions and command hooks, with trust and the global switch ([`definitions`]);
//! 4. plugin configs overlaid layer by layer ([`configs`]);
//!
//! then [`snapshot::build`](crate::snapshot::build) merges them with the compiled-in table.

pub(crate) mod configs;
mod definitions;
#[cfg(all(feature = "folder-plugins", unix))]
mod folder_plugins;
mod last_good;
#[cfg(test)]
mod tests;
#[cfg(all(feature = "wasm", unix))]
mod wasm;
#[cfg(all(test, not(all(feature = "command-hooks", unix))))]
mod without_command_hooks;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use super::event::ReloadEvent;
use super::layers::{FsConfig, LayerRoot};
use super::read::FileReader;
use super::scan::{self, LayerScan};
use crate::diagnostic::{Code, Diagnostic};
use crate::snapshot::{
    self, BuildInput, CompiledTable, LayerDefs, LayerInput, RegisteredCandidates, Snapshot,
};
#[cfg(all(feature = "folder-plugins", unix))]
pub(crate) use folder_plugins::FolderPluginStatus;
#[cfg(all(feature = "cli", unix))]
pub(crate) use last_good::verify_pin;
#[cfg(all(feature = "wasm", unix))]
pub(crate) use wasm::check_module_bytes;
#[cfg(all(all(feature = "cli", unix), all(feature = "wasm", unix)))]
pub(crate) use wasm::check_wasm_file;

/// What a scope's loader remembers between reloads.
#[derive(Default)]
pub(crate) struct LoadState {
    /// The latest scan of each layer root.
    scans: HashMap<PathBuf, LayerScan>,
    files: last_good::LastGood,
    configs: configs::ConfigsLastGood,
    #[cfg(all(feature = "folder-plugins", unix))]
    plugins: folder_plugins::FolderPlugins,
    /// Wasm extensions' last good modules and the scope's module cache.
    #[cfg(all(feature = "wasm", unix))]
    wasm: wasm::WasmFiles,
}

/// What one load produced.
pub(crate) struct Loaded {
    pub(crate) snapshot: Snapshot,
    pub(crate) event: ReloadEvent,
    /// Every folder plugin found (or refused), with its state.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) folder_plugins: Vec<FolderPluginStatus>,
}

/// What one load reads besides the folders.
pub(crate) struct LoadInput<'a> {
    pub(crate) config: &'a FsConfig,
    pub(crate) table: &'a CompiledTable,
    /// Package name -> plugin name, for disabled crate plugins.
    pub(crate) disabled: &'a HashMap<&'static str, &'static str>,
    /// The names of every disabled plugin, crate or folder.
    #[cfg_attr(not(all(feature = "folder-plugins", unix)), allow(dead_code))]
    pub(crate) disabled_plugins: &'a BTreeSet<String>,
    /// The scope's extensions registered at run time, by point.
    pub(crate) registered: &'a RegisteredCandidates,
    /// Crate plugins that reported themselves unhealthy at run time, with why.
    pub(crate) reported: &'a crate::registry::Reported,
    /// Roots to rescan; `None` means all.
    pub(crate) dirty: Option<HashSet<PathBuf>>,
    pub(crate) generation: u64,
    /// How files are read: a reload the watcher started reads only files that settled.
    pub(crate) reader: FileReader,
    /// Reloads the scope when a wasm module compiled off the reload path is ready.
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) wake: Option<crate::wasm::compile::Wake>,
}

impl LoadState {
    /// Runs what waits for the latest load's snapshot to be published: the `uninstall` of the
    /// folder plugins that left, recorded in `event` (names, warnings). Returns whether the load
    /// asks for another pass (see `FolderPlugins::finish_leaving`; never without the
    /// `folder-plugins` feature).
    #[cfg_attr(
        not(all(feature = "folder-plugins", unix)),
        allow(clippy::unused_self, unused_variables)
    )]
    pub(crate) fn after_publish(&mut self, event: &mut ReloadEvent) -> bool {
        #[cfg(all(feature = "folder-plugins", unix))]
        return self
            .plugins
            .finish_leaving(&mut event.warnings, &mut event.plugins_uninstalled);
        #[cfg(not(all(feature = "folder-plugins", unix)))]
        false
    }

    /// Rescans what is dirty, applies the last-good rule and merges everything into a snapshot
    /// (a build without folder plugins).
    #[cfg(not(all(feature = "folder-plugins", unix)))]
    pub(crate) fn load(&mut self, input: LoadInput<'_>) -> Loaded {
        self.load_layers(&input, Vec::new(), Vec::new())
    }

    /// Runs the folder-plugin phase, then rescans what is dirty, applies the last-good rule and
    /// merges everything into a snapshot. A folder plugin whose folder changed while its layer
    /// was read is left out and the layers are read again (each time one plugin fewer, so this
    /// ends), and another pass is asked for.
    #[cfg(all(feature = "folder-plugins", unix))]
    pub(crate) fn load(&mut self, mut input: LoadInput<'_>) -> Loaded {
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        let mut folder = self.plugins.load(
            input.config,
            input.disabled_plugins,
            input.reader,
            &mut problems,
            &mut warnings,
        );
        self.scans
            .retain(|root, _| !folder.fresh.iter().any(|dir| root.starts_with(dir)));
        loop {
            let mut loaded = self.load_layers(&input, &folder, problems.clone(), warnings.clone());
            let unsettled = folder.unsettled();
            if unsettled.is_empty() {
                loaded.event.plugins_installed.clone_from(&folder.installed);
                return loaded;
            }
            self.plugins.leave_out(&mut folder, &unsettled);
            input.dirty = None;
        }
    }

    /// The layers of the load (with the folder plugins of `folder`) into a snapshot.
    fn load_layers(
        &mut self,
        input: &LoadInput<'_>,
        #[cfg(all(feature = "folder-plugins", unix))] folder: &folder_plugins::FolderPhase,
        mut problems: Vec<Diagnostic>,
        mut warnings: Vec<Diagnostic>,
    ) -> Loaded {
        let disabled: BTreeSet<&str> = input.disabled.values().copied().collect();
        problems.extend(toggles_problem(input.config));
        #[cfg(all(feature = "folder-plugins", unix))]
        let (joining, defaults) = (&folder.layers, &folder.defaults);
        #[cfg(not(all(feature = "folder-plugins", unix)))]
        let (joining, defaults) = (&[], &[]);
        let layers = input.config.layers(|n| !disabled.contains(n), joining);
        self.rescan(&layers, input.dirty.as_ref(), input.reader);
        #[cfg(all(feature = "wasm", unix))]
        self.wasm.begin(input.config, input.wake.clone());
        let files = self
            .files
            .files_in_effect(&layers, &self.scans, &mut problems);
        let defs = definitions::definitions(
            &files,
            &mut self.files,
            #[cfg(all(feature = "wasm", unix))]
            &mut self.wasm,
            &definitions::Context {
                config: input.config,
                table: input.table,
                reader: input.reader,
            },
        );
        // A folder plugin's command hooks run from its pinned folder.
        #[cfg(all(feature = "folder-plugins", unix))]
        let defs = {
            let mut defs = defs;
            folder.hold_commands(&mut defs.commands);
            defs
        };
        problems.extend(defs.problems);
        warnings.extend(defs.warnings);
        #[cfg(all(feature = "wasm", unix))]
        let wasm = defs.wasm;
        #[cfg(all(feature = "wasm", unix))]
        warnings.extend(
            self.wasm
                .sweep()
                .map(|w| Diagnostic::warning(Code::WasmNotice, w)),
        );
        let plugin_configs = self.configs.merge_all(
            &layers,
            defaults,
            input.reader,
            &mut problems,
            &mut warnings,
        );
        let unhealthy =
            crate::registry::unhealthy(&plugin_configs, |p| !disabled.contains(p), input.reported);
        #[cfg(all(feature = "folder-plugins", unix))]
        let folder_unhealthy = &folder.unhealthy;
        #[cfg(not(all(feature = "folder-plugins", unix)))]
        let folder_unhealthy = &BTreeMap::new();
        warn_unhealthy(&unhealthy, folder_unhealthy, &mut warnings);
        #[cfg_attr(
            not(any(all(feature = "folder-plugins", unix), all(feature = "wasm", unix))),
            allow(unused_mut)
        )]
        let (mut snap, merge_warnings) = snapshot::build(
            BuildInput {
                table: input.table,
                disabled_crates: input.disabled,
                plugin_configs,
                unhealthy,
                registered: input.registered,
                layers: LayerInput {
                    defs: LayerDefs {
                        overrides: defs.defs,
                        refused: defs.refused,
                    },
                    #[cfg(all(feature = "command-hooks", unix))]
                    commands: defs.commands,
                },
            },
            input.generation,
        );
        warnings.extend(merge_warnings);
        #[cfg(all(feature = "folder-plugins", unix))]
        snap.unhealthy_plugins.extend(folder.unhealthy.clone());
        #[cfg(all(feature = "wasm", unix))]
        {
            snap.wasm = std::sync::Arc::new(wasm);
        }
        Loaded {
            snapshot: snap,
            event: reload_event(input.generation, problems, warnings),
            #[cfg(all(feature = "folder-plugins", unix))]
            folder_plugins: folder.statuses.clone(),
        }
    }

    /// What this scope's loader compiled or found cached, of wasm modules.
    #[cfg(all(feature = "wasm", unix))]
    pub(crate) fn wasm_stats(&self) -> crate::wasm::WasmStats {
        self.wasm.stats()
    }

    /// Scans the layers under a dirty root (or all of them), and any never scanned.
    fn rescan(
        &mut self,
        layers: &[LayerRoot],
        dirty: Option<&HashSet<PathBuf>>,
        reader: FileReader,
    ) {
        for layer in layers {
            let is_dirty = dirty.is_none_or(|set| {
                set.iter().any(|d| {
                    d == &layer.root || layer.root.starts_with(d) || d.starts_with(&layer.root)
                })
            });
            if is_dirty || !self.scans.contains_key(&layer.root) {
                self.scans.insert(
                    layer.root.clone(),
                    scan::scan_layer_with(&layer.root, reader),
                );
            }
        }
    }
}

/// What a load reports: its problems sorted by file and line, one per file and message.
fn reload_event(
    generation: u64,
    mut problems: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
) -> ReloadEvent {
    problems.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    problems.dedup_by(|a, b| a.file == b.file && a.message == b.message);
    ReloadEvent {
        generation,
        problems,
        warnings,
        ..ReloadEvent::default()
    }
}

/// One warning per unhealthy plugin, crate (`crates`) or folder (`folders`): its extensions do
/// not run.
fn warn_unhealthy(
    crates: &BTreeMap<&'static str, String>,
    folders: &BTreeMap<String, String>,
    warnings: &mut Vec<Diagnostic>,
) {
    let all = crates
        .iter()
        .map(|(p, w)| (*p, w))
        .chain(folders.iter().map(|(p, w)| (p.as_str(), w)));
    for (plugin, why) in all {
        warnings.push(
            Diagnostic::warning(
                Code::PluginUnhealthy,
                format!("plugin `{plugin}` is unhealthy (its extensions do not run): {why}"),
            )
            .for_plugin(plugin),
        );
    }
}

/// The problem of the scope's plugin toggles file, if it names one that does not read.
fn toggles_problem(config: &FsConfig) -> Option<Diagnostic> {
    let path = config.toggles.as_ref()?;
    crate::fs::plugins::toggles::read(path).err()
}
