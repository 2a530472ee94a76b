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
mod last_good;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use super::event::ReloadEvent;
use super::layers::{FsConfig, LayerRoot};
use super::scan::{self, LayerScan};
use crate::snapshot::{self, BuildInput, CompiledTable, LayerInput, Snapshot};

/// What a scope's loader remembers between reloads.
#[derive(Default)]
pub(crate) struct LoadState {
    /// The latest scan of each layer root.
    scans: HashMap<PathBuf, LayerScan>,
    files: last_good::LastGood,
    configs: configs::ConfigsLastGood,
}

/// What one load reads besides the folders.
pub(crate) struct LoadInput<'a> {
    pub(crate) config: &'a FsConfig,
    pub(crate) table: &'a CompiledTable,
    /// Package name -> plugin name, for disabled plugins.
    pub(crate) disabled: &'a HashMap<&'static str, &'static str>,
    /// Roots to rescan; `None` means all.
    pub(crate) dirty: Option<HashSet<PathBuf>>,
    pub(crate) generation: u64,
}

impl LoadState {
    /// Rescans what is dirty, applies the last-good rule, merges everything into a snapshot.
    pub(crate) fn load(&mut self, input: LoadInput<'_>) -> (Snapshot, ReloadEvent) {
        let disabled: BTreeSet<&str> = input.disabled.values().copied().collect();
        let layers = input.config.layers(|n| !disabled.contains(n));
        self.rescan(&layers, input.dirty.as_ref());
        let mut problems = Vec::new();
        let files = self
            .files
            .files_in_effect(&layers, &self.scans, &mut problems);
        let defs = definitions::definitions(&files, &mut self.files, input.config, input.table);
        problems.extend(defs.problems);
        let mut warnings = defs.warnings;
        let plugin_configs = self
            .configs
            .merge_all(&layers, &mut problems, &mut warnings);
        let unhealthy = crate::registry::unhealthy(&plugin_configs, |p| !disabled.contains(p));
        for (plugin, why) in &unhealthy {
            warnings.push(format!(
                "plugin `{plugin}` is unhealthy (its extensions do not run): {why}"
            ));
        }
        let (snap, merge_warnings) = snapshot::build(
            BuildInput {
                table: input.table,
                disabled_crates: input.disabled,
                plugin_configs,
                unhealthy,
                layers: LayerInput {
                    overrides: &defs.defs,
                    refused: &defs.refused,
                    commands: defs.commands,
                },
            },
            input.generation,
        );
        warnings.extend(merge_warnings);
        problems.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        problems.dedup_by(|a, b| a.path == b.path && a.message == b.message);
        let event = ReloadEvent {
            generation: input.generation,
            problems,
            warnings,
        };
        (snap, event)
    }

    /// Scans the layers under a dirty root (or all of them), and any never scanned.
    fn rescan(&mut self, layers: &[LayerRoot], dirty: Option<&HashSet<PathBuf>>) {
        for layer in layers {
            let is_dirty = dirty.is_none_or(|set| {
                set.iter().any(|d| {
                    d == &layer.root || layer.root.starts_with(d) || d.starts_with(&layer.root)
                })
            });
            if is_dirty || !self.scans.contains_key(&layer.root) {
                self.scans
                    .insert(layer.root.clone(), scan::scan_layer(&layer.root));
            }
        }
    }
}
