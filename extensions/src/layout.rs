//! Agent Zero's folder layout as a preset of layers: which folders of a project, a user, the
//! agent profiles and the plugins are a scope's layers, in which order, and which are trusted.
//!
//! The search order, highest priority first (the profile layers only with a
//! [`profile`](AgentZeroLayout::profile)):
//!
//! | rank | folder | kind |
//! |---|---|---|
//! | 1 | `<project>/agents/<profile>/` | [`PROJECT_PROFILE`] |
//! | 2 | `<project>/` | [`PROJECT`] |
//! | 3 | `<user>/agents/<profile>/` | [`USER_PROFILE`] |
//! | 4 | `<plugin>/agents/<profile>/` | [`PLUGIN_PROFILE`] |
//! | 5 | `<agents>/<profile>/` | [`AGENTS_PROFILE`] |
//! | 6 | `<user>/` | [`USER`] |
//! | 7 | `<plugin>/` | [`PLUGIN`] |
//!
//! Plugin layers (4 and 7) are there only while their plugin is enabled; folder plugins found
//! under a [`ScopeBuilder::plugin_root`] join at the same ranks, after the plugin folders given
//! here. The ranks in [`Scope::layers`](hookpoint::Scope::layers) number only the folders a
//! scope has. The project's layers — and any folder inside the project — run no code (command
//! hooks, wasm extensions, web UI assets) until [`trust_project`](AgentZeroLayout::trust_project):
//! a project folder may come from anywhere.

use std::path::PathBuf;

use hookpoint::{LayerKind, LayerSpec, ScopeBuilder};

/// `<project>/agents/<profile>/`.
pub const PROJECT_PROFILE: LayerKind = LayerKind::new("project_profile");
/// `<project>/`.
pub const PROJECT: LayerKind = LayerKind::new("project");
/// `<user>/agents/<profile>/`.
pub const USER_PROFILE: LayerKind = LayerKind::new("user_profile");
/// `<plugin>/agents/<profile>/`.
pub const PLUGIN_PROFILE: LayerKind = LayerKind::new("plugin_profile");
/// `<agents>/<profile>/`.
pub const AGENTS_PROFILE: LayerKind = LayerKind::new("agents_profile");
/// `<user>/`.
pub const USER: LayerKind = LayerKind::new("user");
/// `<plugin>/` (the engine's own kind for plugin folders).
pub const PLUGIN: LayerKind = LayerKind::PLUGIN;

/// True for the layers that belong to an agent profile (`.../agents/<profile>/`).
///
/// ```
/// use hookpoint_extensions::layout::{self, is_profile};
/// assert!(is_profile(&layout::PLUGIN_PROFILE));
/// assert!(!is_profile(&layout::PROJECT));
/// ```
pub fn is_profile(kind: &LayerKind) -> bool {
    [
        PROJECT_PROFILE,
        USER_PROFILE,
        PLUGIN_PROFILE,
        AGENTS_PROFILE,
    ]
    .contains(kind)
}

/// The precedence of each rank: rank 1 highest.
fn precedence(rank: i32) -> i32 {
    100 - 10 * rank
}

/// Agent Zero's folders of one scope; [`apply`](Self::apply) adds them to a [`ScopeBuilder`] as
/// layers in the search order of the [module docs](self).
///
/// ```
/// use hookpoint::ScopeBuilder;
/// use hookpoint_extensions::layout::{self, AgentZeroLayout};
/// let project = tempfile::tempdir().unwrap();
/// let user = tempfile::tempdir().unwrap();
/// let builder = AgentZeroLayout::new()
///     .project(project.path())
///     .user(user.path())
///     .profile("researcher")
///     .apply(ScopeBuilder::new("agent"));
/// let scope = builder.watch(false).build().unwrap();
/// let kinds: Vec<_> = scope.layers().into_iter().map(|l| (l.kind, l.trusted)).collect();
/// assert_eq!(
///     kinds,
///     [
///         (layout::PROJECT_PROFILE, false), // the project runs no code until trusted
///         (layout::PROJECT, false),
///         (layout::USER_PROFILE, true),
///         (layout::USER, true),
///     ]
/// );
/// ```
#[derive(Debug, Clone, Default)]
pub struct AgentZeroLayout {
    project: Option<PathBuf>,
    profile: Option<String>,
    user: Option<PathBuf>,
    agents: Option<PathBuf>,
    plugin_folders: Vec<(String, PathBuf)>,
    trust_project: bool,
}

impl AgentZeroLayout {
    /// No folders yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The project folder: layers `<project>/agents/<profile>/` (1) and `<project>/` (2). Their
    /// code runs only after [`trust_project`](Self::trust_project).
    pub fn project(mut self, dir: impl Into<PathBuf>) -> Self {
        self.project = Some(dir.into());
        self
    }

    /// The agent profile (e.g. `researcher`), which selects the `agents/<profile>/` layers.
    pub fn profile(mut self, name: impl Into<String>) -> Self {
        self.profile = Some(name.into());
        self
    }

    /// The user folder: layers `<user>/agents/<profile>/` (3) and `<user>/` (6).
    pub fn user(mut self, dir: impl Into<PathBuf>) -> Self {
        self.user = Some(dir.into());
        self
    }

    /// The folder of agent profiles: layer `<agents>/<profile>/` (5).
    pub fn agents(mut self, dir: impl Into<PathBuf>) -> Self {
        self.agents = Some(dir.into());
        self
    }

    /// A linked plugin's folder: layers `<dir>/agents/<profile>/` (4) and `<dir>/` (7), present
    /// only while the plugin named `plugin` is enabled.
    pub fn plugin_folder(mut self, plugin: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.plugin_folders.push((plugin.into(), dir.into()));
        self
    }

    /// Lets code in the project's layers (and in any folder inside the project) run: command
    /// hooks, wasm extensions, web UI assets. Off by default: a project folder may come from
    /// anywhere (a cloned repository), and those are code.
    pub fn trust_project(mut self, trusted: bool) -> Self {
        self.trust_project = trusted;
        self
    }

    /// Adds the layers to `builder` ([`ScopeBuilder::layer`]) and says where folder plugins'
    /// folders join ([`ScopeBuilder::folder_plugin_layer`]).
    pub fn apply(self, mut builder: ScopeBuilder) -> ScopeBuilder {
        let spec = |kind: LayerKind, rank: i32| LayerSpec::new(kind, precedence(rank));
        let profile = self
            .profile
            .as_deref()
            .map(|p| PathBuf::from("agents").join(p));
        if let Some(project) = &self.project {
            let trusted = self.trust_project;
            if let Some(sub) = &profile {
                let s = spec(PROJECT_PROFILE, 1).trusted(trusted);
                builder = builder.layer(project.join(sub), s);
            }
            builder = builder.layer(project, spec(PROJECT, 2).trusted(trusted));
        }
        if let (Some(user), Some(sub)) = (&self.user, &profile) {
            builder = builder.layer(user.join(sub), spec(USER_PROFILE, 3));
        }
        if let Some(sub) = &profile {
            for (name, dir) in &self.plugin_folders {
                builder = builder.layer(dir.join(sub), spec(PLUGIN_PROFILE, 4).plugin(name));
            }
            builder = builder.folder_plugin_layer(sub, spec(PLUGIN_PROFILE, 4));
        }
        if let (Some(agents), Some(p)) = (&self.agents, &self.profile) {
            builder = builder.layer(agents.join(p), spec(AGENTS_PROFILE, 5));
        }
        if let Some(user) = &self.user {
            builder = builder.layer(user, spec(USER, 6));
        }
        for (name, dir) in &self.plugin_folders {
            builder = builder.layer(dir, spec(PLUGIN, 7).plugin(name));
        }
        builder.folder_plugin_layer("", spec(PLUGIN, 7))
    }
}
