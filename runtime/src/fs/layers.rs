//! The search order: which folders are a scope's layers, highest priority first (Agent Zero's
//! order, SPEC §7), and which of them belong to the project (command hooks need trust there).

use std::path::PathBuf;
use std::time::Duration;

/// One override layer of a scope, in search order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRoot {
    /// Position in the search order: 1 is the highest priority.
    pub rank: u8,
    /// The layer's root folder (it holds `extensions/` and `plugins/`).
    pub root: PathBuf,
    /// True for the project's layers, whose command hooks run only when the project is trusted.
    pub project: bool,
    /// The plugin whose folder this is, for plugin layers.
    pub plugin: Option<String>,
}

/// The folder parts of a scope (see [`ScopeBuilder`]).
#[derive(Debug, Clone)]
pub(crate) struct FsConfig {
    pub(crate) project: Option<PathBuf>,
    pub(crate) profile: Option<String>,
    pub(crate) user: Option<PathBuf>,
    pub(crate) agents: Option<PathBuf>,
    pub(crate) plugin_dirs: Vec<(String, PathBuf)>,
    pub(crate) trust_project: bool,
    pub(crate) watch: bool,
    pub(crate) debounce: Duration,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            project: None,
            profile: None,
            user: None,
            agents: None,
            plugin_dirs: Vec::new(),
            trust_project: false,
            watch: true,
            debounce: Duration::from_millis(50),
        }
    }
}

impl FsConfig {
    /// The layers in Agent Zero's search order (SPEC §7), highest first; plugin layers only for
    /// plugins `enabled` accepts.
    pub(crate) fn layers(&self, enabled: impl Fn(&str) -> bool) -> Vec<LayerRoot> {
        let mut out: Vec<(PathBuf, bool, Option<String>)> = Vec::new();
        let profile = self.profile.as_deref();
        let plugins: Vec<&(String, PathBuf)> = self
            .plugin_dirs
            .iter()
            .filter(|(n, _)| enabled(n))
            .collect();
        if let (Some(p), Some(prof)) = (&self.project, profile) {
            out.push((p.join("agents").join(prof), true, None));
        }
        if let Some(p) = &self.project {
            out.push((p.clone(), true, None));
        }
        if let (Some(u), Some(prof)) = (&self.user, profile) {
            out.push((u.join("agents").join(prof), false, None));
        }
        if let Some(prof) = profile {
            for (name, dir) in &plugins {
                out.push((dir.join("agents").join(prof), false, Some(name.clone())));
            }
        }
        if let (Some(a), Some(prof)) = (&self.agents, profile) {
            out.push((a.join(prof), false, None));
        }
        if let Some(u) = &self.user {
            out.push((u.clone(), false, None));
        }
        for (name, dir) in &plugins {
            out.push((dir.clone(), false, Some(name.clone())));
        }
        out.into_iter()
            .enumerate()
            .map(|(i, (root, project, plugin))| LayerRoot {
                rank: u8::try_from(i + 1).unwrap_or(u8::MAX - 1),
                root,
                project,
                plugin,
            })
            .collect()
    }

    /// Every folder that may become a layer (all plugins), for the watcher.
    pub(crate) fn all_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self.layers(|_| true).into_iter().map(|l| l.root).collect();
        roots.dedup();
        roots
    }
}
