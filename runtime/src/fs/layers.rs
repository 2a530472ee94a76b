//! The search order: which folders are a scope's layers, highest priority first (Agent Zero's
//! order), and which of them belong to the project (command hooks need trust there).

use std::path::PathBuf;
use std::time::Duration;

/// One override layer of a scope, in search order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRoot {
    /// Position in the search order: 1 is the highest priority.
    pub rank: u8,
    /// The layer's root folder (it holds `extensions/` and `plugins/`).
    pub root: PathBuf,
    /// Which part of the search order it is.
    pub kind: LayerKind,
    /// True for the project's layers, whose command hooks run only when the project is trusted.
    pub project: bool,
    /// True when the folder is under one the application marked managed
    /// ([`ScopeBuilder::managed`](crate::ScopeBuilder::managed)).
    pub managed: bool,
    /// The plugin whose folder this is, for plugin layers.
    pub plugin: Option<String>,
}

/// The part of the search order a layer is, highest priority first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// `<project>/agents/<profile>/`.
    ProjectProfile,
    /// `<project>/`.
    Project,
    /// `<user>/agents/<profile>/`.
    UserProfile,
    /// `<plugin>/agents/<profile>/`.
    PluginProfile,
    /// `<agents>/<profile>/`.
    AgentsProfile,
    /// `<user>/`.
    User,
    /// `<plugin>/`.
    Plugin,
}

impl LayerKind {
    /// True for the layers that belong to an agent profile (`.../agents/<profile>/`).
    pub fn is_profile(self) -> bool {
        matches!(
            self,
            LayerKind::ProjectProfile
                | LayerKind::UserProfile
                | LayerKind::PluginProfile
                | LayerKind::AgentsProfile
        )
    }
}

/// The folder parts of a scope (see [`ScopeBuilder`]).
#[derive(Debug, Clone)]
pub(crate) struct FsConfig {
    pub(crate) project: Option<PathBuf>,
    pub(crate) profile: Option<String>,
    pub(crate) user: Option<PathBuf>,
    pub(crate) agents: Option<PathBuf>,
    pub(crate) plugin_dirs: Vec<(String, PathBuf)>,
    /// Folders whose subfolders with a `plugin.json` are folder plugins.
    pub(crate) plugin_roots: Vec<PathBuf>,
    /// The plugin toggles file, if any.
    pub(crate) toggles: Option<PathBuf>,
    pub(crate) trust_project: bool,
    /// Folders the application manages (layers at or under them are managed).
    pub(crate) managed: Vec<PathBuf>,
    /// Command hooks run only from managed layers.
    pub(crate) managed_hooks_only: bool,
    /// Whether command hooks may run here; `None`: the process default.
    pub(crate) command_hooks: Option<bool>,
    pub(crate) watch: bool,
    pub(crate) debounce: Duration,
    /// The folder of the compiled-module cache, or none (feature `wasm`).
    #[cfg(feature = "wasm")]
    pub(crate) wasm_cache: Option<PathBuf>,
    /// How long a reload waits for a module to compile before it goes on without it.
    #[cfg(feature = "wasm")]
    pub(crate) wasm_compile_wait: Duration,
}

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            project: None,
            profile: None,
            user: None,
            agents: None,
            plugin_dirs: Vec::new(),
            plugin_roots: Vec::new(),
            toggles: None,
            trust_project: false,
            managed: Vec::new(),
            managed_hooks_only: false,
            command_hooks: None,
            watch: true,
            debounce: Duration::from_millis(50),
            #[cfg(feature = "wasm")]
            wasm_cache: crate::wasm::default_dir(),
            #[cfg(feature = "wasm")]
            wasm_compile_wait: crate::wasm::DEFAULT_COMPILE_WAIT,
        }
    }
}

impl FsConfig {
    /// The layers in Agent Zero's search order, highest first: crate plugins'
    /// folders only for plugins `enabled` accepts, then the given folder plugins' folders.
    pub(crate) fn layers(
        &self,
        enabled: impl Fn(&str) -> bool,
        folder_plugins: &[(String, PathBuf)],
    ) -> Vec<LayerRoot> {
        use LayerKind as K;
        let mut out: Vec<(PathBuf, LayerKind, Option<String>)> = Vec::new();
        let profile = self.profile.as_deref();
        let plugins: Vec<&(String, PathBuf)> = self
            .plugin_dirs
            .iter()
            .filter(|(n, _)| enabled(n))
            .chain(folder_plugins)
            .collect();
        if let (Some(p), Some(prof)) = (&self.project, profile) {
            out.push((p.join("agents").join(prof), K::ProjectProfile, None));
        }
        if let Some(p) = &self.project {
            out.push((p.clone(), K::Project, None));
        }
        if let (Some(u), Some(prof)) = (&self.user, profile) {
            out.push((u.join("agents").join(prof), K::UserProfile, None));
        }
        if let Some(prof) = profile {
            for (name, dir) in &plugins {
                let root = dir.join("agents").join(prof);
                out.push((root, K::PluginProfile, Some(name.clone())));
            }
        }
        if let (Some(a), Some(prof)) = (&self.agents, profile) {
            out.push((a.join(prof), K::AgentsProfile, None));
        }
        if let Some(u) = &self.user {
            out.push((u.clone(), K::User, None));
        }
        for (name, dir) in &plugins {
            out.push((dir.clone(), K::Plugin, Some(name.clone())));
        }
        out.into_iter()
            .enumerate()
            .map(|(i, (root, kind, plugin))| LayerRoot {
                rank: u8::try_from(i + 1).unwrap_or(u8::MAX - 1),
                managed: self.managed.iter().any(|m| root.starts_with(m)),
                project: matches!(kind, K::ProjectProfile | K::Project)
                    || self.project.as_ref().is_some_and(|p| root.starts_with(p)),
                root,
                kind,
                plugin,
            })
            .collect()
    }

    /// Every folder that may become a layer (all plugins), for the watcher.
    pub(crate) fn all_roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self
            .layers(|_| true, &[])
            .into_iter()
            .map(|l| l.root)
            .chain(self.plugin_roots.iter().cloned())
            .collect();
        roots.dedup();
        roots
    }
}
