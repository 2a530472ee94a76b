//! A scope's web UI manifest, rebuilt with its snapshot: the layers whose folders changed are
//! rescanned, the others' scans are reused, and the merged manifest is swapped in whole.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::manifest::WebuiManifest;
use super::scan::{LayerAssets, scan_layer};
use crate::diagnostic::{Code, Diagnostic};
use crate::fs::event::ReloadEvent;
use crate::fs::layers::{FsConfig, LayerRoot};
use crate::fs::read::FileReader;
use crate::locks;

/// The web UI side of a scope's filesystem state.
#[derive(Default)]
pub(crate) struct WebuiCache {
    /// The latest scan of each layer root.
    scans: Mutex<HashMap<PathBuf, LayerAssets>>,
    current: Mutex<Arc<WebuiManifest>>,
}

impl WebuiCache {
    /// The manifest of the latest rebuild.
    pub(crate) fn current(&self) -> Arc<WebuiManifest> {
        Arc::clone(&locks::lock(&self.current))
    }

    /// Rescans the layers under a `dirty` root (`None`: all) with `reader`, merges the enabled
    /// layers into a new manifest for `generation`, and adds the refusals to `event` (problems)
    /// and the assets of an untrusted project to its warnings. An asset caught being written
    /// keeps the version of the previous scan.
    pub(crate) fn rebuild(
        &self,
        config: &FsConfig,
        disabled: &HashMap<&'static str, &'static str>,
        folder_plugins: &[(String, PathBuf)],
        dirty: Option<&HashSet<PathBuf>>,
        reader: FileReader,
        event: &mut ReloadEvent,
    ) {
        let off: BTreeSet<&str> = disabled.values().copied().collect();
        let layers = config.layers(|n| !off.contains(n), folder_plugins);
        let mut scans = locks::lock(&self.scans);
        for layer in &layers {
            let is_dirty = dirty.is_none_or(|set| {
                set.iter().any(|d| {
                    d == &layer.root || layer.root.starts_with(d) || d.starts_with(&layer.root)
                })
            });
            if is_dirty || !scans.contains_key(&layer.root) {
                let mut scan = scan_layer(&layer.root, reader);
                if let Some(previous) = scans.get(&layer.root) {
                    scan.keep_unsettled_from(previous);
                }
                scans.insert(layer.root.clone(), scan);
            }
        }
        let mut used: Vec<(&LayerRoot, &LayerAssets)> = Vec::new();
        for layer in &layers {
            let Some(scan) = scans.get(&layer.root) else {
                continue;
            };
            event.problems.extend(scan.problems.iter().cloned());
            if !layer.trusted {
                event.warnings.extend(scan.assets.iter().map(|a| {
                    Diagnostic::warning(
                        Code::WebuiUntrusted,
                        format!(
                            "web UI asset in the untrusted {} layer {}: not served (it is code the browser runs); trust the layer with LayerSpec::trusted(true)",
                            layer.kind,
                            layer.root.display()
                        ),
                    )
                    .in_file(&a.file)
                    .for_point(&a.point)
                }));
                continue;
            }
            used.push((layer, scan));
        }
        let manifest = WebuiManifest::merge(event.generation, &used, &mut event.warnings);
        drop(used);
        drop(scans);
        event
            .problems
            .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        *locks::lock(&self.current) = Arc::new(manifest);
    }
}
